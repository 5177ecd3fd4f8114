package broker

import (
	"cmp"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/topo"
)

// Folding what an output log lets go of into its Forgotten (forget.go):
// the runs of input records the cells' invoices name, joined per input
// partition at each isolation level, in canonical order. foldSpans folds
// a log of spans as it reads them (a window's steady path); foldGeneral
// materializes every run and merges it with what was folded before
// (fold, canonical: foldgeneral.go), for any cells.

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
