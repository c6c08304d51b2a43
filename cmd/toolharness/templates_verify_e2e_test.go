package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/internal/llamacpptest"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/templates"
)

var updateVerify = flag.Bool("update-verify", false, "rewrite testdata/llama-server-verify.md from a run against the real llama-server")

// verifyCase is one template loaded into llama-server with
// --chat-template-file: a built-in family (verified with --template) or a
// conformance template (verified with the template, BOS and EOS the
// server reports in /props, as `templates verify` does without
// --template).
type verifyCase struct {
	name, file, family string
	tokens             templates.SpecialTokens
}

func verifyCases(t *testing.T) []verifyCase {
	t.Helper()
	fams, err := templates.Families()
	if err != nil {
		t.Fatal(err)
	}
	var cases []verifyCase
	for _, f := range fams {
		cases = append(cases, verifyCase{name: "family " + f.Name, family: f.Name, tokens: f.Tokenizer,
			file: filepath.Join("..", "..", "templates", "families", f.Template)})
	}
	dir := filepath.Join("..", "..", "templates", "testdata", "conformance")
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Templates []struct {
			ID, File      string
			SpecialTokens struct {
				BOS *string `json:"bos_token"`
				EOS *string `json:"eos_token"`
			} `json:"special_tokens"`
			Kwargs map[string]any
		}
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range m.Templates {
		// A server takes no per-template kwargs, and one file is one
		// template whatever its manifest aliases.
		if len(e.Kwargs) > 0 || seen[e.File] {
			continue
		}
		seen[e.File] = true
		c := verifyCase{name: e.ID, file: filepath.Join(dir, e.File)}
		if e.SpecialTokens.BOS != nil {
			c.tokens.BOS = *e.SpecialTokens.BOS
		}
		if e.SpecialTokens.EOS != nil {
			c.tokens.EOS = *e.SpecialTokens.EOS
		}
		cases = append(cases, c)
	}
	return cases
}

// TestE2ETemplatesVerifyLlamaServer runs `templates verify` on a reference
// conversation with calls and results against a real llama-server for
// every built-in family and every conformance template: llama.cpp's own
// Jinja engine is a third renderer beside Jinja2 and toolharness's. The
// outcome of each (identical, the first difference, or why it could not
// be compared) is the table testdata/llama-server-verify.md, which
// docs/templates.md explains line by line; any change fails the test.
func TestE2ETemplatesVerifyLlamaServer(t *testing.T) {
	conv := writeConversation(t, "c_call_result")
	var table strings.Builder
	table.WriteString("| template | llama-server | templates verify |\n|---|---|---|\n")
	for _, c := range verifyCases(t) {
		fmt.Fprintf(&table, "| %s | %s |\n", c.name, verifyOne(t, c, conv))
	}
	golden := filepath.Join("testdata", "llama-server-verify.md")
	if *updateVerify {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (write it with -update-verify)", err)
	}
	if diff := cmp.Diff(string(want), table.String()); diff != "" {
		t.Errorf("templates verify against llama-server changed (-want +got):\n%s", diff)
	}
}

// verifyOne starts a server on c's template and verifies the
// conversation; it returns the two table cells.
func verifyOne(t *testing.T, c verifyCase, conv string) string {
	t.Helper()
	if !strings.HasSuffix(c.file, ".jinja") {
		return "not loaded | not a Jinja template"
	}
	spec := ollamatest.DefaultSpec()
	spec.BOSText, spec.EOSText = c.tokens.BOS, c.tokens.EOS
	srv, err := llamacpptest.New(llamacpptest.WithSpec(spec), llamacpptest.WithArgs("--chat-template-file", c.file))
	if err != nil {
		// llama-server logs from a thread of its own, and a server that
		// exits at start-up may not have flushed its error line: the cell
		// names the failure, the log has the reason when it was written.
		if strings.Contains(err.Error(), "exited at start-up") {
			t.Logf("%s: %s", c.name, serverError(err.Error()))
			return "not loaded: llama-server exited at start-up | —"
		}
		return "not loaded: " + serverError(err.Error()) + " | —"
	}
	defer srv.Close()
	args := []string{"toolharness", "templates", "verify", "--host", srv.URL, "--messages", conv,
		"--now", "2025-03-14T09:26:53Z", "--verbatim", "--json"}
	if c.family != "" {
		args = append(args, "--template", c.family)
	}
	var out, errOut bytes.Buffer
	code := run(args, nil, &out, &errOut)
	// The server names its template after the model file, a temp path.
	errText := strings.ReplaceAll(errOut.String(), srv.ModelPath, "model.gguf")
	var res struct {
		Equal            bool   `json:"equal"`
		ToolharnessBytes int    `json:"toolharness_bytes"`
		ServerBytes      int    `json:"server_bytes"`
		Toolharness      string `json:"toolharness_rendering"`
		Server           string `json:"server_rendering"`
		Offset           *int   `json:"offset"`
	}
	if code > 1 || json.Unmarshal(out.Bytes(), &res) != nil {
		return "loaded | error: " + cell(lastLine(errText))
	}
	if res.Equal != (res.Toolharness == res.Server) || (code == 0) != res.Equal {
		t.Errorf("%s: templates verify said equal=%v (exit %d) of renderings that are equal=%v", c.name, res.Equal, code, res.Toolharness == res.Server)
	}
	verifyText(t, c, args, res.Equal, res.Offset, res.ToolharnessBytes)
	if res.Equal {
		return fmt.Sprintf("loaded | identical (%d bytes)", res.ToolharnessBytes)
	}
	// The server renders its own clock where toolharness renders --now;
	// the cell compares the renderings with today's date written <today>,
	// so that its offset and context do not change with the day the test
	// runs.
	diff := compareRenderings(withoutToday(res.Toolharness), withoutToday(res.Server))
	if diff.Equal {
		return fmt.Sprintf("loaded | identical but for today's date (%d/%d bytes)", res.ToolharnessBytes, res.ServerBytes)
	}
	return fmt.Sprintf("loaded | differ at byte %d of %d/%d: toolharness `%s`, server `%s`", *diff.Offset,
		res.ToolharnessBytes, res.ServerBytes, cell(fmt.Sprintf("%q", diff.HarnessText)), cell(fmt.Sprintf("%q", diff.ServerText)))
}

// verifyText runs the same verify without --json: the exit status and the
// text say what the JSON said (identical, or the byte where the renderings
// differ and both sides of it).
func verifyText(t *testing.T, c verifyCase, args []string, equal bool, offset *int, n int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--json" }), nil, &out, &errOut)
	var want []string
	switch {
	case equal:
		want = []string{"identical: ", fmt.Sprintf("renders the same %d bytes as the server", n)}
	case offset != nil:
		want = []string{fmt.Sprintf("differ at byte %d ", *offset), "\n  toolharness: \"", "\n  server:      \""}
	default:
		t.Errorf("%s: the renderings differ and --json gives no offset", c.name)
	}
	if wantCode := map[bool]int{true: 0, false: 1}[equal]; code != wantCode {
		t.Errorf("%s: text verify exit %d, --json's %d", c.name, code, wantCode)
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("%s: text verify output lacks %q:\n%s", c.name, w, out.String())
		}
	}
}

// serverError is the line of a start-up failure that says why, without
// the server's log timestamp.
func serverError(msg string) string {
	first, _, _ := strings.Cut(msg, "; log tail:")
	return cell(strings.TrimPrefix(first, "llamacpptest: llama-server exited at start-up: "))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// cell makes s fit one Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(withoutToday(s), "|", `\|`)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// withoutToday writes today's date (the server's clock, in the layouts
// templates print it) as <today>.
func withoutToday(s string) string {
	now := time.Now()
	for _, layout := range []string{"02 Jan 2006", "2006-01-02", "January 02, 2006", "2 Jan 2006", "January 2, 2006"} {
		s = strings.ReplaceAll(s, now.Format(layout), "<today>")
		s = strings.ReplaceAll(s, now.UTC().Format(layout), "<today>")
	}
	return s
}
