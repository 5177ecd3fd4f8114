package sim

import "sort"

// deliveryPerRecord is Delivery as it was before it merged runs (issue
// 26): Delivery at an isolation level, a count per input record. Delivery
// hands an output topic of more than maxGap partitions to it: there the
// runs of one input partition in one output partition never join (the
// records between two of them are more than maxGap), so runs would keep
// about 40 bytes a record where this keeps 4. It is also the reference
// TestDeliveryRunsMatchPerRecord holds Delivery to, and
// BenchmarkDeliveryRealRates compares it with. It reads the output
// logs in place (what ReadTopic of the output topic returns) and counts
// invoices by the input record their source references (CellLog.sourceRef),
// without spelling a name, in one dense count per input record (input
// offsets are dense from 0): it allocates that array and the names it
// reports, not per record, and hashes nothing.
func deliveryPerRecord(w *World, isolation string) Counts {
	// Input record (p, off) is slot base[p]+off, for off below its log's
	// end; a source past it (never written by the engine: an invoice
	// names a record that was read) is counted in extra.
	base := make([]int, len(w.layout.Inputs())+1)
	for p, tp := range w.layout.Inputs() {
		base[p+1] = base[p] + w.broker.Log(tp).HW()
	}
	const heldBit = 1 << 31 // a committed invoice at or past the LSO (read_committed)
	slots := make([]uint32, base[len(w.layout.Inputs())])
	var extra map[int64]uint32 // by p<<32 | off, as slots
	var odd map[string]int     // sources that are no input record's name
	bump := func(s uint32, held bool) uint32 {
		if held {
			return s | heldBit
		}
		return s + 1
	}
	mark := func(p, off int, held bool) {
		if off < base[p+1]-base[p] {
			slots[base[p]+off] = bump(slots[base[p]+off], held)
			return
		}
		if extra == nil {
			extra = map[int64]uint32{}
		}
		k := int64(p)<<32 | int64(off)
		extra[k] = bump(extra[k], held)
	}
	committed := isolation == "read_committed"
	for _, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		lso, hw := l.LSO(), l.HW()
		// The data cells with their sources, a batch's (a span) read in
		// one pass.
		for cs := range l.Cells.Sources(hw) {
			i, txn := cs.I, cs.Txn
			visible := !committed || i < lso && txn != TxnAborted && txn != TxnOpen
			heldBack := committed && i >= lso && (txn == TxnCommitted || txn == NotTransactional)
			if !visible && !heldBack {
				continue
			}
			switch {
			case !cs.OK && visible:
				if odd == nil {
					odd = map[string]int{}
				}
				odd[l.Cells.At(i).Source]++
			case !cs.OK: // held back, and no input record's: nothing is looked up by it
			default:
				mark(cs.Part, cs.Off, !visible)
			}
		}
	}
	var c Counts
	dup := func(p, off int, s uint32) {
		if n := int(s &^ heldBit); n > 1 {
			c.Duplicates += n - 1
			c.DuplicateNames = append(c.DuplicateNames, w.layout.Name(w.layout.Inputs()[p], off))
		}
	}
	for p := range w.layout.Inputs() {
		for off, s := range slots[base[p]:base[p+1]] {
			dup(p, off, s)
		}
	}
	for k, s := range extra {
		dup(int(k>>32), int(k&(1<<32-1)), s)
	}
	for s, n := range odd {
		if n > 1 {
			c.Duplicates += n - 1
			c.DuplicateNames = append(c.DuplicateNames, s)
		}
	}
	sort.Strings(c.DuplicateNames)
	for p, tp := range w.layout.Inputs() {
		rec, ok := w.Group.Offsets.CommittedOffset(tp)
		if !ok {
			continue
		}
		// Offsets below the committed one and the log's end: all in slots.
		for off := 0; off < rec && off < base[p+1]-base[p]; off++ {
			switch s := slots[base[p]+off]; {
			case s&^heldBit > 0:
			case s&heldBit != 0:
				c.HeldBack++
				c.HeldBackNames = append(c.HeldBackNames, w.layout.Name(tp, off))
			default:
				c.Lost++
				c.LostNames = append(c.LostNames, w.layout.Name(tp, off))
			}
		}
	}
	return c
}
