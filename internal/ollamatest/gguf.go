package ollamatest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

// Token ids of the tiny model's vocabulary: the 256 bytes come first (id ==
// byte value), then the control tokens.
const (
	TokenEndOfText = 256 // <|endoftext|>, the BOS token
	TokenIMStart   = 257 // <|im_start|>
	TokenIMEnd     = 258 // <|im_end|>, the EOS token
	vocabSize      = 259
)

// ModelSpec describes the tiny random model. The zero value is not useful;
// start from DefaultSpec.
type ModelSpec struct {
	EmbeddingLength int
	HeadCount       int
	HeadCountKV     int
	FeedForward     int
	Layers          int
	// ContextLength is what the model declares (Ollama /api/show reports it
	// as llama.context_length).
	ContextLength int
	// AddBOS sets tokenizer.ggml.add_bos_token: when true the server
	// prepends <|endoftext|> to every raw prompt by itself.
	AddBOS bool
	// Seed makes the weights reproducible.
	Seed uint64
	// ChatTemplate, when set, is written as tokenizer.chat_template (the
	// Hugging Face Jinja template a GGUF carries; Ollama itself renders
	// the Go TEMPLATE it was registered with). With a VocabFile and no
	// ChatTemplate, the vocabulary's own template (if any) is kept.
	ChatTemplate string
	// VocabFile, when set, is a vocabulary GGUF (VocabFile("qwen2")) whose
	// tokenizer the model carries instead of the byte vocabulary: tokens,
	// types, merges, pre-tokenizer, special token ids and flags are copied
	// as they are. The embedding and output matrices are then F16 (a
	// 151,936-token vocabulary at 32 dimensions is 19 MB).
	VocabFile string
	// BOSText and EOSText rename the byte vocabulary's BOS (<|endoftext|>)
	// and EOS (<|im_end|>) control tokens, so that a server passes a chat
	// template the bos_token and eos_token of the model it was written
	// for ("<|begin_of_text|>", "<eos>", …). Ignored with a VocabFile.
	BOSText, EOSText string
}

// DefaultSpec is a two-layer model of about 450 KB.
func DefaultSpec() ModelSpec {
	return ModelSpec{EmbeddingLength: 64, HeadCount: 4, HeadCountKV: 2, FeedForward: 128,
		Layers: 2, ContextLength: 8192, Seed: 1}
}

// VocabSpec is a two-layer model with the tokenizer of the vocabulary
// GGUF at vocabFile. Its embeddings are 32-dimensional, so that the two
// vocabulary-sized matrices stay small (19 MB for qwen2's 151,936 tokens):
// load time and disk, not quality, matter for a random model.
func VocabSpec(vocabFile string) ModelSpec {
	return ModelSpec{EmbeddingLength: 32, HeadCount: 4, HeadCountKV: 2, FeedForward: 64,
		Layers: 2, ContextLength: 8192, Seed: 1, VocabFile: vocabFile}
}

// f32s is tensor data in the little-endian float32 layout GGUF stores.
type f32s []float32

func (d f32s) WriteTo(w io.Writer) (int64, error) {
	b := make([]byte, 4*len(d))
	for i, v := range d {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	n, err := w.Write(b)
	return int64(n), err
}

// byteTokens is GPT-2's byte-to-unicode table: every byte becomes one
// printable rune, so a byte-level BPE vocabulary with no merges tokenizes
// any text into one token per byte and re-tokenizes generated text to the
// same ids (which keeps Ollama's KV-cache prefix reuse exact).
func byteTokens() []string {
	var printable []int
	for b := '!'; b <= '~'; b++ {
		printable = append(printable, int(b))
	}
	for b := 0xA1; b <= 0xAC; b++ {
		printable = append(printable, b)
	}
	for b := 0xAE; b <= 0xFF; b++ {
		printable = append(printable, b)
	}
	isPrintable := make(map[int]bool, len(printable))
	for _, b := range printable {
		isPrintable[b] = true
	}
	toks := make([]string, 256)
	next := 256
	for b := 0; b < 256; b++ {
		if isPrintable[b] {
			toks[b] = string(rune(b))
			continue
		}
		toks[b] = string(rune(next))
		next++
	}
	return toks
}

// allowed reports whether the model may sample token id: printable ASCII
// and newline only, so the output is always valid UTF-8 and never a control
// token (the model never ends a turn by itself: bound it with num_predict
// or stop sequences).
func allowed(id int) bool {
	return id == '\n' || (id >= ' ' && id <= '~')
}

// TokenCount is the number of tokens the tiny model's tokenizer makes of
// s: one per byte, one per control token. Tests use it to predict
// prompt_eval_count exactly.
func TokenCount(s string) int {
	n := len(s)
	for _, tok := range []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>"} {
		n -= strings.Count(s, tok) * (len(tok) - 1)
	}
	return n
}

// WriteModel writes a llama-architecture GGUF with random weights to path.
func WriteModel(path string, spec ModelSpec) error {
	if err := spec.check(); err != nil {
		return err
	}
	tok, err := spec.tokenizer()
	if err != nil {
		return err
	}
	kv := metadata(spec, tok)
	ts := tensors(spec, tok)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ollamatest: %w", err)
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		f.Close()
		return fmt.Errorf("ollamatest: write gguf: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("ollamatest: %w", err)
	}
	return nil
}

// check reports a spec no llama model has: heads must split the embedding
// and share the KV heads evenly.
func (s ModelSpec) check() error {
	if s.EmbeddingLength <= 0 || s.HeadCount <= 0 || s.HeadCountKV <= 0 ||
		s.EmbeddingLength%s.HeadCount != 0 || s.HeadCount%s.HeadCountKV != 0 ||
		s.FeedForward <= 0 || s.Layers <= 0 || s.ContextLength <= 0 {
		return fmt.Errorf("ollamatest: invalid model spec %+v", s)
	}
	return nil
}

// tokenizer is what the weights and metadata need of a vocabulary: its
// GGUF keys, its size, which tokens the model may sample by itself, and
// whether the vocabulary-sized matrices are stored as F16.
type tokenizer struct {
	kv      ggml.KV
	size    int
	allowed func(id int) bool
	f16     bool
}

// tokenizer is the byte vocabulary, or the one of spec.VocabFile.
func (s ModelSpec) tokenizer() (tokenizer, error) {
	if s.VocabFile == "" {
		kv, err := byteTokenizerKV(s)
		return tokenizer{kv: kv, size: vocabSize, allowed: allowed}, err
	}
	v, err := LoadVocab(s.VocabFile)
	if err != nil {
		return tokenizer{}, err
	}
	kv, err := v.metadata(s)
	if err != nil {
		return tokenizer{}, err
	}
	return tokenizer{kv: kv, size: len(v.Tokens), allowed: v.printable, f16: true}, nil
}

// metadata is the GGUF's key-value section: the llama hyperparameters and
// the tokenizer's keys.
func metadata(spec ModelSpec, tok tokenizer) ggml.KV {
	fileType := uint32(0) // all F32
	if tok.f16 {
		fileType = 1 // mostly F16
	}
	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "toolharness-tiny",
		"general.file_type":                      fileType,
		"llama.context_length":                   uint32(spec.ContextLength),
		"llama.embedding_length":                 uint32(spec.EmbeddingLength),
		"llama.block_count":                      uint32(spec.Layers),
		"llama.feed_forward_length":              uint32(spec.FeedForward),
		"llama.attention.head_count":             uint32(spec.HeadCount),
		"llama.attention.head_count_kv":          uint32(spec.HeadCountKV),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(spec.EmbeddingLength / spec.HeadCount),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(tok.size),
	}
	for k, v := range tok.kv {
		kv[k] = v
	}
	return kv
}

// byteTokenizerKV is the byte-level tokenizer's keys: GPT-2 BPE with no
// merges over the 256 bytes and three ChatML control tokens.
func byteTokenizerKV(spec ModelSpec) (ggml.KV, error) {
	tokens, types := vocabulary()
	bos, eos := TokenEndOfText, TokenIMEnd
	// A text that is already a token (EOS = the default BOS's
	// <|endoftext|>, or BOS = EOS) names that token; another renames the
	// slot's token.
	name := func(slot int, text string) int {
		if text == "" {
			return slot
		}
		if i := slices.Index(tokens, text); i >= 0 {
			return i
		}
		tokens[slot] = text
		return slot
	}
	bos = name(bos, spec.BOSText)
	if eos = name(eos, spec.EOSText); eos == TokenIMStart || bos == TokenIMStart {
		return nil, errors.New("ollamatest: a BOS or EOS text of <|im_start|> would make ChatML's turn marker end the text")
	}
	kv := ggml.KV{
		"tokenizer.ggml.model":         "gpt2",
		"tokenizer.ggml.pre":           "default",
		"tokenizer.ggml.tokens":        tokens,
		"tokenizer.ggml.token_type":    types,
		"tokenizer.ggml.merges":        []string{},
		"tokenizer.ggml.bos_token_id":  uint32(bos),
		"tokenizer.ggml.eos_token_id":  uint32(eos),
		"tokenizer.ggml.add_bos_token": spec.AddBOS,
		"tokenizer.ggml.add_eos_token": false,
	}
	if spec.ChatTemplate != "" {
		kv["tokenizer.chat_template"] = spec.ChatTemplate
	}
	return kv, nil
}

// vocabulary is the tokens and their GGUF token types: the bytes are
// normal tokens, the rest control tokens.
func vocabulary() (tokens []string, types []int32) {
	tokens = append(byteTokens(), "<|endoftext|>", "<|im_start|>", "<|im_end|>")
	types = make([]int32, len(tokens))
	for i := range types {
		types[i] = typeNormal
	}
	for i := 256; i < len(types); i++ {
		types[i] = typeControl
	}
	return tokens, types
}

// tensors are the model's weights. They are drawn from spec.Seed in one
// fixed order, so that a spec always writes the same file.
func tensors(spec ModelSpec, tok tokenizer) []*ggml.Tensor {
	w := weights{rng: rand.New(rand.NewPCG(spec.Seed, 0x746f6f6c))}
	ts := w.vocab(spec.EmbeddingLength, tok)
	for l := 0; l < spec.Layers; l++ {
		ts = w.appendLayer(ts, l, spec)
	}
	return ts
}

// weights draws random tensor data.
type weights struct{ rng *rand.Rand }

func (w weights) normal(n int, std float64) f32s {
	d := make(f32s, n)
	for i := range d {
		d[i] = float32(w.rng.NormFloat64() * std)
	}
	return d
}

func ones(n int) f32s {
	d := make(f32s, n)
	for i := range d {
		d[i] = 1
	}
	return d
}

// vocab is the token embedding and the output layer. Residual dimension 0
// carries a constant that no layer writes to (the rows of attn_output and
// ffn_down for output 0 are zero, see appendLayer). The output matrix
// turns it into a large negative logit for every token the model must not
// sample.
func (w weights) vocab(e int, tok tokenizer) []*ggml.Tensor {
	n := tok.size
	embd := w.normal(e*n, 0.3)
	for t := 0; t < n; t++ {
		embd[t*e] = 1
	}
	out := w.normal(e*n, 0.3)
	for t := 0; t < n; t++ {
		out[t*e] = 0
		if !tok.allowed(t) {
			out[t*e] = -200
		}
	}
	embdT, outT := tensor("token_embd.weight", embd, e, n), tensor("output.weight", out, e, n)
	if tok.f16 {
		embdT, outT = tensorF16("token_embd.weight", embd, e, n), tensorF16("output.weight", out, e, n)
	}
	return []*ggml.Tensor{embdT, tensor("output_norm.weight", ones(e), e), outT}
}

// appendLayer appends the tensors of block l. The output projections are
// drawn first, then the others in the order they are listed: changing
// that order changes every weight after it.
func (w weights) appendLayer(ts []*ggml.Tensor, l int, spec ModelSpec) []*ggml.Tensor {
	e, ff := spec.EmbeddingLength, spec.FeedForward
	ekv := e / spec.HeadCount * spec.HeadCountKV
	p := fmt.Sprintf("blk.%d.", l)
	attnOut := w.normal(e*e, 0.1)
	clear(attnOut[:e]) // output row 0
	down := w.normal(ff*e, 0.1)
	clear(down[:ff])
	return append(ts,
		tensor(p+"attn_norm.weight", ones(e), e),
		tensor(p+"attn_q.weight", w.normal(e*e, 0.2), e, e),
		tensor(p+"attn_k.weight", w.normal(e*ekv, 0.2), e, ekv),
		tensor(p+"attn_v.weight", w.normal(e*ekv, 0.2), e, ekv),
		tensor(p+"attn_output.weight", attnOut, e, e),
		tensor(p+"ffn_norm.weight", ones(e), e),
		tensor(p+"ffn_gate.weight", w.normal(e*ff, 0.2), e, ff),
		tensor(p+"ffn_up.weight", w.normal(e*ff, 0.2), e, ff),
		tensor(p+"ffn_down.weight", down, ff, e),
	)
}

// tensor builds an F32 tensor; shape is in ggml order (contiguous
// dimension first).
func tensor(name string, data f32s, shape ...int) *ggml.Tensor {
	s := make([]uint64, len(shape))
	for i, n := range shape {
		s[i] = uint64(n)
	}
	return &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF32), Shape: s, WriterTo: data}
}

// tensorF16 builds an F16 tensor from data.
func tensorF16(name string, data f32s, shape ...int) *ggml.Tensor {
	t := tensor(name, data, shape...)
	t.Kind, t.WriterTo = uint32(ggml.TensorTypeF16), f16s(data)
	return t
}

// f16s is tensor data in GGUF's little-endian IEEE half-precision layout.
type f16s []float32

func (d f16s) WriteTo(w io.Writer) (int64, error) {
	b := make([]byte, 2*len(d))
	for i, v := range d {
		binary.LittleEndian.PutUint16(b[2*i:], half(v))
	}
	n, err := w.Write(b)
	return int64(n), err
}

// half rounds v to the nearest IEEE 754 half. Values below the smallest
// normal half (6.1e-5) become zero: random weights of a test model lose
// nothing that matters by it.
func half(v float32) uint16 {
	bits := math.Float32bits(v)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xff) - 127 + 15
	mant := bits & 0x7fffff
	switch {
	case exp <= 0:
		return sign
	case exp >= 0x1f:
		return sign | 0x7c00
	}
	h := uint32(exp)<<10 | mant>>13
	if mant&0x1fff > 0x1000 || (mant&0x1fff == 0x1000 && h&1 == 1) {
		h++ // round to nearest even; a carry into the exponent is right
	}
	return sign | uint16(h)
}

// TemplateModel writes the tiny model with chatTemplate as its
// tokenizer.chat_template to dir/tiny.gguf and returns the path, for tests
// of template loading (the vocabulary holds ChatML's control tokens).
func TemplateModel(t testing.TB, dir, chatTemplate string) string {
	t.Helper()
	spec := DefaultSpec()
	spec.ChatTemplate = chatTemplate
	p := filepath.Join(dir, "tiny.gguf")
	if err := WriteModel(p, spec); err != nil {
		t.Fatal(err)
	}
	return p
}
