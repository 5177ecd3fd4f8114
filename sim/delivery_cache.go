package sim

// What Delivery read of the output logs before, kept by the world so that
// asked again it reads on (deliveryCache), and the runs it read kept
// sorted (sortedRuns).

import (
	"cmp"
	"slices"

	"github.com/kgrepl/kgrepl/sim/broker"
)

// deliveryCache is, for each isolation level and output log, what
// Delivery read of the log's cells before (deliveryRead), so that asked
// again it reads only the cells written since: metrics asked after each
// step of a big world read every run the output topic had, its cost
// growing with the world's age (T1: 8 million runs a simulated half
// minute). The runs a read keeps are Delivery's own, joined as it joins
// them: what Counts says does not depend on where a run is cut (a
// record's invoices are counted over every run that holds it), so runs
// read in parts count as read in one.
type deliveryCache struct {
	byLevel [2][]deliveryRead // read_uncommitted, read_committed; by output partition
	sorted  [2]sortedRuns     // by level, the runs of its reads, sorted
}

// sortedRuns is the runs of a level's reads (deliveryRead.runs, of every
// output partition) sorted as Delivery's merge walks them, by partition
// and first offset (byLo) and by partition and last offset (byHi), so
// that Delivery sorts only the runs read since, not all of them again
// at every call (plot duplicates asks at every replayed tick, and the
// runs grow with the log). n[slot] is how many of read slot's runs they
// hold; nil, none (made anew). Neither array is written once made (add
// makes new ones), so copies of the world share them.
type sortedRuns struct {
	byLo, byHi []deliveryRun
	n          []int
}

// add puts the reads' runs not yet in s into it (every read's, when a
// read was made anew: n nil). The merge only adds counts at each offset,
// so the order of runs with the same key does not matter.
func (s *sortedRuns) add(reads []deliveryRead) {
	if len(s.n) != len(reads) {
		s.byLo, s.byHi, s.n = nil, nil, make([]int, len(reads))
	}
	var fresh []deliveryRun
	for slot := range reads {
		fresh = append(fresh, reads[slot].runs[s.n[slot]:]...)
		s.n[slot] = len(reads[slot].runs)
	}
	if len(fresh) == 0 {
		return
	}
	s.byHi = mergeRuns(s.byHi, sortRuns(slices.Clone(fresh), byHi), byHi)
	s.byLo = mergeRuns(s.byLo, sortRuns(fresh, byLo), byLo)
}

// byLo and byHi order runs by input partition, then first (last) offset.
func byLo(a, b deliveryRun) int { return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.lo, b.lo)) }
func byHi(a, b deliveryRun) int { return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.hi, b.hi)) }

func sortRuns(runs []deliveryRun, by func(a, b deliveryRun) int) []deliveryRun {
	slices.SortFunc(runs, by)
	return runs
}

// mergeRuns merges two runs sorted by by into a new array (a, if b is
// empty: neither is written).
func mergeRuns(a, b []deliveryRun, by func(a, b deliveryRun) int) []deliveryRun {
	if len(b) == 0 {
		return a
	}
	out := make([]deliveryRun, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if by(b[j], a[i]) < 0 {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// share is c for a copy of the world (World.clone), whose logs are its
// original's as they are: the same reads, their arrays shared, which
// neither world writes where the other reads (Delivery only appends to a
// read's runs, the copy's cut at their length so that its own appends go
// to an array of its own, and gives a read new tails and sources rather
// than write them in place). Nothing is copied but a read a level and
// output partition.
func (c *deliveryCache) share() deliveryCache {
	var n deliveryCache
	for k, reads := range c.byLevel {
		if reads == nil {
			continue
		}
		n.byLevel[k] = slices.Clone(reads)
		for i := range n.byLevel[k] {
			rd := &n.byLevel[k][i]
			rd.runs = slices.Clip(rd.runs)
		}
		n.sorted[k] = c.sorted[k]
		n.sorted[k].n = slices.Clone(c.sorted[k].n)
	}
	return n
}

// reads is the reads at the level (read_committed when committed), one
// per output partition, made the first time, and their runs sorted.
func (c *deliveryCache) reads(committed bool, outs int) ([]deliveryRead, *sortedRuns) {
	k := 0
	if committed {
		k = 1
	}
	if len(c.byLevel[k]) != outs {
		c.byLevel[k] = make([]deliveryRead, outs)
		c.sorted[k] = sortedRuns{}
	}
	return c.byLevel[k], &c.sorted[k]
}

// deliveryRead is what Delivery read of one output log at one level: its
// cells from the log's start (start) to upto-1, all below the cut they
// were read at (the high watermark, or the LSO for read_committed: cells
// whose transaction is over), as runs (joined ones, runs) and the chains
// still open at upto (tails, to join on from there), and the sources that
// are no input record's (odd).
type deliveryRead struct {
	start, upto int
	runs, tails []deliveryRun
	odd         map[string]int
}

// valid reports whether r, a read of the world's log l (the log of its
// output partition, or the log it was copied from: World.clone), holds
// for l as it is now, to read on from upto to cut: nothing let go of
// since (its start; the cells let go of are then in its forgotten level,
// read anew each time), and not read past cut (a high watermark and an
// LSO never go back, but a read that did would have kept cells that
// changed). A world's output log only grows at its end and lets go at its
// start, and below its high watermark (or LSO) no cell changes.
func (r *deliveryRead) valid(l *broker.Log, cut int) bool {
	return r.start == l.Cells.Start() && r.upto <= cut
}
