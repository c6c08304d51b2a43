package llamacpptest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func post(t *testing.T, s *Server, path, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	json.Unmarshal(buf.Bytes(), &out)
	return resp.StatusCode, out
}

func TestTokenizer(t *testing.T) {
	tok := DefaultTokenizer()
	ids := tok.Tokenize(`<|im_start|>{"name": "f"}`, true)
	if got := tok.Detokenize(ids, true); got != `<|im_start|>{"name": "f"}` {
		t.Errorf("round trip %q", got)
	}
	if id, _ := tok.ID(ImStart); ids[0] != id {
		t.Errorf("special not parsed: %v", ids)
	}
	if slices.Contains(tok.Tokenize(ImStart, false), ids[0]) {
		t.Error("special parsed with parseSpecial off")
	}
	if b := tok.Bytes("abc"); slices.Equal(b, tok.Tokenize("abc", true)) || tok.Detokenize(b, false) != "abc" {
		t.Errorf("Bytes(abc) = %v: must spell abc and differ from the merged tokens", b)
	}
}

// TestCacheFigures: cache_n is the longest common prefix with what the
// slot holds (the previous prompt and its generated ids but the last), at
// most the prompt less one; BOS rules follow the server's.
func TestCacheFigures(t *testing.T) {
	s := New()
	t.Cleanup(s.Close)
	s.Script(s.Tok.Tokenize("ab", true), s.Tok.Tokenize("cd", true), nil, nil)
	bos, _ := s.Tok.ID(BOS)
	// 1: a string prompt gets BOS; nothing cached.
	_, out := post(t, s, "/completion", `{"prompt":"hello"}`)
	p := s.Prompts()[0]
	if p.IDs[0] != bos || p.CacheN != 0 || out["content"] != "ab" || out["tokens_cached"] != float64(len(p.IDs)+1) {
		t.Errorf("first: %+v %v", p, out)
	}
	// 2: the first prompt, its output ids and more: all of the slot reused.
	held := append(slices.Clone(p.IDs[1:]), s.Tok.Tokenize("ab", true)...)
	body, _ := json.Marshal(map[string]any{"prompt": append(append([]any{"hello"}, anys(held[len(p.IDs)-1:])...), " more")})
	post(t, s, "/completion", string(body))
	p2 := s.Prompts()[1]
	if !p2.Mixed || p2.CacheN != len(p.IDs)+1 || p2.IDs[0] != bos {
		t.Errorf("second: mixed %v cache_n %d, want %d", p2.Mixed, p2.CacheN, len(p.IDs)+1)
	}
	// 3: ids only never get a BOS, so nothing matches the slot.
	post(t, s, "/completion", `{"prompt":[104,105]}`)
	if p3 := s.Prompts()[2]; p3.IDs[0] == bos || p3.CacheN != 0 {
		t.Errorf("ids only: %+v", p3)
	}
	// 4: the same prompt again: at least one token is evaluated.
	post(t, s, "/completion", `{"prompt":[104,105]}`)
	if p4 := s.Prompts()[3]; p4.CacheN != 1 || p4.PromptN != 1 {
		t.Errorf("repeat: %+v", p4)
	}
	for _, bad := range []string{`{"prompt":["a","b"]}`, `{"prompt":[]}`, `{"prompt":[99999]}`} {
		if code, _ := post(t, s, "/completion", bad); code != 400 {
			t.Errorf("%s: HTTP %d, want 400", bad, code)
		}
	}
}

func anys(ids []int) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
