package kernel

import (
	"fmt"
	"math/big"
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
//   - a member: 1.9 KB in the world (its process, its place in the group,
//     its producer) and 1.7 KB more in the copy a step keeps;
//   - a partition owned by a member: 660 B (its log on B1, its name and
//     numbering, its place in its owner's lists and the coordinator's)
//     and 600 B in the copy (a copy copies every partition's log);
//   - an input record: a run of 8 bytes holds any number appended at
//     once, but each record costs the world's history about 120 B when
//     it is processed (its fetch's share, the processed event, the
//     produce and its invoice cell, the commits), in the default
//     settings; the estimate counts every record held as processed.
//
// What a world keeps as it runs is not in the estimate: idle members
// commit every auto.commit.interval.ms and a rebalance writes its
// assignments, so the history grows a tick at a time (BenchmarkWorldCost
// measures a tick of two shapes; docs/reference.md states them), and the
// heap guard watches it.
const (
	costPerMember    = 4 << 10
	costPerPartition = 1400
	costPerRecord    = 160
	// costBase is what any world costs besides: the coordinators, the
	// trace's first chunks, the session.
	costBase = 1 << 20
)

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
	limitWorldBytes = limit{"bytes of heap a world's shape is estimated to cost (members x 4 KiB + partitions x 1,400 B + input records x 160 B + 1 MiB), three quarters of the heap limit", fromHeap}
)

// worldShape is what the estimate counts.
type worldShape struct {
	members, partitions, records int
}

func (s worldShape) bytes() *big.Int {
	b := big.NewInt(costBase)
	for _, t := range [][2]int{{s.members, costPerMember}, {s.partitions, costPerPartition}, {s.records, costPerRecord}} {
		b.Add(b, new(big.Int).Mul(big.NewInt(int64(t[0])), big.NewInt(int64(t[1]))))
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
	return fmt.Errorf("%s: %s is estimated at %s of heap (%s members x 4 KiB + %s partitions x 1,400 B + %s input records x 160 B, processed, + 1 MiB), over the limit (at most %s: three quarters of the heap limit, %s, where a step is stopped; docs/reference.md#limits)",
		cmd, how, humanBytes(est), group(s.members), group(s.partitions), group(s.records), humanBytes(new(big.Int).SetUint64(budget)), humanBytes(new(big.Int).SetUint64(budget/3*4)))
}

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

// shapeOf is a world's shape now.
func shapeOf(w *sim.World) worldShape {
	return worldShape{members: len(w.Clients()), partitions: len(w.Layout().Inputs()) + len(w.Layout().Outputs()), records: inputRecords(w)}
}

// describeShape says a shape as errors name it.
func describeShape(s worldShape) string {
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

// checkTextReach refuses to go on past limitTextReach, naming the tick.
func checkTextReach(w *sim.World) error {
	used, _ := w.Trace().TextReach()
	if used <= limitTextReach.max {
		return nil
	}
	return fmt.Errorf("stopped at tick %d: the trace's texts reach %s bytes, over the limit (%s); the session is as it was before the command", w.Tick, group(used), limitTextReach.helpLine())
}
