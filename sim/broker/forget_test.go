package broker

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestFoldSpansMatchesFoldGeneral: folding the spans an output log lets
// go of as they are read (foldSpans) makes the very Forgotten the
// general fold makes (foldGeneral: every run listed, grouped by input
// partition, made canonical), fold after fold, at both isolation levels,
// or refuses and leaves it as it was. The log is written as a producer
// writes: each input partition's records in order, batch after batch
// (single runs and several runs, the partitioner's share or every
// record), with now and then a gap (records never written), a step back
// (records written twice), an aborted batch, and several output
// partitions or one; most runs claiming the input range they were cut
// from (wire.SrcRun.From), which foldSpans trusts and foldGeneral does
// not read.
func TestFoldSpansMatchesFoldGeneral(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	t.Cleanup(VerifyCoversForTest()) // the runs' claimed ranges are true ones
	seen := map[string]int{}
	for _, outs := range []int{1, 4} {
		shape := topo.Default()
		shape.Inputs[0].Partitions = 6
		shape.Output.Partitions = outs
		layout := topo.New(shape)
		tp := layout.Outputs()[outs-1]
		slot := outputIndex(layout, tp)
		for seed := int64(1); seed <= 40; seed++ {
			r := rand.New(rand.NewSource(seed))
			c := CellLog{tp: tp, names: layout}
			next := make([]int, len(layout.Inputs())) // each input partition's next record
			var f Forgotten
			f.same = true
			// run is the producer's next run of input partition part:
			// from its next record, or a few past it (a gap), or a few
			// before (written again); the partitioner's share of it, or
			// (one time in four) every record of its range.
			run := func(part int) (wire.SrcRun, bool) {
				src := layout.Inputs()[part]
				first := next[part]
				switch k := r.Intn(40); {
				case k == 0 && first > 3:
					first -= 1 + r.Intn(3)
				case k == 1:
					first += 1 + r.Intn(5)
				}
				last := first + r.Intn(12)
				next[part] = last + 1
				count := last - first + 1
				from, to := first, last // the range the run is cut from: a true claim (wire.SrcRun.From)
				if outs > 1 && r.Intn(4) != 0 {
					var offs []int
					for off := first; off <= last; off++ {
						if layout.Partitioner(src).Slot(off) == slot {
							offs = append(offs, off)
						}
					}
					if len(offs) == 0 {
						return wire.SrcRun{}, false
					}
					first, last, count = offs[0], offs[len(offs)-1], len(offs)
					if r.Intn(5) == 0 {
						from, to = first, last // claiming no more than the run
					}
				}
				return wire.SrcRun{Part: int32(part), First: int32(first), Last: int32(last), Count: int32(count), From: int32(from), To: int32(to)}, true
			}
			folds := 0
			for tick := 0; tick < 300; tick++ {
				w := Cell{Producer: "C1", PID: 1000, Seq: -1, Tick: tick, Txn: NotTransactional}
				if r.Intn(30) == 0 {
					w.Txn = TxnAborted
				}
				if r.Intn(3) == 0 { // one run (appendRun)
					part := r.Intn(len(next))
					if sr, ok := run(part); ok && sr.Count > 1 {
						c.appendRun(&w, part, int(sr.First), int(sr.Last), int(sr.Count), nil)
					}
				} else { // several (appendRuns)
					var runs []wire.SrcRun
					for _, part := range r.Perm(len(next))[:1+r.Intn(len(next))] {
						if sr, ok := run(part); ok {
							runs = append(runs, sr)
						}
					}
					if len(runs) > 0 && !c.appendRuns(&w, runs, nil) {
						t.Fatalf("seed %d: runs %v out of a span's reach", seed, runs)
					}
				}
				if tick%17 != 16 || c.Len() == 0 {
					continue
				}
				to := c.spanStart(int(c.startOff) + r.Intn(c.Len()-int(c.startOff)+1))
				if to <= int(c.startOff) {
					continue
				}
				k0, k1, only := c.onlySpans(to)
				if !only {
					t.Fatalf("seed %d: a log of spans only has cells outside them below %d", seed, to)
				}
				fast, general := f, f
				c.foldGeneral(&general, to, slot, nil)
				if c.foldSpans(&fast, k0, k1, slot) {
					if !reflect.DeepEqual(fast.content(), general.content()) {
						t.Fatalf("outs %d seed %d fold %d (cells %d to %d): folded as read %+v, the general fold %+v", outs, seed, folds, c.startOff, to, fast, general)
					}
					seen["folded as read"]++
				} else {
					if !reflect.DeepEqual(fast.content(), f.content()) {
						t.Fatalf("outs %d seed %d fold %d: a refused fold changed the log's Forgotten: %+v, was %+v", outs, seed, folds, fast, f)
					}
					seen["refused"]++
				}
				f = general
				c.letGo(to)
				folds++
				if !f.same {
					seen["aborted let go of"]++
				}
				for _, fr := range f.Uncommitted.Runs {
					if fr.N > 1 {
						seen["a run of duplicates"]++
						break
					}
				}
				if n := len(f.Uncommitted.Runs); n > 2*len(next) {
					seen["runs apart in a partition"]++
				}
			}
		}
	}
	t.Logf("%v", seen)
	for _, k := range []string{"folded as read", "refused", "aborted let go of", "a run of duplicates", "runs apart in a partition"} {
		if seen[k] == 0 {
			t.Errorf("never %s (%v): the test proves less than it says", k, seen)
		}
	}
}

// TestFoldTrustsClaimedRanges: a fold joins two runs of slot's records
// without asking the partitioner when the input ranges they claim
// (wire.SrcRun.From) meet, so a wrong claim, one over a record of slot's
// that no batch holds, makes the fold say that record was written (its
// delivery count wrong): VerifyCoversForTest catches the claim where the
// batch is appended, naming the record; true claims fold as foldGeneral
// folds.
func TestFoldTrustsClaimedRanges(t *testing.T) {
	shape := topo.Default()
	shape.Output.Partitions = 4
	layout := topo.New(shape)
	tp := layout.Outputs()[1]
	slot := outputIndex(layout, tp)
	part := layout.Partitioner(layout.Inputs()[0])
	var offs []int32 // records of input partition 0 slot gets, in order
	for off := 0; len(offs) < 200; off++ {
		if part.Slot(off) == slot {
			offs = append(offs, int32(off))
		}
	}
	var a, b, c int32 // three in a row of them, each after a gap (a record slot does not get)
	for k := 1; k+2 < len(offs) && c == 0; k++ {
		if offs[k-1] < offs[k]-1 && offs[k] < offs[k+1]-1 && offs[k+1] < offs[k+2]-1 {
			a, b, c = offs[k], offs[k+1], offs[k+2]
		}
	}
	if c == 0 {
		t.Fatalf("no three records of input partition 0 that %s gets, each after a gap, among its first %d", tp, len(offs))
	}
	one := func(off, from, to int32) wire.SrcRun {
		return wire.SrcRun{Part: 0, First: off, Last: off, Count: 1, From: from, To: to}
	}
	fold := func(batches ...wire.SrcRun) (fast, general Forgotten) {
		t.Helper()
		l := CellLog{tp: tp, names: layout}
		for k, run := range batches {
			w := Cell{Producer: "C1", PID: 1000, Seq: k, Tick: k, Txn: NotTransactional}
			if !l.appendRuns(&w, []wire.SrcRun{run}, nil) {
				t.Fatalf("run %+v not kept as a span", run)
			}
		}
		fast.same, general.same = true, true
		k0, k1, only := l.onlySpans(l.Len())
		if !only {
			t.Fatal("a log of spans only has cells outside them")
		}
		l.foldGeneral(&general, l.Len(), slot, nil)
		if !l.foldSpans(&fast, k0, k1, slot) {
			t.Fatalf("runs %+v in order refused", batches)
		}
		return fast, general
	}
	// True claims: a's reaches to b-1, b's from b to c-1; every record
	// of a..c that slot gets written, one run.
	fast, general := fold(one(a, a-1, b-1), one(b, b, c-1), one(c, c, c))
	if !reflect.DeepEqual(fast.content(), general.content()) || len(fast.Uncommitted.Runs) != 1 || fast.Uncommitted.Runs[0] != (ForgotRun{First: a, Last: c, N: 1, Slotted: true}) {
		t.Fatalf("true claims: folded %+v, the general fold %+v; want one run %d..%d", fast, general, a, c)
	}
	// No claims past the runs: the gaps asked of the partitioner, the same.
	if fast, general := fold(one(a, a, a), one(b, b, b), one(c, c, c)); !reflect.DeepEqual(fast.content(), general.content()) {
		t.Fatalf("no claims: folded %+v, the general fold %+v", fast, general)
	}
	// b never written, and c's claim starts at b: wrong. The fold
	// trusts it and joins a and c over b; the general fold does not.
	wrong := one(c, b, c)
	fast, general = fold(one(a, a, b-1), wrong)
	if reflect.DeepEqual(fast.content(), general.content()) || len(general.Uncommitted.Runs) != 2 {
		t.Fatalf("a wrong claim over record %d: folded %+v, the general fold %+v; want the fold to trust it (one run) and the general fold two", b, fast, general)
	}
	defer VerifyCoversForTest()()
	defer func() {
		msg := fmt.Sprint(recover())
		if want := fmt.Sprintf("but record %d goes to it", b); !strings.Contains(msg, want) {
			t.Fatalf("appending a wrong claim under VerifyCoversForTest: %q, want a panic saying %q", msg, want)
		}
	}()
	fold(one(a, a, b-1), wrong)
}

// TestSearchFromIsSortSearch: searchFrom finds what sort.Search finds,
// from any start below the answer, over every length and answer.
func TestSearchFromIsSortSearch(t *testing.T) {
	for n := 0; n < 70; n++ {
		for ans := 0; ans <= n; ans++ {
			f := func(k int) bool { return k >= ans }
			for lo := 0; lo <= ans; lo++ {
				if got := searchFrom(lo, n, f); got != ans {
					t.Fatalf("searchFrom(%d, %d) with the answer at %d: %d", lo, n, ans, got)
				}
			}
		}
	}
}

// TestVarintsReadAsBinaryReads: uvarint and varint read what
// encoding/binary reads, one byte long or more, negative too.
func TestVarintsReadAsBinaryReads(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 127, 128, 300, -300, 1 << 20, -(1 << 31), 1<<31 - 1} {
		b := binary.AppendVarint(nil, v)
		if got, n := varint(b); got != v || n != len(b) {
			t.Fatalf("varint of %d: %d (%d bytes), want %d bytes", v, got, n, len(b))
		}
		if v >= 0 {
			b = binary.AppendUvarint(nil, uint64(v))
			if got, n := uvarint(b); got != uint64(v) || n != len(b) {
				t.Fatalf("uvarint of %d: %d (%d bytes), want %d bytes", v, got, n, len(b))
			}
		}
	}
	if _, n := uvarint(nil); n != 0 {
		t.Fatalf("uvarint of nothing read %d bytes", n)
	}
}

// TestLettingGoOfOddCellsLetsGoOfTheirStrings: an invoice of an input
// partition past maxSrcPart (T2 has 100,000) written a cell at a time is
// an odd cell, its strings kept in others; letting go of the cells lets
// go of those strings too (a long roll's heap grew by them, 0.4 MB a
// restart), and every cell kept still reads as it was written, its
// invoices still counted (Forgotten).
func TestLettingGoOfOddCellsLetsGoOfTheirStrings(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	shape := topo.Default()
	shape.Inputs[0].Partitions = maxSrcPart + 10
	shape.Output.Partitions = 1
	layout := topo.New(shape)
	l := NewLog(layout.Outputs()[0], layout)
	far, near := maxSrcPart+5, 3 // an odd cell's partition, and a kept one's
	var want []Cell
	for tick := 0; tick < 40; tick++ {
		part := far
		if tick%3 == 0 {
			part = near
		}
		src := layout.Inputs()[part]
		l.appendInvoice(Cell{PID: -1, Seq: -1, Tick: tick}, src, tick, part)
		want = append(want, l.Cells.At(l.Cells.Len()-1))
	}
	if l.Cells.others.Len() < 20 {
		t.Fatalf("only %d odd cells: too few to test", l.Cells.others.Len())
	}
	for cut := 1; cut <= 30; cut++ { // every cut: one at each odd cell's chunk's edge
		l.forgetBeforeFrom(cut, true, nil, nil)
		for i := l.Start(); i < l.Cells.Len(); i++ {
			if got := l.Cells.At(i); got != want[i] {
				t.Fatalf("cell %d reads %+v after letting go of the cells before %d, written %+v", i, got, cut, want[i])
			}
		}
	}
	if first := l.Cells.others.First(); first < 16 {
		t.Errorf("the log starts at cell %d, and still keeps its odd cells from %d on", l.Start(), first)
	}
	if n := l.ForgotInvoices(far, 1, "", false); n != 1 {
		t.Errorf("record 1 of partition %d was written once and let go of: counted %d times", far, n)
	}
}

// TestCutBeforeWithItsHint: in a log of spans and cells between them,
// cutBefore answers as a search of the whole log does whatever cell it
// found last (spans.cellCutHint), for every tick and log start.
func TestCutBeforeWithItsHint(t *testing.T) {
	c, _ := t1Log(t, 3)
	for tick := 3; tick < 12; tick++ {
		for k := range tick % 3 { // cells between spans, some ticks none
			c.appendInvoice(Cell{PID: -1, Seq: -1, Tick: tick}, c.names.Inputs()[0], tick*10+k, -1)
		}
		c.appendRun(&Cell{PID: -1, Seq: -1, Tick: tick}, 0, 1000+tick*10, 1000+tick*10+4, 3, nil)
	}
	if c.recs.Len() == 0 {
		t.Fatal("no cell between the spans")
	}
	r := rand.New(rand.NewSource(3))
	for _, start := range []int{0, 5, c.Len() / 2} {
		c.startOff = int32(start)
		for tick := 0; tick < 14; tick++ {
			for _, lso := range []int{c.Len(), c.Len() - 2} {
				// What the search of the whole log gave.
				n := min(c.Len(), lso)
				want := start
				if n > start {
					want = c.spanStart(start + sort.Search(n-start, func(k int) bool { return c.TickAt(start+k) >= tick }))
				}
				for _, h := range []int{want, want - 1, want + 1, r.Intn(c.Len() + 1), -1, c.Len() + 5} {
					c.spans.cellCutHint = h
					if got := c.cutBefore(tick, lso); got != want {
						t.Fatalf("start %d, tick %d, lso %d, hint %d: %d, its search %d", start, tick, lso, h, got, want)
					}
				}
			}
		}
	}
}

// content is f without where its runs are kept (ForgotLevel.room and
// made, which only the general fold notes): what two folds must agree on.
func (f Forgotten) content() Forgotten {
	f.Uncommitted.room, f.Uncommitted.made = nil, 0
	f.Committed.room, f.Committed.made = nil, 0
	return f
}
