package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDescribeClosedServer: a server that does not answer is described
// by its error (a real llama-server's /props: TestE2ELlamaServerBench).
func TestDescribeClosedServer(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	info := DescribeServer(context.Background(), http.DefaultClient, "ollama", gone.URL, []string{"m"})
	if info.Error == "" || info.Version != "" || !strings.Contains(info.Describe(), "not asked") {
		t.Errorf("a closed server: %+v", info)
	}
}
