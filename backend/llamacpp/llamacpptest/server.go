package llamacpptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode/utf8"
)

// Server is a running fake llama-server. Set the fields before the first
// request; the methods are safe for concurrent use.
type Server struct {
	URL string
	// Tok is the vocabulary; AddBOS makes string prompts start with BOS.
	Tok    *Tokenizer
	AddBOS bool
	NCtx   int
	// ChatTemplate and EOS are what /props reports.
	ChatTemplate string
	// ApplyTemplate renders /apply-template's messages (default: ChatML
	// with the generation prompt).
	ApplyTemplate func(msgs []Message) string

	srv     *httptest.Server
	mu      sync.Mutex
	script  [][]int
	slot    []int
	prompts []Prompt
}

// Message is an /apply-template message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Prompt is one /completion request as the server read it.
type Prompt struct {
	// Raw is the prompt field as sent; Mixed is true when it was an array
	// of strings and ids.
	Raw   json.RawMessage
	Mixed bool
	// IDs are the prompt's tokens, BOS included; CacheN and PromptN the
	// figures the server answered with.
	IDs             []int
	CacheN, PromptN int
	// Generated are the ids the model generated, the end-of-generation id
	// included.
	Generated []int
}

// New starts a server with the default tokenizer, a BOS on string
// prompts and a 4096-token context. Close it with t.Cleanup(s.Close).
func New() *Server {
	s := &Server{Tok: DefaultTokenizer(), AddBOS: true, NCtx: 4096, ChatTemplate: chatMLJinja}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Script appends replies: each is the ids the model generates for one
// request (the server appends the end-of-generation id).
func (s *Server) Script(replies ...[]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Prompts returns the /completion requests so far.
func (s *Server) Prompts() []Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Prompt(nil), s.prompts...)
}

const chatMLJinja = "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"

// ChatML renders messages as ChatML with the generation prompt.
func ChatML(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s%s\n%s%s\n", ImStart, m.Role, m.Content, ImEnd)
	}
	b.WriteString(ImStart + "assistant\n")
	return b.String()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	switch r.URL.Path {
	case "/health":
		writeJSON(w, map[string]string{"status": "ok"})
	case "/props":
		writeJSON(w, map[string]any{
			"default_generation_settings": map[string]any{"params": map[string]any{"seed": 4294967295}, "n_ctx": s.NCtx},
			"total_slots":                 1, "model_path": "toy.gguf", "chat_template": s.ChatTemplate,
			"bos_token": BOS, "eos_token": ImEnd, "build_info": "b0-llamacpptest",
		})
	case "/tokenize":
		s.tokenize(w, body)
	case "/detokenize":
		var in struct {
			Tokens []int `json:"tokens"`
		}
		if json.Unmarshal(body, &in) != nil || s.Tok.check(in.Tokens) != nil {
			writeError(w, 400, "invalid_request_error", "bad tokens")
			return
		}
		writeJSON(w, map[string]string{"content": s.Tok.Detokenize(in.Tokens, true)})
	case "/apply-template":
		var in struct {
			Messages []Message `json:"messages"`
		}
		if json.Unmarshal(body, &in) != nil {
			writeError(w, 500, "server_error", "bad messages")
			return
		}
		render := s.ApplyTemplate
		if render == nil {
			render = ChatML
		}
		writeJSON(w, map[string]string{"prompt": render(in.Messages)})
	case "/completion", "/completions":
		s.complete(w, body)
	default:
		writeError(w, 404, "not_found_error", "File Not Found")
	}
}

func (s *Server) tokenize(w http.ResponseWriter, body []byte) {
	var in struct {
		Content    json.RawMessage `json:"content"`
		AddSpecial bool            `json:"add_special"`
		WithPieces bool            `json:"with_pieces"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, 500, "server_error", err.Error())
		return
	}
	ids, _, err := s.read(in.Content, in.AddSpecial)
	if err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	if !in.WithPieces {
		writeJSON(w, map[string][]int{"tokens": ids})
		return
	}
	type piece struct {
		ID    int    `json:"id"`
		Piece string `json:"piece"`
	}
	out := []piece{}
	for _, id := range ids {
		out = append(out, piece{id, s.Tok.Piece(id, true)})
	}
	writeJSON(w, map[string]any{"tokens": out})
}

// read tokenizes a prompt: a string (BOS first when addBOS), an array of
// ids (verbatim, never a BOS) or a mixed array (BOS only when the first
// element is a string). Strings are parsed with specials on.
func (s *Server) read(raw json.RawMessage, addBOS bool) (ids []int, mixed bool, err error) {
	bos, _ := s.Tok.ID(BOS)
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if addBOS {
			ids = append(ids, bos)
		}
		return append(ids, s.Tok.Tokenize(text, true)...), false, nil
	}
	var parts []any
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, false, fmt.Errorf("\"prompt\" must be a string or an array")
	}
	if len(parts) == 0 {
		return nil, false, fmt.Errorf("\"prompt\" must not be empty")
	}
	var strs, nums int
	for i, p := range parts {
		switch v := p.(type) {
		case string:
			if i == 0 && addBOS {
				ids = append(ids, bos)
			}
			strs++
			ids = append(ids, s.Tok.Tokenize(v, true)...)
		case float64:
			nums++
			ids = append(ids, int(v))
		default:
			return nil, false, fmt.Errorf("prompt element %d is neither a string nor a token id", i)
		}
	}
	if nums == 0 {
		return nil, false, fmt.Errorf("an array of strings is several prompts, which this fake does not serve")
	}
	return ids, strs > 0, s.Tok.check(ids)
}

type completionIn struct {
	Prompt       json.RawMessage `json:"prompt"`
	Stream       bool            `json:"stream"`
	CachePrompt  *bool           `json:"cache_prompt"`
	ReturnTokens bool            `json:"return_tokens"`
	NPredict     int             `json:"n_predict"`
}

func (s *Server) complete(w http.ResponseWriter, body []byte) {
	var in completionIn
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, 500, "server_error", err.Error())
		return
	}
	ids, mixed, err := s.read(in.Prompt, s.AddBOS)
	if err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	if len(ids) >= s.NCtx {
		writeError(w, 400, "exceed_context_size_error", "the request exceeds the available context size")
		return
	}
	s.mu.Lock()
	if len(s.script) == 0 {
		s.mu.Unlock()
		writeError(w, 500, "server_error", "llamacpptest: the script has no reply left")
		return
	}
	gen := append(append([]int(nil), s.script[0]...), s.eog())
	s.script = s.script[1:]
	cacheN := 0
	if in.CachePrompt == nil || *in.CachePrompt {
		cacheN = commonPrefix(s.slot, ids)
	}
	if cacheN == len(ids) {
		cacheN-- // at least one prompt token is evaluated
	}
	// The last sampled token is never decoded, so the slot holds the
	// prompt and every generated id but the last.
	s.slot = append(append([]int(nil), ids...), gen[:len(gen)-1]...)
	slotN := len(s.slot)
	s.prompts = append(s.prompts, Prompt{Raw: in.Prompt, Mixed: mixed, IDs: ids, CacheN: cacheN, PromptN: len(ids) - cacheN, Generated: gen})
	s.mu.Unlock()

	final := map[string]any{
		"index": 0, "content": "", "tokens": []int{}, "id_slot": 0, "stop": true, "model": "toy",
		"tokens_predicted": len(gen), "tokens_evaluated": len(ids), "prompt": s.Tok.Detokenize(ids, true),
		"has_new_line": false, "truncated": false, "stop_type": "eos", "stopping_word": "", "tokens_cached": slotN,
		"timings": map[string]any{"cache_n": cacheN, "prompt_n": len(ids) - cacheN, "prompt_ms": 1.0, "predicted_n": len(gen), "predicted_ms": 2.0},
	}
	content := s.Tok.Detokenize(gen, false)
	if !in.Stream {
		final["content"] = content
		if in.ReturnTokens {
			final["tokens"] = gen
		}
		writeJSON(w, final)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	// As the server does, a token that leaves an incomplete UTF-8
	// character gets no event: its bytes go with the next event, which
	// carries only its own id.
	pending := ""
	for i, id := range gen[:len(gen)-1] {
		pending += s.Tok.Piece(id, false)
		if !utf8.ValidString(pending) {
			continue
		}
		writeEvent(w, map[string]any{"index": 0, "content": pending, "tokens": []int{id}, "stop": false,
			"id_slot": -1, "tokens_predicted": i + 1, "tokens_evaluated": len(ids)})
		pending = ""
	}
	writeEvent(w, final)
}

func (s *Server) eog() int {
	id, _ := s.Tok.ID(ImEnd)
	return id
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeEvent(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "type": typ}})
}
