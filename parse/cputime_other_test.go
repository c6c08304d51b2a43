//go:build !unix

package parse

// cpuTime is not measured here; the benchmarks then report wall time only.
func cpuTime() int64 { return 0 }
