package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
)

// TestDescribeServer: a llama.cpp server's /props gives its build and
// model file (with or without the /v1 of its OpenAI API); a server that
// does not answer is described by its error.
func TestDescribeServer(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	for _, url := range []string{srv.URL, srv.URL + "/v1"} {
		info := DescribeServer(context.Background(), http.DefaultClient, "llamacpp", url, []string{"m"})
		if info.Error != "" || info.Version != "b0-llamacpptest" || info.Models["(loaded)"] != "toy.gguf" {
			t.Errorf("%s: %+v", url, info)
		}
		if d := info.Describe(); d != "llamacpp b0-llamacpptest ((loaded) toy.gguf)" {
			t.Errorf("describe %q", d)
		}
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	info := DescribeServer(context.Background(), http.DefaultClient, "ollama", gone.URL, []string{"m"})
	if info.Error == "" || info.Version != "" || !strings.Contains(info.Describe(), "not asked") {
		t.Errorf("a closed server: %+v", info)
	}
}
