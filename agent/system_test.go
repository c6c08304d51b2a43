package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeGit answers the snapshot's git commands from a table.
func fakeGit(answers map[string]string) CommandRunner {
	return func(_ context.Context, _ string, name string, args ...string) (string, error) {
		key := name + " " + strings.Join(args, " ")
		out, ok := answers[key]
		if !ok {
			return "", errors.New("not a git repository")
		}
		return out, nil
	}
}

func TestSystemText(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		git  map[string]string
	}{
		{name: "system_repo.golden", git: map[string]string{
			"git rev-parse --abbrev-ref HEAD": "main\n",
			"git status --short":              " M agent/doc.go\n?? agent/step.go\n",
			"git log --oneline -n 5":          "af61281 README and architecture doc\n318b371 Foundation\n",
		}},
		{name: "system_clean.golden", git: map[string]string{
			"git rev-parse --abbrev-ref HEAD": "feature\n",
			"git status --short":              "",
			"git log --oneline -n 5":          "",
		}},
		{name: "system_norepo.golden", git: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := CaptureEnv(context.Background(), "qwen2.5:7b", "/work/ws", now, fakeGit(tt.git))
			env.OS, env.Shell = "linux/amd64", "bash" // the machine's own would vary
			got, err := SystemText(env)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, got)
		})
	}
}

func TestSnapshotBounded(t *testing.T) {
	var status strings.Builder
	for i := 0; i < 100; i++ {
		status.WriteString("?? file\n")
	}
	snap := vcsSnapshot(context.Background(), ".", fakeGit(map[string]string{
		"git rev-parse --abbrev-ref HEAD": "main\n", "git status --short": status.String(), "git log --oneline -n 5": "x\n",
	}))
	if n := strings.Count(snap, "?? file"); n != 20 {
		t.Errorf("%d status lines, want 20", n)
	}
	if !strings.Contains(snap, "… and 80 more") {
		t.Errorf("no elision note in %q", snap)
	}
}
