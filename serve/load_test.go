package serve

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// Load check parameters: TestE2EServeLoad runs loadClients streaming
// clients for loadDuration (the 30 s, less the start and the
// checks, inside make e2e's budget).
const (
	loadClients  = 64
	loadDuration = 30 * time.Second
	loadSamples  = 12
)

// TestE2EServeLoad: 64 concurrent streaming clients against the scripted
// model: no failed request, the goroutines back to what they were once
// the clients close, and the heap in use (after a GC) of the last third
// of the run no larger than the first third's by more than a quarter or
// 4 MiB. The turn memory holds 64 turns here, so that it is full within
// the first third: past that point a server that keeps nothing per request
// stays flat.
func TestE2EServeLoad(t *testing.T) {
	sb := &scriptBackend{next: func(backend.Request) string {
		time.Sleep(modelDelay)
		return "Checking the weather.\n" + call("get_weather", `{"city": "Paris"}`)
	}}
	eng, err := NewEngine(EngineConfig{Models: []*Model{testModel(t, sb)}, MemoryTurns: loadClients})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Engine: eng, MaxConcurrent: 2 * loadClients})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	body := `{"model":"test-model","stream":true,"stream_options":{"include_usage":true},"tools":[` + okTool + `],` +
		`"messages":[{"role":"user","content":"Weather in Paris?"}]}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}}
	goroutinesBefore := runtime.NumGoroutine()

	var requests, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range loadClients {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				requests.Add(1)
				if e := streamOnce(client, srv.URL, body); e != "" {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, e)
				}
			}
		})
	}
	var heap []uint64
	for range loadSamples {
		time.Sleep(loadDuration / loadSamples)
		heap = append(heap, heapInUse())
	}
	close(stop)
	wg.Wait()
	client.CloseIdleConnections()
	t.Logf("%d requests in %v (%.1f/s), heap in use per sample (MiB): %v", requests.Load(), loadDuration,
		float64(requests.Load())/loadDuration.Seconds(), mib(heap))
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed, e.g.: %v", n, requests.Load(), firstFailure.Load())
	}
	if requests.Load() < loadClients {
		t.Errorf("only %d requests in %v", requests.Load(), loadDuration)
	}
	third := loadSamples / 3
	first, last := mean(heap[:third]), mean(heap[loadSamples-third:])
	if limit := first + max(first/4, 4<<20); last > limit {
		t.Errorf("heap in use grew from %.1f MiB (first third) to %.1f MiB (last third), past %.1f MiB", first/(1<<20), last/(1<<20), limit/(1<<20))
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutinesBefore {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines 10 s after the load, %d before:\n%s", runtime.NumGoroutine(), goroutinesBefore, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func mean(xs []uint64) float64 {
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	return sum / float64(len(xs))
}

func mib(xs []uint64) []string {
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprintf("%.1f", float64(x)/(1<<20)))
	}
	return out
}
