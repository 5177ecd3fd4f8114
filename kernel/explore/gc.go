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
// them in again): on docs/explorer.md's sweep that was about 45% of the CPU,
// and what kept a second worker from doubling the rate. So while sweeps
// run, the collector may let the heap grow further past the live heap:
// 8 times it, but at least sweepGCFloor and at most 1 GiB beyond it, and
// never by less than the percentage in force allows. An explicit GOGC in
// the environment wins.
//
// The floor: the live heap of a sweep is small (under a megabyte on the
// docs/explorer.md's), and 8 times it, or Go's minimum heap at 800%, 32 MB, is two
// or three sweeps of 400 branches: a collection every other sweep, in its
// parallel part, where it stops every worker and its mark worker takes one
// core from them, plus the one that waited at the end of the last sweep
// (the percentage put back finds the heap over its goal) and ran in the
// next one's serial start. With 128 MB a sweep of a few thousand branches
// runs without one, and a longer one collects every few thousand branches.
//
// The percentage is raised before the sweep starts (Run, RunShard), so the
// branch list is made under it too: the collection the last sweep left
// due does not run there, on one core while the others wait.
const (
	sweepGCPercent  = 800
	sweepGCHeadroom = 1 << 30
	sweepGCFloor    = 128 << 20
	// goMinHeap is Go's minimum heap goal at GOGC=100 (4 MB; it scales
	// with the percentage): below it, the goal is that minimum, not the
	// live heap times the percentage.
	goMinHeap = 4 << 20
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
		var live uint64
		if s[0].Value.Kind() == metrics.KindUint64 {
			live = s[0].Value.Uint64()
		}
		pct := sweepPercent(live)
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

// sweepPercent is the percentage that lets the heap grow headroom past
// live: 8 times live, at least sweepGCFloor, at most sweepGCHeadroom (Go's
// goal is live times 1+percent/100, or goMinHeap times percent/100 when
// larger).
func sweepPercent(live uint64) int {
	headroom := min(max(live/100*sweepGCPercent, sweepGCFloor), sweepGCHeadroom)
	if live < goMinHeap {
		return int((live + headroom) * 100 / goMinHeap)
	}
	return int(headroom * 100 / live)
}
