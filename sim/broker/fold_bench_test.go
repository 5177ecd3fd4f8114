package broker

import (
	"fmt"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// t1Batches are ticks ticks of the batches T1 (BenchmarkSteadyHour100x1000)
// sends one output partition: 100 members each owning 10 of 10 topics ×
// 100 input partitions (member m the m-th of each topic, as the range
// assignor gives them), each batch of a member 15 records of each of its
// partitions (T1 sends a batch of a partition's 15 records every third
// tick: runs of 3 to 5 records over 9 to 14 offsets, gaps of 3 between
// them, counted on a T1 world at tick 3,000) and the partition's share
// of them (of 4) as one batch of runs.
type t1Batch struct {
	w    Cell
	m    int
	runs []wire.SrcRun
}

// tenTopics is the layout of T1's and T2's worlds: ten input topics of
// parts partitions each, t0 to t9, and an output of 4.
func tenTopics(parts int) *topo.Layout {
	shape := topo.Topology{Output: topo.TopicSpec{Name: "out", Partitions: 4}, Group: "g"}
	for t := 0; t < 10; t++ {
		shape.Inputs = append(shape.Inputs, topo.TopicSpec{Name: fmt.Sprintf("t%d", t), Partitions: parts})
	}
	return topo.New(shape)
}

func t1Batches(ticks int) (*topo.Layout, wire.TopicPartition, []t1Batch) {
	return t1BatchesFrom(ticks, 0)
}

// t1BatchesFrom is t1Batches with every input partition's records from
// offset from on (a log written for a while: T1's offsets pass 2^14 in
// its fourth simulated minute).
func t1BatchesFrom(ticks, from int) (*topo.Layout, wire.TopicPartition, []t1Batch) {
	layout := tenTopics(100)
	tp := layout.Outputs()[1]
	slot := outputIndex(layout, tp)
	ins := layout.Inputs()
	next := make([]int, len(ins))
	for p := range next {
		next[p] = from
	}
	var out []t1Batch
	for tick := 0; tick < ticks; tick++ {
		for m := 0; m < 100; m++ {
			var runs []wire.SrcRun
			for k := 0; k < 10; k++ {
				part := k*100 + m
				first, last, n := -1, -1, 0
				for off := next[part]; off < next[part]+15; off++ {
					if layout.Partitioner(ins[part]).Slot(off) == slot {
						if first < 0 {
							first = off
						}
						last, n = off, n+1
					}
				}
				next[part] += 15
				if n > 0 {
					runs = append(runs, wire.SrcRun{Part: int32(part), First: int32(first), Last: int32(last), Count: int32(n),
						From: int32(next[part] - 15), To: int32(next[part] - 1)}) // every record of the 15 went to one of the output partitions
				}
			}
			if len(runs) > 0 {
				out = append(out, t1Batch{w: Cell{Producer: fmt.Sprintf("C%d", m+1), PID: int64(m), Seq: tick, Tick: tick, Txn: NotTransactional}, m: m, runs: runs})
			}
		}
	}
	return layout, tp, out
}

// t1Log is an output log written as T1 writes one, ticks ticks of it.
func t1Log(tb testing.TB, ticks int) (*CellLog, int) { return t1LogFrom(tb, ticks, 0) }

// t1LogFrom is t1Log with the records from offset from on (t1BatchesFrom).
func t1LogFrom(tb testing.TB, ticks, from int) (*CellLog, int) {
	layout, tp, batches := t1BatchesFrom(ticks, from)
	c := &CellLog{tp: tp, names: layout}
	hints := make([]writerHint, 100)
	for _, b := range batches {
		if !c.appendRuns(&b.w, b.runs, &hints[b.m]) {
			tb.Fatal("runs out of reach")
		}
	}
	return c, outputIndex(layout, tp)
}

// BenchmarkFoldSpansT1 is folding 200 ticks of a T1 output log
// (foldSpans, what a window lets go of), per run folded: early, its
// offsets under 2^14, and late (offsets past 100,000, an 8-minute run's),
// where every batch's first run, written against the zero run, takes
// three bytes for its offset.
func BenchmarkFoldSpansT1(b *testing.B) {
	b.Run("early", func(b *testing.B) { benchmarkFoldSpansT1(b, 0) })
	b.Run("late", func(b *testing.B) { benchmarkFoldSpansT1(b, 100_000) })
}

func benchmarkFoldSpansT1(b *testing.B, from int) {
	c, slot := t1LogFrom(b, 200, from)
	k0, k1 := c.spans.First(), c.spans.Len()
	runs := 0
	for k := k0; k < k1; k++ {
		s := c.spans.At(k)
		runs += s.runCount()
	}
	b.ResetTimer()
	var f Forgotten
	for i := 0; i < b.N; i++ {
		f = Forgotten{same: true}
		if !c.foldSpans(&f, k0, k1, slot) {
			b.Fatal("not folded in order")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*runs), "ns/run")
	if len(f.Uncommitted.Runs) != 1000 {
		b.Fatalf("%d runs folded, want one a partition", len(f.Uncommitted.Runs))
	}
}

// BenchmarkAppendRunsT1 is appending 20 ticks of a T1 output log's
// batches (appendRuns), per run appended, early and late
// (BenchmarkFoldSpansT1).
func BenchmarkAppendRunsT1(b *testing.B) {
	b.Run("early", func(b *testing.B) { benchmarkAppendRunsT1(b, 0) })
	b.Run("late", func(b *testing.B) { benchmarkAppendRunsT1(b, 100_000) })
}

func benchmarkAppendRunsT1(b *testing.B, from int) {
	layout, tp, batches := t1BatchesFrom(20, from)
	runs := 0
	for _, bt := range batches {
		runs += len(bt.runs)
	}
	hints := make([]writerHint, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := &CellLog{tp: tp, names: layout}
		clear(hints)
		for _, bt := range batches {
			c.appendRuns(&bt.w, bt.runs, &hints[bt.m])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*runs), "ns/run")
}

// TestLettingGoOfEverySpanLetsGoOfTheirRuns: a log that lets go of all
// its spans (a checkpoint's copy of a world letting go of its history,
// World.ForgetHistoryBefore) keeps none of their runs but the arena's
// open chunk, and one that keeps its last spans keeps their runs.
func TestLettingGoOfEverySpanLetsGoOfTheirRuns(t *testing.T) {
	c, _ := t1Log(t, 200)
	l := &Log{Cells: *c}
	if full := l.Cells.spans.runs.Size(); full < 1<<16 {
		t.Fatalf("the log's runs take %d bytes: too few to test", full)
	}
	keep := int(l.Cells.spans.At(l.Cells.spans.Len() - 1).tick)
	l.forgetBeforeFrom(keep, true, nil, nil)
	if l.Cells.startOff == 0 || int(l.Cells.startOff) >= l.Cells.Len() {
		t.Fatalf("letting go of the ticks before %d let go of every span", keep)
	}
	ks, _ := l.Cells.spanFrom(int(l.Cells.startOff))
	for k := ks; k < l.Cells.spans.Len(); k++ {
		if s := l.Cells.spans.At(k); s.part == multiRun && len(l.Cells.spans.runs.At(uint32(s.src))) == 0 {
			t.Fatalf("span %d's runs were let go of", k)
		}
	}
	l.forgetBeforeFrom(keep+1, true, nil, nil)
	if int(l.Cells.startOff) != l.Cells.Len() {
		t.Fatalf("the log starts at %d of %d cells past its last tick", l.Cells.startOff, l.Cells.Len())
	}
	if got, most := l.Cells.spans.runs.Size(), store.SeqChunk()*16; got > most { // a Bytes chunk is 16 Seq chunks' items
		t.Errorf("no span left, and the runs arena still holds %d bytes (at most its open chunk, %d)", got, most)
	}
}

// BenchmarkFoldT2Forgotten is one fold (CellLog.fold, foldGeneral's merge)
// of a T2 output log late in a long roll: 100,000 input partitions (ten
// topics of 10,000), each with 20 runs folded before, stretches written
// once and twice in turn (a rebalance's duplicates, which a long roll
// leaves more of every restart), and a record of every other partition
// to add, past its last.
func BenchmarkFoldT2Forgotten(b *testing.B) {
	layout := tenTopics(10_000)
	tp := layout.Outputs()[1]
	slot := outputIndex(layout, tp)
	c := &CellLog{tp: tp, names: layout}
	var old ForgotLevel
	var add []ForgotRun
	for p := int32(0); p < 100_000; p++ {
		off := int32(0)
		for k := 0; k < 20; k++ {
			n := int32(2 - k%2) // twice, once, ...: ends with a stretch written once
			old.Runs = append(old.Runs, ForgotRun{Part: p, First: off, Last: off + 9, N: n, Slotted: true})
			off += 10
		}
		if p%2 == 0 {
			add = append(add, ForgotRun{Part: p, First: off, Last: off, N: 1, Slotted: true})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c.fold(old, add, nil, slot, &foldScratch{})
	}
	b.ReportMetric(float64(len(old.Runs)), "runs")
}
