package broker

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestCellLogMatchesModelAndClonesNeverAlias drives a family of CellLogs,
// each cloned from another at random moments, with random appends of every
// shape (upstream records, invoices of short and long record names, markers,
// cells whose strings fit no compact shape) and transaction markers marking
// old cells, against a plain []Cell per log that does what the old store.Seq[Cell]
// did. Tiny chunks make the copy-on-write paths run often.
func TestCellLogMatchesModelAndClonesNeverAlias(t *testing.T) {
	defer func(m int) { maxWriters = m }(maxWriters)
	t.Cleanup(store.SetSeqChunkForTest(4))
	for _, mw := range []int{farWriter, 3} { // 3: most writers are kept apart (CellLog.far)
		maxWriters = mw
		testCellLogMatchesModel(t, 3)
	}
	// more producer names than producerID scans: found by its index,
	// which each clone builds for itself
	maxWriters = farWriter
	testCellLogMatchesModel(t, 10*producerScan)
}

func testCellLogMatchesModel(t *testing.T, producers int) {
	several := topo.Default()
	several.Output.Partitions = 5 // batches of the records the partitioner sends to one of them
	filtered := 0
	defer func() {
		if filtered == 0 {
			t.Error("no batch of some of a run's records (the partitioner's share) was appended")
		}
	}()
	for _, shape := range []topo.Topology{topo.Default(), {Inputs: []topo.TopicSpec{{Name: "a.long-topic_name", Partitions: 2}, {Name: "b", Partitions: 2}}, Output: topo.TopicSpec{Name: "out", Partitions: 1}, Group: "g"}, several} {
		layout := topo.New(shape)
		in, out := layout.Inputs()[1], layout.Outputs()[0]
		for _, tp := range []wire.TopicPartition{in, out} {
			r := rand.New(rand.NewSource(7))
			type pair struct {
				c     CellLog
				model []Cell
			}
			fam := []*pair{{c: CellLog{tp: tp, names: layout}}}
			spans, multi := 0, 0
			for step := 0; step < 4000; step++ {
				p := fam[r.Intn(len(fam))]
				if r.Intn(25) == 0 && len(fam) < 20 {
					fam = append(fam, &pair{c: p.c.clone(), model: slices.Clone(p.model)})
					continue
				}
				off, tick := len(p.model), step/3
				if step%50 == 7 { // a tick too far from its chunk's first (CellLog.farTicks), or its chunk's first far from the next
					tick += 70_000
				}
				var v Cell
				invoice := false // appended as CellLog.appendInvoice, from a reference
				var srcTP wire.TopicPartition
				var srcOff int
				switch k := r.Intn(10); {
				case k < 3 || tp == in && step < 2000: // upstream, runs first on the input partition
					v = Cell{Value: layout.Name(tp, off), PID: -1, Seq: -1, Tick: tick}
				case k == 3 && r.Intn(2) == 0: // a batch of invoices, one span (appendRun)
					part := r.Intn(len(layout.Inputs()))
					srcTP = layout.Inputs()[part]
					// Every record from the first to the last, or (on an
					// output partition) those of them the partitioner
					// sends to it, as produceInvoiceRun batches them.
					first := r.Intn(50)
					last := first + 1 + r.Intn(5)
					var srcs []int
					for off := first; off <= last; off++ {
						srcs = append(srcs, off)
					}
					if slot := outputIndex(layout, tp); slot >= 0 && r.Intn(2) == 0 {
						last = first + 1 + r.Intn(40)
						srcs = srcs[:0]
						for off := first; off <= last; off++ {
							if layout.Partitioner(srcTP).Slot(off) == slot {
								srcs = append(srcs, off)
							}
						}
						if len(srcs) < 2 {
							continue
						}
						first, last = srcs[0], srcs[len(srcs)-1]
						if last-first+1 != len(srcs) {
							filtered++
						}
					}
					w := Cell{Producer: fmt.Sprintf("C%d", 1+r.Intn(producers)), PID: int64(1000 + r.Intn(3)), Epoch: r.Intn(2), Seq: r.Intn(9), Txn: TxnMark(r.Intn(2)), Tick: tick}
					if w.Txn == NotTransactional && r.Intn(2) == 0 {
						w.PID, w.Seq, w.Epoch = -1, -1, 0
					}
					p.c.appendRun(&w, part, first, last, len(srcs), nil)
					var names []string
					for _, src := range srcs {
						names = append(names, layout.Name(srcTP, src))
					}
					p.model = appendBatchModel(p.model, w, off, names)
					spans++
					continue
				case k == 3: // a batch of several runs (linger.ms), one span (appendRuns)
					var runs []wire.SrcRun
					var srcs []string // sources of the batch's cells in order, spelled
					for range 2 + r.Intn(4) {
						run, _ := randomRun(r, layout, tp)
						src := layout.Inputs()[run.Part]
						for off := int(run.First); off <= int(run.Last); off++ {
							if run.Count == run.Last-run.First+1 || layout.Partitioner(src).Slot(off) == outputIndex(layout, tp) {
								srcs = append(srcs, layout.Name(src, off))
							}
						}
						if run.Count != run.Last-run.First+1 {
							filtered++
						}
						runs = append(runs, run)
					}
					w := Cell{Producer: fmt.Sprintf("C%d", 1+r.Intn(producers)), PID: int64(1000 + r.Intn(3)), Epoch: r.Intn(2), Seq: r.Intn(9), Txn: TxnMark(r.Intn(2)), Tick: tick}
					if w.Txn == NotTransactional && r.Intn(2) == 0 {
						w.PID, w.Seq, w.Epoch = -1, -1, 0
					}
					if !p.c.appendRuns(&w, runs, nil) {
						t.Fatalf("%s: a batch of runs of input partitions not kept as a span: %v", tp, runs)
					}
					p.model = appendBatchModel(p.model, w, off, srcs)
					multi++
					continue
				case k < 6:
					srcTP, srcOff = layout.Inputs()[r.Intn(len(layout.Inputs()))], r.Intn(50)
					src := layout.Name(srcTP, srcOff)
					invoice = r.Intn(2) == 0
					v = Cell{Value: "inv(" + src + ")", Source: src, Producer: fmt.Sprintf("C%d", 1+r.Intn(producers)),
						PID: int64(1000 + r.Intn(3)), Epoch: r.Intn(2), Seq: r.Intn(9), Txn: TxnMark(r.Intn(2)), Tick: tick}
					if v.Txn == NotTransactional && r.Intn(2) == 0 {
						v.PID, v.Seq, v.Epoch = -1, -1, 0
					} else if r.Intn(8) == 0 { // at the edge of what a cellRec keeps, and past it (CellLog.far)
						v.Seq = maxCellSeq + r.Intn(3)
					}
				case k < 7:
					pid := int64(1000 + r.Intn(3))
					mark, name := TxnCommitted, "COMMIT"
					if r.Intn(2) == 0 {
						mark, name = TxnAborted, "ABORT"
					}
					from := r.Intn(off + 1)
					if k, _, _, in := p.c.locate(from); in && p.c.inRecs {
						// A transaction starts at a batch's first record
						// or before it, never inside one (a batch is one
						// Produce): a marker marks a span whole.
						from = int(p.c.spans.At(k).first)
					}
					p.c.markTxn(from, pid, mark)
					for i := from; i < off; i++ {
						if p.model[i].PID == pid && p.model[i].Txn == TxnOpen {
							p.model[i].Txn = mark
						}
					}
					v = Cell{Value: name, Control: name, PID: pid, Epoch: 1, Seq: -1, Txn: mark, Tick: tick}
				default: // strings that fit no shape
					v = []Cell{
						{Value: "inv(o1.2", Source: "o1.2", PID: -1, Seq: -1, Tick: tick},
						{Value: "inv(o9.2)", Source: "o9.2", Producer: "C1", PID: -1, Seq: -1, Tick: tick},
						{Value: "x", PID: -1, Seq: -1, Tick: tick},
						{Value: layout.Name(tp, off+1), PID: 5, Seq: 1, Tick: tick},
						{Value: "COMMIT", Control: "ABORT", PID: 5, Seq: -1, Tick: tick},
						{Value: "", Source: "", PID: -1, Seq: -1, Tick: tick},
					}[r.Intn(6)]
				}
				if invoice {
					bare := v
					bare.Value, bare.Source = "", ""
					slot := -1 // looked up, or given as the engine gives it
					if s, ok := layout.Input().Slot(srcTP, nil); ok && r.Intn(2) == 0 {
						slot = s
					}
					p.c.appendInvoice(bare, srcTP, srcOff, slot)
				} else {
					p.c.append(v)
				}
				v.Offset = off
				p.model = append(p.model, v)
			}
			far, farSeq, farTicks := 0, 0, 0
			for _, q := range fam {
				far, farTicks = far+q.c.far.Len(), farTicks+q.c.farTicks.Len()
				for _, f := range q.c.far.All() {
					if f.seq > maxCellSeq {
						farSeq++
					}
				}
			}
			if farTicks == 0 {
				t.Fatalf("%s: no cell keeps its tick apart", tp)
			}
			if spans == 0 || multi == 0 {
				t.Fatalf("%s: %d batches of one run and %d of several kept as spans, want some of each", tp, spans, multi)
			}
			if farSeq == 0 || (far > farSeq) != (maxWriters < farWriter) {
				t.Fatalf("%s: %d cells keep their writer apart (%d for their sequence number) with at most %d writers listed", tp, far, farSeq, maxWriters)
			}
			for j, q := range fam {
				if q.c.Len() != len(q.model) {
					t.Fatalf("%s log %d: Len %d, want %d", tp, j, q.c.Len(), len(q.model))
				}
				for i, c := range q.c.All() {
					if c != q.model[i] {
						t.Fatalf("%s log %d cell %d: %+v, want %+v", tp, j, i, c, q.model[i])
					}
					if q.c.IsData(i) != c.IsData() || q.c.Txn(i) != c.Txn {
						t.Fatalf("%s log %d cell %d: IsData/Txn differ from %+v", tp, j, i, c)
					}
					p, off, ok := q.c.SourceRef(i)
					wp, woff, wok := layout.Ref(c.Source)
					if ok != wok || ok && (p != wp || off != woff) {
						t.Fatalf("%s log %d cell %d: sourceRef %d %d %v, want %d %d %v (%+v)", tp, j, i, p, off, ok, wp, woff, wok, c)
					}
				}
				// Sources: the data cells below an offset, each with its
				// SourceRef and Txn, spans enumerated whole
				upto := r.Intn(q.c.Len() + 2)
				var want, got []CellSource
				for i := 0; i < min(upto, q.c.Len()); i++ {
					if q.c.IsData(i) {
						p, off, ok := q.c.SourceRef(i)
						want = append(want, CellSource{I: i, Part: p, Off: off, OK: ok, Txn: q.c.Txn(i)})
					}
				}
				for cs := range q.c.Sources(upto) {
					if !cs.OK {
						cs.Part, cs.Off = 0, 0
					}
					got = append(got, cs)
				}
				for i := range want {
					if !want[i].OK {
						want[i].Part, want[i].Off = 0, 0
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s log %d: Sources(%d) = %v, want %v", tp, j, upto, got, want)
				}
				if !slices.Equal(q.c.Slice(0, q.c.Len()), q.model) {
					t.Fatalf("%s log %d: Slice differs", tp, j)
				}
			}
		}
	}
}

// randomRun is a run of a batch's sources for log tp: one record, every
// record from its first to its last, or (on an output partition) those of
// them the partitioner sends to tp, as the producer's lingerAppend makes
// them, claiming the input range it was cut from (wire.SrcRun.From); and
// its input partition's number.
func randomRun(r *rand.Rand, layout *topo.Layout, tp wire.TopicPartition) (wire.SrcRun, int) {
	part := r.Intn(len(layout.Inputs()))
	src := layout.Inputs()[part]
	first := r.Intn(50)
	run := wire.SrcRun{Part: int32(part), First: int32(first), Last: int32(first), Count: 1, From: int32(first), To: int32(first)}
	switch slot := outputIndex(layout, tp); {
	case r.Intn(3) == 0: // one record
	case slot >= 0 && r.Intn(2) == 0:
		var offs []int
		last := first + 1 + r.Intn(40)
		for off := first; off <= last; off++ {
			if layout.Partitioner(src).Slot(off) == slot {
				offs = append(offs, off)
			}
		}
		if len(offs) > 0 {
			run.First, run.Last, run.Count = int32(offs[0]), int32(offs[len(offs)-1]), int32(len(offs))
			run.From, run.To = int32(first), int32(last) // every record of first..last went somewhere
		}
	default:
		run.Last = int32(first + 1 + r.Intn(5))
		run.Count, run.To = run.Last-int32(first)+1, run.Last
	}
	return run, part
}

// threeOutputs is the default topology with three output partitions: its
// layout, the second output partition (out, its index slot), the input
// partitions, and the first n records of ins[2] from offset 10 on that
// the partitioner sends to out (a filtered run's records).
func threeOutputs(n int) (layout *topo.Layout, out wire.TopicPartition, ins []wire.TopicPartition, slot int, shared []int) {
	shape := topo.Default()
	shape.Output.Partitions = 3
	layout = topo.New(shape)
	out, ins = layout.Outputs()[1], layout.Inputs()
	slot = outputIndex(layout, out)
	for off := 10; len(shared) < n; off++ {
		if layout.Partitioner(ins[2]).Slot(off) == slot {
			shared = append(shared, off)
		}
	}
	return layout, out, ins, slot, shared
}

// TestMultiRunSpansReadBackRunByRun: a batch of several runs is one span
// (not a span or cell a run), its runs kept once in spans.runs, and every
// cell of it reads back as the cells of its runs appended one by one
// would: value, source, sequence number (from the batch's base), writer,
// tick, transaction state (a marker marks it whole), by At, SourceRef and
// Sources, in a clone too; cells appended after it are found past it.
func TestMultiRunSpansReadBackRunByRun(t *testing.T) {
	layout, out, ins, slot, shared := threeOutputs(3)
	runs := []wire.SrcRun{
		{Part: 0, First: 4, Last: 4, Count: 1, From: 4, To: 4},
		{Part: 1, First: 7, Last: 9, Count: 3, From: 7, To: 9},
		{Part: 2, First: int32(shared[0]), Last: int32(shared[2]), Count: 3, From: 10, To: int32(shared[2])},
		{Part: 0, First: 5, Last: 5, Count: 1, From: 5, To: 5},
	}
	var want []wire.TopicPartition // each cell's source partition and offset
	var wantOff []int
	for _, run := range runs {
		src := ins[run.Part]
		for off := int(run.First); off <= int(run.Last); off++ {
			if run.Count == run.Last-run.First+1 || layout.Partitioner(src).Slot(off) == slot {
				want, wantOff = append(want, src), append(wantOff, off)
			}
		}
	}
	l := NewLog(out, layout)
	l.append(Cell{Value: "x", PID: -1, Seq: -1, Tick: 1}) // a cell before it
	w := Cell{Producer: "C2", PID: 1001, Epoch: 3, Seq: 40, Txn: TxnOpen, Tick: 9}
	if off := l.appendProduced(&wire.ProduceRequest{Runs: runs, SrcCount: len(want)}, &w, nil); off != 1 {
		t.Fatalf("batch written at %d, want 1", off)
	}
	l.appendInvoice(Cell{PID: -1, Seq: -1, Tick: 10}, ins[1], 30, -1) // a cell after it
	s, at := l.Cells.spans.At(0), 0
	if n := l.Cells.spans.Len(); n != 1 || s.runCount() != len(runs) {
		t.Fatalf("%d spans of %d runs kept, want 1 of %d", n, s.runCount(), len(runs))
	}
	// its runs read back as given, each at the place of its first cell
	rr := l.Cells.runsOf(&s)
	for k, run := range runs {
		got, n, ok := rr.next()
		if want := (spanRun{part: run.Part, src: run.First, span: run.Last - run.First, at: int32(at), from: run.From, to: run.To}); !ok || got != want || n != int(run.Count) {
			t.Fatalf("run %d read back as %+v of %d (%v), want %+v of %d", k, got, n, ok, want, run.Count)
		}
		at += int(run.Count)
	}
	if _, _, ok := rr.next(); ok {
		t.Fatalf("more than %d runs read back", len(runs))
	}
	l.WriteMarker(1001, 3, false, 11)
	c := l.Cells.clone()
	for _, cl := range []*CellLog{&l.Cells, &c} {
		if cl.Len() != 1+len(want)+2 {
			t.Fatalf("Len %d, want %d", cl.Len(), 1+len(want)+2)
		}
		var got []CellSource
		for cs := range cl.Sources(cl.Len()) {
			got = append(got, cs)
		}
		for j := range want {
			i := 1 + j
			name := layout.Name(want[j], wantOff[j])
			wc := Cell{Offset: i, Value: "inv(" + name + ")", Source: name, Producer: "C2", PID: 1001, Epoch: 3, Seq: 40 + j, Txn: TxnAborted, Tick: 9}
			if got := cl.At(i); got != wc {
				t.Errorf("cell %d: %+v, want %+v", i, got, wc)
			}
			part, _ := layout.Input().Slot(want[j], nil)
			if p, off, ok := cl.SourceRef(i); !ok || p != part || off != wantOff[j] {
				t.Errorf("cell %d: SourceRef %d %d %v, want %d %d", i, p, off, ok, part, wantOff[j])
			}
			if ws := (CellSource{I: i, Part: part, Off: wantOff[j], OK: true, Txn: TxnAborted}); got[i] != ws {
				t.Errorf("Sources' cell %d: %+v, want %+v", i, got[i], ws)
			}
		}
		after := 1 + len(want)
		if got := cl.At(after); got.Source != layout.Name(ins[1], 30) || got.Txn != NotTransactional || got.Tick != 10 {
			t.Errorf("cell %d after the span: %+v", after, got)
		}
		if got := cl.At(after + 1); got.Control != "ABORT" {
			t.Errorf("cell %d: %+v, want the ABORT marker", after+1, got)
		}
	}
}

// TestInputRecordsAreRuns: an input partition's records cost a run per
// append, not a cell per record, and read back with their names and ticks.
func TestInputRecordsAreRuns(t *testing.T) {
	layout := topo.New(topo.Default())
	tp := layout.Inputs()[2]
	l := NewLog(tp, layout)
	l.AppendUpstream(100_000, 0)
	l.AppendUpstream(3, 7)
	if l.Cells.inRecs || l.Cells.runs.Len() != 2 || l.Cells.recs.Len() != 0 {
		t.Fatalf("input log: inRecs %v, %d runs, %d recs; want 2 runs", l.Cells.inRecs, l.Cells.runs.Len(), l.Cells.recs.Len())
	}
	for _, c := range []struct{ off, tick int }{{0, 0}, {99_999, 0}, {100_000, 7}, {100_002, 7}} {
		want := Cell{Offset: c.off, Value: layout.Name(tp, c.off), PID: -1, Seq: -1, Tick: c.tick}
		if got := l.Cells.At(c.off); got != want {
			t.Errorf("cell %d: %+v, want %+v", c.off, got, want)
		}
	}
}

// TestPlainRunsOfInputRecords: while an input log keeps its records as
// tick runs, every record from an offset to its end is one plain run
// (bounded by max); once it keeps cells one by one, none is (a Fetch then
// reads them one at a time), and an offset past the end has none.
func TestPlainRunsOfInputRecords(t *testing.T) {
	layout := topo.New(topo.Default())
	l := NewLog(layout.Inputs()[0], layout)
	l.AppendUpstream(10, 0)
	l.AppendUpstream(5, 3)
	for _, c := range []struct{ off, max, want int }{{0, 500, 15}, {4, 3, 3}, {12, 500, 3}, {15, 500, 0}, {-1, 500, 0}, {3, 0, 0}} {
		if got := l.Cells.PlainRun(c.off, c.max); got != c.want {
			t.Errorf("PlainRun(%d, %d) = %d, want %d", c.off, c.max, got, c.want)
		}
	}
	l.append(Cell{Value: "x", PID: 7, Seq: 0, Tick: 4}) // a produced cell: the log keeps cells one by one
	if got := l.Cells.PlainRun(0, 500); got != 0 {
		t.Errorf("PlainRun(0, 500) of a log of cells = %d, want 0", got)
	}
}

// The record the logs keep for every cell: their sizes are what a world's memory grows by, tick after tick;
// and a run as a fold reads it (spanRun, in registers) and as a batch carries it (wire.SrcRun, copied
// into its request and read again here).
func TestRecordSizes(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{{"cellRec", unsafe.Sizeof(cellRec{}), 12}, {"cellSpan", unsafe.Sizeof(cellSpan{}), 36}, {"spanRun", unsafe.Sizeof(spanRun{}), 24},
		{"wire.SrcRun", unsafe.Sizeof(wire.SrcRun{}), 24}} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, want %d", c.what, c.got, c.want)
		}
	}
}

// appendBatchModel appends to model the cells a batch written as w at
// offset off holds: an invoice of each source in turn, its offset and
// (when the writer numbers them) its sequence one past the one before.
func appendBatchModel(model []Cell, w Cell, off int, sources []string) []Cell {
	for j, src := range sources {
		c := w
		c.Offset, c.Source = off+j, src
		c.Value = "inv(" + src + ")"
		if c.Seq >= 0 {
			c.Seq += j
		}
		model = append(model, c)
	}
	return model
}

// TestRunsFromAsRuns: RunsFrom yields the cells from any cell on exactly
// as Runs does from the log's start (cell by cell: index, source, offset,
// transaction state), whether from falls between cells, at a span's
// first cell, inside a single-run span's run, inside a multi-run span's
// run, filtered or not, or past the end; and with cut anywhere.
func TestRunsFromAsRuns(t *testing.T) {
	layout, out, ins, slot, shared := threeOutputs(4)
	l := NewLog(out, layout)
	l.append(Cell{Value: "x", PID: -1, Seq: -1, Tick: 1}) // no input record's
	l.appendInvoice(Cell{PID: -1, Seq: -1, Tick: 2}, ins[0], 3, -1)
	w := Cell{Producer: "C2", PID: 1001, Epoch: 3, Seq: 40, Txn: TxnOpen, Tick: 9}
	// a single-run batch of the filtered records of ins[2]
	l.appendProduced(&wire.ProduceRequest{Src: ins[2], SrcOffset: shared[0], SrcEnd: shared[3], SrcCount: 4, SrcTPI: 3, HasSrc: true, Named: true}, &w, nil)
	// a multi-run batch: whole runs and a filtered one
	runs := []wire.SrcRun{
		{Part: 0, First: 4, Last: 6, Count: 3, From: 4, To: 6},
		{Part: 2, First: int32(shared[0]), Last: int32(shared[2]), Count: 3, From: 10, To: int32(shared[2])},
		{Part: 1, First: 7, Last: 9, Count: 3, From: 7, To: 9},
	}
	w.Seq = 44
	l.appendProduced(&wire.ProduceRequest{Runs: runs, SrcCount: 9}, &w, nil)
	l.appendInvoice(Cell{PID: -1, Seq: -1, Tick: 10}, ins[1], 30, -1)
	l.appendInvoice(Cell{PID: -1, Seq: -1, Tick: 10}, ins[1], 31, -1)
	n := l.Cells.Len()
	if l.Cells.spans == nil || l.Cells.spans.Len() != 2 {
		t.Fatalf("the log keeps %v spans, want 2", l.Cells.spans)
	}
	expand := func(rs func(func(CellRun) bool)) []CellRun { // cell by cell
		var cells []CellRun
		for r := range rs {
			if !r.OK {
				for j := range r.N {
					cells = append(cells, CellRun{I: r.I + j, N: 1, Txn: r.Txn})
				}
				continue
			}
			p, j := layout.Partitioner(ins[r.Part]), 0
			for off := r.First; off <= r.Last; off++ {
				if !r.Filtered || p.Slot(off) == slot {
					cells = append(cells, CellRun{I: r.I + j, N: 1, Part: r.Part, First: off, Last: off, OK: true, Txn: r.Txn})
					j++
				}
			}
			if j != r.N {
				t.Fatalf("a run of %d cells holds %d records: %+v", r.N, j, r)
			}
		}
		return cells
	}
	inside := 0
	for cut := 0; cut <= n; cut++ {
		all := expand(l.Cells.Runs(cut, n))
		if len(all) != n {
			t.Fatalf("cut %d: Runs yields %d cells of %d", cut, len(all), n)
		}
		for from := 0; from <= n+1; from++ {
			for r := range l.Cells.Runs(cut, n) {
				if r.I < from && from < r.I+r.N {
					inside++
				}
			}
			want := all[min(from, n):]
			if got := expand(l.Cells.RunsFrom(from, cut, n)); !slices.Equal(got, want) {
				t.Fatalf("RunsFrom(%d, %d, %d):\n%v\nwant\n%v", from, cut, n, got, want)
			}
		}
	}
	if inside == 0 {
		t.Fatal("no from fell inside a run: the test proves less than it says")
	}
}
