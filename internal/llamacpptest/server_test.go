package llamacpptest

import (
	"strings"
	"testing"

	"github.com/toolharness/toolharness/internal/ollamatest"
)

func TestMissingBinaryFails(t *testing.T) {
	t.Setenv(ollamatest.EnvLlamacppDir, t.TempDir())
	_, err := New()
	if err == nil || !strings.Contains(err.Error(), "run `make llamacpp`") {
		t.Fatalf("err = %v, want one saying to run make llamacpp", err)
	}
}
