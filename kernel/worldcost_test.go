package kernel

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
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
	steady := fmt.Sprintf("steady production's records x %d B + runs x %d B + member turns x %d B + pieces x %d B + Produce batches x %d B", costPerSteadyRecord, costPerRun, costPerTurn, costPerPiece, costPerBatch)
	for what, text := range map[string]string{"docs/reference.md": string(doc), "the limit's name": limitWorldBytes.name} {
		if !strings.Contains(text, steady) {
			t.Errorf("%s does not state %q", what, steady)
		}
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

// TestSteadyCostBoundsTheHistory: worlds under steady production, built
// and run as a user types them, keep no more heap as they run than the
// estimate's steady part grows (worldcost.go: runs, member turns, pieces,
// batches, records), measured after full collections over a stretch of
// ticks once traffic flows: a real-rate group with four output partitions
// at linger.ms 5 (Kafka's) and at 0, and the page's world with one record
// every three ticks on each partition (every run alone in its member's
// turn, where the model is tightest). The margin, 10% for the collector's
// noise, is far below 2x: the test fails if the model is half what a
// world keeps (each shape keeps 0.55-0.9 of its estimate).
func TestSteadyCostBoundsTheHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("steps real-rate worlds")
	}
	for _, c := range []struct {
		name, script string
		warm, ticks  int
	}{
		{"real rate, linger.ms 5", "new --kafka-defaults --members 20 --topics t:200 --output out:4\nset records.per.partition 0\nset processing.ms 0.05\nnew --members 20 --topics t:200 --output out:4 --keep-settings\nproduce --rate 1000/s t", 400, 2000},
		{"real rate, linger.ms 0", "new --kafka-defaults --members 20 --topics t:100 --output out:4\nset records.per.partition 0\nset processing.ms 0.05\nset linger.ms 0\nnew --members 20 --topics t:100 --output out:4 --keep-settings\nproduce --rate 200/s t", 400, 2000},
		{"the page's world, 1/3ticks", "set records.per.partition 0\nset max.poll.records 500\nset processing.ticks 1/100\nnew --members 2 --keep-settings\nproduce --rate 1/3ticks orders payments", 20, 6000},
	} {
		s := NewSession()
		runLines(t, s, c.script)
		w := s.World()
		for k := 0; k < c.warm; k++ {
			w.Step()
		}
		e0 := shapeOf(w).bytes().Int64()
		h0 := liveHeap()
		for k := 0; k < c.ticks; k++ {
			w.Step()
		}
		kept := int64(liveHeap()) - int64(h0)
		est := shapeOf(w).bytes().Int64() - e0
		t.Logf("%s: %d ticks keep %d bytes, estimated %d (%.2f)", c.name, c.ticks, kept, est, float64(kept)/float64(est))
		if float64(kept) > 1.1*float64(est) {
			t.Errorf("%s: %d ticks of steady production keep %d bytes of heap, over the estimate's %d", c.name, c.ticks, kept, est)
		}
		if w.Processed() == 0 {
			t.Errorf("%s: nothing processed", c.name)
		}
		runtime.KeepAlive(w)
	}
}

// TestSteadyCostAtT1: issue 26's T1 world (100 members over ten topics of
// 100 partitions and four output partitions, Kafka's defaults, 1,000
// records a second on each input partition, processing.ms 0.05) runs a
// simulated minute within the estimate on a 12 GiB heap limit, and an
// hour is refused before it runs, naming the estimate and its parts and
// when the world would reach the limit.
func TestSteadyCostAtT1(t *testing.T) {
	defer func(l limit) { limitHeap = l }(limitHeap)
	limitHeap.max = 12 << 30
	topics := "t0:100,t1:100,t2:100,t3:100,t4:100,t5:100,t6:100,t7:100,t8:100,t9:100"
	s := NewSession()
	runLines(t, s, "new --kafka-defaults --members 100 --topics "+topics+" --output out:4\nset records.per.partition 0\nset processing.ms 0.05\nnew --members 100 --topics "+topics+" --output out:4 --keep-settings\nproduce --rate 1000/s t0 t1 t2 t3 t4 t5 t6 t7 t8 t9")
	if err := checkStepRecords("run until time 1m", s.World(), 12_000); err != nil {
		t.Errorf("a minute of T1: %v", err)
	}
	before := snapshot(t, s)
	_, err := s.Exec("run until time 1h")
	for _, want := range []string{
		"run until time 1h: a world of 100 members, 1,004 partitions and 3,600,000,000 input records (0 appended at once + 3,600,000,000 by steady production to tick 720,000, 720,000 ticks from now) is estimated at 66.2 GB of heap",
		"+ steady production's 3,600,000,000 records x 4 B + 720,000,000 runs x 8 B + 72,000,000 member turns x 80 B + 2,880,000,000 pieces x 10 B + 288,000,000 Produce batches x 40 B), over the limit (at most 9.7 GB: three quarters of the heap limit, 12.9 GB,",
		"the world reaches it after 105007 more tick(s)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run until time 1h: %v\nwant it to say %q", err, want)
		}
	}
	if snapshot(t, s) != before {
		t.Error("the refused run changed the session")
	}
	// The refusal advises a window of history that fits however long the
	// world runs; set on the world as it is (at tick 0 here), the hour is
	// within the estimate.
	_, advice, ok := strings.Cut(err.Error(), "; or set history.ms ")
	value, _, _ := strings.Cut(advice, " ")
	if !ok || value == "" {
		t.Fatalf("run until time 1h: %v\nwant it to advise a history.ms", err)
	}
	runLines(t, s, "set history.ms "+value)
	if err := checkStepRecords("run until time 1h", s.World(), 720_000); err != nil {
		t.Errorf("an hour of T1 keeping history.ms %s: %v", value, err)
	}
	// A window twice as long does not fit.
	runLines(t, s, fmt.Sprintf("set history.ms %d", 2*mustAtoi(t, value)))
	if err := checkStepRecords("run until time 1h", s.World(), 720_000); err == nil {
		t.Errorf("an hour of T1 keeping history.ms twice %s passed the estimate", value)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPageDemosWithinTheEstimate: the page's demos, at its scale, run
// under a budget of 4 MiB (a world's estimate there is about 1.1 MB), and
// so does the page's own steady production (produce --rate 1/tick on
// its six partitions for 1,000 ticks: about 0.6 MB more).
func TestPageDemosWithinTheEstimate(t *testing.T) {
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	worldBudget = func() uint64 { return 4 << 20 }
	for n := 1; n <= len(demoTitles); n++ {
		text, _ := DemoScript(n)
		s := NewSession()
		s.Dir = t.TempDir()
		for _, line := range strings.Split(text, "\n") {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if _, err := s.Exec(line); err != nil && strings.Contains(err.Error(), "estimated") {
				t.Errorf("demo %d: %s: %v", n, line, err)
			}
		}
	}
	s := NewSession()
	runLines(t, s, "join C2\nproduce --rate 1/tick orders payments\nstep 1000\nrun until tick 1100")
}
