//go:build unix

package kafkafmt

import "syscall"

// cpuSeconds is the process's CPU time (user + system), for benchmarks on
// a shared machine, where wall time says more about the neighbours.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
