package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is one fenced block of README.md: its info string ("sh",
// "sh server", "sh files", "") and its command lines, continuations
// joined.
type readmeBlock struct {
	info  string
	lines []string
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeBlock
	var cur *readmeBlock
	pending := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if info, ok := strings.CutPrefix(line, "```"); ok {
			if cur == nil {
				cur = &readmeBlock{info: strings.TrimSpace(info)}
			} else {
				blocks = append(blocks, *cur)
				cur = nil
			}
			continue
		}
		if cur == nil {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			pending += l
			continue
		}
		line, pending = pending+line, ""
		if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
			cur.lines = append(cur.lines, s)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// TestREADMECommands runs the README's commands. Blocks marked "sh" need
// no model server: each line runs from the repository root, with the
// binary this test builds as toolharness (and ./bin/toolharness) and /tmp
// a temporary folder, and must exit 0; "make …" lines are the build this
// test does itself and the test suite, and are not run. Blocks marked
// "sh server" need a model server: each toolharness line runs with every
// server URL pointing at a closed port and must fail with the one
// "cannot reach" line, which shows its flags and files were accepted.
// Blocks marked "sh files" name the reader's own model files and are
// not run.
func TestREADMECommands(t *testing.T) {
	bin := toolharnessBinary(t)
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "toolharness")); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dead := deadHost(t)
	env := append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "OLLAMA_HOST="+dead)
	urls := regexp.MustCompile(`https?://[A-Za-z0-9.]+:\d+(/v1)?`)
	sh := func(cwd, line string) (string, int) {
		cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
		cmd.Dir, cmd.Env = cwd, env
		out, err := cmd.CombinedOutput()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("%s: %v", line, err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	ran, checked := 0, 0
	for _, b := range readmeBlocks(t) {
		for _, line := range b.lines {
			switch b.info {
			case "sh":
				if strings.HasPrefix(line, "make ") {
					continue
				}
				line = strings.ReplaceAll(strings.ReplaceAll(line, "./bin/toolharness", "toolharness"), "/tmp/", tmp+"/")
				if out, code := sh("../..", line); code != 0 {
					t.Errorf("%s: exit %d\n%s", line, code, out)
				}
				ran++
			case "sh server":
				if !strings.Contains(line, "toolharness ") {
					continue
				}
				// Each server of the line is another closed port.
				line = urls.ReplaceAllStringFunc(line, func(string) string { return deadHost(t) })
				line = strings.ReplaceAll(line, "/tmp/", tmp+"/")
				out, code := sh(t.TempDir(), line)
				if code != 1 || !strings.Contains(out, "cannot reach") {
					t.Errorf("%s: exit %d, want 1 and the cannot-reach line\n%s", line, code, out)
				}
				checked++
			}
		}
	}
	if ran < 6 || checked < 6 {
		t.Errorf("ran %d commands without a server and checked %d with one: the README's blocks were not found", ran, checked)
	}
}

// readmeWordsPerMinute is a slow reader's pace through technical prose;
// the README must read top to bottom in five minutes at it.
const readmeWordsPerMinute = 240

// TestREADMEReadsInFiveMinutes: the README's text outside its command
// blocks is at most five minutes of reading, and it states the Go version
// once.
func TestREADMEReadsInFiveMinutes(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	words, inBlock := 0, false
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			words += len(strings.Fields(line))
		}
	}
	if limit := 5 * readmeWordsPerMinute; words > limit {
		t.Errorf("the README has %d words outside its command blocks, more than five minutes of reading (%d)", words, limit)
	}
	if versions := regexp.MustCompile(`Go 1\.\d+`).FindAllString(string(data), -1); len(versions) != 1 {
		t.Errorf("the README states the Go version %d times (%q), want once", len(versions), versions)
	}
}
