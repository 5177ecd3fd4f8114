package kernel

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestWorldCostCoversWhatAWorldKeeps: the estimate is not below what a
// world of the shape keeps, with the copy a step makes of it, measured
// after full collections: 1,000 members over 100,000 partitions, and a
// world whose 10,000 records are all processed (the estimate counts each
// record as processed). It would fail if a member, a partition or a
// processed record came to cost more than the model says.
func TestWorldCostCoversWhatAWorldKeeps(t *testing.T) {
	topo := sim.Topology{Group: "g", Inputs: []sim.TopicSpec{{Name: "t", Partitions: 100_000}}, Output: sim.TopicSpec{Name: "out", Partitions: 1}, Members: 1000}
	cfg := sim.DefaultConfig()
	cfg.RecordsPerPartition = 0
	h0 := liveHeap()
	w, err := sim.New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Clone()
	kept := liveHeap() - h0
	if est := (worldShape{members: 1000, partitions: 100_001}).bytes().Uint64(); kept > est {
		t.Errorf("1,000 members over 100,000 partitions and a copy keep %d bytes, over the estimate %d", kept, est)
	}
	runtime.KeepAlive(w)
	runtime.KeepAlive(c)
	w, c = nil, nil

	topo = sim.Topology{Group: "g", Inputs: []sim.TopicSpec{{Name: "t", Partitions: 50}}, Output: sim.TopicSpec{Name: "out", Partitions: 1}, Members: 50}
	cfg.RecordsPerPartition = 200
	h0 = liveHeap()
	w, _ = sim.New(topo, cfg)
	for k := 0; k < 3 || !w.CaughtUp(); k++ {
		if k == 100_000 {
			t.Fatal("not caught up")
		}
		w.Step()
	}
	kept = liveHeap() - h0
	if est := (worldShape{members: 50, partitions: 51, records: 10_000}).bytes().Uint64(); kept > est {
		t.Errorf("50 members that processed 10,000 records keep %d bytes, over the estimate %d", kept, est)
	}
	runtime.KeepAlive(w)
}

// TestReferenceStatesTheWorldCost: docs/reference.md states the model the
// checks use, and help names it the same way.
func TestReferenceStatesTheWorldCost(t *testing.T) {
	doc, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	formula := fmt.Sprintf("members x %d KiB + partitions x %s B + input records x %d B + %d MiB", costPerMember>>10, group(costPerPartition), costPerRecord, costBase>>20)
	if !strings.Contains(string(doc), formula) {
		t.Errorf("docs/reference.md does not state %q", formula)
	}
	if !strings.Contains(limitWorldBytes.name, formula) {
		t.Errorf("the limit's name %q does not state %q", limitWorldBytes.name, formula)
	}
}

// TestStepStopsBeforeTheTextsFillTheirArena: a step stops after the tick
// whose texts pass limitTextReach (here set just past what the world has),
// fails naming the tick and the bound, and leaves the session as it was.
func TestStepStopsBeforeTheTextsFillTheirArena(t *testing.T) {
	defer func(l limit) { limitTextReach = l }(limitTextReach)
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable")
	used, _ := s.World().Trace().TextReach()
	limitTextReach.max = used + 1000
	before := snapshot(t, s)
	_, err := s.Exec("step 1000")
	if err == nil || !strings.HasPrefix(err.Error(), "step: stopped at tick ") || !strings.Contains(err.Error(), "bytes of trace text a world keeps") {
		t.Fatalf("step past the text reach: %v", err)
	}
	if snapshot(t, s) != before {
		t.Error("the stopped step changed the session")
	}
	limitTextReach.max = 15 << 28
	if _, err := s.Exec("step 10"); err != nil {
		t.Errorf("the next step: %v", err)
	}
}
