package ollamatest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/fs/ggml"
)

func TestWriteModelDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	spec := DefaultSpec()
	spec.AddBOS = true
	if err := WriteModel(path, spec); err != nil {
		t.Fatal(err)
	}
	g, size := decodeModel(t, path)
	kv := g.KV()
	if kv.Architecture() != "llama" || kv.ContextLength() != 8192 || kv.BlockCount() != 2 {
		t.Errorf("arch %q ctx %d blocks %d", kv.Architecture(), kv.ContextLength(), kv.BlockCount())
	}
	toks := kv.Strings("tokenizer.ggml.tokens")
	if len(toks) != vocabSize || toks[TokenIMStart] != "<|im_start|>" || toks['a'] != "a" || toks[' '] != "Ġ" {
		t.Errorf("vocabulary: %d tokens, 257=%q 'a'=%q ' '=%q", len(toks), toks[TokenIMStart], toks['a'], toks[' '])
	}
	if !kv.Bool("tokenizer.ggml.add_bos_token") {
		t.Error("add_bos_token not written")
	}
	if n := len(g.Tensors().Items()); n != 3+9*spec.Layers {
		t.Errorf("%d tensors, want %d", n, 3+9*spec.Layers)
	}
	if size > 600<<10 {
		t.Errorf("model is %d bytes, want a few hundred KB", size)
	}
}

func TestWriteModelRejectsBadSpec(t *testing.T) {
	spec := DefaultSpec()
	spec.HeadCount = 3 // 64 is not a multiple of 3
	err := WriteModel(filepath.Join(t.TempDir(), "m.gguf"), spec)
	if err == nil || !strings.HasPrefix(err.Error(), "ollamatest: invalid model spec") {
		t.Fatalf("err = %v", err)
	}
}

func TestByteTokensAreDistinct(t *testing.T) {
	seen := map[string]int{}
	for i, tok := range byteTokens() {
		if j, dup := seen[tok]; dup {
			t.Fatalf("bytes %d and %d share token %q", j, i, tok)
		}
		seen[tok] = i
	}
}

func TestCacheSlots(t *testing.T) {
	data, err := os.ReadFile("testdata/server.log")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	s.log.Write([]byte("noise before the mark\n"))
	m := s.Mark()
	s.log.Write(data)
	want := []CacheSlot{
		{ID: 0, Cache: 0, Prompt: 45, Used: 0, Remaining: 45},
		{ID: 0, Cache: 52, Prompt: 15, Used: 13, Remaining: 2},
	}
	if diff := cmp.Diff(want, s.CacheSlots(m)); diff != "" {
		t.Errorf("CacheSlots (-want +got):\n%s", diff)
	}
	if got := s.CacheSlots(s.Mark()); len(got) != 0 {
		t.Errorf("slots after the end: %v", got)
	}
}

func TestHostURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1:11500", "http://127.0.0.1:11500"},
		{"localhost", "http://localhost:11434"},
		{"http://example.test:8080/", "http://example.test:8080"},
		{"https://ollama.example.test", "https://ollama.example.test:11434"},
	} {
		got, err := hostURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("hostURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := hostURL("http://"); err == nil {
		t.Error("hostURL(http://) succeeded")
	}
}

func TestFindBinaryMissingSaysHowToFix(t *testing.T) {
	t.Setenv(EnvBin, filepath.Join(t.TempDir(), "no-such-ollama"))
	_, err := FindBinary()
	if err == nil || !strings.Contains(err.Error(), "make ollama") {
		t.Fatalf("err = %v, want a hint to run make ollama", err)
	}
}

func TestServerEnvIsolates(t *testing.T) {
	t.Setenv("OLLAMA_MODELS", "/home/someone/.ollama/models")
	env := serverEnv("/tmp/x", "127.0.0.1:1", map[string]string{"OLLAMA_NUM_PARALLEL": "2"})
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	if got["OLLAMA_MODELS"] != "/tmp/x/models" || got["OLLAMA_NUM_PARALLEL"] != "2" || got["OLLAMA_DEBUG"] != "1" {
		t.Errorf("env = %v", got)
	}
}

func TestModelNameAndParameters(t *testing.T) {
	var sum [32]byte
	copy(sum[:], "0123456789abcdef0123456789abcdef")
	def, params, err := modelName(sum, DefaultSpec(), nil)
	if err != nil || def != "toolharness-tiny:30313233" {
		t.Fatalf("default name %q, %v", def, err)
	}
	if diff := cmp.Diff(map[string]any{"stop": []string{"<|im_end|>"}, "num_ctx": 8192, "num_thread": 1}, params); diff != "" {
		t.Errorf("default parameters (-want +got):\n%s", diff)
	}
	big, params, err := modelName(sum, DefaultSpec(), map[string]any{"num_ctx": 32768, "temperature": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(big, def+"-") || len(big) != len(def)+9 {
		t.Errorf("name with parameters %q, want %s-<8 hex>", big, def)
	}
	if diff := cmp.Diff(map[string]any{"stop": []string{"<|im_end|>"}, "num_ctx": 32768, "num_thread": 1, "temperature": 0.5}, params); diff != "" {
		t.Errorf("merged parameters (-want +got):\n%s", diff)
	}
	// The same parameters, however given, make the same name; others another.
	var c config
	WithParameters(map[string]any{"temperature": 0.5})(&c)
	WithParameters(map[string]any{"num_ctx": 32768})(&c)
	if again, _, _ := modelName(sum, DefaultSpec(), c.params); again != big {
		t.Errorf("same parameters named %q and %q", big, again)
	}
	if other, _, _ := modelName(sum, DefaultSpec(), map[string]any{"num_ctx": 16384}); other == big || other == def {
		t.Errorf("different parameters share the name %q", other)
	}
	if _, _, err := modelName(sum, DefaultSpec(), map[string]any{"bad": func() {}}); err == nil {
		t.Error("unencodable parameter: no error")
	}
}

func TestByteVocabSpecialTexts(t *testing.T) {
	for _, c := range []struct {
		bos, eos         string
		wantBOS, wantEOS string // token texts at the ids written
	}{
		{"<|begin_of_text|>", "<|eot_id|>", "<|begin_of_text|>", "<|eot_id|>"},
		{"", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>"},                      // EOS is the default BOS token
		{"<|end_of_text|>", "<|end_of_text|>", "<|end_of_text|>", "<|end_of_text|>"}, // one token for both
		{"", "", "<|endoftext|>", "<|im_end|>"},
	} {
		spec := DefaultSpec()
		spec.BOSText, spec.EOSText = c.bos, c.eos
		kv, err := byteTokenizerKV(spec)
		if err != nil {
			t.Fatal(err)
		}
		toks := kv["tokenizer.ggml.tokens"].([]string)
		bos, eos := kv["tokenizer.ggml.bos_token_id"].(uint32), kv["tokenizer.ggml.eos_token_id"].(uint32)
		if toks[bos] != c.wantBOS || toks[eos] != c.wantEOS || toks[TokenIMStart] != "<|im_start|>" {
			t.Errorf("BOS %q EOS %q: ids %d %d are %q %q", c.bos, c.eos, bos, eos, toks[bos], toks[eos])
		}
	}
	spec := DefaultSpec()
	spec.EOSText = "<|im_start|>"
	if _, err := byteTokenizerKV(spec); err == nil {
		t.Error("an EOS text of <|im_start|> was accepted")
	}
}

// decodeModel reads the GGUF at path back, and its size.
func decodeModel(t *testing.T, path string) (*ggml.GGML, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ggml.Decode(bytes.NewReader(data), -1)
	if err != nil {
		t.Fatal(err)
	}
	return g, int64(len(data))
}
