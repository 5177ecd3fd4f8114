package sim

import (
	"maps"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// Delivery: what a reader of the output topic at an isolation level sees
// of the input records, each invoiced once, twice or never: duplicates,
// losses and records the LSO holds back (metrics, compare, the explorer's
// audit of every branch).

// Counts are the delivery counters as a reader at one isolation level sees invoices.
type Counts struct {
	Duplicates     int      // invoices beyond the first per input record
	Lost           int      // input records before the committed offset with no invoice
	DuplicateNames []string // input records with more than one invoice
	LostNames      []string
	// HeldBack counts records whose committed invoice a read_committed reader
	// cannot see yet because it lies past the LSO; they are not lost.
	HeldBack      int
	HeldBackNames []string
}

// Delivery computes duplicates and lost records at an isolation level.
// The explorer asks it at the end of every branch, so it reads the output
// logs in place (what ReadTopic of the output topic returns) as runs of
// the input records their invoices name (CellLog.Runs: a batch's, kept as
// one span, read as its runs), and merges the runs of each input
// partition in offset order: a stretch of offsets that no run begins or
// ends in is judged as a whole when it can be (covered once by a run of
// every record, or by one filtered run of each output partition: no
// duplicate, nothing lost), record by record only where its runs do not
// say (a stretch some output partitions' filtered runs miss, or one that
// is lost or written twice: names to report). Its cost is per run, not
// per input record: it allocates its runs and the names it reports.
//
// Asked again it reads only the cells written since and walks only the
// input partitions whose runs or committed offset changed
// (deliveryLevel): a partition's counts depend on its runs and its
// committed offset alone.
func (w *World) Delivery(isolation string) Counts {
	inputs, outputs := w.layout.Inputs(), w.layout.Outputs()
	if isolation == "read_committed" && !w.outputEverTransactional() {
		// No transaction ever wrote to the output topic: its LSO is its
		// high watermark and no cell is open or aborted, so a
		// read_committed reader sees what a read_uncommitted one does
		// (metrics and plot duplicates ask both: one read, not two).
		return w.Delivery("read_uncommitted").clone()
	}
	if len(outputs) > maxGap {
		return deliveryPerRecord(w, isolation)
	}
	committed := isolation == "read_committed"
	lv := w.delivered.level(committed, len(outputs), len(inputs))
	ch := w.delivered.chains(w)
	cuts, anew := lv.prepare(w, ch, committed)
	// The partitions to walk: those whose runs a read changes (ch marks
	// them), past (the cells past the cut, read every time: this ask's
	// and the last's), and those whose committed offset moved.
	dirty := newBitset(len(inputs))
	for _, p := range lv.past {
		dirty.set(int(p))
	}
	odd, pastRuns, tails := lv.readOn(w, ch, cuts, committed, dirty)
	lv.limitsMoved(w, dirty, anew)
	var c Counts
	for s, n := range odd {
		if n > 1 {
			c.Duplicates += n - 1
			c.DuplicateNames = append(c.DuplicateNames, s)
		}
	}
	lv.walk(w, dirty, pastRuns, tails)
	names := lv.gathered()
	c.Duplicates += lv.dup
	c.Lost, c.HeldBack = lv.lost, lv.held
	c.DuplicateNames = append(c.DuplicateNames, names.dup...)
	if len(c.DuplicateNames) > len(names.dup) {
		sort.Strings(c.DuplicateNames)
	}
	c.LostNames, c.HeldBackNames = slices.Clone(names.lost), slices.Clone(names.held)
	return c
}

// prepare finds each output log's cut (its high watermark, or its LSO at
// read_committed: committed), starts afresh each read that no longer
// holds for its log, and, when one did or the level has no runs yet,
// makes the level anew (anew) with the runs of the cells the logs let go
// of.
func (lv *deliveryLevel) prepare(w *World, ch *deliveryChains, committed bool) (cuts []int, anew bool) {
	outputs := w.layout.Outputs()
	cuts = make([]int, len(outputs))
	for slot, tp := range outputs {
		l := w.broker.Log(tp)
		cuts[slot] = l.HW() // read_uncommitted: every cell is visible, none to split
		if committed {
			cuts[slot] = l.LSO()
		}
		if rd := &lv.reads[slot]; !rd.valid(l, cuts[slot]) {
			*rd = deliveryRead{start: l.Cells.Start()}
			lv.lo = nil // its runs among the partitions' are no longer its runs
		}
	}
	if lv.lo != nil {
		return cuts, false
	}
	// The cells let go of (below each log's start), as their runs: all
	// below the LSO, so visible or (aborted) never seen. They stay as
	// they are until the log lets go of more, which makes its read, and
	// so the level, anew.
	lv.anew(len(w.layout.Inputs()))
	for slot, tp := range outputs {
		if f := forgotLevel(w.broker.Log(tp), committed); f != nil {
			var runs []deliveryRun
			for _, r := range f.Runs {
				runs = ch.addOf(runs, deliveryRun{part: r.Part, lo: r.First, hi: r.Last, slot: -1, n: r.N}, r.Slotted, slot)
			}
			lv.add(ch.flush(runs))
		}
	}
	return cuts, true
}

// readOn reads each output log's cells below its cut not read before
// into its read and the partitions' lists, and those past it (held back
// from a read_committed reader) into pastRuns, marking in dirty the
// partitions whose runs or open chains either changes (those past the
// cut are also kept in lv.past, to walk again at the next ask). It
// returns the sources that are no input record's with their counts, the
// runs past the cuts and the chains open at each log's end (one an input
// partition, in partition order).
func (lv *deliveryLevel) readOn(w *World, ch *deliveryChains, cuts []int, committed bool, dirty bitset) (odd map[string]int, pastRuns []deliveryRun, tails [][]deliveryRun) {
	outputs := w.layout.Outputs()
	past := newBitset(len(w.layout.Inputs()))
	ch.touched = dirty
	defer func() { ch.touched = nil }()
	tails = make([][]deliveryRun, len(outputs))
	for slot, tp := range outputs {
		l := w.broker.Log(tp)
		lso, hw, cut := l.LSO(), l.HW(), cuts[slot]
		if f := forgotLevel(l, committed); f != nil {
			odd = addOdd(odd, f.Odd)
		}
		// The cells below cut read before, and those read now: they stay
		// as they are (below the high watermark, or the LSO, a cell's
		// transaction is over), so they are read once, and their runs kept
		// (the chains open at the end of them too, to join on).
		rd := &lv.reads[slot]
		if rd.upto < cut {
			ch.reopen(rd.tails)
			var newOdd map[string]int
			rd.runs = readCells(ch, rd.runs, &newOdd, l, rd.upto, cut, cut, lso, committed, slot)
			if newOdd != nil {
				rd.odd = addOdd(maps.Clone(rd.odd), newOdd) // a new map: a copy of the world may share the old (share)
			}
			rd.upto = cut
			rd.tails = ch.flush(nil) // a new array, likewise
		}
		odd = addOdd(odd, rd.odd)
		// The cells past cut, read every time from the chains as they are
		// at cut; with none, the chains are the read's.
		tails[slot] = rd.tails
		if cut < hw {
			ch.touched = past
			ch.reopen(rd.tails)
			pastRuns = readCells(ch, pastRuns, &odd, l, cut, cut, hw, lso, committed, slot)
			tails[slot] = ch.flush(nil)
			ch.touched = dirty
		}
	}
	lv.addReads()
	lv.past = lv.past[:0:0]
	for p := range past.all() {
		dirty.set(p)
		lv.past = append(lv.past, int32(p))
	}
	return odd, pastRuns, tails
}

// walk walks each partition marked in dirty over its runs by first
// offset and by last (its runs read before, its open chains in tails and
// its runs past the cut in pastRuns) and keeps what it finds (judge);
// every other partition's counts are what its last walk found.
func (lv *deliveryLevel) walk(w *World, dirty bitset, pastRuns []deliveryRun, tails [][]deliveryRun) {
	inputs := w.layout.Inputs()
	pastLo := sortRuns(pastRuns, byLo)
	pastHi := sortRuns(slices.Clone(pastRuns), byHi)
	m := deliveryMerge{w: w, fV: make([]int32, len(tails)), fH: make([]int32, len(tails))}
	var starts, ends, bufLo, bufHi []deliveryRun
	for p := range dirty.all() {
		p32 := int32(p)
		starts, ends = lv.lo[p], lv.hi[p]
		extraLo, extraHi := partRange(pastLo, p32), partRange(pastHi, p32)
		open := false
		for _, t := range tails {
			open = open || len(partRange(t, p32)) > 0
		}
		if open || len(extraLo) > 0 {
			starts = append(append(bufLo[:0], lv.lo[p]...), extraLo...)
			ends = append(append(bufHi[:0], lv.hi[p]...), extraHi...)
			for _, t := range tails {
				t = partRange(t, p32)
				starts, ends = append(starts, t...), append(ends, t...)
			}
			bufLo, bufHi = sortRuns(starts, byLo), sortRuns(ends, byHi)
		}
		var pc Counts
		m.c = &pc
		m.partition(inputs[p], starts, ends, int(lv.kept.limits[p]))
		lv.judge(p32, pc)
	}
}

// limitsMoved reads each input partition's limit (the offset below which
// a record with no invoice is lost: its committed offset, within its
// log) again when the committed offsets may have moved since lv read
// them, and marks the partitions whose limit moved in dirty. anew: every
// partition (lv has no limits yet).
func (lv *deliveryLevel) limitsMoved(w *World, dirty bitset, anew bool) {
	offsets := &w.Group.Offsets
	if !anew && lv.kept != nil && lv.kept.limits != nil && !lv.above && offsets.Version() == lv.version {
		return
	}
	kept := lv.own()
	if kept.limits == nil {
		kept.limits = make([]int32, len(w.layout.Inputs()))
	}
	lv.version, lv.above = offsets.Version(), false
	for i := range kept.limits {
		limit := 0
		if rec, ok := offsets.CommittedAt(i); ok {
			hw := w.hwAt(i)
			limit = min(rec, hw)
			lv.above = lv.above || rec > hw
		}
		if int32(limit) != kept.limits[i] || anew {
			kept.limits[i] = int32(limit)
			dirty.set(i)
		}
	}
}

// outputEverTransactional reports whether a transaction ever wrote to an
// output partition (broker.Log.EverTransactional).
func (w *World) outputEverTransactional() bool {
	for _, tp := range w.layout.Outputs() {
		if w.broker.Log(tp).EverTransactional() {
			return true
		}
	}
	return false
}

// Duplicated is the set of DuplicateNames: the sources with more than
// one invoice the reader sees (any other invoice a reader meets is its
// record's first and only one).
func (c Counts) Duplicated() map[string]bool {
	set := make(map[string]bool, len(c.DuplicateNames))
	for _, n := range c.DuplicateNames {
		set[n] = true
	}
	return set
}

// clone is c with lists of its own.
func (c Counts) clone() Counts {
	c.DuplicateNames = slices.Clone(c.DuplicateNames)
	c.LostNames = slices.Clone(c.LostNames)
	c.HeldBackNames = slices.Clone(c.HeldBackNames)
	return c
}

// readCells adds the runs of log l's cells from cell from to n-1 (runs
// split at cut; lso the log's LSO) to runs through ch, as Delivery reads
// them at the isolation level (read_committed when committed), the
// sources that are no input record's to *odd, and returns runs.
func readCells(ch *deliveryChains, runs []deliveryRun, odd *map[string]int, l *broker.Log, from, cut, n, lso int, committed bool, slot int) []deliveryRun {
	if from >= n {
		return runs
	}
	for r := range l.Cells.RunsFrom(from, cut, n) {
		visible := !committed || r.I < lso && r.Txn != TxnAborted && r.Txn != TxnOpen
		heldBack := committed && r.I >= lso && (r.Txn == TxnCommitted || r.Txn == NotTransactional)
		switch {
		case !visible && !heldBack:
		case !r.OK && visible: // cells of one source (CellRun)
			if *odd == nil {
				*odd = map[string]int{}
			}
			(*odd)[l.Cells.At(r.I).Source] += r.N
		case !r.OK: // held back, and no input record's: nothing is looked up by it
		default:
			runs = ch.add(runs, deliveryRun{part: int32(r.Part), lo: int32(r.First), hi: int32(r.Last), slot: -1, n: 1, held: !visible},
				r.Filtered, r.N, slot)
		}
	}
	return runs
}

// reopen makes tails the open chains (every other input partition's
// none), as they were when tails were flushed.
func (ch *deliveryChains) reopen(tails []deliveryRun) {
	for _, t := range tails {
		ch.open[t.part] = t
	}
}

// deliveryRun is a run of invoices as Delivery merges it: of records lo
// to hi of the input partition numbered part, every one (slot -1) or
// those the partitioner sends to output partition slot; held when a
// read_committed reader cannot see them yet (past the LSO), else visible;
// n invoices of each (more than one: runs of cells let go of, folded).
type deliveryRun struct {
	part, lo, hi, slot, n int32
	held                  bool
}

// forgotLevel is what the cells log l let go of contribute at the
// isolation level (read_committed when committed); nil for none.
func forgotLevel(l *broker.Log, committed bool) *broker.ForgotLevel {
	f := l.Forgotten()
	switch {
	case f == nil:
		return nil
	case committed:
		return &f.Committed
	}
	return &f.Uncommitted
}

// deliveryChains joins the runs of one output log (partition slot) of
// each input partition into longer ones as Delivery reads them: an
// output partition's runs of an input partition are its share of the
// batches that partition's records went out in, one after the other, so
// a run of slot's records from lo to hi followed by one from hi' > hi on
// are one run from lo on when no record between them is slot's (the
// partitioner says, for each record between: at most maxGap of them
// asked; a gap longer is left as it is). A run of one record of slot's
// is one of its filtered runs too; so is any run with a single output
// partition. open is the run being joined for each input partition
// (hi < lo: none), in the log being read.
type deliveryChains struct {
	w     *World
	open  []deliveryRun
	parts []topo.Partitioner // by input partition, made when first asked
	made  []bool
	outs  int
	buf   []int32 // Slots' scratch
	// touched marks the input partitions whose runs or open chain add
	// changes (nil: none marked)
	touched bitset
}

const maxGap = 1 << 12

func (ch *deliveryChains) partitioner(p int) topo.Partitioner {
	if ch.parts == nil {
		ch.parts, ch.made = make([]topo.Partitioner, len(ch.open)), make([]bool, len(ch.open))
	}
	if !ch.made[p] {
		ch.parts[p], ch.made[p] = ch.w.layout.Partitioner(ch.w.layout.Inputs()[p]), true
	}
	return ch.parts[p]
}

// add adds run r (n records, filtered or every one of its range) of
// output partition slot to runs, joined to the open run of its input
// partition when it can be.
func (ch *deliveryChains) add(runs []deliveryRun, r deliveryRun, filtered bool, n, slot int) []deliveryRun {
	slotted := filtered || ch.outs == 1 || n == 1 && ch.partitioner(int(r.part)).Slot(int(r.lo)) == slot
	if !slotted && n > 1 && n <= maxAllSlot {
		// every record of a short run the partitioner's for slot (a batch's
		// run of a few records that all hash there, a quarter of T1-like
		// runs of two): one of its filtered runs too, to join, where left
		// as it is it kept the runs Delivery sorts growing with the log
		slotted = ch.allOf(int(r.part), int(r.lo), n, slot)
	}
	return ch.addOf(runs, r, slotted, slot)
}

// maxAllSlot is the longest unfiltered run add asks the partitioner about
// record by record.
const maxAllSlot = 64

// allOf reports whether the partitioner sends every record of input
// partition p from offset lo, n of them, to output partition slot.
func (ch *deliveryChains) allOf(p, lo, n, slot int) bool {
	var buf [maxAllSlot]int32
	ch.partitioner(p).Slots(lo, buf[:n])
	for _, s := range buf[:n] {
		if int(s) != slot {
			return false
		}
	}
	return true
}

// addOf is add for a run that is slot's (its records those the
// partitioner sends to slot, or every record of its range is slot's) or
// not.
func (ch *deliveryChains) addOf(runs []deliveryRun, r deliveryRun, slotted bool, slot int) []deliveryRun {
	p := int(r.part)
	if ch.touched != nil {
		ch.touched.set(p)
	}
	if !slotted {
		return append(runs, r) // a run of records of other partitions too: as it is
	}
	r.slot = int32(slot)
	o := &ch.open[p]
	if o.hi >= o.lo && o.held == r.held && o.n == r.n && r.lo > o.hi && ch.noneBetween(p, int(o.hi)+1, int(r.lo), slot) {
		o.hi = r.hi
		return runs
	}
	if o.hi >= o.lo {
		runs = append(runs, *o)
	}
	*o = r
	return runs
}

// noneBetween reports whether no record of input partition p from offset
// from to to-1 goes to output partition slot, asking at most maxGap.
func (ch *deliveryChains) noneBetween(p, from, to, slot int) bool {
	none, buf := ch.partitioner(p).NoneIn(slot, ch.outs, from, to, maxGap, ch.buf, nil)
	ch.buf = buf
	return none
}

// flush adds the open runs to runs, at the end of a log.
func (ch *deliveryChains) flush(runs []deliveryRun) []deliveryRun {
	for p := range ch.open {
		if o := &ch.open[p]; o.hi >= o.lo {
			runs = append(runs, *o)
			*o = deliveryRun{hi: -1}
		}
	}
	return runs
}

// deliveryMerge is Delivery's walk of one input partition's offsets at a
// time: the visible and held runs over the stretch it is at, unfiltered
// (uV, uH) and filtered by output partition (fV, fH, back to zeros after
// each partition), with how many output partitions have a visible
// filtered run (geV1) and two or more (geV2), and how many filtered runs
// are open (nF).
type deliveryMerge struct {
	w              *World
	c              *Counts
	uV, uH         int
	fV, fH         []int32
	geV1, geV2, nF int
}

func (m *deliveryMerge) apply(r deliveryRun, d int32) {
	d *= r.n
	switch {
	case r.slot < 0 && r.held:
		m.uH += int(d)
	case r.slot < 0:
		m.uV += int(d)
	case r.held:
		m.fH[r.slot] += d
		m.nF += int(d)
	default:
		was := m.fV[r.slot]
		m.fV[r.slot] += d
		m.nF += int(d)
		now := m.fV[r.slot]
		if was < 1 && now >= 1 {
			m.geV1++
		} else if was >= 1 && now < 1 {
			m.geV1--
		}
		if was < 2 && now >= 2 {
			m.geV2++
		} else if was >= 2 && now < 2 {
			m.geV2--
		}
	}
}

// partition walks input partition tp: its runs by first offset
// (starts) and by last (ends), offsets below limit lost when no invoice
// of theirs is seen.
func (m *deliveryMerge) partition(tp TopicPartition, starts, ends []deliveryRun, limit int) {
	const none = int(^uint(0) >> 1)
	pos, si, ei := 0, 0, 0
	for {
		next := none
		if si < len(starts) {
			next = int(starts[si].lo)
		}
		if ei < len(ends) && int(ends[ei].hi)+1 < next {
			next = int(ends[ei].hi) + 1
		}
		if next == none {
			m.stretch(tp, pos, limit-1, limit)
			return
		}
		if pos < next {
			m.stretch(tp, pos, next-1, limit)
		}
		pos = next
		for si < len(starts) && int(starts[si].lo) == pos {
			m.apply(starts[si], 1)
			si++
		}
		for ei < len(ends) && int(ends[ei].hi)+1 == pos {
			m.apply(ends[ei], -1)
			ei++
		}
	}
}

// stretch judges offsets x to y of input partition tp, over which the
// runs are the same: whole when they say, else record by record.
func (m *deliveryMerge) stretch(tp TopicPartition, x, y, limit int) {
	if x > y {
		return
	}
	outs := len(m.fV)
	noDup := m.uV == 0 && m.geV2 == 0 || m.uV == 1 && m.geV1 == 0
	lostTo := min(y, limit-1)
	allSeen := m.uV >= 1 || outs > 0 && m.geV1 == outs
	if noDup && (lostTo < x || allSeen) {
		return
	}
	to := y
	if noDup {
		to = lostTo
	}
	var part topo.Partitioner
	if m.nF > 0 {
		part = m.w.layout.Partitioner(tp)
	}
	for off := x; off <= to; off++ {
		v, h := m.uV, m.uH
		if m.nF > 0 {
			s := part.Slot(off)
			v, h = v+int(m.fV[s]), h+int(m.fH[s])
		}
		switch {
		case v > 1:
			m.c.Duplicates += v - 1
			m.c.DuplicateNames = append(m.c.DuplicateNames, m.w.layout.Name(tp, off))
		case v == 0 && off <= lostTo && h > 0:
			m.c.HeldBack++
			m.c.HeldBackNames = append(m.c.HeldBackNames, m.w.layout.Name(tp, off))
		case v == 0 && off <= lostTo:
			m.c.Lost++
			m.c.LostNames = append(m.c.LostNames, m.w.layout.Name(tp, off))
		}
	}
}

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
	bump := func(s uint32, held bool, n int32) uint32 {
		if held {
			return s | heldBit
		}
		return s + uint32(n)
	}
	mark := func(p, off int, held bool, n int32) {
		if off < base[p+1]-base[p] {
			slots[base[p]+off] = bump(slots[base[p]+off], held, n)
			return
		}
		if extra == nil {
			extra = map[int64]uint32{}
		}
		k := int64(p)<<32 | int64(off)
		extra[k] = bump(extra[k], held, n)
	}
	committed := isolation == "read_committed"
	for slot, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		lso, hw := l.LSO(), l.HW()
		// The cells let go of (below the log's start), their runs' records
		// one by one: all below the LSO, so visible or never seen.
		if f := forgotLevel(l, committed); f != nil {
			odd = addOdd(odd, f.Odd)
			for _, r := range f.Runs {
				var part topo.Partitioner
				if r.Slotted {
					part = w.layout.Partitioner(w.layout.Inputs()[r.Part])
				}
				for off := int(r.First); off <= int(r.Last); off++ {
					if !r.Slotted || part.Slot(off) == slot {
						mark(int(r.Part), off, false, r.N)
					}
				}
			}
		}
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
				mark(cs.Part, cs.Off, !visible, 1)
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

// addOdd adds the counts of the cells let go of whose source is not an
// input record (broker.ForgotLevel.Odd) to odd, made when first needed.
func addOdd(odd, add map[string]int) map[string]int {
	for s, n := range add {
		if odd == nil {
			odd = map[string]int{}
		}
		odd[s] += n
	}
	return odd
}
