package source

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// GGUF value types (ggml's gguf.h).
const (
	ggufUint8 uint32 = iota
	ggufInt8
	ggufUint16
	ggufInt16
	ggufUint32
	ggufInt32
	ggufFloat32
	ggufBool
	ggufString
	ggufArray
	ggufUint64
	ggufInt64
	ggufFloat64
)

const (
	keyChatTemplate = "tokenizer.chat_template"
	keyTokens       = "tokenizer.ggml.tokens"
	keyBOS          = "tokenizer.ggml.bos_token_id"
	keyEOS          = "tokenizer.ggml.eos_token_id"
	keyName         = "general.name"
)

// isGGUF reports whether the file at path starts with the GGUF magic.
func isGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "GGUF"
}

// ggufMeta is the metadata of a GGUF file that a chat template needs.
type ggufMeta struct {
	name      string
	templates map[string]string // "" = tokenizer.chat_template, else the NAME of tokenizer.chat_template.NAME
	tokens    []string
	bos, eos  int64 // -1 when absent
}

// FromGGUF reads the chat template and the BOS/EOS texts of a GGUF file.
func FromGGUF(path string, o Options) (Template, error) {
	m, err := readGGUF(path)
	if err != nil {
		return Template{}, err
	}
	t := Template{Name: m.name}
	if t.Name == "" {
		t.Name = modelName(path)
	}
	key := ""
	if _, ok := m.templates["tool_use"]; ok && o.Tools {
		key = "tool_use"
	}
	text, ok := m.templates[key]
	if !ok {
		return Template{}, fmt.Errorf("%w: %s has no %s", ErrNoTemplate, path, keyChatTemplate)
	}
	t.Text = text
	t.Origin = "GGUF " + keyChatTemplate
	if key != "" {
		t.Origin += "." + key
	}
	if t.Tokens.BOS, err = m.token(m.bos, keyBOS); err != nil {
		return Template{}, fmt.Errorf("source: %s: %w", path, err)
	}
	if t.Tokens.EOS, err = m.token(m.eos, keyEOS); err != nil {
		return Template{}, fmt.Errorf("source: %s: %w", path, err)
	}
	return t, nil
}

func (m ggufMeta) token(id int64, key string) (string, error) {
	if id < 0 {
		return "", nil
	}
	if id >= int64(len(m.tokens)) {
		return "", fmt.Errorf("%s %d is not in %s (%d tokens)", key, id, keyTokens, len(m.tokens))
	}
	return m.tokens[id], nil
}

// ggufReader reads GGUF values, refusing any length beyond the bytes left.
type ggufReader struct {
	r    *bufio.Reader
	left int64 // bytes not yet read
}

var errTruncated = errors.New("truncated")

func (g *ggufReader) read(n int64) ([]byte, error) {
	if n < 0 || n > g.left {
		return nil, errTruncated
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(g.r, buf); err != nil {
		return nil, errTruncated
	}
	g.left -= n
	return buf, nil
}

func (g *ggufReader) skip(n int64) error {
	if n < 0 || n > g.left {
		return errTruncated
	}
	if _, err := g.r.Discard(int(n)); err != nil {
		return errTruncated
	}
	g.left -= n
	return nil
}

func (g *ggufReader) u32() (uint32, error) {
	b, err := g.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (g *ggufReader) u64() (uint64, error) {
	b, err := g.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (g *ggufReader) str() (string, error) {
	n, err := g.u64()
	if err != nil {
		return "", err
	}
	if n > math.MaxInt64 {
		return "", errTruncated
	}
	b, err := g.read(int64(n))
	return string(b), err
}

// scalarSize is the byte size of a fixed-size GGUF type (0 otherwise).
func scalarSize(t uint32) int64 {
	switch t {
	case ggufUint8, ggufInt8, ggufBool:
		return 1
	case ggufUint16, ggufInt16:
		return 2
	case ggufUint32, ggufInt32, ggufFloat32:
		return 4
	case ggufUint64, ggufInt64, ggufFloat64:
		return 8
	}
	return 0
}

// integer reads an integer value of type t (the token ids are uint32 in
// practice; any integer type is accepted).
func (g *ggufReader) integer(t uint32) (int64, bool, error) {
	size := scalarSize(t)
	if size == 0 || t == ggufFloat32 || t == ggufFloat64 || t == ggufBool {
		return 0, false, g.skipValue(t)
	}
	b, err := g.read(size)
	if err != nil {
		return 0, false, err
	}
	var v uint64
	for i := size - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if v > math.MaxInt64 {
		return 0, false, nil
	}
	return int64(v), true, nil
}

func (g *ggufReader) skipValue(t uint32) error {
	if size := scalarSize(t); size > 0 {
		return g.skip(size)
	}
	switch t {
	case ggufString:
		_, err := g.str()
		return err
	case ggufArray:
		et, n, err := g.arrayHeader()
		if err != nil {
			return err
		}
		if size := scalarSize(et); size > 0 {
			if n > uint64(g.left/size) {
				return errTruncated
			}
			return g.skip(int64(n) * size)
		}
		if n > uint64(g.left) { // every element takes at least a byte
			return errTruncated
		}
		for i := uint64(0); i < n; i++ {
			if err := g.skipValue(et); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown value type %d", t)
}

// arrayHeader reads an array's element type and length.
func (g *ggufReader) arrayHeader() (elem uint32, n uint64, err error) {
	if elem, err = g.u32(); err != nil {
		return 0, 0, err
	}
	n, err = g.u64()
	return elem, n, err
}

func (g *ggufReader) strings() ([]string, error) {
	et, n, err := g.arrayHeader()
	if err != nil {
		return nil, err
	}
	if et != ggufString {
		return nil, fmt.Errorf("%s is not an array of strings", keyTokens)
	}
	if n > uint64(g.left/8) { // each string has an 8-byte length
		return nil, errTruncated
	}
	out := make([]string, 0, n)
	for i := uint64(0); i < n; i++ {
		s, err := g.str()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// readGGUF reads the metadata of a GGUF file (version 2 or 3), stopping
// before the tensor index.
func readGGUF(path string) (ggufMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return ggufMeta{}, fmt.Errorf("source: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ggufMeta{}, fmt.Errorf("source: %w", err)
	}
	g := &ggufReader{r: bufio.NewReaderSize(f, 64<<10), left: info.Size()}
	m, err := g.meta()
	if err != nil {
		if errors.Is(err, errTruncated) {
			err = fmt.Errorf("truncated or corrupt metadata (%d of %d bytes read)", info.Size()-g.left, info.Size())
		}
		return ggufMeta{}, fmt.Errorf("source: %s: not a readable GGUF file: %w", path, err)
	}
	return m, nil
}

func (g *ggufReader) meta() (ggufMeta, error) {
	magic, err := g.read(4)
	if err != nil || string(magic) != "GGUF" {
		return ggufMeta{}, errors.New("no GGUF magic")
	}
	version, err := g.u32()
	if err != nil {
		return ggufMeta{}, err
	}
	if version != 2 && version != 3 {
		return ggufMeta{}, fmt.Errorf("GGUF version %d (want 2 or 3)", version)
	}
	if _, err := g.u64(); err != nil { // tensor count
		return ggufMeta{}, err
	}
	count, err := g.u64()
	if err != nil {
		return ggufMeta{}, err
	}
	m := ggufMeta{templates: map[string]string{}, bos: -1, eos: -1}
	for i := uint64(0); i < count; i++ {
		if err := g.keyValue(&m); err != nil {
			return ggufMeta{}, err
		}
	}
	return m, nil
}

func (g *ggufReader) keyValue(m *ggufMeta) error {
	key, err := g.str()
	if err != nil {
		return err
	}
	t, err := g.u32()
	if err != nil {
		return err
	}
	switch {
	case key == keyTokens && t == ggufArray:
		m.tokens, err = g.strings()
	case key == keyBOS || key == keyEOS:
		id, ok, err := g.integer(t)
		if err != nil {
			return err
		}
		if ok && key == keyBOS {
			m.bos = id
		} else if ok {
			m.eos = id
		}
	case (key == keyChatTemplate || strings.HasPrefix(key, keyChatTemplate+".")) && t == ggufString:
		var s string
		s, err = g.str()
		m.templates[strings.TrimPrefix(strings.TrimPrefix(key, keyChatTemplate), ".")] = s
	case key == keyName && t == ggufString:
		m.name, err = g.str()
	default:
		err = g.skipValue(t)
	}
	return err
}
