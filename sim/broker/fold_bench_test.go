package broker

import (
	"fmt"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// t1Log is an output log written as T1 writes one (BenchmarkSteadyHour100x1000):
// 100 members each owning 10 of 10 topics × 100 input partitions, each
// tick processing 5 records of each and sending this partition its
// share of them (of 4) as one batch of runs; ticks ticks of it.
func t1Log(tb testing.TB, ticks int) (*CellLog, int) {
	shape := topo.Topology{Output: topo.TopicSpec{Name: "out", Partitions: 4}, Group: "g"}
	for t := 0; t < 10; t++ {
		shape.Inputs = append(shape.Inputs, topo.TopicSpec{Name: fmt.Sprintf("t%d", t), Partitions: 100})
	}
	layout := topo.New(shape)
	tp := layout.Outputs()[1]
	slot := outputIndex(layout, tp)
	c := &CellLog{tp: tp, names: layout}
	ins := layout.Inputs()
	next := make([]int, len(ins))
	hints := make([]writerHint, 100)
	var runs []wire.SrcRun
	for tick := 0; tick < ticks; tick++ {
		for m := 0; m < 100; m++ {
			runs = runs[:0]
			for k := 0; k < 10; k++ {
				part := m*10 + k
				first, last, n := -1, -1, 0
				for off := next[part]; off < next[part]+5; off++ {
					if layout.Partitioner(ins[part]).Slot(off) == slot {
						if first < 0 {
							first = off
						}
						last, n = off, n+1
					}
				}
				next[part] += 5
				if n > 0 {
					runs = append(runs, wire.SrcRun{Src: ins[part], SrcTPI: int32(part + 1), First: first, Last: last, Count: n})
				}
			}
			w := Cell{Producer: fmt.Sprintf("C%d", m+1), PID: int64(m), Seq: tick, Tick: tick, Txn: NotTransactional}
			if len(runs) > 0 && !c.appendRuns(w, runs, &hints[m]) {
				tb.Fatal("runs out of reach")
			}
		}
	}
	return c, slot
}

// BenchmarkFoldSpansT1 is folding 200 ticks of a T1 output log
// (foldSpans, what a window lets go of), per run folded.
func BenchmarkFoldSpansT1(b *testing.B) {
	c, slot := t1Log(b, 200)
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

// BenchmarkAppendRunsT1 is appending a T1 output log's batches
// (appendRuns), per batch.
func BenchmarkAppendRunsT1(b *testing.B) {
	for i := 0; i < b.N; i++ {
		t1Log(b, 20)
	}
}
