package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
)

// TestRunPrintsTheAnswer: run prints the reply's content as the answer,
// shows a thinking model's reasoning apart on stderr (or not at all with
// --hide-reasoning) and never the markup around it; --json has the answer
// and the reasoning apart.
func TestRunPrintsTheAnswer(t *testing.T) {
	for _, c := range []struct {
		name, template, reply string
	}{
		{"harmony", "gpt-oss", "<|channel|>analysis<|message|>Adding 1 and 2.<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>"},
		{"think", "qwen2.5", "<think>\nAdding 1 and 2.\n</think>\n\nIt is 3."},
	} {
		for _, mode := range []string{"text", "json", "hide"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				srv := llamacpptest.New()
				t.Cleanup(srv.Close)
				srv.Script(srv.Tok.Tokenize(c.reply, false))
				args := []string{"run", "--backend", "llamacpp", "--host", srv.URL, "--model", "m", "--mode", "raw",
					"--template", c.template, "--workspace", t.TempDir(), "--max-turns", "1"}
				switch mode {
				case "json":
					args = append(args, "--json")
				case "hide":
					args = append(args, "--hide-reasoning")
				}
				stdout, stderr, code := runCLI(t, "", append(args, "what is 1+2?")...)
				if code != 0 {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
				}
				for _, m := range []string{"<|", "think>"} {
					if strings.Contains(stdout+stderr, m) {
						t.Errorf("markup %q shown:\nstdout: %s\nstderr: %s", m, stdout, stderr)
					}
				}
				switch mode {
				case "json":
					var rec chatRecord
					if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
						t.Fatalf("%v: %s", err, stdout)
					}
					if rec.Answer != "It is 3." || rec.Reasoning != "Adding 1 and 2." {
						t.Errorf("record %+v", rec)
					}
				default:
					if stdout != "It is 3.\n" {
						t.Errorf("stdout %q, want the answer", stdout)
					}
				}
				wantErr := "Thinking...\nAdding 1 and 2.\n...done thinking.\n\nIt is 3.\n"
				if mode == "hide" {
					wantErr = "It is 3.\n"
					if strings.Contains(stderr, "\n\nIt is 3.") {
						t.Errorf("stderr %q: the newlines after the hidden reasoning are shown", stderr)
					}
				}
				if !strings.HasSuffix(stderr, wantErr) {
					t.Errorf("stderr %q, want it to hold %q", stderr, wantErr)
				}
			})
		}
	}
}
