package explore

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A sweep allocates fast (every tick of every branch records packets,
// events and cells) while little of it stays live: the base world, one
// copy per tick of the window, one branch per worker. With Go's default
// GOGC=100 and a live heap of a few megabytes the collector then runs
// every few milliseconds, and the heap it keeps grows and shrinks as fast
// (the scavenger hands pages back to the OS and the next branch faults
// them in again): on the README's sweep that was about 45% of the CPU,
// and what kept a second worker from doubling the rate. So while sweeps
// run, the collector may let the heap grow further past the live heap:
// up to 8 times it, but never more than 1 GiB beyond it, and never less
// than the percentage in force. An explicit GOGC in the environment wins.
const (
	sweepGCPercent  = 800
	sweepGCHeadroom = 1 << 30
)

var sweepGC struct {
	sync.Mutex
	running int // sweeps running now
	prev    int // the percentage before the first of them
}

// raiseGC sets the percentage for a sweep and returns what puts it back
// when the last sweep running ends.
func raiseGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	sweepGC.Lock()
	defer sweepGC.Unlock()
	if sweepGC.running == 0 {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		pct := sweepGCPercent
		if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0 {
			live := s[0].Value.Uint64()
			pct = int(min(uint64(sweepGCPercent), sweepGCHeadroom*100/live))
		}
		sweepGC.prev = debug.SetGCPercent(pct)
		if sweepGC.prev < 0 || sweepGC.prev > pct {
			debug.SetGCPercent(sweepGC.prev) // off, or already higher: keep it
		}
	}
	sweepGC.running++
	return func() {
		sweepGC.Lock()
		defer sweepGC.Unlock()
		if sweepGC.running--; sweepGC.running == 0 {
			debug.SetGCPercent(sweepGC.prev)
		}
	}
}
