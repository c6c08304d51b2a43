package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSkills(t *testing.T) {
	s, err := LoadSkills("testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sk := range s.List() {
		got = append(got, sk.Name+": "+sk.Description)
	}
	want := []string{
		"review: Review a file for bugs and report them briefly.",
		"summarise: Summarise the workspace",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSkillExpand(t *testing.T) {
	s, err := LoadSkills("testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		ok       bool
		err      string
	}{
		{in: "/review main.go", want: "Read the file main.go with read_file and list every bug you find, one line each.", ok: true},
		{in: "/summarise now please", want: "# Summarise the workspace\n\nList the files of the workspace with list_dir and summarise what the project is.\n\nARGUMENTS: now please", ok: true},
		{in: "plain text", want: "plain text"},
		{in: "/usr/bin is a path?", want: "/usr/bin is a path?"},
		{in: "//comment", want: "//comment"},
		{in: "/nosuch x", err: `no skill named "nosuch" (have: review, summarise)`},
	}
	for _, tt := range tests {
		got, ok, err := s.Expand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || ok != tt.ok || got != tt.want {
			t.Errorf("%q: got %q %v %v, want %q %v", tt.in, got, ok, err, tt.want, tt.ok)
		}
	}
}

func TestSkillErrors(t *testing.T) {
	for name, body := range map[string]string{
		"unclosed.md": "---\nname: x\n",
		"badname.md":  "---\nname: two words\n---\nbody",
		"badyaml.md":  "---\nname: [\n---\nbody",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSkills(dir); err == nil || !strings.HasPrefix(err.Error(), "agent: ") {
			t.Errorf("%s: error %v", name, err)
		}
	}
	if _, err := LoadSkills(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing dir: no error")
	}
}

func TestSkillTool(t *testing.T) {
	s, err := LoadSkills("testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	tool := s.Tool()
	if !json.Valid(tool.Tool.Parameters) {
		t.Fatal("schema is not JSON")
	}
	out, err := tool.Run(context.Background(), map[string]any{"name": "review", "arguments": "a.go"})
	if err != nil || !strings.Contains(out, "Read the file a.go") {
		t.Errorf("got %q %v", out, err)
	}
	if _, err := tool.Run(context.Background(), map[string]any{"name": "nope"}); err == nil {
		t.Error("unknown skill: no error")
	}
	rem, err := s.Reminder()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rem, "- review: Review a file") || !strings.Contains(rem, "- summarise: ") {
		t.Errorf("reminder %q", rem)
	}
}
