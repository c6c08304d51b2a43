package replay

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
)

// TestReplayNewFields records a llama.cpp exchange that uses the fields
// of format version 2 (a grammar in the request; a stop sequence and notes
// in the response) and replays it byte for byte.
func TestReplayNewFields(t *testing.T) {
	srv := llamaServer(t, answer{body: fixture(t, "completion_stream_word.sse")})
	live, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	const grammar = `root ::= "<tool_call>" [^<]* "</tool_call>"`
	req := backend.Request{Mode: backend.ModeRaw, Prompt: prompt, Stop: []string{"</tool_call>"}, Grammar: grammar}
	got, recording := recordOne(t, live, req)
	if got.ErrText != "" {
		t.Fatal(got.ErrText)
	}
	if got.Response.StopSequence != "</tool_call>" || len(got.Response.Notes) != 1 {
		t.Fatalf("live response: stop sequence %q, notes %q; want </tool_call> and the BOS note", got.Response.StopSequence, got.Response.Notes)
	}
	recordingHas(t, recording, `"grammar":"root ::= \"<tool_call>\" [^<]* \"</tool_call>\""`, `"stop_sequence":"</tool_call>"`, `"notes":["stripped the rendered BOS`)

	// Another grammar is another request.
	p, err := NewReplayer(bytes.NewReader(recording))
	if err != nil {
		t.Fatal(err)
	}
	other := req
	other.Grammar = `root ::= "x"`
	_, err = p.Generate(context.Background(), other, nil)
	var me *MismatchError
	if !errors.As(err, &me) || me.Field != "grammar" {
		t.Errorf("err %v; want a mismatch in grammar", err)
	}
}

// TestReplayNotesKept: null notes and an empty list stay what they were.
func TestReplayNotesKept(t *testing.T) {
	for _, notes := range [][]string{nil, {}, {"a", "b"}} {
		w := toWireResponse(backend.Response{Text: "x", Notes: notes})
		var buf bytes.Buffer
		rec := &entry{Type: typeGenerate, Seq: 1, Request: toWireRequest(backend.Request{Mode: backend.ModeRaw, Prompt: "p"}), Chunks: []string{"x"}, Response: w}
		b, err := chat.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString(`{"type":"header","version":2}` + "\n")
		buf.Write(append(b, '\n'))
		p, err := NewReplayer(&buf)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "p"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(notes, resp.Notes); diff != "" || (notes == nil) != (resp.Notes == nil) {
			t.Errorf("notes %#v replayed as %#v", notes, resp.Notes)
		}
	}
}

// TestReadVersion1 replays a recording of format version 1 (the golden
// session as it was before version 2): it reads, and replays the session
// as it was recorded then, without notes.
func TestReadVersion1(t *testing.T) {
	p, err := NewReplayer(bytes.NewReader(fixture(t, "session.v1.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	var recA bytes.Buffer
	rec, err := NewRecorder(liveBackend(t), &recA)
	if err != nil {
		t.Fatal(err)
	}
	live := session(t, rec)
	for i := range live {
		live[i].Response.Notes = nil // version 1 had none
		live[i].Response.Usage.SlotTokens = 0
		live[i].Response.Usage.TimeToFirstChunk, live[i].Response.Usage.Total = 0, 0
	}
	replayed := session(t, p)
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("(-live +replay of version 1):\n%s", diff)
	}
	if err := p.Done(); err != nil {
		t.Error(err)
	}

	bad := `{"type":"header","version":1}` + "\n" +
		`{"type":"generate","seq":1,"request":{"mode":"raw","prompt":"p","grammar":"root ::= \"x\""}}`
	if _, err := NewReplayer(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "request.grammar in a version 1 recording") {
		t.Errorf("grammar in a version-1 recording: err %v", err)
	}
}

// recordOne records one Generate of req through live, replays it (see
// roundTrip) and returns what live answered and the recording.
func recordOne(t *testing.T, live backend.Backend, req backend.Request) (result, []byte) {
	t.Helper()
	return roundTrip(t, live, func(b backend.Backend) result {
		var r result
		resp, err := b.Generate(context.Background(), req, nil)
		r.Response = resp
		observe(&r, err)
		return r
	})
}

// recordingHas fails t for each of want the recording lacks.
func recordingHas(t *testing.T, recording []byte, want ...string) {
	t.Helper()
	for _, s := range want {
		if !bytes.Contains(recording, []byte(s)) {
			t.Errorf("recording lacks %s:\n%s", s, recording)
		}
	}
}

// TestReadVersion2TokenFields: token fields in a version-2 recording are
// refused (a real exchange with them: TestE2ERecordReplayTokenFields).
func TestReadVersion2TokenFields(t *testing.T) {
	v2 := `{"type":"header","version":2}` + "\n" + `{"type":"generate","seq":1,"request":{"mode":"raw","prompt":"p","return_tokens":true}}`
	if _, err := NewReplayer(strings.NewReader(v2)); err == nil || !strings.Contains(err.Error(), "in a version 2 recording") {
		t.Errorf("token fields in a version-2 recording: err %v", err)
	}
}
