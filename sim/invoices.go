package sim

import (
	"slices"

	"github.com/kgrepl/kgrepl/sim/topo"
)

// InvoiceAsk is a cell whose place among the invoices of its input record
// a view asks for (consume's notes, a diagram's o2.3²): its log's place
// among the logs read (Log), its offset (Cell) and its source (the input
// record its invoice names; "" for none, never counted). CountInvoices
// sets Nth.
type InvoiceAsk struct {
	Log, Cell int
	Source    string
	Nth       int
}

// CountInvoices sets each ask's Nth: how many of the cells runs gives, up
// to the asked cell and it included (in the order runs gives them: log by
// log as logs lists them, each in offset order), are invoices of its
// source. runs calls f with each run of data cells read (li: its log's
// place in logs) until f returns false, and returns what stops it (a
// session's Ctrl-C). The cells a log let go of (history.ms) are not runs:
// the caller adds them (broker.Log.ForgotInvoices).
//
// Its cost is per run, not per cell: a run of an input record's range adds
// one to each ask of that input partition whose offset it holds (a
// filtered run only the offsets the partitioner sends to its output
// partition, each at its own cell); only runs of cells that are no input
// record's reference (typed values) are read cell by cell, their sources
// compared as strings. A view of a few cells of a log of millions reads
// its runs once, not its cells.
func (w *World) CountInvoices(logs []TopicPartition, asks []InvoiceAsk, runs func(f func(li int, r CellRun) bool) error) error {
	// The asks by source: by input record (part, offset) for the runs of
	// ranges, and by name for the cells read one by one.
	type ref struct{ part, off int }
	byRef := map[ref][]int{}
	byName := map[string][]int{}
	for x := range asks {
		asks[x].Nth = 0
		src := asks[x].Source
		if src == "" {
			continue
		}
		byName[src] = append(byName[src], x)
		if part, off, ok := w.layout.Ref(src); ok {
			byRef[ref{part, off}] = append(byRef[ref{part, off}], x)
		}
	}
	if len(byName) == 0 {
		return nil // no ask has a source: nothing to count
	}
	byPart := map[int][]int{} // the offsets asked for, by input partition
	for r := range byRef {
		byPart[r.part] = append(byPart[r.part], r.off)
	}
	atOrBefore := func(li, i int, a *InvoiceAsk) bool { return li < a.Log || li == a.Log && i <= a.Cell }
	outputs := w.layout.Outputs()
	// a filtered run's partitioner and output partition, kept while the
	// runs are of one input partition in one log
	var p *topo.Partitioner
	pPart, slotLog, slot := -1, -1, -1
	return runs(func(li int, r CellRun) bool {
		if !r.OK {
			// cells that are no input record's reference: by name
			l := w.broker.Log(logs[li])
			for c := r.I; c < r.I+r.N; c++ {
				for _, x := range byName[l.Cells.At(c).Source] {
					if atOrBefore(li, c, &asks[x]) {
						asks[x].Nth++
					}
				}
			}
			return true
		}
		for _, off := range byPart[r.Part] {
			if off < r.First || off > r.Last {
				continue
			}
			at := r.I + off - r.First // its cell, every record of the range in the run
			if r.Filtered {
				if p == nil || pPart != r.Part || slotLog != li {
					pp := w.layout.Partitioner(w.layout.Inputs()[r.Part])
					p, pPart, slotLog, slot = &pp, r.Part, li, slices.Index(outputs, logs[li])
				}
				if p.Slot(off) != slot {
					continue
				}
				at = r.I
				for o := r.First; o < off; o++ {
					if p.Slot(o) == slot {
						at++
					}
				}
			}
			for _, x := range byRef[ref{r.Part, off}] {
				if atOrBefore(li, at, &asks[x]) {
					asks[x].Nth++
				}
			}
		}
		return true
	})
}

// ForgotInvoices is how many invoices of the input record named source
// ("": none) were among the cells logs[0] .. logs[through] let go of (history.ms)
// that a reader at the isolation level (read_committed when committed)
// sees: what that reader met before those logs' starts
// (broker.Log.ForgotInvoices), which CountInvoices leaves to its caller.
func (w *World) ForgotInvoices(logs []TopicPartition, through int, source string, committed bool) int {
	if source == "" {
		return 0 // no source: never counted, as in CountInvoices
	}
	part, off, ok := w.layout.Ref(source)
	if !ok {
		part = -1
	}
	n := 0
	for _, tp := range logs[:through+1] {
		if l := w.broker.Log(tp); l.Start() > 0 {
			n += l.ForgotInvoices(part, off, source, committed)
		}
	}
	return n
}
