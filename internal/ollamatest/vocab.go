package ollamatest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ollama/ollama/fs/ggml"
)

// EnvLlamacppDir is the directory `make llamacpp` builds into: bin/llama-server
// and src/ (llama.cpp's source tree, whose models/ggml-vocab-*.gguf are the
// real tokenizers the test models carry).
const EnvLlamacppDir = "TOOLHARNESS_LLAMACPP_DIR"

// LlamacppDir is $TOOLHARNESS_LLAMACPP_DIR, else CacheDir()/llamacpp. It
// does not check that anything is there.
func LlamacppDir() (string, error) {
	if d := os.Getenv(EnvLlamacppDir); d != "" {
		return d, nil
	}
	d, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "llamacpp"), nil
}

// VocabFile is the path of llama.cpp's vocabulary GGUF for name ("qwen2",
// "llama-bpe", "phi-3", …: models/ggml-vocab-NAME.gguf in the source tree
// `make llamacpp` unpacks). Missing, it is an error that says to run
// `make llamacpp`.
func VocabFile(name string) (string, error) {
	dir, err := LlamacppDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "src", "models", "ggml-vocab-"+name+".gguf")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("ollamatest: no vocabulary %q at %s: run `make llamacpp` (or set %s)", name, p, EnvLlamacppDir)
	}
	return p, nil
}

// Token types of a GGUF vocabulary (llama.cpp's llama_token_type).
const (
	typeNormal      = 1
	typeControl     = 3
	typeUserDefined = 4
	typeByte        = 6
)

// Vocab is a tokenizer read from a vocabulary GGUF: its tokenizer.* keys,
// copied as they are into a model written from it, and each token's text.
type Vocab struct {
	// Model is tokenizer.ggml.model: "gpt2" (byte-level BPE), "llama"
	// (SentencePiece), …
	Model  string
	Tokens []string
	Types  []int32
	kv     map[string]any
	bytes  map[rune]byte // GPT-2's rune-to-byte table
}

// LoadVocab reads the tokenizer of the GGUF at path (a vocabulary-only
// file such as llama.cpp's models/ggml-vocab-qwen2.gguf, or a model).
func LoadVocab(path string) (*Vocab, error) {
	// Decoding reads each string on its own: from memory, not from the
	// file, or a 151,936-token vocabulary takes seconds of system calls.
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ollamatest: %w", err)
	}
	g, err := ggml.Decode(bytes.NewReader(data), -1)
	if err != nil {
		return nil, fmt.Errorf("ollamatest: read vocabulary %s: %w", path, err)
	}
	kv := g.KV()
	v := &Vocab{
		Model:  kv.String("tokenizer.ggml.model"),
		Tokens: kv.Strings("tokenizer.ggml.tokens"),
		Types:  kv.Ints("tokenizer.ggml.token_type"),
		kv:     map[string]any{},
		bytes:  byteRunes(),
	}
	if len(v.Tokens) == 0 || len(v.Types) != len(v.Tokens) {
		return nil, fmt.Errorf("ollamatest: %s has %d tokens and %d token types", path, len(v.Tokens), len(v.Types))
	}
	for k := range kv.Keys() {
		if strings.HasPrefix(k, "tokenizer.") {
			v.kv[k] = kv.Value(k)
		}
	}
	return v, nil
}

// Text is the bytes token id stands for, as llama.cpp's detokenizer
// writes them (special tokens as their text): byte-level BPE pieces are
// mapped back to bytes, SentencePiece's ▁ is a space and <0xNN> one byte.
func (v *Vocab) Text(id int) string {
	tok, typ := v.Tokens[id], v.Types[id]
	if typ == typeControl || typ == typeUserDefined {
		return tok
	}
	switch v.Model {
	case "gpt2":
		return byteLevelText(tok, v.bytes)
	case "llama":
		if typ == typeByte && len(tok) == 6 && strings.HasPrefix(tok, "<0x") {
			if b, err := strconv.ParseUint(tok[3:5], 16, 8); err == nil {
				return string([]byte{byte(b)})
			}
		}
		return strings.ReplaceAll(tok, "▁", " ")
	}
	return tok
}

// byteLevelText undoes GPT-2's byte-to-rune table.
func byteLevelText(tok string, inv map[rune]byte) string {
	b := make([]byte, 0, len(tok))
	for _, r := range tok {
		c, ok := inv[r]
		if !ok {
			return tok // not a byte-level piece
		}
		b = append(b, c)
	}
	return string(b)
}

func byteRunes() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, s := range byteTokens() {
		m[[]rune(s)[0]] = byte(b)
	}
	return m
}

// printable reports whether a random model may sample token id freely:
// a normal token whose text is printable ASCII and newlines only. The
// output then never splits a UTF-8 character, never writes a special
// token and never ends by itself.
func (v *Vocab) printable(id int) bool {
	if t := v.Types[id]; t != typeNormal && t != typeByte {
		return false
	}
	s := v.Text(id)
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\n' && (c < ' ' || c > '~') {
			return false
		}
	}
	return true
}

// ID is the id of the token whose text (the vocabulary's spelling) is
// tok, for control tokens such as "<|im_end|>".
func (v *Vocab) ID(tok string) (int, error) {
	for i, t := range v.Tokens {
		if t == tok {
			return i, nil
		}
	}
	return 0, fmt.Errorf("ollamatest: no token %q in the vocabulary", tok)
}

// Holds reports whether some single token's text contains s whole: a
// character for which it is false is split across tokens wherever it is
// generated.
func (v *Vocab) Holds(s string) bool {
	for id := range v.Tokens {
		if strings.Contains(v.Text(id), s) {
			return true
		}
	}
	return false
}

// metadata is the vocabulary's tokenizer keys for a model of spec.
func (v *Vocab) metadata(spec ModelSpec) (ggml.KV, error) {
	kv := ggml.KV{}
	for k, val := range v.kv {
		kv[k] = val
	}
	if spec.ChatTemplate != "" {
		kv["tokenizer.chat_template"] = spec.ChatTemplate
	}
	if spec.AddBOS {
		if _, ok := kv["tokenizer.ggml.bos_token_id"]; !ok {
			return nil, errors.New("ollamatest: AddBOS with a vocabulary that has no BOS token")
		}
		kv["tokenizer.ggml.add_bos_token"] = true
	}
	return kv, nil
}
