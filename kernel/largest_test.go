package kernel

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrepl/kgrepl/sim"
)

var (
	largest     = flag.Bool("largest", false, "run TestLargestWorldEveryView (minutes; see largest_test.go)")
	largestHeap = flag.Int("largestheap", 2<<30, "the heap limit TestLargestWorldEveryView runs under, in bytes (0: the machine's)")
)

// TestLargestWorldEveryView runs worlds to the end of their lives and then
// calls every view, plain and narrowed, checking that none exceeds the
// heap guard: each either answers or is refused by its row bound, and the
// heap never passes the limit while it runs. Two worlds:
//   - the largest shape the limits allowed before issue 26 raised them
//     (1,000 members over 999
//     partitions of 1,000 records and the output partition, auto-commit),
//     stepped until the heap guard stops its steps (at three quarters of
//     the limit): first in steps of 20,000 ticks, then of a quarter as
//     many each time one is stopped, down to 300 ticks. A tick of it keeps
//     about 15 KB, so its clock would reach the life's 10,000,000 ticks
//     only with 150 GB;
//   - the default world stepped to the end of its life, 10,000,000 ticks
//     (12,000,000 offset records: offsets on it ran out of memory).
//
// It takes minutes, so it runs only when asked:
//
//	go test ./kernel -run TestLargestWorldEveryView -largest -v -timeout 0
//
// under a heap limit of 2 GiB by default (-largestheap N sets another; 0
// keeps the machine's, 12 GiB here, which takes far longer to fill).
func TestLargestWorldEveryView(t *testing.T) {
	if !*largest {
		t.Skip("minutes of stepping: go test ./kernel -run TestLargestWorldEveryView -largest")
	}
	if *largestHeap > 0 {
		defer func(l limit) { limitHeap = l }(limitHeap)
		limitHeap.max = *largestHeap
		// The collector's soft limit follows, as it would for a process
		// whose budget gave this threshold.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
		setMemoryBudget()
	}
	for _, c := range []struct {
		name, setup  string
		chunk, least int
	}{
		{"largest shape", "set records.per.partition 1000; new --topics t:999 --members 1000 --keep-settings", 20_000, 300},
		{"default world, a whole life", "new", 1_000_000, 1_000_000},
	} {
		runtime.GC() // the world before is gone
		s := NewSession()
		runLines(t, s, c.setup)
		start := time.Now()
		chunk := c.chunk
		for s.World().Tick < limitClock.max {
			n := min(chunk, limitClock.max-s.World().Tick)
			_, err := s.Exec(fmt.Sprintf("step %d --quiet", n))
			if err == nil {
				continue
			}
			if !strings.Contains(err.Error(), "stopped at the heap limit") {
				t.Fatalf("%s: step %d at tick %d: %v", c.name, n, s.World().Tick, err)
			}
			if chunk <= c.least {
				break
			}
			chunk = max(chunk/4, c.least)
		}
		t.Logf("%s: tick %d after %v, heap %d MB (the guard stops steps at %d MB)", c.name, s.World().Tick,
			time.Since(start).Round(time.Second), heapBytes()>>20, growThreshold()>>20)
		w := s.World()
		T := w.Tick
		out := w.Topo.Output.Name
		views := []string{"describe group", "describe group --members --verbose", "describe group --state", "describe group --json",
			"members", "show config", "branches", "txn", "metrics", "metrics --json", "metrics --last 10",
			"offsets", "offsets --last 1000000", fmt.Sprintf("offsets --from %d", max(0, T-1000)),
			"trace", "trace 1000000", fmt.Sprintf("trace --from %d --events", max(0, T-100)), "trace --type JoinGroup,SyncGroup --json", "trace 50 --member C1",
			"consume " + out, "consume " + out + " --json --last 1000000", "consume " + out + " --isolation read_committed --last 100",
			"consume " + w.Topo.Inputs[0].Name + " --last 1000", "consume " + w.Topo.Inputs[0].Name + " --from 990",
		}
		for _, tp := range []sim.TopicPartition{w.Layout().Inputs()[0], w.Layout().Outputs()[0]} {
			hw := w.Log(tp).HW()
			views = append(views, "log "+tp.String(), fmt.Sprintf("log %s --from %d", tp, max(0, hw-1000)))
			if hw > 0 {
				views = append(views, fmt.Sprintf("log %s --around %d", tp, hw/2))
			}
		}
		for _, v := range views {
			peak, took, err := peakHeapOf(s, v)
			t.Logf("%s: %-50s %6.1fs peak heap %5d MB %s", c.name, v, took.Seconds(), peak>>20, firstLine(err))
			if err != nil && !strings.Contains(err.Error(), "is over the limit (at most") {
				t.Errorf("%s: %s: %v", c.name, v, err)
			}
			if peak > uint64(limitHeap.max) {
				t.Errorf("%s: %s: the heap reached %d bytes, past the limit %d", c.name, v, peak, limitHeap.max)
			}
		}
	}
}

// peakHeapOf runs a line and reports the most heap it saw while it ran.
func peakHeapOf(s *Session, line string) (uint64, time.Duration, error) {
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			h := heapBytes()
			mu.Lock()
			peak = max(peak, h)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	}()
	t0 := time.Now()
	_, err := s.Exec(line)
	took := time.Since(t0)
	close(done)
	wg.Wait()
	return peak, took, err
}

func firstLine(err error) string {
	if err == nil {
		return "ok"
	}
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}
