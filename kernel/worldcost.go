package kernel

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// A world's size is bounded by what it costs, not by a count (SPEC §10,
// issue 26): `new`, `join` of a new client, `produce` and `set
// records.per.partition` estimate the heap the world they would make
// needs, from its shape, and refuse it before anything is built when the
// estimate is past what the heap guard lets a world grow to
// (growThreshold: three quarters of the guard's threshold, which comes
// from the machine, heapguard.go).
//
// The model is linear in the shape; each figure is measured by
// BenchmarkWorldCost (worldcost_bench_test.go: the heap a world keeps
// after a full collection, and the copy of it that a step makes for its
// undo) and rounded up:
//   - a member: 2.4 KB in the world (its process, its place in the group,
//     its producer) and 2.0 KB more in the copy a step keeps (measured
//     2026-12-07; 1.9 and 1.7 KB when the model was made, which the
//     4 KiB it counted then had fallen below);
//   - a partition owned by a member: 660 B (its log on B1, its name and
//     numbering, its place in its owner's lists and the coordinator's)
//     and 600 B in the copy (a copy copies every partition's log);
//   - an input record: a run of 8 bytes holds any number appended at
//     once, but each record costs the world's history about 120 B when
//     it is processed (its fetch's share, the processed event, the
//     produce and its invoice cell, the commits), in the default
//     settings; the estimate counts every record held as processed.
//
// Steady production (produce --rate) is counted apart, by what its
// history costs as it flows rather than by its records: a partition's
// records of one tick are one run (sim.SteadyWork), fetched, processed
// and committed as one, so what the world keeps grows with the runs, the
// members' turns that take them, and the Produce batches their invoices
// make. BenchmarkSteadyCost (sim/scale_bench_test.go) measures the heap a
// world keeps a tick, after a full collection, at the page's scale and at
// issue 26's T1 and T2, and each figure below is set so the estimate is
// above every shape measured (docs/reference.md#limits has the table):
//   - a run, 8 B: its share of its fetch answer, of its member's
//     processed event and of the commits;
//   - a member's turn, 80 B: a tick in which a member takes runs is a
//     fetch and its answer, a poll and a processed event, the invoices'
//     Produce and its answer, whatever the runs (at most one a member and
//     tick, and at most one a run);
//   - a piece, 10 B: a run's invoices go to the output partitions their
//     records hash to, each partition's share one source run in the
//     batch that carries it (producer.produceInvoiceRun, wire.SrcRun): a
//     run's min(records, output partitions) pieces (sim.SteadyWork's
//     Spread);
//   - a Produce batch, 40 B more (the request, its answer, its span in
//     the output's log): at linger.ms 0 each piece is a Produce of its
//     own; at linger.ms above 0 a member sends one batch per
//     output partition a tick (producer.lingerAppend), so at most
//     members x output partitions a tick;
//   - a record, 4 B: nothing in the history, but metrics and compare
//     count deliveries while they run (sim.World.Delivery): by runs,
//     about 30 B an input partition and a joined run, and a 4-byte slot
//     per input record when the output topic has more than 4,096
//     partitions (runs never join there), so a world's records leave
//     room for the worse of the two.
//
// What else a world keeps as it runs is not in the estimate: idle members
// heartbeat and commit every auto.commit.interval.ms, and a rebalance
// writes its assignments, so the history grows a tick at a time
// (BenchmarkTickIdle10000 measures an idle tick; docs/reference.md states
// it), and the heap guard watches it.
const (
	costPerMember    = 5 << 10
	costPerPartition = 1400
	costPerRecord    = 160
	// costBase is what any world costs besides: the coordinators, the
	// trace's first chunks, the session.
	costBase = 1 << 20

	costPerRun   = 8
	costPerTurn  = 80
	costPerPiece = 10
	costPerBatch = 40
	// costPerSteadyRecord is a record steady production appends.
	costPerSteadyRecord = 4
)

// memberCostText is costPerMember as the refusals and help state it.
var memberCostText = strconv.Itoa(costPerMember>>10) + " KiB"

// The fixed caps that remain are those of a representation.
var (
	// Each output partition's log names the clients that wrote to it in
	// 16 bits (broker.cellWriter.producer), and a client that ever ran
	// may have written: `new --members` and `join` of a new client.
	limitMembers = limit{"members in a world (an output partition numbers the clients that wrote to it in 16 bits)", 65_535}
	// A log keeps offsets in 32 bits (broker.tickRun, cellRec.srcOff).
	limitPartitionRecords = limit{"records in one partition (a log keeps offsets in 32 bits)", 1<<31 - 1}
	// limitWorldBytes is growThreshold as help states it; checkCost reads
	// growThreshold itself when it runs (tests change limitHeap).
	limitWorldBytes = limit{"bytes of heap a world's shape is estimated to cost (members x " + memberCostText + " + partitions x 1,400 B + input records x 160 B + 1 MiB, and steady production's records x 4 B + runs x 8 B + member turns x 80 B + pieces x 10 B + Produce batches x 40 B), three quarters of the heap limit", fromHeap}
)

// worldShape is what the estimate counts: records are the input records
// held that steady production did not append (records.per.partition,
// produce TOPIC-P N), steady what steady production appends.
type worldShape struct {
	members, partitions, records int
	steady                       steadyCost
}

// steadyCost is steady production's part of the estimate, counted from the
// world's start to a tick (steadyOf).
type steadyCost struct {
	ticks                        int // the tick it is counted to
	records                      int64
	runs, turns, pieces, batches int64
}

func (c steadyCost) parts() [][2]int64 {
	return [][2]int64{{c.records, costPerSteadyRecord}, {c.runs, costPerRun}, {c.turns, costPerTurn}, {c.pieces, costPerPiece}, {c.batches, costPerBatch}}
}

// steadyOf is the steady part of the estimate of w after n more ticks,
// from sim.SteadyWork (the runs, and a run's spread over the output's
// partitions) and the world's shape and settings: a member's turns are
// at most one a tick and one a run; the pieces are the spread; the
// batches are the pieces at linger.ms 0 (a Produce per output partition a
// run), and at most members x output partitions a tick besides when every
// client lingers. A world without members still counts one
// (a member may join; join is checked on its shape).
func steadyOf(w *sim.World, n int) steadyCost {
	return steadyFrom(w, w.SteadyWorkKept(n), n)
}

func steadyFrom(w *sim.World, work sim.SteadyWork, n int) steadyCost {
	return steadyWindow(w, work, n, w.HistoryWindow())
}

// steadyWindow is steadyFrom for a world keeping h ticks of history (0:
// all of it): the turns and batches of its window.
func steadyWindow(w *sim.World, work sim.SteadyWork, n, h int) steadyCost {
	if work.Runs == 0 {
		return steadyCost{ticks: w.Tick + n}
	}
	span := int64(w.Tick + n)
	if h > 0 {
		span = min(span, int64(h))
	}
	members := int64(max(len(w.Clients()), 1))
	outs := int64(len(w.Layout().Outputs()))
	c := steadyCost{ticks: w.Tick + n, records: work.Records, runs: work.Runs, pieces: work.Spread, batches: work.Spread}
	c.turns = min(work.Runs, satMul(members, span))
	if !lingerZero(w) {
		c.batches = min(c.batches, satMul(satMul(members, outs), span))
	}
	return c
}

// satMul multiplies two counts at least 0, stopping at 2^62.
func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

// lingerZero reports whether any client sends at linger.ms 0: the
// default, or an override to 0.
func lingerZero(w *sim.World) bool {
	if w.Cfg.Client.Linger == 0 {
		return true
	}
	for _, o := range w.Cfg.Overrides {
		if o.Key == "linger.ms" {
			if v, err := strconv.Atoi(o.Value); err == nil && v == 0 {
				return true
			}
		}
	}
	return false
}

func (s worldShape) bytes() *big.Int {
	b := big.NewInt(costBase)
	for _, t := range [][2]int{{s.members, costPerMember}, {s.partitions, costPerPartition}, {s.records, costPerRecord}} {
		b.Add(b, new(big.Int).Mul(big.NewInt(int64(t[0])), big.NewInt(int64(t[1]))))
	}
	for _, t := range s.steady.parts() {
		b.Add(b, new(big.Int).Mul(big.NewInt(t[0]), big.NewInt(t[1])))
	}
	return b
}

// checkCost refuses a shape whose estimate is past growThreshold, naming
// the estimate, its parts, the threshold and where it comes from.
func checkCost(cmd string, s worldShape, how string) error {
	est := s.bytes()
	budget := worldBudget()
	if est.Cmp(new(big.Int).SetUint64(budget)) <= 0 {
		return nil
	}
	return costErr(cmd, s, how, est, budget)
}

// costErr is the refusal of a shape estimated at est, past budget.
func costErr(cmd string, s worldShape, how string, est *big.Int, budget uint64) error {
	steady := ""
	if c := s.steady; c.runs > 0 {
		steady = fmt.Sprintf(" + steady production's %s records x %d B + %s runs x %d B + %s member turns x %d B + %s pieces x %d B + %s Produce batches x %d B",
			group64(c.records), costPerSteadyRecord, group64(c.runs), costPerRun, group64(c.turns), costPerTurn, group64(c.pieces), costPerPiece, group64(c.batches), costPerBatch)
	}
	return fmt.Errorf("%s: %s is estimated at %s of heap (%s members x %s + %s partitions x 1,400 B + %s input records x 160 B, processed, + 1 MiB%s), over the limit (at most %s: three quarters of the heap limit, %s, where a step is stopped; docs/reference.md#limits)",
		cmd, how, humanBytes(est), group(s.members), memberCostText, group(s.partitions), group(s.records), steady, humanBytes(new(big.Int).SetUint64(budget)), humanBytes(new(big.Int).SetUint64(budget/3*4)))
}

// group64 writes an int64 count as group does.
func group64(n int64) string { return groupDigits(strconv.FormatInt(n, 10)) }

// humanBytes writes a byte count as GB, MB or KB with one decimal (1e9,
// 1e6, 1e3: as the estimate's parts are stated) and the exact count.
func humanBytes(b *big.Int) string {
	f, _ := new(big.Float).SetInt(b).Float64()
	switch {
	case f >= 1e9:
		return fmt.Sprintf("%.1f GB", f/1e9)
	case f >= 1e6:
		return fmt.Sprintf("%.1f MB", f/1e6)
	}
	return fmt.Sprintf("%.1f KB", f/1e3)
}

// worldBudget is where checkCost refuses a shape: growThreshold, read when
// a check runs (a var for tests).
var worldBudget = growThreshold

// shapeOf is a world's shape now: its input records those steady
// production did not append, its steady production so far.
func shapeOf(w *sim.World) worldShape {
	return shapeAfter(w, 0)
}

// shapeAfter is a world's shape after n more ticks of its steady
// production.
func shapeAfter(w *sim.World, n int) worldShape {
	return shapeWith(w, w.SteadyWorkKept(n), n)
}

// shapeWith is a world's shape with steady production's work counted to n
// more ticks.
func shapeWith(w *sim.World, work sim.SteadyWork, n int) worldShape {
	return worldShape{members: len(w.Clients()), partitions: len(w.Layout().Inputs()) + len(w.Layout().Outputs()),
		records: pageRecords(w), steady: steadyFrom(w, work, n)}
}

// pageRecords is the input records a world holds that no steady producer
// appended: records.per.partition's and produce TOPIC-P N's, each 160 B.
func pageRecords(w *sim.World) int {
	return max(inputRecords(w)-int(w.SteadyWorkAfter(0).Records), 0)
}

// describeShape says a shape as errors name it; with steady production,
// its records appended at once and its steady production's, and when
// (a phrase after the tick, or "").
func describeShape(s worldShape) string { return describeShapeWhen(s, "") }

func describeShapeWhen(s worldShape, when string) string {
	if c := s.steady; c.runs > 0 {
		return fmt.Sprintf("a world of %s members, %s partitions and %s input records (%s appended at once + %s by steady production to tick %s%s)", group(s.members), group(s.partitions),
			groupDigits(new(big.Int).Add(big.NewInt(int64(s.records)), big.NewInt(c.records)).String()), group(s.records), group64(c.records), group(c.ticks), when)
	}
	return fmt.Sprintf("a world of %s members, %s partitions and %s input records", group(s.members), group(s.partitions), group(s.records))
}

// checkTopology checks a world's shape and its input records before it is
// built: the members' cap, each partition's records, and the estimate.
func checkTopology(cmd string, topo sim.Topology, recordsPerPartition int) error {
	if err := limitMembers.check(cmd+" --members", topo.Members); err != nil {
		return err
	}
	if err := limitPartitionRecords.checkf(cmd, recordsPerPartition, fmt.Sprintf("records.per.partition %d", recordsPerPartition)); err != nil {
		return err
	}
	// Each count is at most 1,000,000 a topic (sim.Topology.Validate,
	// checked after this): summed as big numbers, nothing overflows.
	parts, inputs := big.NewInt(0), big.NewInt(0)
	var how []string
	for _, t := range topo.Inputs {
		inputs.Add(inputs, big.NewInt(int64(t.Partitions)))
		how = append(how, fmt.Sprintf("%s:%d", t.Name, t.Partitions))
	}
	parts.Add(inputs, big.NewInt(int64(topo.Output.Partitions)))
	how = append(how, fmt.Sprintf("%s:%d", topo.Output.Name, topo.Output.Partitions))
	records := new(big.Int).Mul(inputs, big.NewInt(int64(recordsPerPartition)))
	if !parts.IsInt64() || !records.IsInt64() || parts.Int64() > 1<<40 || records.Int64() > 1<<50 {
		return fmt.Errorf("%s: %s partitions holding %s records are over every limit (%s)", cmd, groupDigits(parts.String()), groupDigits(records.String()), limitWorldBytes.helpLine())
	}
	s := worldShape{members: topo.Members, partitions: int(parts.Int64()), records: int(records.Int64())}
	return checkCost(cmd, s, fmt.Sprintf("%s (%s; %s input partitions x records.per.partition %d)", describeShape(s), strings.Join(how, " + "), groupDigits(inputs.String()), recordsPerPartition))
}

// limitTextReach is where a step or run stops a world whose trace's texts
// near their arena's reach (sim/trace: a text is named by a 32-bit
// reference, 4 GB in all; past it the engine panics): 15/16 of it, which
// leaves 256 MB for the tick that crosses it. Texts are not in the
// estimate: they grow with what happens, and a rebalance of a group over
// 100,000 partitions names each of them several times (what each member
// revokes, gets and commits), so a rolling restart of 1,000 members there
// reaches 4 GB of text before the heap guard's threshold.
var limitTextReach = limit{"bytes of trace text a world keeps (a text is named by a 32-bit reference: 4 GB in all, less 256 MB for the tick that crosses it)", 15 << 28}

// limitRunsReach is where a step or run stops a world whose output logs'
// runs of invoice batches near their arena's reach (sim/broker's spans
// keep a batch's runs at a 32-bit place: 4 GB kept at once; past it the
// engine panics), 15/16 of it as limitTextReach. A world keeping
// everything keeps what it wrote in its life: T1's world writes about 19
// MB of them a simulated minute to each of its four output partitions,
// about three simulated hours. One with history.ms set keeps its
// window's (its places go round: sim/broker.RunsReach) and runs on.
var limitRunsReach = limit{"bytes of runs of invoice batches an output log keeps (a batch's runs are at a 32-bit place: 4 GB, less 256 MB for the tick that crosses it; with history.ms, only its window's count)", 15 << 28}

// checkTextReach refuses to go on past limitTextReach or limitRunsReach,
// naming the tick.
func checkTextReach(w *sim.World) error {
	if runs := w.OutputRunsReach(); runs > limitRunsReach.max {
		return fmt.Errorf("stopped at tick %d: an output log's runs of invoice batches reach %s bytes, over the limit (%s); the session is as it was before the command", w.Tick, group(runs), limitRunsReach.helpLine())
	}
	used, _ := w.Trace().TextReach()
	if used <= limitTextReach.max {
		return nil
	}
	return fmt.Errorf("stopped at tick %d: the trace's texts reach %s bytes, over the limit (%s); the session is as it was before the command", w.Tick, group(used), limitTextReach.helpLine())
}

// windowAdvice is the advice a refusal for steady production's history
// gives: the longest history.ms (in the world's time, rounded down to two
// significant digits) with which the world's estimate stays within
// costRoom however long it runs, for it keeps that window's history and
// lets the older go (sim/history.go), or "" when no window fits (the
// world's members and partitions alone are past it) or the world keeps a
// window already as short as one tick.
func windowAdvice(w *sim.World) string {
	room, base := costRoom(w), shapeOf(w)
	fits := func(h int) bool {
		s := base
		s.steady = steadyWindow(w, w.SteadyWorkWindow(h, h), h, h)
		return s.bytes().Cmp(room) <= 0
	}
	if !fits(1) {
		return ""
	}
	const most = 1 << 30
	h := sort.Search(most, func(h int) bool { return !fits(h + 1) }) + 1
	if h >= most || (w.HistoryWindow() > 0 && h >= w.HistoryWindow()) {
		return ""
	}
	h = roundDown2(h)
	clk := clockOf(w)
	value, kept := strconv.Itoa(h), group(h)+" ticks"
	if clk.real {
		value, kept = strconv.FormatInt(int64(roundDown2(int(clk.ms(h)))), 10), clk.dur(h)
	}
	return fmt.Sprintf("set history.ms %s keeps the last %s in detail from then on, and the estimate within the limit however long the world runs (docs/reference.md#history)", value, kept)
}

// roundDown2 rounds n down to its two leading digits (123,456 -> 120,000).
func roundDown2(n int) int {
	p := 1
	for n/p >= 100 {
		p *= 10
	}
	return n / p * p
}
