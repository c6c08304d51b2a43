package derive

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/templates"
)

func TestRoleStops(t *testing.T) {
	a, u := sentinelAnswer, sentinelUser2
	for _, c := range []struct {
		name, render string
		stops, want  []string
	}{
		{"chatml", "<|im_start|>assistant\n" + a + "<|im_end|>\n<|im_start|>user\n" + u, []string{"<|im_end|>"}, []string{"<|im_start|>user"}},
		{"llama 3", a + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n" + u, []string{"<|eot_id|>"}, []string{"<|start_header_id|>user"}},
		{"harmony: the end token is no part of it", a + "<|end|><|start|>user<|message|>" + u, []string{"<|return|>"}, []string{"<|start|>user"}},
		{"role token", a + "</s><|user|>\n" + u, []string{"</s>"}, []string{"<|user|>"}},
		{"no role name", a + "</s>[INST] " + u, []string{"</s>"}, []string{"[INST]"}},
		{"plain text at a line start", a + "\n\n### Instruction:\n" + u, nil, []string{"\n### Instruction:"}},
		{"plain text inside a line is too common", a + " User: " + u, nil, nil},
		{"nothing between", a + "<|im_end|>" + u, []string{"<|im_end|>"}, nil},
		{"already a stop", a + "<|user|>" + u, []string{"<|user|>"}, nil},
		{"a system text repeated is no marker", a + "</s>[INST] You are a helpful assistant.\nBe brief.\n\n" + u, []string{"</s>"}, nil},
	} {
		if got := roleStops(c.render, c.stops); !cmp.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStopStrings(t *testing.T) {
	r := Result{Stop: []string{"<|im_end|>", "<|endoftext|>"}, RoleStops: []string{"<|im_start|>user", "<|im_end|>"}}
	if got, want := r.StopStrings(), []string{"<|im_end|>", "<|endoftext|>", "<|im_start|>user"}; !cmp.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestAdoptSendsRoleStops: a loaded template's family stops at its own
// role marker, so a backend that sends the family's stops sends it.
func TestAdoptSendsRoleStops(t *testing.T) {
	fam := Adopt(templates.Family{Name: "loaded"}, Result{WritesCalls: true, Format: "hermes",
		Stop: []string{"<|im_end|>"}, RoleStops: []string{"<|im_start|>user"}})
	if want := []string{"<|im_end|>", "<|im_start|>user"}; !cmp.Equal(fam.Stop, want) {
		t.Errorf("family stops %q, want %q", fam.Stop, want)
	}
}
