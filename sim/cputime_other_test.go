//go:build !unix

package sim

import "time"

// cpuTime is not measured here: benchmarks report 0.
func cpuTime() time.Duration { return 0 }

// peakRSS is not measured here: benchmarks report 0.
func peakRSS() uint64 { return 0 }
