package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
)

const prompt = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is the weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture %s: %v (the fixtures live in backend/replay/testdata)", name, err)
	}
	return b
}

type answer struct {
	status int
	body   []byte
}

// llamaServer answers like a llama.cpp server, giving /completion its
// answers in turn.
func llamaServer(t *testing.T, completions ...answer) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var a answer
		switch {
		case r.URL.Path == "/tokenize" && bytes.Contains(body, []byte(`"with_pieces":true`)):
			a.body = fixture(t, "tokenize_bos.json")
		case r.URL.Path == "/tokenize":
			a.body = fixture(t, "tokenize.json")
		case r.URL.Path == "/props":
			a.body = fixture(t, "props.json")
		case r.URL.Path == "/apply-template":
			a.body = []byte(`{"prompt":` + strconvQuote(prompt) + `}`)
		case r.URL.Path == "/completion":
			mu.Lock()
			if len(completions) == 0 {
				mu.Unlock()
				http.Error(w, "no more completions", http.StatusTeapot)
				return
			}
			a, completions = completions[0], completions[1:]
			mu.Unlock()
		default:
			http.NotFound(w, r)
			return
		}
		if a.status == 0 {
			a.status = http.StatusOK
		}
		w.WriteHeader(a.status)
		w.Write(a.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// result is what one call of a session observed.
type result struct {
	Chunks   []string
	Response backend.Response
	N        int
	ErrText  string
	Kind     backend.Kind
	Consumed bool
	Status   int
	Message  string
	Canceled bool
}

func observe(r *result, err error) {
	if err == nil {
		return
	}
	r.ErrText = err.Error()
	var be *backend.Error
	if errors.As(err, &be) {
		r.Kind, r.Consumed, r.Status, r.Message = be.Kind, be.Consumed, be.Status, be.Message
	}
	r.Canceled = errors.Is(err, context.Canceled)
}

var errEnough = errors.New("caller: enough")

// session is a fixed sequence of calls; run against a live backend and a
// replay of its recording, it must observe the same things.
func session(t *testing.T, b backend.Backend) []result {
	t.Helper()
	ctx := context.Background()
	var out []result
	gen := func(req backend.Request, stopAfter int) {
		var r result
		var cb func(string) error
		if stopAfter >= 0 {
			cb = func(s string) error {
				r.Chunks = append(r.Chunks, s)
				if stopAfter > 0 && len(r.Chunks) == stopAfter {
					return errEnough
				}
				return nil
			}
		}
		resp, err := b.Generate(ctx, req, cb)
		r.Response = resp
		observe(&r, err)
		out = append(out, r)
	}
	var r result
	var err error
	r.N, err = b.(backend.TokenCounter).CountTokens(ctx, "", "Hello world!")
	observe(&r, err)
	out = append(out, r)
	r = result{}
	r.N, err = b.(backend.ContextSizer).ContextSize(ctx, "")
	observe(&r, err)
	out = append(out, r)

	raw := backend.Request{Mode: backend.ModeRaw, Prompt: prompt, Stop: []string{"<|eot_id|>"},
		Options: backend.Options{Temperature: new(0.0), Seed: new(7), MaxTokens: 64}}
	gen(raw, 0)  // streamed
	gen(raw, 0)  // HTTP 400 with the server's message
	gen(raw, 0)  // stream cut after 7 chunks
	gen(raw, 2)  // the caller stops after 2 chunks
	gen(raw, -1) // no callback
	gen(backend.Request{Mode: backend.ModeChat, Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "Weather in Rome?"},
		{Role: chat.RoleAssistant, Raw: "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\"}}</tool_call>",
			ToolCalls: []chat.ToolCall{{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`), Offset: 0, Repairs: []string{"none"}}}},
		{Role: chat.RoleTool, ToolCallID: "c1", Name: "get_weather", Content: "18°C & <sunny>"},
	}}, 0)
	return out
}

func liveBackend(t *testing.T) backend.Backend {
	stream := answer{body: fixture(t, "completion_stream.sse")}
	srv := llamaServer(t, stream, answer{status: 400, body: fixture(t, "error_grammar.json")},
		answer{body: fixture(t, "completion_stream_cut.sse")}, stream, stream, stream)
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// roundTrip records session run against live, replays the recording
// through a second recorder and checks that the replay observed the same
// as live, that the two recordings are the same bytes and that the whole
// recording was replayed. It returns what live observed and the recording.
func roundTrip[T any](t *testing.T, live backend.Backend, session func(backend.Backend) T) (T, []byte) {
	t.Helper()
	var recA bytes.Buffer
	rec, err := NewRecorder(live, &recA)
	if err != nil {
		t.Fatal(err)
	}
	observed := session(rec)
	p, err := NewReplayer(bytes.NewReader(recA.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// Record the replay too: the two recordings must be the same bytes.
	var recB bytes.Buffer
	rec2, err := NewRecorder(p, &recB)
	if err != nil {
		t.Fatal(err)
	}
	replayed := session(rec2)
	if diff := cmp.Diff(observed, replayed); diff != "" {
		t.Errorf("replay observed something else (-live +replay):\n%s", diff)
	}
	if !bytes.Equal(recA.Bytes(), recB.Bytes()) {
		t.Errorf("recording of the replay differs from the original:\n%s", cmp.Diff(recA.String(), recB.String()))
	}
	if err := p.Done(); err != nil {
		t.Error(err)
	}
	return observed, recA.Bytes()
}

func TestReplayByteForByte(t *testing.T) {
	live, recording := roundTrip(t, liveBackend(t), func(b backend.Backend) []result { return session(t, b) })

	// The session must have met every kind of outcome it is meant to.
	if live[2].ErrText != "" || live[2].Response.Usage.CachedTokens != 235 || len(live[2].Chunks) != 21 {
		t.Fatalf("streamed call: %+v", live[2])
	}
	if live[3].Kind != backend.KindServer || live[3].Message != "Failed to parse grammar" {
		t.Fatalf("server error call: %+v", live[3])
	}
	if live[4].Kind != backend.KindStreamCut || !live[4].Consumed {
		t.Fatalf("cut call: %+v", live[4])
	}
	if live[5].ErrText != errEnough.Error() || len(live[5].Chunks) != 2 {
		t.Fatalf("callback-stopped call: %+v", live[5])
	}
	if got := strings.Count(string(recording), "\n"); got != 9 {
		t.Errorf("%d lines recorded, want header + 8 exchanges", got)
	}
	// The file format, with the times the client measured zeroed.
	golden(t, "session.golden.jsonl", clientTimes.ReplaceAll(recording, []byte(`"$1":0`)))
}

var clientTimes = regexp.MustCompile(`"(time_to_first_chunk_ns|total_ns)":\d+`)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", name), string(got))
}

// TestReplayErrorsBehave checks that replayed errors answer errors.Is and
// errors.As as the live ones did.
func TestReplayErrorsBehave(t *testing.T) {
	for _, live := range []error{
		&backend.Error{Kind: backend.KindCanceled, Backend: "llamacpp", Consumed: true, Err: context.Canceled},
		&backend.Error{Kind: backend.KindCanceled, Backend: "llamacpp", Err: errors.Join(context.Canceled, errors.New("while retrying"))},
		&backend.Error{Kind: backend.KindStalled, Backend: "ollama", Err: errors.New("no data within 2m0s")},
		errors.Join(errors.New("agent: step 3"), &backend.Error{Kind: backend.KindServer, Status: 503, Message: "Loading model"}),
		errors.New("plain"),
	} {
		got := toWireError(live).err()
		if got.Error() != live.Error() {
			t.Errorf("text %q, want %q", got, live)
		}
		for _, target := range []error{context.Canceled, backend.ErrCanceled, backend.ErrStalled, backend.ErrServer} {
			if errors.Is(got, target) != errors.Is(live, target) {
				t.Errorf("%v: errors.Is(%v) = %v live, %v replayed", live, target, errors.Is(live, target), errors.Is(got, target))
			}
		}
		var lb, gb *backend.Error
		if errors.As(live, &lb) != errors.As(got, &gb) || (lb != nil && (lb.Kind != gb.Kind || lb.Status != gb.Status || lb.Consumed != gb.Consumed || backend.Retryable(live) != backend.Retryable(got))) {
			t.Errorf("%v: backend error fields differ after replay: %+v vs %+v", live, lb, gb)
		}
	}
}

func record(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	rec, err := NewRecorder(liveBackend(t), &buf)
	if err != nil {
		t.Fatal(err)
	}
	session(t, rec)
	return buf.Bytes()
}

func TestReplayMismatch(t *testing.T) {
	recording := record(t)
	ctx := context.Background()
	base := backend.Request{Mode: backend.ModeRaw, Prompt: prompt, Stop: []string{"<|eot_id|>"},
		Options: backend.Options{Temperature: new(0.0), Seed: new(7), MaxTokens: 64}}
	tests := []struct {
		name  string
		calls func(p *Replayer) error
		want  MismatchError
	}{
		{name: "prompt", calls: func(p *Replayer) error {
			p.CountTokens(ctx, "", "Hello world!")
			p.ContextSize(ctx, "")
			req := base
			req.Prompt = strings.Replace(prompt, "Paris", "Lyon", 1)
			_, err := p.Generate(ctx, req, nil)
			return err
		}, want: MismatchError{Call: 3, Field: "prompt", Offset: strings.Index(prompt, "Paris"),
			Recorded: `…"t is the weather in Paris?<|eot_id|><|st"…`, Got: `…"t is the weather in Lyon?<|eot_id|><|sta"…`}},
		{name: "option", calls: func(p *Replayer) error {
			p.CountTokens(ctx, "", "Hello world!")
			p.ContextSize(ctx, "")
			req := base
			req.Options.Temperature = new(0.5)
			_, err := p.Generate(ctx, req, nil)
			return err
		}, want: MismatchError{Call: 3, Field: "options.temperature", Offset: -1, Recorded: "0", Got: "0.5"}},
		{name: "stop list", calls: func(p *Replayer) error {
			p.CountTokens(ctx, "", "Hello world!")
			p.ContextSize(ctx, "")
			req := base
			req.Stop = append(req.Stop, "</tool_call>")
			_, err := p.Generate(ctx, req, nil)
			return err
		}, want: MismatchError{Call: 3, Field: "stop.length", Offset: -1, Recorded: "1", Got: "2"}},
		{name: "kind of call", calls: func(p *Replayer) error {
			_, err := p.ContextSize(ctx, "")
			return err
		}, want: MismatchError{Call: 1, Field: "call", Offset: -1, Recorded: "count_tokens", Got: "context_size"}},
		{name: "counted text", calls: func(p *Replayer) error {
			_, err := p.CountTokens(ctx, "", "Hello world?")
			return err
		}, want: MismatchError{Call: 1, Field: "text", Offset: 11, Recorded: `"Hello world!"`, Got: `"Hello world?"`}},
		{name: "past the end", calls: func(p *Replayer) error {
			session(t, p)
			_, err := p.Generate(ctx, base, nil)
			return err
		}, want: MismatchError{Call: 9, Field: "call", Offset: -1, Recorded: "end of recording", Got: "generate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewReplayer(bytes.NewReader(recording))
			if err != nil {
				t.Fatal(err)
			}
			err = tt.calls(p)
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("err %v; want a *MismatchError", err)
			}
			if diff := cmp.Diff(tt.want, *me); diff != "" {
				t.Errorf("(-want +got):\n%s\n%v", diff, err)
			}
			if !strings.HasPrefix(err.Error(), "replay: call ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestReplayCallbackDivergence(t *testing.T) {
	p, err := NewReplayer(bytes.NewReader(record(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.CountTokens(ctx, "", "Hello world!")
	p.ContextSize(ctx, "")
	req := backend.Request{Mode: backend.ModeRaw, Prompt: prompt, Stop: []string{"<|eot_id|>"},
		Options: backend.Options{Temperature: new(0.0), Seed: new(7), MaxTokens: 64}}
	for range 3 {
		p.Generate(ctx, req, nil)
	}
	// Live, the caller stopped after 2 chunks; this one goes on.
	_, err = p.Generate(ctx, req, func(string) error { return nil })
	var me *MismatchError
	if !errors.As(err, &me) || me.Field != "callback" {
		t.Errorf("err %v; want a callback mismatch", err)
	}
}

func TestReadErrors(t *testing.T) {
	good := `{"type":"header","version":1,"capabilities":{"raw":true,"chat":false,"constrain":false,"adds_bos":false}}`
	for name, in := range map[string]string{
		"empty":           "",
		"no header":       `{"type":"generate","seq":1,"request":{"model":"","mode":"raw","prompt":"x","messages":null,"stop":null,"format":null,"options":{}}}`,
		"version":         `{"type":"header","version":99}`,
		"garbage":         good + "\n{not json\n",
		"unknown type":    good + "\n" + `{"type":"embed","seq":1}`,
		"unknown field":   good + "\n" + `{"type":"count_tokens","seq":1,"tokens":[1]}`,
		"no request":      good + "\n" + `{"type":"generate","seq":1}`,
		"text not chunks": good + "\n" + `{"type":"generate","seq":1,"request":{"mode":"raw"},"chunks":["a","b"],"response":{"text":"abc","stop_reason":"stop","usage":{}}}`,
	} {
		_, err := NewReplayer(strings.NewReader(in))
		if err == nil || !strings.HasPrefix(err.Error(), "replay: ") {
			t.Errorf("%s: err %v; want a replay: error", name, err)
		}
	}
	p, err := NewReplayer(strings.NewReader(good + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Capabilities(); !c.Raw || c.Chat {
		t.Errorf("capabilities %+v", c)
	}
}

func TestCreateAndOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	rec, err := Create(path, liveBackend(t))
	if err != nil {
		t.Fatal(err)
	}
	live := session(t, rec)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	replayed := session(t, p)
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("(-live +replay):\n%s", diff)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("replay took %v; it should not wait", d)
	}
}
