package kernel

import (
	"errors"
	"fmt"
	"runtime/metrics"
	"sync"
	"time"
)

// The heap guard. The limits (limits.go) bound what a command may ask for
// before it starts: ticks, members, partitions, records, branches,
// samples, cells. What a tick costs is not bounded by them: a world of
// 1,000 members that all time out and rejoin every few ticks keeps about
// 430 KB a tick, so a step inside the step limit could ask for hundreds of
// gigabytes. So while a command runs, a watcher reads the heap's size every
// heapGuardEvery and, past limitHeap, stops the command the way Ctrl-C
// does: it fails, and the session is as it was before it (the world it
// grew is dropped). The figure is the Go heap's objects, live or not yet
// collected; the process's resident memory is that plus the runtime's own,
// far under the machine's 24 GiB.
var limitHeap = limit{"bytes of heap while a command runs", 12 << 30}

const heapGuardEvery = 20 * time.Millisecond

// heapBytes reads the heap's objects, live or not yet collected.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// guardHeap watches the heap while a line runs and interrupts it past
// limitHeap. The function it returns ends the watch and, when the watcher
// stopped the line, turns its error (ErrInterrupted) into one that says
// why.
func (s *Session) guardHeap() (end func(err error) error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var tripped bool // written by the watcher, read after wg.Wait
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(heapGuardEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if heapBytes() > uint64(limitHeap.max) {
					tripped = true
					s.interrupt.Store(true)
					return
				}
			}
		}
	}()
	return func(err error) error {
		close(done)
		wg.Wait()
		if !tripped || err == nil {
			return err
		}
		if errors.Is(err, ErrInterrupted) {
			return fmt.Errorf("%w; it was stopped at the heap limit (%s)", err, limitHeap.helpLine())
		}
		return err
	}
}
