package broker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestWriterHintIsTheLookup: a span's writer index from a writer's hint
// (writerIndex, producerEntry.wr) is the one the lookups give
// (producerID, spanWriterIndex), whatever came between: other writers'
// spans, cells that list writers of their own (twice, past maxWriters),
// new producer names and epochs, the same PID under another name.
func TestWriterHintIsTheLookup(t *testing.T) {
	defer func(m int) { maxWriters = m }(maxWriters)
	layout := topo.New(topo.Default())
	out, in := layout.Outputs()[0], layout.Inputs()[0]
	for _, mw := range []int{farWriter, 3} {
		maxWriters = mw
		r := rand.New(rand.NewSource(11))
		hinted, looked := NewLog(out, layout), NewLog(out, layout)
		hints := map[int64]*writerHint{}
		used := 0
		for step := 0; step < 5000; step++ {
			pid := int64(r.Intn(4))
			w := Cell{Producer: fmt.Sprintf("C%d", 1+r.Intn(2*producerScan)), PID: pid, Epoch: r.Intn(3), Seq: step, Tick: step}
			if r.Intn(3) > 0 { // mostly the PID's own name, as a producer's
				w.Producer = fmt.Sprintf("C%d", pid)
			}
			if r.Intn(8) == 0 { // a cell, which lists its writer its own way
				hinted.appendInvoice(w, in, step, -1)
				looked.appendInvoice(w, in, step, -1)
				continue
			}
			h := hints[pid]
			if h == nil {
				h = new(writerHint)
				hints[pid] = h
			}
			if h.nw > 0 && h.nw == len(hinted.Cells.writers) && h.np == len(hinted.Cells.producers) && h.name == w.Producer {
				used++
			}
			hinted.Cells.appendRun(&w, 0, step, step+1, 2, h)
			looked.Cells.appendRun(&w, 0, step, step+1, 2, nil)
		}
		a, b := hinted.Cells.spans, looked.Cells.spans
		if a.Len() != b.Len() {
			t.Fatalf("%d spans hinted, %d looked up", a.Len(), b.Len())
		}
		for k := 0; k < a.Len(); k++ {
			if x, y := a.At(k), b.At(k); x != y {
				t.Fatalf("maxWriters %d: span %d hinted %+v, looked up %+v", mw, k, x, y)
			}
		}
		if used < 100 {
			t.Fatalf("maxWriters %d: a hint was usable %d times: the test does not reach it", mw, used)
		}
	}
}

// TestEncRunIsVarints: a run's encoding (encRuns, a byte each when all
// fit) is its numbers as encoding/binary appends them (the claim's two
// packed in one when small), and decodeRun (five bytes at once, three
// bytes a number at most without a branch, or the loops) reads back
// every run in order with its cells' places and its covered range,
// whatever bytes follow the runs in their chunk of the arena (none, or
// more than a run's: spans.runs.At).
func TestEncRunIsVarints(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	vals := []int{0, 1, 2, 63, 64, 127, 128, 300, 5000, 8191, 8192, 9000, 1<<20 - 1, 1 << 20, 1 << 30}
	for round := 0; round < 200; round++ {
		var want []byte
		var wprev spanRun
		var runs []spanRun
		var ns []int
		var batch []wire.SrcRun
		for k := 0; k < 1+r.Intn(12); k++ {
			part := int32(r.Intn(2000))
			first := vals[r.Intn(len(vals))]
			if r.Intn(2) == 0 {
				first = int(wprev.src) + r.Intn(130) - 65
				first = max(first, 0)
			}
			last := first + r.Intn(3)
			if r.Intn(5) == 0 {
				last = first + vals[r.Intn(len(vals)-1)]
			}
			n := 1 + r.Intn(last-first+1)
			lead, tail := 0, 0
			if r.Intn(2) == 0 {
				lead, tail = min(vals[r.Intn(len(vals))], first), vals[r.Intn(len(vals)-1)]
			}
			if r.Intn(3) == 0 {
				lead, tail = min(r.Intn(17), first), r.Intn(9) // about the packed claim's bounds
			}
			run := wire.SrcRun{Part: part, First: int32(first), Last: int32(last), Count: int32(n), From: int32(first - lead), To: int32(last + tail)}
			batch = append(batch, run)
			want = binary.AppendVarint(want, int64(part)-int64(wprev.part))
			want = binary.AppendVarint(want, int64(first)-int64(wprev.src))
			want = binary.AppendUvarint(want, uint64(last-first))
			want = binary.AppendUvarint(want, uint64(n))
			if lead < 16 && tail < 8 {
				want = binary.AppendUvarint(want, uint64(lead<<3|tail))
			} else {
				want = binary.AppendUvarint(want, uint64(128+lead))
				want = binary.AppendUvarint(want, uint64(tail))
			}
			wprev.part, wprev.src = part, int32(first)
			runs, ns = append(runs, spanRun{part: part, src: int32(first), span: int32(last - first), from: run.From, to: run.To}), append(ns, n)
		}
		total := 0
		for _, n := range ns {
			total += n
		}
		enc, cells, ok := encRuns(nil, batch, 2000)
		if !ok || cells != total {
			t.Fatalf("runs %v: encoded as %d cells (%v), want %d", runs, cells, ok, total)
		}
		if !bytes.Equal(enc, want) {
			t.Fatalf("runs %v: encoded %x, binary's %x", runs, enc, want)
		}
		pad := make([]byte, 1+r.Intn(40))
		r.Read(pad)
		for _, after := range [][]byte{nil, pad} {
			b, rc, at := append(enc[:len(enc):len(enc)], after...), runCode{}, int32(0)
			for k := range runs {
				b = decodeRun(b, &rc)
				want := runs[k]
				want.at = at
				if cur := rc.run(at); cur != want || int(rc.n) != ns[k] {
					t.Fatalf("run %d read %+v of %d cells, want %+v of %d (%d bytes after)", k, cur, rc.n, want, ns[k], len(after))
				}
				at += rc.n
			}
			if !bytes.Equal(b, after) {
				t.Fatalf("%d bytes left after the runs, want the %d after them", len(b), len(after))
			}
		}
	}
}

// TestEncRunsRefusesRunsOutOfReach: encRuns refuses a batch with a run
// out of a span's reach, wherever it is in the batch (a partition not an
// input's, a negative offset, no record, a run backwards, a covered range
// short of the run), leaving b's length as it was; appendRuns then keeps
// the batch a run at a time.
func TestEncRunsRefusesRunsOutOfReach(t *testing.T) {
	good := wire.SrcRun{Part: 3, First: 10, Last: 12, Count: 2, From: 9, To: 14}
	bad := map[string]func(*wire.SrcRun){
		"partition past the inputs": func(r *wire.SrcRun) { r.Part = 8 },
		"negative partition":        func(r *wire.SrcRun) { r.Part = -1 },
		"negative offset":           func(r *wire.SrcRun) { r.First, r.From = -1, -1 },
		"no record":                 func(r *wire.SrcRun) { r.Count = 0 },
		"backwards":                 func(r *wire.SrcRun) { r.Last = 9 },
		"covered from past it":      func(r *wire.SrcRun) { r.From = 11 },
		"covered to before its end": func(r *wire.SrcRun) { r.To = 11 },
	}
	for name, spoil := range bad {
		for at := 0; at < 3; at++ {
			runs := []wire.SrcRun{good, good, good}
			spoil(&runs[at])
			b := []byte{1, 2, 3}
			got, cells, ok := encRuns(b, runs, 8)
			if ok || cells != 0 || len(got) != len(b) || !bytes.Equal(got, []byte{1, 2, 3}) {
				t.Errorf("%s at run %d: encoded (%v, %d cells, %x), want refused with b as it was", name, at, ok, cells, got)
			}
		}
	}
	if _, cells, ok := encRuns(nil, []wire.SrcRun{good, good, good}, 8); !ok || cells != 6 {
		t.Errorf("three good runs: %v, %d cells; want true, 6", ok, cells)
	}
}

// TestSpanFromWithItsHint: spanFrom answers as its search does whatever
// span cutBefore found last (spans.cutHint), one at i or not, for every
// offset of a log of spans and cells between them.
func TestSpanFromWithItsHint(t *testing.T) {
	c, _ := t1Log(t, 3)
	c.appendInvoice(Cell{PID: -1, Seq: -1, Tick: 9}, c.names.Inputs()[0], 1, -1) // a cell past the spans
	c.appendRun(&Cell{PID: -1, Seq: -1, Tick: 9}, 0, 10, 12, 3, nil)
	r := rand.New(rand.NewSource(2))
	n := c.spans.Len()
	for i := 0; i <= c.Len(); i++ {
		c.spans.cutHint = n + 5 // none
		wk, wb := c.spanFrom(i)
		for _, h := range []int{wk, wk - 1, wk + 1, r.Intn(n + 1), -1} {
			c.spans.cutHint = h
			if k, b := c.spanFrom(i); k != wk || b != wb {
				t.Fatalf("offset %d, hint %d: span %d (%d before), its search %d (%d)", i, h, k, b, wk, wb)
			}
		}
	}
}

// TestSpansWrittenOverSpareChunksAreWhole: a log that lets go of its
// spans as it goes writes its next ones over the chunks it let go of
// (store.Spare), in place (appendSpan, store.Seq.AppendSpareSlot); each
// reads back as the same span of a log that let go of nothing: no field
// is left as the span let go of had it (each spoiled before it is let
// go of).
func TestSpansWrittenOverSpareChunksAreWhole(t *testing.T) {
	layout, tp, batches := t1Batches(40)
	forgets, keeps := &CellLog{tp: tp, names: layout}, &CellLog{tp: tp, names: layout}
	hf, hk := make([]writerHint, 100), make([]writerHint, 100)
	reused := 0
	for k, bt := range batches {
		spares := 0
		if forgets.spans != nil {
			spares = forgets.spans.spare.KeptBytes(36)
		}
		if !forgets.appendRuns(&bt.w, bt.runs, &hf[bt.m]) || !keeps.appendRuns(&bt.w, bt.runs, &hk[bt.m]) {
			t.Fatal("runs out of reach")
		}
		if forgets.spans.spare.KeptBytes(36) < spares {
			reused++
		}
		if k%500 == 499 {
			// every field of the spans let go of spoiled first: the
			// next spans are written over them
			to := (forgets.spans.Len() - 1) / store.SeqChunk() * store.SeqChunk() // the chunks before the open one
			forgets.spans.Update(forgets.spans.First(), to, func(*cellSpan) bool { return true }, func(s *cellSpan) {
				*s = cellSpan{-1, -1, -1, -1, -1, -1, -1, -1, 1<<32 - 1}
			})
			forgets.spans.ForgetBeforeSpare(to, &forgets.spans.spare)
		}
	}
	if reused == 0 {
		t.Fatal("no spare chunk was written again: the test does not reach it")
	}
	for i := forgets.spans.First(); i < forgets.spans.Len(); i++ {
		if got, want := forgets.spans.At(i), keeps.spans.At(i); got != want {
			t.Fatalf("span %d over a spare chunk reads %+v, want %+v", i, got, want)
		}
	}
}
