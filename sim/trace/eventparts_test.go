package trace_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
	"github.com/kgrepl/kgrepl/sim/simtest"
	"github.com/kgrepl/kgrepl/sim/trace"
)

// TestRoutineAtAsAt: for every Polled and Processed event of the trace
// case worlds, RoutineAt reads At's header, a label that is the text At
// formats up to " poll() returned" or " processed", and the records At's
// do, walked by Records.EachRun as Runs walks At's.
// The worlds hold every form those texts take: a newest process's one
// record (the whole tplProcessed template), a newest process's run (the
// whole tplProcessedRun), batches polled, and an
// older process's events (C2 (process 1)), whose label is not its member.
func TestRoutineAtAsAt(t *testing.T) {
	var whole, wholeRuns, older, checked int
	for _, proto := range simtest.Protocols {
		for seed := 0; seed < 5; seed++ {
			var w *sim.World
			if seed < 4 {
				w = simtest.TraceCase(t, proto, seed)
			} else {
				// 7 records a tick from batches of 20: runs of processed records
				cfg := sim.DefaultConfig()
				cfg.Client.GroupProtocol, cfg.RecordsPerPartition = string(proto), 60
				cfg.Client.ProcessRecords, cfg.Client.MaxPollRecords = 7, 20
				var err error
				if w, err = sim.New(sim.DefaultTopology(), cfg); err != nil {
					t.Fatal(err)
				}
				w.Join("C2", false, nil)
				for w.Tick < 200 {
					w.Step()
				}
			}
			for i, e := range w.Events.All() {
				if e.Kind != sim.EvPolled && e.Kind != sim.EvProcessed {
					continue
				}
				want, _, _ := strings.Cut(e.Text, " poll() returned")
				want, _, _ = strings.Cut(want, " processed")
				r, got, ok := w.Events.RoutineAt(i)
				if !ok || got != want {
					t.Fatalf("%s seed %d: event %d (%q): RoutineAt's label %q %v, want %q", proto, seed, i, e.Text, got, ok, want)
				}
				switch firstByte(w.Trace().BytesForTest(w.Events.TextRefForTest(i))) {
				case trace.WholeProcessedForTest:
					whole++
				case trace.WholeProcessedRunForTest:
					wholeRuns++
				}
				if got != e.Member {
					older++
				}
				a, b := slices.Collect(e.Records.Runs()), slices.Collect(r.Records.Runs())
				if !slices.Equal(a, b) {
					t.Fatalf("%s seed %d: event %d (%q): RoutineAt's records %v, At's %v", proto, seed, i, e.Text, b, a)
				}
				var each []trace.RecordRun
				r.Records.EachRun(func(run trace.RecordRun) bool { each = append(each, run); return true })
				if r.Tick != e.Tick || r.Kind != e.Kind || r.Member != e.Member || r.Stop != e.Stop || !slices.Equal(each, a) {
					t.Fatalf("%s seed %d: event %d (%q): RoutineAt %d %s %s %v, runs by EachRun %v; want %d %s %s %v, runs %v",
						proto, seed, i, e.Text, r.Tick, r.Kind, r.Member, r.Stop, each, e.Tick, e.Kind, e.Member, e.Stop, a)
				}
				checked++
			}
		}
	}
	if whole == 0 || wholeRuns == 0 || older == 0 || checked == whole+wholeRuns {
		t.Fatalf("the worlds lack a form: %d events checked, %d whole processed templates of one record and %d of a run, %d of an older process", checked, whole, wholeRuns, older)
	}
}
