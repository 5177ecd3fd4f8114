package broker

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
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
			hinted.Cells.appendRun(w, 0, step, step+1, 2, h)
			looked.Cells.appendRun(w, 0, step, step+1, 2, nil)
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
