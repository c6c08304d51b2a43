package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Object is a JSON object that keeps its members in the order they were
// written. Schemas and arguments must survive a round trip unchanged (the
// official chat templates print them in insertion order), which Go maps
// cannot do.
type Object struct {
	Members []Member
}

// Member is one key and value of an Object.
type Member struct {
	Key   string
	Value any
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	for _, m := range o.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Lookup returns member key of v and whether it is present, where v is an
// ordered object (any other value has no members).
func Lookup(v any, key string) (any, bool) {
	o, ok := v.(*Object)
	if !ok || o == nil {
		return nil, false
	}
	return o.Get(key)
}

// DecodeOrdered decodes JSON into ordered values: *Object for objects,
// []any for arrays, json.Number for numbers (their text kept exactly),
// string, bool and nil.
func DecodeOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("chat: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				o.Members = append(o.Members, Member{Key: kt.(string), Value: v})
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("chat: unexpected %v", t)
	default:
		return t, nil
	}
}

// EncodeOrdered writes ordered values compactly, without HTML escaping.
func EncodeOrdered(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *Object:
		b.WriteByte('{')
		for i, m := range x.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := marshalNoEscape(m.Key)
			b.Write(k)
			b.WriteByte(':')
			if err := encodeValue(b, m.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(x))
	default:
		data, err := marshalNoEscape(x)
		if err != nil {
			return err
		}
		b.Write(data)
	}
	return nil
}

// YAMLToJSON returns data trimmed if it already is JSON (its first
// character is '{' or '['), and converts a YAML list or mapping to compact
// JSON otherwise, keeping the key order of every mapping (schemas are
// printed into prompts in the order they were written). Aliases are
// expanded within bounds: a self-referring alias, or a document that would
// expand past 262,144 values or nest deeper than 512 levels, is an error.
func YAMLToJSON(data []byte) ([]byte, error) { return toJSON(data) }

func toJSON(data []byte) ([]byte, error) {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(data) == 0 {
		return nil, errors.New("empty input")
	}
	if data[0] == '{' || data[0] == '[' {
		return data, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %w", err)
	}
	v, err := yamlValue(&n)
	if err != nil {
		return nil, err
	}
	out, err := EncodeOrdered(v)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 || (out[0] != '{' && out[0] != '[') {
		return nil, errors.New("expected a list or a mapping")
	}
	return out, nil
}

// Limits of the YAML conversion: aliases may be expanded, but a document
// must not grow past maxYAMLValues values (a "billion laughs" file), nest
// deeper than maxYAMLDepth, or refer to itself.
const (
	maxYAMLValues = 1 << 18
	maxYAMLDepth  = 512
)

// yamlConverter turns a YAML node tree into ordered values, expanding
// aliases within the limits above.
type yamlConverter struct {
	values    int
	expanding map[*yaml.Node]bool
}

func yamlValue(n *yaml.Node) (any, error) {
	c := yamlConverter{expanding: map[*yaml.Node]bool{}}
	return c.value(n, 0)
}

func (c *yamlConverter) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: YAML nested deeper than %d levels", n.Line, maxYAMLDepth)
	}
	if c.values++; c.values > maxYAMLValues {
		return nil, fmt.Errorf("line %d: YAML expands to more than %d values (aliases repeated too often)", n.Line, maxYAMLValues)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: YAML alias without an anchor", n.Line)
		}
		if c.expanding[n.Alias] {
			return nil, fmt.Errorf("line %d: YAML alias *%s refers to itself", n.Line, n.Value)
		}
		c.expanding[n.Alias] = true
		defer delete(c.expanding, n.Alias)
		return c.value(n.Alias, depth+1)
	case yaml.MappingNode:
		o := &Object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := c.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			o.Members = append(o.Members, Member{Key: n.Content[i].Value, Value: v})
		}
		return o, nil
	case yaml.SequenceNode:
		a := []any{}
		for _, e := range n.Content {
			v, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			return strings.EqualFold(n.Value, "true"), nil
		case "!!int", "!!float":
			// Keep a literal that is already JSON as it was written;
			// read YAML-only forms (0x1F, 1_000) through YAML.
			var num json.Number
			if err := json.Unmarshal([]byte(n.Value), &num); err == nil {
				return num, nil
			}
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			text, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: number %q has no JSON form", n.Line, n.Value)
			}
			return json.Number(text), nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
