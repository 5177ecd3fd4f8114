package sim

import (
	"strings"
	"testing"
)

// TestLagGrowsDuringAPauseAndDrains: steady production at half a record a
// tick on each of six partitions (3 a tick) against a member that
// processes 10 a tick: lag stays small, grows while the member is stalled
// in a slow record, and drains afterwards.
func TestLagGrowsDuringAPauseAndDrains(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 10
	cfg.Client.MaxPollRecords = 60
	cfg.Client.SlowTicks = 10
	cfg.Client.MaxPollInterval = 30 // the stall is a pause, not a departure
	w, _ := New(DefaultTopology(), cfg)
	if err := w.ProduceRate(w.layout.Inputs(), Rate{1, 2}); err != nil {
		t.Fatal(err)
	}
	lag := func() int {
		n := 0
		for _, tp := range w.layout.Inputs() {
			n += w.Lag(tp)
		}
		return n
	}
	// Lag is against the committed offsets (auto-commit every 5 ticks),
	// so it swings; compare the most it reaches in each stretch.
	most := func(until int) int {
		m := 0
		for w.Tick < until {
			w.Step()
			m = max(m, lag())
		}
		return m
	}
	most(20)
	steady := most(40)
	if steady > 40 {
		t.Fatalf("lag up to %d before the pause: the member does not keep up", steady)
	}
	if err := w.Slow("C1"); err != nil {
		t.Fatal(err)
	}
	peak := most(70)
	if peak < steady+30 {
		t.Fatalf("lag peaked at %d during a 10-tick stall (before it up to %d): it did not grow", peak, steady)
	}
	most(100)
	if end := most(120); end > steady {
		t.Fatalf("lag up to %d 30 ticks after the stall (peak %d, before it %d): it did not drain", end, peak, steady)
	}
	if w.Group.Describe().Generation != 1 {
		t.Fatal("the stall cost a rebalance; the test wants a pause without one")
	}
}

// TestProcessingCostSharesATick: processing.ticks 1/K is K records a
// tick, N/K K records every N ticks; N alone N ticks a record.
func TestProcessingCostSharesATick(t *testing.T) {
	for _, c := range []struct {
		cost     string
		perTicks int // records processed over 12 ticks of steady work
	}{{"1", 12}, {"3", 4}, {"1/5", 60}, {"3/5", 20}, {"2/4", 24}} {
		ticks, recs, err := ParseProcessingCost(c.cost)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ticks, recs
		cfg.Client.MaxPollRecords = 1000
		cfg.RecordsPerPartition = 1000
		w, _ := New(Topology{Group: "g", Inputs: []TopicSpec{{Name: "t", Partitions: 1}}, Output: TopicSpec{Name: "out", Partitions: 1}, Members: 1}, cfg)
		// The first poll's answer arrives at tick 3; processing starts at 4.
		for w.Tick < 3 {
			w.Step()
		}
		start := w.Processed()
		for w.Tick < 15 {
			w.Step()
		}
		if got := w.Processed() - start; got != c.perTicks {
			t.Errorf("processing.ticks %s: %d records in 12 ticks, want %d", c.cost, got, c.perTicks)
		}
		if got := ProcessingCost(ticks, recs); got != strings.Replace(c.cost, "2/4", "1/2", 1) {
			t.Errorf("processing.ticks %s reads back as %s", c.cost, got)
		}
	}
	for _, bad := range []string{"0", "-1", "1/0", "x", "1/", "/3", "2000000", "1/2000000", "1.5"} {
		if _, _, err := ParseProcessingCost(bad); err == nil {
			t.Errorf("processing.ticks %q accepted", bad)
		}
	}
	for _, c := range []struct {
		us, tickMS  int64
		ticks, recs int
	}{{100, 5, 1, 50}, {3000, 5, 3, 5}, {5000, 5, 1, 0}, {10_000, 5, 2, 0}, {1, 1000, 1, 1_000_000}} {
		ticks, recs, err := ProcessingMSToTicks(c.us, c.tickMS)
		if err != nil || ticks != c.ticks || recs != c.recs {
			t.Errorf("ProcessingMSToTicks(%d us, tick %d ms) = %d/%d, %v; want %d/%d", c.us, c.tickMS, ticks, recs, err, c.ticks, c.recs)
		}
	}
	if _, _, err := ProcessingMSToTicks(0, 5); err == nil {
		t.Error("0 us accepted")
	}
}
