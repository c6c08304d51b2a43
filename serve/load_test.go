package serve

import (
	"bufio"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// modelDelay is the scripted model's time per request in the load
// benchmark: what the server adds is measured over it.
const modelDelay = 10 * time.Millisecond

// BenchmarkServeLoad is the load harness: 64 concurrent streaming
// clients against the scripted model (a call with text before it),
// each request checked for its call and [DONE]. Run it for 30 s:
//
//	go test -run '^$' -bench BenchmarkServeLoad -benchtime 30s ./serve
//
// It reports requests per second, the p99 latency the server adds over
// the model's 10 ms, the goroutines left after the clients closed and the
// live heap before and after.
func BenchmarkServeLoad(b *testing.B) {
	sb := &scriptBackend{next: func(backend.Request) string {
		time.Sleep(modelDelay)
		return "Checking the weather.\n" + call("get_weather", `{"city": "Paris"}`)
	}}
	srv := startServer(b, Config{MaxConcurrent: 128}, testModel(b, sb))
	body := `{"model":"test-model","stream":true,"stream_options":{"include_usage":true},"tools":[` + okTool + `],` +
		`"messages":[{"role":"user","content":"Weather in Paris?"}]}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	heapBefore, goroutinesBefore := liveHeap(), runtime.NumGoroutine()
	var mu sync.Mutex
	var latencies []time.Duration
	var failures []string
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t0 := time.Now()
			err := streamOnce(client, srv.URL, body)
			d := time.Since(t0)
			mu.Lock()
			latencies = append(latencies, d)
			if err != "" && len(failures) < 5 {
				failures = append(failures, err)
			}
			mu.Unlock()
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(failures) > 0 {
		b.Fatalf("failed requests, e.g.: %v", failures)
	}
	client.CloseIdleConnections()
	srv.CloseClientConnections()
	slices.Sort(latencies)
	p99 := latencies[len(latencies)*99/100] - modelDelay
	time.Sleep(200 * time.Millisecond) // let handlers return
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-added-ms")
	b.ReportMetric(float64(runtime.NumGoroutine()-goroutinesBefore), "goroutines-left")
	b.ReportMetric(float64(heapBefore)/(1<<20), "heap-before-MiB")
	b.ReportMetric(float64(liveHeap())/(1<<20), "heap-after-MiB")
	if left := runtime.NumGoroutine() - goroutinesBefore; left > 4 {
		b.Errorf("%d goroutines more than before the load", left)
	}
}

// streamOnce runs one streaming request and checks its call and end; it
// returns what was wrong ("" when nothing).
func streamOnce(c *http.Client, url, body string) string {
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	sc := bufio.NewScanner(resp.Body)
	var sawCall, done bool
	for sc.Scan() {
		line := sc.Text()
		sawCall = sawCall || strings.Contains(line, `"name":"get_weather"`)
		done = done || line == "data: [DONE]"
	}
	if !sawCall || !done {
		return "a stream without its call or [DONE]"
	}
	return ""
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
