package ollamatest

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

// qwen2Vocab is llama.cpp's qwen2 vocabulary, which `make llamacpp`
// unpacks; a missing file fails the test with how to get it.
func qwen2Vocab(t *testing.T) string {
	t.Helper()
	p, err := VocabFile("qwen2")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteModelWithVocab(t *testing.T) {
	const tmpl = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
	spec := VocabSpec(qwen2Vocab(t))
	spec.ChatTemplate = tmpl
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := WriteModel(path, spec); err != nil {
		t.Fatal(err)
	}
	g, size := decodeModel(t, path)
	kv := g.KV()
	toks := kv.Strings("tokenizer.ggml.tokens")
	if len(toks) != 151936 || kv.Uint("vocab_size") != 151936 {
		t.Errorf("%d tokens, vocab_size %d; want qwen2's 151936", len(toks), kv.Uint("vocab_size"))
	}
	if n := len(kv.Strings("tokenizer.ggml.merges")); n < 100000 {
		t.Errorf("%d merges copied, want qwen2's", n)
	}
	if kv.String("tokenizer.ggml.pre") != "qwen2" || kv.String("tokenizer.ggml.model") != "gpt2" {
		t.Errorf("pre %q model %q", kv.String("tokenizer.ggml.pre"), kv.String("tokenizer.ggml.model"))
	}
	if kv.ChatTemplate() != tmpl {
		t.Errorf("chat template %q, want the one passed in", kv.ChatTemplate())
	}
	types := kv.Ints("tokenizer.ggml.token_type")
	if im := indexOf(toks, "<|im_start|>"); im < 0 || types[im] != typeControl {
		t.Errorf("<|im_start|> at %d is not a control token", im)
	}
	if kv.Uint("tokenizer.ggml.eos_token_id") != 151643 {
		t.Errorf("eos %d", kv.Uint("tokenizer.ggml.eos_token_id"))
	}
	for _, tt := range g.Tensors().Items() {
		if (tt.Name == "token_embd.weight" || tt.Name == "output.weight") && tt.Kind != uint32(ggml.TensorTypeF16) {
			t.Errorf("%s is kind %d, want F16", tt.Name, tt.Kind)
		}
	}
	if size > 30<<20 {
		t.Errorf("model is %d bytes, want under 30 MB", size)
	}
}

func indexOf(toks []string, s string) int {
	for i, t := range toks {
		if t == s {
			return i
		}
	}
	return -1
}

func TestVocabText(t *testing.T) {
	v, err := LoadVocab(qwen2Vocab(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tok, text string }{
		{"Ġhello", " hello"}, {"Ċ", "\n"}, {"<|im_end|>", "<|im_end|>"}, {"Ã©", "é"},
	} {
		id, err := v.ID(c.tok)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := v.Text(id); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.tok, got, c.text)
		}
	}
	// What the random model may write by itself: printable ASCII only.
	for _, c := range []struct {
		tok  string
		want bool
	}{{"Ġhello", true}, {"Ċ", true}, {"Ã©", false}, {"<|im_end|>", false}} {
		id, _ := v.ID(c.tok)
		if got := v.printable(id); got != c.want {
			t.Errorf("printable(%q) = %v", c.tok, got)
		}
	}
	if !v.Holds("é") || v.Holds("𝔘") {
		t.Errorf("Holds: é %v, 𝔘 %v; want one token for é and none holding 𝔘", v.Holds("é"), v.Holds("𝔘"))
	}
}

func TestVocabFileMissing(t *testing.T) {
	t.Setenv(EnvLlamacppDir, t.TempDir())
	_, err := VocabFile("qwen2")
	if err == nil || !strings.Contains(err.Error(), "run `make llamacpp`") {
		t.Fatalf("err = %v, want one saying to run make llamacpp", err)
	}
}

func TestHalf(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {-200, 0xda40}, {0.5, 0x3800}, {65504, 0x7bff},
		{1e6, 0x7c00}, {1e-6, 0}, {float32(math.Inf(-1)), 0xfc00},
		{1 + 1.0/2048, 0x3c00}, // halfway, rounds to even
		{1 + 3.0/2048, 0x3c02}, // halfway, rounds to even (up)
	} {
		if got := half(c.in); got != c.want {
			t.Errorf("half(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}
