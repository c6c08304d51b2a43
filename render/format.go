package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// The tool-call formats, named as in package parse.
const (
	FormatXML        = "xml"
	FormatHermes     = "hermes"
	FormatJSON       = "json"
	FormatMistral    = "mistral"
	FormatQwen3Coder = "qwen3-coder"
	FormatPythonic   = "pythonic"
	FormatHarmony    = "harmony"
	FormatTags       = "tags"
)

// ErrUnknownFormat is returned (wrapped) for a format name render does not
// know.
var ErrUnknownFormat = errors.New("render: unknown format")

// Formats returns the format names, sorted.
func Formats() []string {
	out := []string{FormatXML, FormatHermes, FormatJSON, FormatMistral, FormatQwen3Coder, FormatPythonic, FormatHarmony, FormatTags}
	sort.Strings(out)
	return out
}

func checkFormat(format string) error {
	for _, f := range Formats() {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownFormat, format, strings.Join(Formats(), ", "))
}

// FormatCall writes one call exactly as the catalog of format instructs.
func FormatCall(format string, call chat.ToolCall) (string, error) {
	return FormatCalls(format, []chat.ToolCall{call})
}

// FormatCalls writes the calls of one assistant turn in format.
func FormatCalls(format string, calls []chat.ToolCall) (string, error) {
	if err := checkFormat(format); err != nil {
		return "", err
	}
	if len(calls) == 0 {
		return "", nil
	}
	args := make([]*chat.Object, len(calls))
	for i, c := range calls {
		a, err := argsObject(c)
		if err != nil {
			return "", err
		}
		args[i] = a
	}
	var b strings.Builder
	var err error
	switch format {
	case FormatXML:
		b.WriteString("<function_calls>\n")
		for i, c := range calls {
			fmt.Fprintf(&b, "<invoke name=\"%s\">\n", c.Name)
			if err := rawParams(&b, args[i], "<parameter name=\"%[1]s\">%[2]s</parameter>\n"); err != nil {
				return "", err
			}
			b.WriteString("</invoke>\n")
		}
		b.WriteString("</function_calls>")
	case FormatHermes:
		err = jsonCalls(&b, calls, args, "\n", "<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>")
	case FormatJSON:
		err = jsonCalls(&b, calls, args, "\n", "{\"name\": %s, \"parameters\": %s}")
	case FormatMistral:
		b.WriteString("[TOOL_CALLS][")
		err = jsonCalls(&b, calls, args, ", ", "{\"name\": %s, \"arguments\": %s}")
		b.WriteString("]")
	case FormatQwen3Coder:
		for i, c := range calls {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<tool_call>\n<function=%s>\n", c.Name)
			if err := rawParams(&b, args[i], "<parameter=%[1]s>\n%[2]s\n</parameter>\n"); err != nil {
				return "", err
			}
			b.WriteString("</function>\n</tool_call>")
		}
	case FormatPythonic:
		b.WriteString("[")
		for i, c := range calls {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Name + "(")
			for j, m := range args[i].Members {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(m.Key + "=")
				if err := writePython(&b, m.Value); err != nil {
					return "", err
				}
			}
			b.WriteString(")")
		}
		b.WriteString("]")
	case FormatHarmony:
		// One message per call; gpt-oss stops at <|call|>, so a turn
		// normally holds one, and parse reads consecutive ones.
		for i, c := range calls {
			a, err := chat.EncodeOrdered(args[i])
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "<|channel|>commentary to=functions.%s <|constrain|>json<|message|>%s<|call|>", c.Name, a)
		}
	case FormatTags:
		for i, c := range calls {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<%s>\n", c.Name)
			if err := rawParams(&b, args[i], "<%[1]s>%[2]s</%[1]s>\n"); err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "</%s>", c.Name)
		}
	}
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// jsonCalls writes calls in a JSON-object format: layout gets the quoted
// name and the arguments (Python-style JSON, as the official templates
// print them); calls are separated by sep.
func jsonCalls(b *strings.Builder, calls []chat.ToolCall, args []*chat.Object, sep, layout string) error {
	for i, c := range calls {
		if i > 0 {
			b.WriteString(sep)
		}
		a, err := templates.PyJSON(args[i], 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, layout, quote(c.Name), a)
	}
	return nil
}

// rawParams writes the parameters of a raw-text format (xml,
// qwen3-coder, tags): layout gets the key ([1]) and the raw value ([2]).
func rawParams(b *strings.Builder, args *chat.Object, layout string) error {
	for _, m := range args.Members {
		v, err := rawValue(m.Value)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, layout, m.Key, v)
	}
	return nil
}

// argsObject decodes a call's arguments in their written key order.
func argsObject(c chat.ToolCall) (*chat.Object, error) {
	if len(bytes.TrimSpace(c.Arguments)) == 0 {
		return &chat.Object{}, nil
	}
	v, err := chat.DecodeOrdered(c.Arguments)
	if err != nil {
		return nil, fmt.Errorf("render: arguments of %s: %w", c.Name, err)
	}
	o, ok := v.(*chat.Object)
	if !ok {
		return nil, fmt.Errorf("render: arguments of %s are not a JSON object", c.Name)
	}
	return o, nil
}

// rawValue is a parameter value as the XML-like formats write it: strings
// as they are, everything else as compact JSON.
func rawValue(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	out, err := chat.EncodeOrdered(v)
	return string(out), err
}

func quote(s string) string {
	q, _ := templates.PyJSON(s, 0)
	return q
}

// writePython writes a JSON value as a Python literal.
func writePython(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case *chat.Object:
		b.WriteString("{")
		for i, m := range x.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(m.Key) + ": ")
			if err := writePython(b, m.Value); err != nil {
				return err
			}
		}
		b.WriteString("}")
	case []any:
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writePython(b, e); err != nil {
				return err
			}
		}
		b.WriteString("]")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case nil:
		b.WriteString("None")
	case json.Number:
		b.WriteString(string(x))
	case string:
		b.WriteString(quote(x))
	default:
		return fmt.Errorf("render: cannot write %T as a Python literal", v)
	}
	return nil
}
