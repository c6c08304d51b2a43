package source

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/templates"
)

const glmTemplate = "../testdata/conformance/templates/zai-org-GLM-4.5.jinja"

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFromTokenizerConfig(t *testing.T) {
	tests := []struct {
		name, config string
		tools        bool
		want         Template
		wantErr      string
	}{
		{"string template, string tokens", `{"chat_template": "T", "bos_token": "<s>", "eos_token": "</s>"}`, false,
			Template{Text: "T", Tokens: templates.SpecialTokens{BOS: "<s>", EOS: "</s>"}, Origin: "tokenizer_config.json chat_template"}, ""},
		{"token objects and null", `{"chat_template": "T", "bos_token": null, "eos_token": {"content": "<|im_end|>", "lstrip": false}}`, false,
			Template{Text: "T", Tokens: templates.SpecialTokens{EOS: "<|im_end|>"}, Origin: "tokenizer_config.json chat_template"}, ""},
		{"named list without tools", `{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "U"}]}`, false,
			Template{Text: "D", Origin: "tokenizer_config.json chat_template[default]"}, ""},
		{"named list with tools", `{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "U"}]}`, true,
			Template{Text: "U", Origin: "tokenizer_config.json chat_template[tool_use]"}, ""},
		{"tools but no tool_use", `{"chat_template": [{"name": "default", "template": "D"}]}`, true,
			Template{Text: "D", Origin: "tokenizer_config.json chat_template[default]"}, ""},
		{"named list without default", `{"chat_template": [{"name": "rag", "template": "R"}]}`, false, Template{}, "no default template among the named ones (rag)"},
		{"no template", `{"bos_token": "<s>"}`, false, Template{}, "no chat_template"},
		{"bad token", `{"chat_template": "T", "eos_token": 3}`, false, Template{}, "eos_token"},
		{"bad template", `{"chat_template": 3}`, false, Template{}, "neither a string nor a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromTokenizerConfig([]byte(tt.config), Options{Tools: tt.tools})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestLoadFilesAndFolders(t *testing.T) {
	dir := t.TempDir()
	jinjaFile := writeFile(t, dir, "plain/model.jinja", "{{ messages[0].content }}")
	cfg := writeFile(t, dir, "Org-Model-4.5/tokenizer_config.json", `{"chat_template": "CFG", "bos_token": "<s>", "eos_token": {"content": "</s>"}}`)
	writeFile(t, dir, "newer/tokenizer_config.json", `{"bos_token": "<s>", "eos_token": "</s>"}`)
	writeFile(t, dir, "newer/chat_template.jinja", "FILE")
	writeFile(t, dir, "processor/chat_template.json", `{"chat_template": "PROC"}`)
	notGGUF := writeFile(t, dir, "bad/model.gguf", "<html>404</html>")
	messages := writeFile(t, dir, "bad/messages.json", `[{"role": "user", "content": "hi"}]`)
	binary := writeFile(t, dir, "bad/model.jinja", "\x00\x01\xff")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path       string
		wantName   string
		wantText   string
		wantOrigin string
		wantTokens templates.SpecialTokens
		wantErr    string
	}{
		{jinjaFile, "model", "{{ messages[0].content }}", "file model.jinja", templates.SpecialTokens{}, ""},
		{cfg, "Org-Model-4.5", "CFG", "tokenizer_config.json chat_template", templates.SpecialTokens{BOS: "<s>", EOS: "</s>"}, ""},
		{filepath.Dir(cfg), "Org-Model-4.5", "CFG", "tokenizer_config.json chat_template", templates.SpecialTokens{BOS: "<s>", EOS: "</s>"}, ""},
		{filepath.Join(dir, "newer"), "newer", "FILE", "chat_template.jinja", templates.SpecialTokens{BOS: "<s>", EOS: "</s>"}, ""},
		{filepath.Join(dir, "processor"), "processor", "PROC", "chat_template.json", templates.SpecialTokens{}, ""},
		// The config of the newer layout: its template is beside it.
		{filepath.Join(dir, "newer", "tokenizer_config.json"), "newer", "FILE", "chat_template.jinja", templates.SpecialTokens{BOS: "<s>", EOS: "</s>"}, ""},
		{filepath.Join(dir, "empty"), "", "", "", templates.SpecialTokens{}, "no chat_template.jinja"},
		// Files that are no template are errors, not literal template text.
		{notGGUF, "", "", "", templates.SpecialTokens{}, "is not a GGUF file"},
		{messages, "", "", "", templates.SpecialTokens{}, "is not a tokenizer_config.json or chat_template.json"},
		{binary, "", "", "", templates.SpecialTokens{}, "is binary, not a chat template"},
		{filepath.Join(dir, "missing.jinja"), "", "", "", templates.SpecialTokens{}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			got, err := Load(tt.path, Options{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Template{Name: tt.wantName, Text: tt.wantText, Origin: tt.wantOrigin, Tokens: tt.wantTokens}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
	got, err := Load("-", Options{Stdin: strings.NewReader("STDIN")})
	if err != nil || got.Text != "STDIN" {
		t.Errorf("Load(-) = %+v, %v", got, err)
	}
}

// tinyGGUFBytes is the content of tinyGGUF.
func tinyGGUFBytes(t testing.TB, chatTemplate string) []byte {
	t.Helper()
	data, err := os.ReadFile(ollamatest.TemplateModel(t, t.TempDir(), chatTemplate))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFromGGUF(t *testing.T) {
	glm, err := os.ReadFile(glmTemplate)
	if err != nil {
		t.Fatal(err)
	}
	path := ollamatest.TemplateModel(t, t.TempDir(), string(glm))
	got, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Template{Name: "toolharness-tiny", Text: string(glm), Origin: "GGUF tokenizer.chat_template",
		Tokens: templates.SpecialTokens{BOS: "<|endoftext|>", EOS: "<|im_end|>"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	f, err := got.Family()
	if err != nil {
		t.Fatal(err)
	}
	if f.NativeFormat != "" || f.Name != "toolharness-tiny" {
		t.Errorf("family %s native %q: GLM-4.5 is no built-in family", f.Name, f.NativeFormat)
	}

	noTemplate := ollamatest.TemplateModel(t, t.TempDir(), "")
	if _, err := Load(noTemplate, Options{}); !errors.Is(err, ErrNoTemplate) {
		t.Errorf("GGUF without a template: err = %v, want ErrNoTemplate", err)
	}
}

// TestFromGGUFBadFiles cuts a real GGUF at many points and corrupts its
// lengths: every one is a one-line error, never a panic or a huge
// allocation.
func TestFromGGUFBadFiles(t *testing.T) {
	dir := t.TempDir()
	data := tinyGGUFBytes(t, "{{ messages }}")
	cases := map[string][]byte{"empty": {}, "magic only": []byte("GGUF"), "not gguf": []byte("GGUX\x03\x00\x00\x00"),
		"version 9": append([]byte("GGUF\x09\x00\x00\x00"), make([]byte, 16)...)}
	for _, n := range []int{5, 8, 16, 24, 30, 64, 200, 1000, 3000} {
		cases["cut at "+strconv.Itoa(n)] = data[:n]
	}
	huge := append([]byte(nil), data...)
	for i := 24; i < 32; i++ {
		huge[i] = 0xff // the first key's length
	}
	cases["huge key length"] = huge
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.gguf")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := FromGGUF(p, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "source: ") {
				t.Errorf("error %q: want one line starting with source:", msg)
			}
		})
	}
}

func FuzzReadGGUF(f *testing.F) {
	data := tinyGGUFBytes(f, "{{ bos_token }}{{ messages[0].content }}")
	f.Add(data[:4096])
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f.gguf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readGGUF(p); err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error %q", err)
		}
	})
}

// TestOllamaGGUF finds a model's GGUF blob through a manifest laid out as
// Ollama lays it out.
func TestOllamaGGUF(t *testing.T) {
	models := t.TempDir()
	data := tinyGGUFBytes(t, "{{ messages[0].content }}")
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	writeFile(t, models, "blobs/sha256-"+digest, string(data))
	manifest := `{"schemaVersion": 2, "layers": [{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:00"},` +
		`{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:` + digest + `"}]}`
	writeFile(t, models, "manifests/registry.ollama.ai/library/tiny/latest", manifest)
	writeFile(t, models, "manifests/registry.ollama.ai/me/tiny/v2", manifest)
	for _, name := range []string{"tiny", "tiny:latest", "me/tiny:v2", "registry.ollama.ai/library/tiny:latest"} {
		got, err := OllamaGGUF(models, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != filepath.Join(models, "blobs", "sha256-"+digest) {
			t.Errorf("%s: blob %s", name, got)
		}
	}
	for _, name := range []string{"other", "tiny:v9", "../../etc/passwd"} {
		if _, err := OllamaGGUF(models, name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	t.Setenv("OLLAMA_MODELS", models)
	got, err := FromOllama("http://127.0.0.1:11434", "tiny", Options{})
	if err != nil || got.Text != "{{ messages[0].content }}" || got.Name != "tiny" {
		t.Errorf("FromOllama = %+v, %v", got, err)
	}
	if _, err := FromOllama("http://gpu-box:11434", "tiny", Options{}); !errors.Is(err, ErrNotLocal) {
		t.Errorf("remote server: err = %v, want ErrNotLocal", err)
	}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{"http://127.0.0.1:11434": true, "localhost:11434": true, "http://[::1]:1": true,
		"http://0.0.0.0:11434": true, "http://10.0.0.2:11434": false, "https://ollama.example.com": false} {
		if got := IsLocalHost(host); got != want {
			t.Errorf("IsLocalHost(%q) = %v", host, got)
		}
	}
}
