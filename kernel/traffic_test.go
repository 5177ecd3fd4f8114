package kernel

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// TestSteadyProductionWithinTheWorldCost: steady production may grow a
// world only as far as its shape's estimated cost allows (worldcost.go:
// a tick of one record on one partition is a run, a member's turn, a
// piece, a Produce and a record): a rate is refused when its first tick
// would pass it, a step when its ticks would (naming after how many
// ticks the world reaches it), each leaving the session as it was. A
// world that already holds more than its budget (the budget lowered
// under it) still steps; only a new rate is refused.
func TestSteadyProductionWithinTheWorldCost(t *testing.T) {
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	// The default world with C2 and room for ten ticks of 1/tick on o0.
	const withC2 = 1<<20 + 2*5120 + 7*1400 + 60*160
	const loneTick = costPerSteadyRecord + costPerRun + costPerTurn + costPerPiece + costPerBatch
	worldBudget = func() uint64 { return withC2 + 10*loneTick }
	s := NewSession()
	runLines(t, s, "join C2\nproduce --rate 1/tick o0\nstep 10")
	for line, want := range map[string]string{
		"step 1":                    "step: a world of 2 members, 7 partitions and 71 input records (60 appended at once + 11 by steady production to tick 11, 1 ticks from now) is estimated at 1.1 MB of heap (2 members x 5 KiB + 7 partitions x 1,400 B + 60 input records x 160 B, processed, + 1 MiB + steady production's 11 records x 4 B + 11 runs x 8 B + 11 member turns x 80 B + 11 pieces x 10 B + 11 Produce batches x 40 B), over the limit",
		"run until tick 12":         "the world reaches it after 0 more tick(s)",
		"produce --rate 2/tick o1":  "produce --rate 2/tick: a world of 2 members, 7 partitions and 73 input records (60 appended at once + 13 by steady production to tick 11, one tick from now at the new rate)",
		"produce --rate 1/tick o0":  "71 input records (60 appended at once + 11 by steady production",
		"run until processed o0.19": "run until processed o0.19: not met within 0 ticks, after which steady production would take the world past",
	} {
		before := snapshot(t, s)
		_, err := s.Exec(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
		if snapshot(t, s) != before {
			t.Errorf("%s: a refused command changed the session", line)
		}
	}
	// Stopped, the world steps again; under a budget lowered past what it
	// holds, it still steps, and a new rate is refused.
	runLines(t, s, "produce --stop o0\nstep 5")
	worldBudget = func() uint64 { return withC2 - 100*costPerRecord }
	runLines(t, s, "step 5\nrun until tick 30")
	if _, err := s.Exec("produce --rate 1/10ticks o2"); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a rate past the budget: %v", err)
	}
}

// TestRealRatesAsRuns: a user's group at a real rate, as typed: 20 members
// over 200 partitions, 1,000 records a second on each, for 20 simulated
// seconds with a graceful roll of two members in the middle (4,000,000
// records). Every record is accounted for exactly (processed + lag behind
// the positions = produced, no duplicate, no loss with auto-commit's
// at-least-once after graceful closes), `run until processed` finds a
// record inside a run, and the history keeps far fewer events and packets
// than records: a fetch, a tick's processing of a partition and an
// invoice batch are one each, not one a record.
func TestRealRatesAsRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("4,000,000 records")
	}
	s := NewSession()
	runLines(t, s, "new --kafka-defaults --members 20 --topics t:200\nset records.per.partition 0\nset processing.ms 0.05\nnew --members 20 --topics t:200 --keep-settings\nproduce --rate 1000/s t\nrun until time 10s --quiet\nroll C1,C2 --graceful --wait-stable\nrun until time 20s --quiet")
	w := s.World()
	produced := int64(0)
	for _, p := range w.SteadyProducers() {
		produced += p.Sent
	}
	if want := int64(200 * 1000 * 20); produced != want {
		t.Fatalf("%d records produced in 20 s, want %d", produced, want)
	}
	d := w.Delivery("read_uncommitted")
	if d.Lost != 0 {
		t.Errorf("%d records lost", d.Lost)
	}
	// What the sink saw more than once was processed again after a
	// member's partitions moved (auto-commit commits every 5 s): the
	// records processed, less those again, are at most those produced.
	dups := 0
	for r := range w.Sink.Runs() {
		dups += (r.Times - 1) * (r.To - r.From)
	}
	if int64(w.Processed()-dups) > produced {
		t.Errorf("%d records processed (%d again): more than the %d produced", w.Processed(), dups, produced)
	}
	if w.Processed() < int(produced)*9/10 {
		t.Errorf("%d of %d records processed: the members did not keep up at half their capacity", w.Processed(), produced)
	}
	// Before runs each record was 4 packets and events; now a member's
	// tick of work is a handful (a processed event per partition run, an
	// invoice batch and its answer, now and then a fetch and a commit).
	memberTicks := 20 * w.Tick
	if n := w.Packets.Len() + w.Events.Len(); n > int(produced)/4 || n > 12*memberTicks {
		t.Errorf("%d packets and events for %d records over %d member-ticks: not kept as runs", n, produced, memberTicks)
	}
	// A record deep inside a run is found by containment.
	found := false
	for _, e := range w.Events.All() {
		if e.Kind == sim.EvProcessed && e.Records.Has("t-7.12345") {
			found = true
			if e.Records.Len() < 2 {
				t.Errorf("t-7.12345 processed alone, not in a run: %q", e.Text)
			}
			break
		}
	}
	if !found {
		t.Error("no processed event holds t-7.12345")
	}
}

// TestPartitionRecordsBoundEachPartition: a log's offsets are 32-bit, so
// each input partition holds at most 2^31-1 records; the world's records
// in all are bounded by what they cost, not by that. With a heap budget
// large enough for billions of records, a step that would take one
// partition past 2^31-1 is refused naming that partition and when it gets
// there, while the same records spread over many partitions are not.
func TestPartitionRecordsBoundEachPartition(t *testing.T) {
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	worldBudget = func() uint64 { return 1 << 50 } // a petabyte: only the per-partition bound is in the way
	s := NewSession()
	runLines(t, s, "new --topics t:1,u:4 --members 1\nset records.per.partition 0\nnew --topics t:1,u:4 --members 1 --keep-settings\nproduce --rate 100000000/tick t\nproduce --rate 50000000/tick u")
	// t-0 passes 2^31-1 at its 22nd tick (22 x 10^8); by its 21st the
	// world holds 2.1 x 10^9 + 4 x 1.05 x 10^9 records, past 2^31-1 in
	// all, each partition under it.
	_, err := s.Exec("step 30")
	if err == nil || !strings.Contains(err.Error(), "t-0 would hold 3,000,000,000 records") || !strings.Contains(err.Error(), "after 21 more tick(s)") {
		t.Fatalf("step 30: %v, want a refusal naming t-0 and 21 ticks", err)
	}
	if _, err := s.Exec("step 21"); err != nil {
		t.Fatalf("step 21: %v", err)
	}
	if _, err := s.Exec("produce --stop t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec("step 1"); err != nil {
		t.Fatalf("step 1 with t stopped (u's partitions at 1.1 x 10^9 records each): %v", err)
	}
}
