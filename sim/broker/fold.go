package broker

import (
	"cmp"
	"maps"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/topo"
)

// Folding what an output log lets go of into its Forgotten (forget.go):
// the runs of input records the cells' invoices name, joined per input
// partition at each isolation level, in canonical order. foldSpans folds
// a log of spans as it reads them (a window's steady path); foldGeneral
// materializes every run and merges it with what was folded before
// (fold, canonical), for any cells.

// foldGeneralOnly makes every fold take foldGeneral (tests only:
// FoldGeneralOnlyForTest).
var foldGeneralOnly bool

// FoldGeneralOnlyForTest makes output logs fold what they let go of the
// general way (foldGeneral) even where foldSpans would, and returns the
// function that restores it: for tests that compare the two, never while
// another test steps a world.
func FoldGeneralOnlyForTest() (restore func()) {
	old := foldGeneralOnly
	foldGeneralOnly = true
	return func() { foldGeneralOnly = old }
}

// foldSpans folds into f the runs of spans k0 to k1-1 (every cell let go
// of is in one of them: T1's logs) as foldGeneral does, to the same
// runs, reading each run once and keeping no list of them: in steady
// state each input partition's runs come in offset order, one after the
// other, and each is joined to its partition's last run as it is read
// (levelFold). False, f unchanged, when some partition's runs of a kind
// do not come in offset order after those f holds (a record written
// twice: a rebalance's duplicates), for foldGeneral to fold.
func (c *CellLog) foldSpans(f *Forgotten, k0, k1, slot int) bool {
	parts := len(c.names.Inputs())
	un := newLevelFold(c, &f.Uncommitted, parts, slot)
	var co *levelFold // read_committed's, once it is not read_uncommitted's
	if !f.same {
		co = newLevelFold(c, &f.Committed, parts, slot)
	}
	aborted := false
	for k := k0; k < k1; {
		chunk := c.spans.ChunkFrom(k) // read in place, a chunk at a time
		chunk = chunk[:min(len(chunk), k1-k)]
		k += len(chunk)
		for i := range chunk {
			s := &chunk[i]
			if s.txn() == TxnAborted && !aborted {
				aborted = true
				if co == nil {
					// read_committed saw what read_uncommitted saw up to
					// here (f.same): its fold so far is a copy.
					co = un.copyFor(&f.Committed)
				}
			}
			committed := co != nil && s.txn() != TxnAborted
			if s.part != multiRun {
				own := s.ownCode()
				if !un.foldRun(co, committed, &own) {
					return false
				}
				continue
			}
			// The runs read into one runCode field by field, never
			// copied whole (decodeRun says why), not through a
			// runReader.
			b, rc := c.spans.runs.At(uint32(s.src)), runCode{}
			for left := s.span; left > 0; left-- {
				b = decodeRun(b, &rc)
				if !un.foldRun(co, committed, &rc) {
					return false
				}
			}
		}
	}
	f.Uncommitted = un.level()
	if f.same = f.same && !aborted; f.same {
		f.Committed = f.Uncommitted
	} else {
		f.Committed = co.level()
	}
	return true
}

// foldRun folds run r (r.n cells) into un and, when committed, into co.
// A run is slot's records when it holds fewer than its range, or there
// is one output partition, or it is one record that the partitioner
// sends here (as foldGeneral says): asked of the partitioner unless the
// run claims a range past its own (claims), whose records that go here
// are the run's. r is read field by field (decodeRun says why).
func (un *levelFold) foldRun(co *levelFold, committed bool, r *runCode) bool {
	if r.n == 1 && r.span == 0 && un.outs > 1 && co == nil {
		return un.addOne(r) // a run of one record, one level
	}
	slotted := r.n != r.span+1 || un.outs == 1 ||
		r.n == 1 && (r.claims() || un.slotOf(r.part, r.src) == un.slot)
	return un.add(r, slotted) && (!committed || co.add(r, slotted))
}

// claims reports whether run r claims a range of input records past its
// own (wire.SrcRun.From): the records of from..to that go to the log's
// partition are the run's, so none between it and a run whose range
// meets its is.
func (r *runCode) claims() bool { return r.from < r.src || r.to > r.src+r.span }

// levelFold is one isolation level's fold of runs read in order (foldSpans):
// for each input partition and kind (every record, or slot's: Slotted),
// the last run, joined to as canonicalInOrder joins (the same N; touching,
// or for slot's runs no record between them slot's), else set aside for
// a new one. old's runs of a partition and kind (canonical: in offset
// order, none joinable to the one before it) come first; its last is
// where the partition's new runs join.
type levelFold struct {
	c     *CellLog
	old   *ForgotLevel
	slot  int
	outs  int        // the log's topic's partitions
	tails []foldTail // by input partition and kind: 2*part + (1 if Slotted)
	// done is the runs set aside, each partition and kind's in offset
	// order (never many: a run not joined is a gap in a partition's
	// records, or a run of duplicates folded before).
	done    []ForgotRun
	touched bool // a run was added
	// parts is each input partition's partitioner and hundred (partFold),
	// shared with a copy (copyFor).
	parts []partFold
	buf   []int32 // noneBetween's slots
}

// partFold is a fold's partitioner of one input partition, made at its
// first use, and the hundred SlotsFrom keeps for it (its gaps come in
// offset order): one place to read a run, where three slices were.
type partFold struct {
	p    topo.Partitioner
	made bool
	hund topo.Hundred
}

// foldTail is a partition and kind's last run; at is how many of old's
// runs of it come first (all but the last when that became run). to is
// the end of the range the last run added claims (spanRun.from; its
// Last when it claims none): no record after run.Last up to it goes to
// the log's partition, so a slot's run whose claimed range starts by
// to+1 joins it without asking the partitioner about the gap.
type foldTail struct {
	run       ForgotRun
	set, read bool // run is a run; tail read from old (the first add)
	at, end   int32
	to        int32
}

func newLevelFold(c *CellLog, old *ForgotLevel, parts, slot int) *levelFold {
	return &levelFold{c: c, old: old, slot: slot, outs: len(c.names.Outputs()), tails: make([]foldTail, 2*parts)}
}

// copyFor is a copy of lf folding into old, which holds what lf's old
// holds (Forgotten.same): its tails and runs set aside its own, its
// partitioners and hundreds shared (caches, right for either).
func (lf *levelFold) copyFor(old *ForgotLevel) *levelFold {
	cp := *lf
	cp.old = old
	cp.tails = slices.Clone(lf.tails)
	cp.done = slices.Clone(lf.done)
	cp.buf = nil // scratch: its own
	return &cp
}

// part is the input partition numbered p's partitioner and hundred,
// the partitioner made once a fold.
func (lf *levelFold) part(p int32) *partFold {
	if lf.parts == nil {
		lf.parts = make([]partFold, len(lf.tails)/2)
	}
	pf := &lf.parts[p]
	if !pf.made {
		pf.p, pf.made = lf.c.names.InputPartitioner(p), true
	}
	return pf
}

// add folds in one invoice of each record of run r, from its first to
// its last of the input partition numbered r.part (of slot's only, when
// slotted); false when it is not past the partition's last run of its
// kind. A slot's run joins the last when no record between them goes to
// slot: known without the partitioner when the ranges the two claim
// meet (foldTail.to), else asked (noneBetween).
func (lf *levelFold) add(r *runCode, slotted bool) bool {
	part, first, last := r.part, r.src, r.src+r.span
	lf.touched = true
	k := 2 * int(part)
	if slotted {
		k++
	}
	t := &lf.tails[k]
	if !t.read {
		lf.readOld(part)
	}
	if !t.set {
		t.run, t.set, t.to = ForgotRun{Part: part, First: first, Last: last, N: 1, Slotted: slotted}, true, r.to
		return true
	}
	if first <= t.run.Last {
		return false
	}
	if t.run.N == 1 && (t.run.Last+1 == first || slotted && (r.from <= t.to+1 || lf.noneBetween(part, t.run.Last+1, first))) {
		t.run.Last, t.to = last, r.to
		return true
	}
	lf.done = append(lf.done, t.run)
	t.run, t.to = ForgotRun{Part: part, First: first, Last: last, N: 1, Slotted: slotted}, r.to
	return true
}

// addOne is add of run r, one invoice of record off of the input
// partition numbered part, of slot's kind when the partitioner sends it
// to slot (or r claims a range past its own: add's, then, as slot's):
// its slot and the gap after the partition's last run of slot's
// (noneBetween) read in one pass of the partitioner, where a run of one
// record asked twice (slotOf, then noneBetween). Worlds whose members
// send a partition's records a few at a time make such runs (at a
// record a tick and 4 output partitions, most of them); T1's batches of
// 15 records make runs of 3 to 5, which add folds. A gap of more than
// addOneGap records is asked as add asks.
func (lf *levelFold) addOne(r *runCode) bool {
	if r.claims() {
		return lf.add(r, true)
	}
	part, off := r.part, r.src
	t := &lf.tails[2*int(part)+1]
	if !t.read {
		lf.readOld(part)
	}
	if !t.set || t.run.N != 1 || t.run.Last >= off || off-t.run.Last-1 > addOneGap {
		return lf.add(r, lf.slotOf(part, off) == lf.slot)
	}
	from := t.run.Last + 1
	g := int(off - from) // the gap's records
	var slots [addOneGap + 1]int32
	pf := lf.part(part)
	pf.p.SlotsFrom(int(from), slots[:g+1], &pf.hund)
	if int(slots[g]) != lf.slot {
		return lf.add(r, false)
	}
	lf.touched = true
	if g == 0 || !slices.Contains(slots[:g], int32(lf.slot)) {
		t.run.Last, t.to = off, off
		return true
	}
	lf.done = append(lf.done, t.run)
	t.run, t.to = ForgotRun{Part: part, First: off, Last: off, N: 1, Slotted: true}, off
	return true
}

// addOneGap is the most records between a partition's last run of
// slot's and a run of one record that addOne reads in its one pass.
const addOneGap = 15

// readOld finds old's runs of the input partition numbered part (both
// kinds: canonical puts every record's before slot's) and makes each
// kind's last its tail.
func (lf *levelFold) readOld(part int32) {
	runs := lf.old.Runs
	i := sort.Search(len(runs), func(i int) bool { return runs[i].Part >= part })
	for kind := 0; kind < 2; kind++ {
		t := &lf.tails[2*int(part)+kind]
		t.read = true
		j := i
		for j < len(runs) && runs[j].Part == part && runs[j].Slotted == (kind == 1) {
			j++
		}
		t.at, t.end = int32(i), int32(j)
		if j > i {
			t.run, t.set = runs[j-1], true
			t.to = t.run.Last // a folded run claims nothing past it
			t.end--           // the last is the tail's now
		}
		i = j
	}
}

// slotOf is the output partition of the invoice of record off of the
// input partition numbered part, with its hundred kept (SlotsFrom).
func (lf *levelFold) slotOf(part, off int32) int {
	var one [1]int32
	pf := lf.part(part)
	pf.p.SlotsFrom(int(off), one[:], &pf.hund)
	return int(one[0])
}

// noneBetween is CellLog.noneBetween with the fold's partitioners, their
// hundreds kept, and its scratch.
func (lf *levelFold) noneBetween(part, from, to int32) bool {
	pf := lf.part(part)
	if g := int(to - from); g > 0 && g <= addOneGap && len(lf.c.names.Outputs()) > 1 {
		// A few records (T1's gaps are of 3): their slots on the stack
		// and looked through here, as NoneIn would.
		var slots [addOneGap]int32
		pf.p.SlotsFrom(int(from), slots[:g], &pf.hund)
		for _, s := range slots[:g] {
			if int(s) == lf.slot {
				return false
			}
		}
		return true
	}
	none, buf := pf.p.NoneIn(lf.slot, len(lf.c.names.Outputs()), int(from), int(to), maxForgotGap, lf.buf, &pf.hund)
	lf.buf = buf
	return none
}

// level is the folded level: old's runs and the new ones, each input
// partition's every-record runs before its slot's (canonical's order).
func (lf *levelFold) level() ForgotLevel {
	out := ForgotLevel{Odd: lf.old.Odd, Runs: lf.old.Runs}
	if !lf.touched {
		return out
	}
	// The runs set aside are in the order they were read: stably by
	// partition and kind, each one's stay in offset order.
	slices.SortStableFunc(lf.done, func(a, b ForgotRun) int {
		if c := cmp.Compare(a.Part, b.Part); c != 0 {
			return c
		}
		return cmp.Compare(b2i(a.Slotted), b2i(b.Slotted))
	})
	old := lf.old.Runs
	runs := make([]ForgotRun, 0, len(old)+len(lf.done)+len(lf.tails))
	i, d := 0, 0 // next of old and of done
	for k := range lf.tails {
		t := &lf.tails[k]
		if !t.read {
			continue // a partition with nothing new: its old runs are copied when the next one's are
		}
		runs = append(runs, old[i:t.at]...) // those before, of partitions with nothing new
		runs = append(runs, old[t.at:t.end]...)
		i = int(t.end)
		if t.set {
			part, slotted := int32(k/2), k%2 == 1
			for ; d < len(lf.done) && lf.done[d].Part == part && lf.done[d].Slotted == slotted; d++ {
				runs = append(runs, lf.done[d])
			}
			runs = append(runs, t.run)
			if i < len(old) && old[i].Part == part && old[i].Slotted == slotted {
				i++ // old's last of it, the tail's first
			}
		}
	}
	runs = append(runs, old[i:]...)
	out.Runs = slices.Clone(runs) // as fold makes it: its room was for the merge only
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// foldScratch is foldGeneral's temporary lists, kept from fold to fold
// (the Broker's, held weakly, for its output logs in turn: Broker.foldLists):
// every run let go of, grouped by input partition (byPart, and its
// counts), and read_committed's. A long T2 roll with traffic folds about
// a run a partition written to since the last fold, 100,000 partitions,
// several times a window: made anew each time, they were two thirds of
// the 250 MB the folds of a 10-restart roll allocated. Nothing a fold
// makes keeps them (fold copies the runs it merges).
type foldScratch struct {
	all, by, committed []ForgotRun
	at                 []int32
}

// scratchRuns is *s emptied with room for n runs at least.
func scratchRuns(s *[]ForgotRun, n int) []ForgotRun {
	if cap(*s) < n {
		*s = make([]ForgotRun, 0, n)
	}
	return (*s)[:0]
}

// foldGeneral folds into f the cells from the start to offset to (no
// span's middle), whatever they are: every run materialized, grouped by
// input partition (byPart) and made canonical with what f held (fold);
// its lists in sc's room (nil: made for this fold).
func (c *CellLog) foldGeneral(f *Forgotten, to, slot int, sc *foldScratch) {
	if sc == nil {
		sc = new(foldScratch)
	}
	all := scratchRuns(&sc.all, c.runsBelow(to)) // sized once: T1 folds millions at a time
	anyAborted := false
	var oddAll, oddCommitted map[string]int
	outs := len(c.names.Outputs())
	if k0, k1, ok := c.onlySpans(to); ok {
		// Every cell let go of is in a span (T1's logs): their runs read
		// straight from the arena, as Runs reads them, without its
		// iterator (a fold reads millions).
		for k := k0; k < k1; k++ {
			s := c.spans.At(k)
			txn := s.txn()
			if txn == TxnAborted {
				anyAborted = true
			}
			add := func(r spanRun, rn int) {
				fr := ForgotRun{Part: r.part, First: r.src, Last: r.src + r.span, N: 1,
					Slotted: rn != int(r.span)+1 || outs == 1 ||
						rn == 1 && c.names.InputPartitioner(r.part).Slot(int(r.src)) == slot}
				if txn == TxnAborted {
					fr.N = -1 // marked until the split below
				}
				all = append(all, fr)
			}
			if s.part != multiRun {
				add(spanRun{part: s.part, src: s.src, span: s.span}, int(s.n))
				continue
			}
			for rr := c.runsOf(&s); ; {
				r, rn, ok := rr.next()
				if !ok {
					break
				}
				add(r, rn)
			}
		}
	} else {
		all, oddAll, oddCommitted, anyAborted = c.foldRuns(all, to, slot)
	}
	sc.all = all[:0] // its room, should it have grown
	// Grouped by input partition once for both levels (fold wants them
	// so; canonical orders each partition's): read_committed's are those
	// not aborted.
	all = byPart(all, len(c.names.Inputs()), sc)
	committed := all
	if anyAborted {
		committed = scratchRuns(&sc.committed, len(all))
		for k := range all {
			if all[k].N < 0 {
				all[k].N = 1
			} else {
				committed = append(committed, all[k])
			}
		}
	}
	f.Uncommitted = c.fold(f.Uncommitted, all, oddAll, slot)
	if f.same = f.same && !anyAborted; f.same {
		f.Committed = f.Uncommitted
	} else {
		f.Committed = c.fold(f.Committed, committed, oddCommitted, slot)
	}
}

// foldRuns appends to all the runs of the data cells from the start to
// offset to, as Runs(to, to) gives them (a run's N -1, marked, when
// aborted), and gives the sources that are no input record's at each
// level. It walks the spans and the cells between them as Runs does,
// without its iterator: a T2 fold late in a roll reads about a run an
// input partition, most of them runs of one record in multi-run spans,
// and the iterator's closures and its CellRun for each were half the
// fold's reading (foldRunsByIter is the iterator's way, kept for a log
// of upstream records and as the tests' reference).
func (c *CellLog) foldRuns(all []ForgotRun, to, slot int) (_ []ForgotRun, oddAll, oddCommitted map[string]int, anyAborted bool) {
	if !c.inRecs {
		return c.foldRunsByIter(all, to, slot)
	}
	rf := runFold{c: c, all: all, slot: slot, outs: len(c.names.Outputs())}
	n := min(to, c.Len())
	i := int(c.startOff)
	k, before := c.spanFrom(i)
	nk := 0
	if c.spans != nil {
		nk = c.spans.Len()
	}
	// Runs' loop: the cells before each span (those in a row of one input
	// partition, in offset order and transaction state, gathered into a
	// run: pend), then the span's runs; no span past n is read.
	var pend CellRun
	for k < nk && i < n {
		chunk := c.spans.ChunkFrom(k) // read in place, a chunk at a time
		chunk = chunk[:min(len(chunk), nk-k)]
		for j := range chunk {
			if i >= n {
				break
			}
			k++
			s := &chunk[j]
			pend = rf.cells(pend, i, min(int(s.first), n), before)
			rf.put(pend) // Runs flushes before each span
			pend.N = 0
			first, txn := int(s.first), s.txn()
			if s.part != multiRun {
				own := s.ownCode()
				rf.spanRun(first, &own, 0, txn, n)
			} else {
				// Read field by field into one runCode (decodeRun
				// says why), as runReader reads them: each run's cells
				// start where the one before it ends.
				b, rc, at := c.spans.runs.At(uint32(s.src)), runCode{}, int32(0)
				for left := s.span; left > 0; left-- {
					b = decodeRun(b, &rc)
					rf.spanRun(first, &rc, at, txn, n)
					at += rc.n
				}
			}
			i, before = first+int(s.n), int(s.before)+int(s.n)
		}
	}
	rf.put(rf.cells(pend, i, n, before))
	return rf.all, rf.oddAll, rf.oddCommitted, rf.anyAborted
}

// runFold is foldRuns' state: the runs listed so far and the odd sources.
type runFold struct {
	c                    *CellLog
	all                  []ForgotRun
	oddAll, oddCommitted map[string]int
	anyAborted           bool
	slot, outs           int
}

// spanRun lists run rc (rc.n cells) of the span whose first cell is
// first, its cells from at on in the span, as Runs yields it
// (yieldRun, with its cut at n): whole when it lies below n, else its
// cells below n one by one.
func (rf *runFold) spanRun(first int, rc *runCode, at int32, txn TxnMark, n int) {
	a, rn := first+int(at), int(rc.n)
	if a >= n {
		return
	}
	if a+rn > n {
		for j, off := range rf.c.runSources(rc.run(at), rn) {
			if a+j >= n {
				break
			}
			rf.put(CellRun{I: a + j, N: 1, Part: int(rc.part), First: off, Last: off, OK: true, Txn: txn})
		}
		return
	}
	fr := ForgotRun{Part: rc.part, First: rc.src, Last: rc.src + rc.span, N: 1,
		Slotted: rn != int(rc.span)+1 || rf.outs == 1 ||
			rn == 1 && rf.c.names.InputPartitioner(rc.part).Slot(int(rc.src)) == rf.slot}
	if txn == TxnAborted {
		fr.N, rf.anyAborted = -1, true // marked until foldGeneral's split
	}
	rf.all = append(rf.all, fr)
}

// cells gathers the data cells from..to-1 (none in a span; before of the
// cells before them in spans) onto pend as Runs' cells does, listing
// each run it closes; it returns the run still open.
func (rf *runFold) cells(pend CellRun, from, to, before int) CellRun {
	for i := from; i < to; i++ {
		cs, ok := rf.c.recSource(i, i-before)
		if !ok {
			continue
		}
		if pend.N > 0 && cs.OK && pend.OK && cs.Part == pend.Part && cs.Off == pend.Last+1 && cs.Txn == pend.Txn &&
			i == pend.I+pend.N {
			pend.N++
			pend.Last++
			continue
		}
		rf.put(pend)
		pend = CellRun{I: i, N: 1, Part: cs.Part, First: cs.Off, Last: cs.Off, OK: cs.OK, Txn: cs.Txn}
	}
	return pend
}

// put lists run r as foldRunsByIter lists what Runs yields (nothing when
// r.N is 0).
func (rf *runFold) put(r CellRun) {
	if r.N == 0 {
		return
	}
	rf.all, rf.oddAll, rf.oddCommitted = rf.c.foldRun(rf.all, r, rf.slot, rf.oddAll, rf.oddCommitted, &rf.anyAborted)
}

// foldRunsByIter is foldRuns through the Runs iterator.
func (c *CellLog) foldRunsByIter(all []ForgotRun, to, slot int) (_ []ForgotRun, oddAll, oddCommitted map[string]int, anyAborted bool) {
	for r := range c.Runs(to, to) {
		all, oddAll, oddCommitted = c.foldRun(all, r, slot, oddAll, oddCommitted, &anyAborted)
	}
	return all, oddAll, oddCommitted, anyAborted
}

// foldRun appends run r (as Runs yields it) to all, or its source to the
// odd ones when it is no input record's.
func (c *CellLog) foldRun(all []ForgotRun, r CellRun, slot int, oddAll, oddCommitted map[string]int, anyAborted *bool) ([]ForgotRun, map[string]int, map[string]int) {
	if !r.OK {
		src := c.At(r.I).Source
		oddAll = addOdd(oddAll, src, r.N)
		if r.Txn != TxnAborted {
			oddCommitted = addOdd(oddCommitted, src, r.N)
		}
		return all, oddAll, oddCommitted
	}
	fr := ForgotRun{Part: int32(r.Part), First: int32(r.First), Last: int32(r.Last), N: 1,
		Slotted: r.Filtered || len(c.names.Outputs()) == 1 ||
			r.N == 1 && c.names.InputPartitioner(int32(r.Part)).Slot(r.First) == slot}
	if r.Txn == TxnAborted {
		fr.N, *anyAborted = -1, true // marked until foldGeneral's split
	}
	return append(all, fr), oddAll, oddCommitted
}

func addOdd(m map[string]int, src string, n int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[src] += n
	return m
}

// byPart is runs in the order of their input partitions (of parts),
// each partition's in the order they came: a counting sort, a pass over
// them rather than a comparison sort (a fold is about a run a batch of
// every input partition, T1's 1,000 a tick an output partition); in
// sc's room (by, at).
func byPart(runs []ForgotRun, parts int, sc *foldScratch) []ForgotRun {
	if cap(sc.at) < parts+1 {
		sc.at = make([]int32, parts+1)
	}
	at := sc.at[:parts+1]
	clear(at)
	for k := range runs {
		at[runs[k].Part+1]++
	}
	for p := 1; p <= parts; p++ {
		at[p] += at[p-1]
	}
	out := scratchRuns(&sc.by, len(runs))[:len(runs)]
	for k := range runs {
		p := runs[k].Part
		out[at[p]] = runs[k]
		at[p]++
	}
	return out
}

// fold is old with the runs add (grouped by input partition, in their
// order: byPart) and the odd sources odd let go of since,
// each input partition's runs made canonical (canonical): a new level,
// old left as it was (a clone may hold it).
func (c *CellLog) fold(old ForgotLevel, add []ForgotRun, odd map[string]int, slot int) ForgotLevel {
	out := ForgotLevel{Odd: old.Odd}
	if len(odd) > 0 {
		out.Odd = maps.Clone(old.Odd)
		if out.Odd == nil {
			out.Odd = map[string]int{}
		}
		for s, n := range odd {
			out.Odd[s] += n
		}
	}
	if len(add) == 0 {
		out.Runs = old.Runs
		return out
	}
	runs := make([]ForgotRun, 0, len(old.Runs)+len(add))
	var part []ForgotRun
	var hund topo.Hundred // noneBetween's, from gap to gap (a cache)
	i, j := 0, 0
	for i < len(old.Runs) || j < len(add) {
		k := len(old.Runs)
		if j < len(add) {
			for k = i; k < len(old.Runs) && old.Runs[k].Part < add[j].Part; k++ {
			}
		}
		if k > i {
			runs = append(runs, old.Runs[i:k]...) // partitions with nothing new: as they were
			i = k
			continue
		}
		p := add[j].Part
		i0, j0 := i, j
		for ; i < len(old.Runs) && old.Runs[i].Part == p; i++ {
		}
		for ; j < len(add) && add[j].Part == p; j++ {
		}
		runs, part = c.merge(runs, old.Runs[i0:i], add[j0:j], slot, part, &hund)
	}
	// Kept as merged, its room for the runs that joined others unused
	// (at most add's, a fold's), where a copy cut to its length was made:
	// a fold late in a long roll copies millions of runs (duplicates,
	// BenchmarkFoldT2Forgotten), and the copy was half its time and half
	// the garbage it left. Cut to its length (its capacity too): no
	// append may write into the room another world's Forgotten reads.
	out.Runs = runs[:len(runs):len(runs)]
	return out
}

// merge appends to out the runs of one input partition, old's (a fold's:
// canonical, its every-record runs before its slot's) and then add's, as
// canonical appends them (part is its room for them: returned, grown).
// A kind whose new runs all come after old's last, in order (a partition
// written once, in order, since the last fold: T2's nearly all), is
// old's runs copied at once and the new ones joined to them as
// canonicalInOrder joins them: old's, canonical, never join each other
// (checked: what canonicalInOrder would find), where each was copied,
// looked at and appended one by one, twice a kind. A late T2 roll's
// output log holds a few hundred thousand such runs (its duplicates') and
// folds them every few seconds.
func (c *CellLog) merge(out, old, add []ForgotRun, slot int, part []ForgotRun, hund *topo.Hundred) ([]ForgotRun, []ForgotRun) {
	split := 0 // old's every-record runs, then its slot's
	for split < len(old) && !old[split].Slotted {
		split++
	}
	for k := split; k < len(old); k++ {
		if !old[k].Slotted { // not a fold's: canonical's way
			part = append(append(part[:0], old...), add...)
			return c.canonical(out, part, slot, hund), part
		}
	}
	built := false // part holds old and add
	for kind, slotted := range [2]bool{false, true} {
		o := old[:split]
		if kind == 1 {
			o = old[split:]
		}
		if c.mergeInOrder(&out, o, add, slotted, slot, hund) {
			continue
		}
		if !built {
			part, built = append(append(part[:0], old...), add...), true
		}
		out = c.canonicalKind(out, part, slotted, slot, hund)
	}
	return out, part
}

// mergeInOrder is canonicalInOrder for old's runs (all of the kind)
// followed by add's of the kind when none of old's joins the one before
// it: old's copied at once. False, out unchanged, when they do not come
// in offset order or two of old's join.
func (c *CellLog) mergeInOrder(out *[]ForgotRun, old, add []ForgotRun, slotted bool, slot int, hund *topo.Hundred) bool {
	last := int32(-1)
	for k := range old {
		if old[k].First <= last {
			return false
		}
		last = old[k].Last
	}
	for k := range add {
		if r := &add[k]; r.Slotted == slotted {
			if r.First <= last {
				return false
			}
			last = r.Last
		}
	}
	for k := 1; k < len(old); k++ {
		if a, b := &old[k-1], &old[k]; a.N == b.N &&
			(a.Last+1 == b.First || slotted && c.noneBetween(int(b.Part), int(a.Last)+1, int(b.First), slot, hund)) {
			return false
		}
	}
	from := len(*out)
	*out = append(*out, old...)
	for _, r := range add {
		if r.Slotted != slotted {
			continue
		}
		if m := len(*out); m > from && (*out)[m-1].N == r.N &&
			((*out)[m-1].Last+1 == r.First || slotted && c.noneBetween(int(r.Part), int((*out)[m-1].Last)+1, int(r.First), slot, hund)) {
			(*out)[m-1].Last = r.Last
			continue
		}
		*out = append(*out, r)
	}
	return true
}

// canonical appends to out the runs of one input partition, part (of
// either kind: every record, Slotted), as the fewest that say the same:
// for each kind, the stretches of offsets over which the same number of
// runs lie, each one run with that number (N), none for none; a
// stretch joined to the one before it of the same number when they touch
// or, for Slotted ones, when no record between goes to slot (at most
// maxForgotGap asked). A partition whose records were written once each,
// in order, is one run, however many batches they went out in.
//
// hund is the hundred the partition's gaps are asked in (noneBetween),
// kept from one gap to the next: they come in offset order, mostly in the
// same hundred (a T2 partition's slot's runs of one record each).
func (c *CellLog) canonical(out, part []ForgotRun, slot int, hund *topo.Hundred) []ForgotRun {
	for _, slotted := range [2]bool{false, true} {
		out = c.canonicalKind(out, part, slotted, slot, hund)
	}
	return out
}

// canonicalKind is canonical for part's runs of one kind.
func (c *CellLog) canonicalKind(out, part []ForgotRun, slotted bool, slot int, hund *topo.Hundred) []ForgotRun {
	if c.canonicalInOrder(&out, part, slotted, slot, hund) {
		return out
	}
	type edge struct{ at, d int32 }
	var edges []edge
	for _, r := range part {
		if r.Slotted == slotted {
			edges = append(edges, edge{r.First, r.N}, edge{r.Last + 1, -r.N})
		}
	}
	if len(edges) == 0 {
		return out
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.at, b.at) })
	from := len(out) // out's runs of this partition and kind start here
	n := int32(0)
	for k := 0; k < len(edges); {
		at := edges[k].at
		for ; k < len(edges) && edges[k].at == at; k++ {
			n += edges[k].d
		}
		if n == 0 || k == len(edges) {
			continue
		}
		last := edges[k].at - 1 // the stretch at..last has n runs over it
		if m := len(out); m > from && out[m-1].N == n &&
			(out[m-1].Last+1 == at || slotted && c.noneBetween(int(part[0].Part), int(out[m-1].Last)+1, int(at), slot, hund)) {
			out[m-1].Last = last
			continue
		}
		out = append(out, ForgotRun{Part: part[0].Part, First: at, Last: last, N: n, Slotted: slotted})
	}
	return out
}

// canonicalInOrder is canonical for the runs of one kind when they come
// in offset order, none overlapping the one before (a partition's
// batches one after the other: the usual case), without sorting: each
// run joined to the one before it as canonical joins them. False, out
// unchanged, when they do not.
func (c *CellLog) canonicalInOrder(out *[]ForgotRun, part []ForgotRun, slotted bool, slot int, hund *topo.Hundred) bool {
	last := int32(-1)
	for k := range part {
		if r := &part[k]; r.Slotted == slotted {
			if r.First <= last {
				return false
			}
			last = r.Last
		}
	}
	from := len(*out)
	for _, r := range part {
		if r.Slotted != slotted {
			continue
		}
		if m := len(*out); m > from && (*out)[m-1].N == r.N &&
			((*out)[m-1].Last+1 == r.First || slotted && c.noneBetween(int(r.Part), int((*out)[m-1].Last)+1, int(r.First), slot, hund)) {
			(*out)[m-1].Last = r.Last
			continue
		}
		*out = append(*out, r)
	}
	return true
}

// maxForgotGap is the most records between two slotted runs canonical
// asks the partitioner about.
const maxForgotGap = 1 << 12

// noneBetween reports whether no record of the input partition numbered
// part from offset from to to-1 goes to output partition slot, asking at
// most maxForgotGap (topo.Partitioner.NoneIn); hund is the hundred
// kept from the last gap asked (topo.Partitioner.SlotsFrom: a cache,
// right for any partition).
func (c *CellLog) noneBetween(part, from, to, slot int, hund *topo.Hundred) bool {
	var small [64]int32
	// InputPartitioner: the partition's name hashed once (topo.New), where
	// Partitioner hashed it again for every gap a fold asks about (T2's
	// single records: each a question, 2% of a long roll's CPU with
	// foldRuns' own below).
	none, _ := c.names.InputPartitioner(int32(part)).NoneIn(slot, len(c.names.Outputs()), from, to, maxForgotGap, small[:0], hund)
	return none
}
