package render_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// benchNow is the frozen clock of the session benchmarks.
var benchNow = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// benchTools returns n tools of 3 to 6 properties each, with descriptions
// of about 200 characters, the shape of a real agent's catalog.
func benchTools(tb testing.TB, n int) []chat.Tool {
	tb.Helper()
	kinds := []string{"string", "integer", "boolean", "number", "array", "string"}
	tools := make([]chat.Tool, n)
	for i := range tools {
		var props []string
		var required []string
		for k := 0; k < 3+i%4; k++ {
			name := fmt.Sprintf("arg_%d_%s", k, kinds[k])
			schema := fmt.Sprintf(`{"type": %q, "description": "The %s of the operation, as described in the manual of tool %d."}`, kinds[k], name, i)
			if kinds[k] == "array" {
				schema = fmt.Sprintf(`{"type": "array", "items": {"type": "string"}, "description": "The %s values, in order."}`, name)
			}
			props = append(props, fmt.Sprintf("%q: %s", name, schema))
			if k < 2 {
				required = append(required, fmt.Sprintf("%q", name))
			}
		}
		desc := fmt.Sprintf("Tool number %d of the catalog. It reads, searches or changes the project's files and reports what it did in one short paragraph; it never asks for confirmation and fails with a clear message.", i)
		params := fmt.Sprintf(`{"type": "object", "properties": {%s}, "required": [%s]}`, strings.Join(props, ", "), strings.Join(required, ", "))
		tools[i] = chat.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: desc, Parameters: []byte(params)}
	}
	return tools
}

// benchCall is the call of turn t: a tool of the catalog with its two
// required arguments.
func benchCall(tools []chat.Tool, t int) chat.ToolCall {
	tool := tools[(t*7)%len(tools)]
	return chat.ToolCall{ID: fmt.Sprintf("call_%05d", t), Name: tool.Name,
		Arguments: []byte(fmt.Sprintf(`{"arg_0_string": "src/pkg%d/file_%d.go", "arg_1_integer": %d}`, t%5, t, t))}
}

// benchResult is the result of the call of turn t (about 300 bytes).
func benchResult(call chat.ToolCall, t int) chat.ToolResult {
	text := fmt.Sprintf("line %d: func handler%d(w http.ResponseWriter, r *http.Request) {\n", t, t) +
		strings.Repeat(fmt.Sprintf("\tlog.Printf(\"turn %d: %%s\", r.URL.Path) // <b>&</b>\n", t), 4) + "}\n"
	return chat.ToolResult{CallID: call.ID, Name: call.Name, Content: text}
}

// sessionCase is one session shape the turn benchmarks play.
type sessionCase struct {
	name   string
	family templates.Family
	format string
}

func benchFamilies(tb testing.TB) []sessionCase {
	tb.Helper()
	var out []sessionCase
	for _, name := range []string{"qwen3", "qwen2.5", "llama3.1", "gpt-oss"} {
		f, err := templates.Lookup(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, sessionCase{name: name, family: f})
	}
	// A model's own template, as --chat-template loads it: the official
	// Qwen3 template (recognised as the qwen3 family, rendered from the
	// file) and GLM-4.6 (no built-in family: the prompted default format).
	for _, own := range []struct{ name, file, eos string }{
		{"own-qwen3", "../templates/testdata/official/Qwen-Qwen3-0.6B.jinja", "<|im_end|>"},
		{"own-glm4.6", "../templates/testdata/unseen/templates/glm-4.6.jinja", "<|endoftext|>"},
	} {
		src, err := os.ReadFile(own.file)
		if err != nil {
			tb.Fatal(err)
		}
		j, err := templates.CompileJinja(own.name, string(src), templates.SpecialTokens{EOS: own.eos})
		if err != nil {
			tb.Fatal(err)
		}
		f, err := templates.FamilyOf(j)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, sessionCase{name: own.name, family: f})
	}
	return out
}

// playSession returns a session that has rendered turns prompts: a user
// request, then one call and its result per turn.
func playSession(tb testing.TB, c sessionCase, tools []chat.Tool, turns int) *render.Session {
	tb.Helper()
	s, err := render.NewSession(render.SessionConfig{Family: c.family, Format: c.format, Tools: tools, Now: benchNow,
		System: "You are a coding agent. Use the tools to answer; keep answers short."})
	if err != nil {
		tb.Fatal(err)
	}
	s.AddUser("Find where the HTTP handlers log the request path and make them log the method too.")
	if _, err := s.Prompt(); err != nil {
		tb.Fatal(err)
	}
	for t := 2; t <= turns; t++ {
		if err := playTurn(s, c, tools, t); err != nil {
			tb.Fatalf("turn %d: %v", t, err)
		}
	}
	return s
}

// playTurn adds the model's call of turn t-1 and its result, and renders
// the prompt of turn t.
func playTurn(s *render.Session, c sessionCase, tools []chat.Tool, t int) error {
	format := c.format
	if format == "" {
		format = c.family.DefaultFormat
	}
	call := benchCall(tools, t)
	raw, err := render.FormatCall(format, call)
	if err != nil {
		return err
	}
	s.AddAssistant(raw, []chat.ToolCall{call})
	if err := s.AddResults([]chat.ToolResult{benchResult(call, t)}); err != nil {
		return err
	}
	_, err = s.Prompt()
	return err
}

// BenchmarkSession measures what one turn costs the prefix builder: adding
// the model's reply and the tool result, and rendering the next prompt,
// at turn 1 (the first prompt, catalog included) and at later turns of a
// session with 10 or 100 tools. One op is one turn.
func BenchmarkSession(b *testing.B) {
	for _, c := range benchFamilies(b) {
		for _, nTools := range []int{10, 100} {
			tools := benchTools(b, nTools)
			for _, turn := range []int{1, 10, 25, 50, 200} {
				b.Run(fmt.Sprintf("%s/tools=%d/turn=%d", c.name, nTools, turn), func(b *testing.B) {
					benchTurn(b, c, tools, turn)
				})
			}
		}
	}
}

func benchTurn(b *testing.B, c sessionCase, tools []chat.Tool, turn int) {
	b.ReportAllocs()
	if turn == 1 {
		for i := 0; i < b.N; i++ {
			playSession(b, c, tools, 1)
		}
		return
	}
	base := playSession(b, c, tools, turn-1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := base.Clone()
		b.StartTimer()
		if err := playTurn(s, c, tools, turn); err != nil {
			b.Fatal(err)
		}
	}
}

// chatConversation is the conversation of a chat-mode session at turn
// turns: the same turns as playSession's.
func chatConversation(tools []chat.Tool, format string, turns int) ([]chat.Message, error) {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "You are a coding agent. Use the tools to answer; keep answers short."},
		{Role: chat.RoleUser, Content: "Find where the HTTP handlers log the request path and make them log the method too."}}
	for t := 2; t <= turns; t++ {
		call := benchCall(tools, t)
		raw, err := render.FormatCall(format, call)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Raw: raw, ToolCalls: []chat.ToolCall{call}},
			benchResult(call, t).Message())
	}
	return msgs, nil
}

// BenchmarkChatMessages measures a chat-mode turn: the message list for a
// chat endpoint at turn N (catalog in the system message, calls as the
// model wrote them, results as user messages), as the agent builds it:
// what depends only on the tools prepared once (render.Prepare).
func BenchmarkChatMessages(b *testing.B) {
	fam, err := templates.Lookup("qwen3")
	if err != nil {
		b.Fatal(err)
	}
	for _, nTools := range []int{10, 100} {
		tools := benchTools(b, nTools)
		for _, turn := range []int{1, 10, 25, 50, 200} {
			b.Run(fmt.Sprintf("hermes/tools=%d/turn=%d", nTools, turn), func(b *testing.B) {
				msgs, err := chatConversation(tools, "hermes", turn)
				if err != nil {
					b.Fatal(err)
				}
				req := render.Request{Family: fam, Format: "hermes", Tools: tools, Messages: msgs, Now: benchNow}
				if req.Prepared, err = render.Prepare(req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := render.ChatMessages(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// chatBenchCase is a session case as chat mode plays it: a built-in family
// with the catalog package render writes, or a model's own template
// (own-…) with its own tool section.
type chatBenchCase struct {
	name string
	cfg  render.SessionConfig
}

func chatBenchCases(tb testing.TB, tools []chat.Tool) []chatBenchCase {
	tb.Helper()
	var out []chatBenchCase
	for _, c := range benchFamilies(tb) {
		cfg := render.SessionConfig{Family: c.family, Format: c.format, Tools: tools, Now: benchNow,
			System: "You are a coding agent. Use the tools to answer; keep answers short."}
		if strings.HasPrefix(c.name, "own-") {
			// As agent.PlanChatCatalog decides for a loaded template.
			if _, err := render.TemplateTools(c.family, cfg.System, tools, benchNow); err != nil {
				tb.Fatalf("%s: %v", c.name, err)
			}
			cfg.OwnCatalog = true
		}
		out = append(out, chatBenchCase{name: c.name, cfg: cfg})
	}
	return out
}

// playChatSession returns a chat-mode session that has built the lists of
// turns turns, as playSession does in raw mode.
func playChatSession(tb testing.TB, c chatBenchCase, turns int) *render.ChatSession {
	tb.Helper()
	s, err := render.NewChatSession(c.cfg)
	if err != nil {
		tb.Fatal(err)
	}
	s.AddUser("Find where the HTTP handlers log the request path and make them log the method too.")
	if _, err := s.Messages(); err != nil {
		tb.Fatal(err)
	}
	for t := 2; t <= turns; t++ {
		if err := playChatTurn(s, c, t); err != nil {
			tb.Fatalf("turn %d: %v", t, err)
		}
	}
	return s
}

// playChatTurn adds the model's call of turn t-1, as raw text, and its
// result, and builds the list of turn t.
func playChatTurn(s *render.ChatSession, c chatBenchCase, t int) error {
	call := benchCall(c.cfg.Tools, t)
	raw, err := render.FormatCall("hermes", call)
	if err != nil {
		return err
	}
	if err := s.AddAssistant(chat.Message{Role: chat.RoleAssistant, Raw: raw, ToolCalls: []chat.ToolCall{call}}); err != nil {
		return err
	}
	if err := s.AddResults([]chat.ToolResult{benchResult(call, t)}); err != nil {
		return err
	}
	_, err = s.Messages()
	return err
}

// BenchmarkChatSession measures what one chat-mode turn costs the
// message-list builder (render.ChatSession, as the agent uses it): adding
// the model's reply and the tool result and building the list to send, at
// turn 1 (the catalog) and later turns, with 10 or 100 tools. One op is
// one turn.
func BenchmarkChatSession(b *testing.B) {
	for _, nTools := range []int{10, 100} {
		tools := benchTools(b, nTools)
		for _, c := range chatBenchCases(b, tools) {
			for _, turn := range []int{1, 10, 25, 50, 200} {
				b.Run(fmt.Sprintf("%s/tools=%d/turn=%d", c.name, nTools, turn), func(b *testing.B) {
					b.ReportAllocs()
					if turn == 1 {
						for i := 0; i < b.N; i++ {
							playChatSession(b, c, 1)
						}
						return
					}
					base := playChatSession(b, c, turn-1)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						s := base.Clone()
						b.StartTimer()
						if err := playChatTurn(s, c, turn); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
