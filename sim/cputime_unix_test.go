//go:build unix

package sim

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system, all threads, the garbage
// collector's too) the process has used: benchmarks report it beside the
// wall clock, which a shared machine stretches.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the most resident memory the process has had, in bytes
// (getrusage's ru_maxrss, which Linux counts in KiB).
func peakRSS() uint64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return uint64(ru.Maxrss) * 1024
}
