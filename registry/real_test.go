package registry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

type realCall struct {
	Set        string          `json:"set"`
	Source     string          `json:"source"`
	Model      string          `json:"model"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	TheirValid *bool           `json:"their_valid"`
}

func readRealCalls(t testing.TB) []realCall {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "real", "calls.jsonl"))
	if err != nil {
		t.Fatalf("%v (the file is committed with the package; see testdata/real/README.md)", err)
	}
	defer f.Close()
	var out []realCall
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c realCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatal("no calls in testdata/real/calls.jsonl")
	}
	return out
}

func realRegistries(t testing.TB) map[string]*Registry {
	t.Helper()
	regs := map[string]*Registry{}
	for set, file := range map[string]string{"hanxen": "hanxen_tools.yaml", "mikeveerman": "mikeveerman_tools.json"} {
		tools, err := chat.ReadToolsFile(filepath.Join("testdata", "real", file))
		if err != nil {
			t.Fatal(err)
		}
		r := New(Options{})
		for _, tool := range tools {
			if err := r.Register(Spec{Tool: tool, Handler: nop}); err != nil {
				t.Fatal(err)
			}
		}
		regs[set] = r
	}
	return regs
}

// TestRealCalls validates every call real local models made in the shared
// corpus against the tools they were given, and keeps our verdict and
// message for each in a golden file. It also counts where that
// benchmark's own checker (which only looked at presence) disagrees.
func TestRealCalls(t *testing.T) {
	regs := realRegistries(t)
	var b bytes.Buffer
	counts := map[string]int{}
	disagree := 0
	for _, c := range readRealCalls(t) {
		args := c.Arguments
		if len(args) > 0 && args[0] == '"' {
			// Some parsers kept the arguments as a JSON string.
			var s string
			if json.Unmarshal(args, &s) == nil {
				args = json.RawMessage(s)
			}
		}
		_, err := regs[c.Set].Validate(chat.ToolCall{Name: c.Name, Arguments: args})
		line := struct {
			Model string `json:"model"`
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			Kind  Kind   `json:"kind,omitempty"`
			Error string `json:"error,omitempty"`
		}{Model: c.Model, Name: c.Name, OK: err == nil}
		key := c.Set + " ok"
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: %v", c.Name, err)
			}
			line.Kind, line.Error = e.Kind, e.Message
			key = c.Set + " " + string(e.Kind)
		}
		counts[key]++
		if c.TheirValid != nil && *c.TheirValid && err != nil {
			disagree++
		}
		data, err := chat.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "# %s: %d\n", k, counts[k])
	}
	fmt.Fprintf(&b, "# mikeveerman calls its checker accepted and we refuse: %d\n", disagree)
	golden(t, filepath.Join("real", "validated.golden.jsonl"), b.String())
}
