package env

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The world's arrays of runs go to one process at a time: another asks
// in vain while the first holds them (its linger batches still open) and
// gets them once it lets go; an array given back grown is handed out
// again, empty, and one process letting go does not free another's hold.
func TestRunScratchHeldByOne(t *testing.T) {
	e := &Env{layout: topo.New(topo.Topology{Group: "g", Inputs: []topo.TopicSpec{{Name: "o", Partitions: 3}}, Output: topo.TopicSpec{Name: "out", Partitions: 4}})}
	if !e.HoldRunScratch(0) || !e.HoldRunScratch(0) {
		t.Fatal("process 0 could not hold the free arrays of runs (twice: it holds them already)")
	}
	if e.HoldRunScratch(1) {
		t.Fatal("process 1 got the arrays of runs process 0 holds")
	}
	runs := append(e.RunScratch(3), wire.SrcRun{Part: 0, First: 5, Last: 5, Count: 1}, wire.SrcRun{Part: 1, First: 7, Last: 9, Count: 2})
	e.ReturnRunScratch(3, runs)
	e.ReleaseRunScratch(1) // not the holder: nothing changes
	if e.HoldRunScratch(1) {
		t.Fatal("process 1 got the arrays after letting go of a hold it never had")
	}
	e.ReleaseRunScratch(0)
	if !e.HoldRunScratch(1) {
		t.Fatal("process 1 could not hold the arrays process 0 let go of")
	}
	if got := e.RunScratch(3); len(got) != 0 || cap(got) < 2 || &got[:1][0] != &runs[0] {
		t.Fatalf("output 3's array handed out as %d runs of room %d, want the one given back, empty", len(got), cap(got))
	}
	if got := e.RunScratch(0); len(got) != 0 {
		t.Fatalf("output 0's array handed out with %d runs, want none", len(got))
	}
}
