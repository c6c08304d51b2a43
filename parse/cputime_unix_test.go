//go:build unix

package parse

import "syscall"

// cpuTime returns the process's user+system CPU time in nanoseconds. The
// benchmarks report it next to wall time because the development machines
// are shared: CPU time does not count the time the process waited.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
