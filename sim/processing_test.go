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

// processedInTwelveTicks is how many records one member reading one
// partition of records records (and polling up to that many) processes
// over ticks 3 to 15 of steady work under cfg: the first poll's answer
// arrives at tick 3, and processing starts at 4.
func processedInTwelveTicks(cfg Config, records int) int {
	cfg.Client.MaxPollRecords = records
	cfg.RecordsPerPartition = records
	w, _ := New(Topology{Group: "g", Inputs: []TopicSpec{{Name: "t", Partitions: 1}}, Output: TopicSpec{Name: "out", Partitions: 1}, Members: 1}, cfg)
	for w.Tick < 3 {
		w.Step()
	}
	start := w.Processed()
	for w.Tick < 15 {
		w.Step()
	}
	return w.Processed() - start
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
		if got := processedInTwelveTicks(cfg, 1000); got != c.perTicks {
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
		ms, recs, tickMS int
		ticks, perTicks  int
	}{{1, 10, 5, 1, 50}, {3, 0, 5, 3, 5}, {5, 0, 5, 1, 0}, {10, 0, 5, 2, 0}, {1, 1000, 1000, 1, 1_000_000}, {7, 0, 5, 7, 5}, {5, 3, 5, 1, 3}} {
		ticks, recs := ProcessingMSToTicks(c.ms, c.recs, c.tickMS)
		if ticks != c.ticks || recs != c.perTicks {
			t.Errorf("ProcessingMSToTicks(%d ms for %d records, tick %d ms) = %d/%d; want %d/%d", c.ms, c.recs, c.tickMS, ticks, recs, c.ticks, c.perTicks)
		}
	}
}

// TestProcessingMS: processing.ms reads milliseconds to the microsecond,
// or N/K, and spells each back as it reads; what it cannot read is refused.
func TestProcessingMS(t *testing.T) {
	for _, c := range []struct {
		in, out  string
		ms, recs int
	}{{"5", "5", 5, 0}, {"0.1", "0.1", 1, 10}, {"0.100", "0.1", 1, 10}, {"2.5", "2.5", 5, 2}, {"0.001", "0.001", 1, 1000},
		{"2.345", "2.345", 469, 200}, {"5/3", "5/3", 5, 3}, {"2/4", "0.5", 1, 2}, {"10/1", "10", 10, 0}, {"2147483647", "2147483647", 2147483647, 0}} {
		ms, recs, err := ParseProcessingMS(c.in)
		if err != nil || ms != c.ms || recs != c.recs {
			t.Errorf("processing.ms %s = %d ms for %d records, %v; want %d for %d", c.in, ms, recs, err, c.ms, c.recs)
			continue
		}
		if got := ProcessingMS(ms, recs); got != c.out {
			t.Errorf("processing.ms %s reads back as %s, want %s", c.in, got, c.out)
		}
	}
	for _, bad := range []string{"0", "0.0", "0.0001", "-1", "+1", "1.", ".5", "1e3", "x", "1/0", "0/3", "1/2000000", "1.5/2", "2147483648", " 1", "1,5"} {
		if _, _, err := ParseProcessingMS(bad); err == nil {
			t.Errorf("processing.ms %q accepted", bad)
		}
	}
}

// TestRealTimeProcessingIsExact: in real time processing.ms is not
// rounded to ticks: 0.1 ms a record with tick.ms 5 processes 50 records a
// tick, as processing.ticks 1/50 does on the page's scale, and 7 ms does
// what 7/5 does.
func TestRealTimeProcessingIsExact(t *testing.T) {
	count := func(cfg Config) int { return processedInTwelveTicks(cfg, 10_000) }
	for _, c := range []struct {
		ms, ticks string
		per12     int
	}{{"0.1", "1/50", 600}, {"7", "7/5", 8}, {"5", "1", 12}, {"1", "1/5", 60}, {"5/3", "1/3", 36}} {
		rt, page := DefaultConfig(), DefaultConfig()
		if err := rt.Set("", "time", "ms"); err != nil {
			t.Fatal(err)
		}
		if err := rt.Set("", "processing.ms", c.ms); err != nil {
			t.Fatal(err)
		}
		if err := page.Set("", "processing.ticks", c.ticks); err != nil {
			t.Fatal(err)
		}
		if got, want := count(rt), count(page); got != want || got != c.per12 {
			t.Errorf("processing.ms %s: %d records in 12 ticks; processing.ticks %s: %d; want %d", c.ms, got, c.ticks, want, c.per12)
		}
		// Back on the page's scale it reads as the page's fraction.
		if err := rt.Set("", "time", "ticks"); err != nil {
			t.Fatal(err)
		}
		if v, _ := rt.Get("", "processing.ticks"); v != c.ticks {
			t.Errorf("processing.ms %s is processing.ticks %s after time ticks, want %s", c.ms, v, c.ticks)
		}
	}
}
