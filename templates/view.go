package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// view is what a family template sees. It is prepared here, generically,
// so that templates stay close to the official Jinja text: loop facts
// (first, last, neighbours) and decoded arguments come precomputed.
type view struct {
	Messages            []*msgView
	Tools               []*toolView
	HasTools            bool
	AddGenerationPrompt bool
	BOS, EOS            string
	Now                 time.Time
}

type msgView struct {
	Role      string
	Content   string
	Reasoning string
	ToolCalls []*callView
	// HasToolCalls is true for an assistant turn with calls.
	HasToolCalls bool
	ToolCallID   string
	Name         string
	Index        int
	First, Last  bool
	Prev, Next   *msgView
	// AnswerLater is true when an assistant turn without calls comes
	// later in the conversation (precomputed so that a template needs no
	// loop over the messages inside its loop over them).
	AnswerLater bool
}

type callView struct {
	ID   string
	Name string
	// Args is the ordered arguments object.
	Args *chat.Object
	// Function is {"name": …, "arguments": …} as an ordered object.
	Function *chat.Object
}

type toolView struct {
	Name        string
	Description string
	// Params is the ordered parameters schema.
	Params *chat.Object
	// OpenAI is {"type":"function","function":{…}} as an ordered object.
	OpenAI *chat.Object
	// Function is the inner function object.
	Function *chat.Object
}

func newView(f Family, in Input) (*view, error) {
	ts, err := in.toolSet()
	if err != nil {
		return nil, err
	}
	v := &view{AddGenerationPrompt: in.AddGenerationPrompt, BOS: f.BOS, EOS: f.EOS, Now: in.Now, HasTools: ts != nil}
	if ts != nil {
		v.Tools = ts.views
	}
	for i, m := range in.Messages {
		mv := &msgView{
			Role: string(m.Role), Content: m.Content, Reasoning: m.Reasoning,
			ToolCallID: m.ToolCallID, Name: m.Name, Index: i,
			First: i == 0, Last: i == len(in.Messages)-1,
		}
		for _, c := range m.ToolCalls {
			cv, err := newCallView(c)
			if err != nil {
				return nil, err
			}
			mv.ToolCalls = append(mv.ToolCalls, cv)
		}
		mv.HasToolCalls = len(mv.ToolCalls) > 0
		if i > 0 {
			mv.Prev = v.Messages[i-1]
			v.Messages[i-1].Next = mv
		}
		v.Messages = append(v.Messages, mv)
	}
	answer := false
	for i := len(v.Messages) - 1; i >= 0; i-- {
		m := v.Messages[i]
		m.AnswerLater = answer
		answer = answer || m.Role == "assistant" && !m.HasToolCalls
	}
	return v, nil
}

func newCallView(c chat.ToolCall) (*callView, error) {
	args := &chat.Object{}
	if len(bytes.TrimSpace(c.Arguments)) > 0 {
		a, err := chat.DecodeOrdered(c.Arguments)
		if err != nil {
			return nil, fmt.Errorf("templates: arguments of %s: %w", c.Name, err)
		}
		o, ok := a.(*chat.Object)
		if !ok {
			return nil, fmt.Errorf("templates: arguments of %s are not a JSON object", c.Name)
		}
		args = o
	}
	fn := &chat.Object{Members: []chat.Member{{Key: "name", Value: c.Name}, {Key: "arguments", Value: args}}}
	return &callView{ID: c.ID, Name: c.Name, Args: args, Function: fn}, nil
}

func newToolView(t chat.Tool) (*toolView, error) {
	raw, err := chat.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("templates: tool %s: %w", t.Name, err)
	}
	o, err := chat.DecodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("templates: tool %s: %w", t.Name, err)
	}
	oa := o.(*chat.Object)
	fnv, _ := oa.Get("function")
	fn := fnv.(*chat.Object)
	pv, _ := fn.Get("parameters")
	params, ok := pv.(*chat.Object)
	if !ok {
		return nil, fmt.Errorf("templates: tool %s: parameters are not a JSON object", t.Name)
	}
	return &toolView{Name: t.Name, Description: t.Description, Params: params, OpenAI: oa, Function: fn}, nil
}

// funcMap is the template vocabulary. Names follow the Jinja filters they
// stand for.
func funcMap(family string) map[string]any {
	return map[string]any{
		"tojson": func(v any) (string, error) { return PyJSON(v, 0) },
		"tojsonIndent": func(indent int, v any) (string, error) {
			return PyJSON(v, indent)
		},
		"string":    PyStr,
		"trim":      func(s string) string { return strings.Trim(s, " \t\n\r\v\f") },
		"strip":     func(cut, s string) string { return strings.Trim(s, cut) },
		"lstrip":    func(cut, s string) string { return strings.TrimLeft(s, cut) },
		"rstrip":    func(cut, s string) string { return strings.TrimRight(s, cut) },
		"hasPrefix": strings.HasPrefix,
		"hasSuffix": strings.HasSuffix,
		"contains":  strings.Contains,
		"join":      strings.Join,
		"splitLast": func(sep, s string) string {
			p := strings.Split(s, sep)
			return p[len(p)-1]
		},
		"splitFirst": func(sep, s string) string { return strings.Split(s, sep)[0] },
		"strftime":   strftime,
		"raise": func(msg string) (string, error) {
			return "", &TemplateError{Family: family, Message: msg}
		},
		"get":     objGet,
		"has":     func(o *chat.Object, k string) bool { _, ok := chat.Lookup(o, k); return ok },
		"members": objMembers,
		"kind":    kind,
		"add":     func(a, b int) int { return a + b },
		"sub":     func(a, b int) int { return a - b },
		"mod":     func(a, b int) int { return a % b },
		"lastN": func(n int, s string) string {
			if len(s) <= n {
				return s
			}
			return s[len(s)-n:]
		},
		"len1":   func(s string) int { return len([]rune(s)) },
		"tsType": tsType,
		"pyType": pyType,
		"inList": func(s string, list any) bool {
			l, _ := list.([]any)
			for _, e := range l {
				if e == s {
					return true
				}
			}
			return false
		},
		"list":   func(v ...any) []any { return v },
		"truthy": truthy,
		"openaiTools": func(tools []*toolView) []any {
			out := make([]any, len(tools))
			for i, t := range tools {
				out[i] = t.OpenAI
			}
			return out
		},
		"functions": func(tools []*toolView) []any {
			out := make([]any, len(tools))
			for i, t := range tools {
				out[i] = t.Function
			}
			return out
		},
		"dict": func(kv ...any) (map[string]any, error) {
			if len(kv)%2 != 0 {
				return nil, fmt.Errorf("templates: dict needs key/value pairs")
			}
			m := make(map[string]any, len(kv)/2)
			for i := 0; i < len(kv); i += 2 {
				k, ok := kv[i].(string)
				if !ok {
					return nil, fmt.Errorf("templates: dict key %v is not a string", kv[i])
				}
				m[k] = kv[i+1]
			}
			return m, nil
		},
	}
}

// objGet returns member k of o, or nil.
func objGet(o any, k string) any {
	v, _ := chat.Lookup(o, k)
	return v
}

func objMembers(o any) []chat.Member {
	ob, ok := o.(*chat.Object)
	if !ok || ob == nil {
		return nil
	}
	return ob.Members
}

// kind names a JSON value's type: object, array, string, number, bool,
// null.
func kind(v any) string {
	switch v.(type) {
	case *chat.Object:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// strftime supports the directives the official templates use.
func strftime(format string, t time.Time) string {
	r := strings.NewReplacer(
		"%Y", t.Format("2006"), "%m", t.Format("01"), "%d", t.Format("02"),
		"%b", t.Format("Jan"), "%B", t.Format("January"),
		"%H", t.Format("15"), "%M", t.Format("04"), "%S", t.Format("05"),
	)
	return r.Replace(format)
}
