package sim

// What Delivery read of the output logs before and what it judged of
// each input partition, kept by the world so that asked again it reads
// on and judges again only the partitions something changed for
// (deliveryCache).

import (
	"cmp"
	"iter"
	"maps"
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim/broker"
)

// deliveryCache is, for each isolation level, what Delivery read of the
// output logs and judged of the input partitions before (deliveryLevel),
// so that asked again it reads only the cells written since and judges
// only the partitions they, or a commit, changed: plot duplicates asks at
// every tick it replays, and a real group's 100,000 input partitions were
// merged and walked whole at every ask (a tick of T2's world 0.2 s, 241 s
// for 5 s of it).
type deliveryCache struct {
	levels [2]deliveryLevel // read_uncommitted, read_committed
	// ch is the chains Delivery joins runs in, kept from ask to ask (all
	// closed between asks: each log's read ends with a flush) with the
	// partitioners it made, where each ask made its chains for every
	// input partition anew: this world's own (a copy starts without).
	ch *deliveryChains
}

// chains is the cache's chains for w, made the first time.
func (c *deliveryCache) chains(w *World) *deliveryChains {
	if c.ch == nil || c.ch.w != w {
		ins := len(w.layout.Inputs())
		c.ch = &deliveryChains{w: w, open: make([]deliveryRun, ins), outs: len(w.layout.Outputs())}
		for p := range c.ch.open {
			c.ch.open[p].hi = -1
		}
	}
	return c.ch
}

// deliveryLevel is what Delivery keeps of one isolation level.
//
// reads is, by output partition, what it read of that log. lo and hi are,
// by input partition, the runs of the cells let go of (read when the
// level was made anew) and of every read, joined as Delivery joins them,
// by first offset and by last: what Counts says does not depend on where
// a run is cut (a record's invoices are counted over every run that holds
// it), so runs read in parts count as read in one. n[slot] is how many of
// read slot's runs they hold. lo nil: to be made anew (the first ask, or
// a log let go of cells since: its cells let go of are then in its
// forgotten level, and its runs are no longer its cells').
//
// judged is, by input partition, the counts its last walk found
// (partition counts with no duplicate, loss or hold are not kept), dup,
// lost and held their sums, and names their names as Counts lists them
// (nil: to be gathered again). limits is each partition's offset below
// which a record with no invoice is lost, as last walked, read again
// only when the committed offsets changed (version) or one of them lay
// past its log's end (above: the limit is then the end, which moves).
// past is the partitions last ask's read past the cut touched (a
// read_committed reader's held-back cells, read at every ask), walked
// again at the next.
//
// A copy of the world shares all of it (share): lo and hi's arrays are
// cut at their lengths in the copy, so that its appends make arrays of
// its own, the original appends past what the copy reads, and neither
// inserts in place (insertRun); judged and limits are copied by the
// first world to write them (deliveryKept.shared).
type deliveryLevel struct {
	reads  []deliveryRead
	lo, hi [][]deliveryRun
	n      []int

	kept            *deliveryKept
	dup, lost, held int
	names           *deliveryNames
	version         uint64
	above           bool
	past            []int32
}

// deliveryKept is what a level judged of each input partition and the
// limits it walked them with, which copies of the world share until one
// of them writes (own): shared says a copy may read them. share sets it
// from whichever goroutine clones the world (the explorer clones one
// base in several), so it is atomic, and it is the only thing a copy
// writes of its original's.
type deliveryKept struct {
	shared atomic.Bool
	judged map[int32]Counts
	limits []int32
}

// deliveryNames is the names of the judged partitions' records as Counts
// lists them: duplicates sorted, losses and holds by partition and
// offset. Never written once made.
type deliveryNames struct {
	dup, lost, held []string
}

// level is the level (read_committed when committed) of outs output
// partitions and ins input partitions, made anew the first time or when
// the world's shape is not the one it was made for.
func (c *deliveryCache) level(committed bool, outs, ins int) *deliveryLevel {
	lv := &c.levels[0]
	if committed {
		lv = &c.levels[1]
	}
	if len(lv.reads) != outs || lv.lo != nil && len(lv.lo) != ins {
		*lv = deliveryLevel{reads: make([]deliveryRead, outs)}
	}
	return lv
}

// share is c for a copy of the world (World.clone), whose logs are its
// original's as they are: the same reads and runs, their arrays shared,
// which neither world writes where the other reads (Delivery only appends
// to a read's runs, cut at their length in the copy so that its own
// appends go to an array of its own, and gives a read new tails and
// sources rather than write them in place; a partition's runs are cut at
// their length in both). Nothing else is copied but a read a level and
// output partition, and the partitions' slices.
func (c *deliveryCache) share() deliveryCache {
	var n deliveryCache
	for k := range c.levels {
		lv := &c.levels[k]
		if lv.reads == nil {
			continue
		}
		nl := *lv
		nl.reads = slices.Clone(lv.reads)
		for i := range nl.reads {
			nl.reads[i].runs = slices.Clip(nl.reads[i].runs)
		}
		if lv.lo != nil {
			nl.lo, nl.hi = slices.Clone(lv.lo), slices.Clone(lv.hi)
			for p := range nl.lo {
				nl.lo[p], nl.hi[p] = slices.Clip(nl.lo[p]), slices.Clip(nl.hi[p])
			}
		}
		nl.n = slices.Clone(lv.n)
		if lv.kept != nil {
			lv.kept.shared.Store(true)
		}
		n.levels[k] = nl
	}
	return n
}

// own is lv's judged and limits to write: its own (a copy of the world
// may read the ones it has: shared).
func (lv *deliveryLevel) own() *deliveryKept {
	switch {
	case lv.kept == nil:
		lv.kept = &deliveryKept{}
	case lv.kept.shared.Load():
		lv.kept = &deliveryKept{judged: maps.Clone(lv.kept.judged), limits: slices.Clone(lv.kept.limits)}
	}
	return lv.kept
}

// anew forgets what lv judged and the runs it holds, for ins input
// partitions: every partition is walked again.
func (lv *deliveryLevel) anew(ins int) {
	lv.lo, lv.hi, lv.n = make([][]deliveryRun, ins), make([][]deliveryRun, ins), make([]int, len(lv.reads))
	lv.kept, lv.dup, lv.lost, lv.held, lv.names = nil, 0, 0, 0, nil
	lv.above, lv.past = false, nil
}

// add puts runs into their partitions' lists, each kept in order.
func (lv *deliveryLevel) add(runs []deliveryRun) {
	for _, r := range runs {
		lv.lo[r.part] = insertRun(lv.lo[r.part], r, byLo)
		lv.hi[r.part] = insertRun(lv.hi[r.part], r, byHi)
	}
}

// addReads puts the reads' runs not yet in lv's lists into them.
func (lv *deliveryLevel) addReads() {
	for slot := range lv.reads {
		lv.add(lv.reads[slot].runs[lv.n[slot]:])
		lv.n[slot] = len(lv.reads[slot].runs)
	}
}

// insertRun puts r into runs, sorted by by, after the runs equal to it
// (runs mostly come in order: an append, in place past what any copy of
// the world reads). A run that goes before others makes a new array: a
// copy may read the old one.
func insertRun(runs []deliveryRun, r deliveryRun, by func(a, b deliveryRun) int) []deliveryRun {
	i := len(runs)
	for i > 0 && by(runs[i-1], r) > 0 {
		i--
	}
	if i == len(runs) {
		return append(runs, r)
	}
	out := make([]deliveryRun, 0, len(runs)+1+len(runs)/4)
	return append(append(append(out, runs[:i]...), r), runs[i:]...)
}

// judge records c as what partition p's walk found, and its sums.
func (lv *deliveryLevel) judge(p int32, c Counts) {
	var old Counts
	had := false
	if lv.kept != nil {
		old, had = lv.kept.judged[p]
	}
	has := c.Duplicates > 0 || c.Lost > 0 || c.HeldBack > 0
	if !had && !has {
		return
	}
	lv.dup += c.Duplicates - old.Duplicates
	lv.lost += c.Lost - old.Lost
	lv.held += c.HeldBack - old.HeldBack
	lv.names = nil
	kept := lv.own()
	if !has {
		delete(kept.judged, p)
		return
	}
	if kept.judged == nil {
		kept.judged = map[int32]Counts{}
	}
	kept.judged[p] = c
}

// gathered is the judged partitions' names (made when nil).
func (lv *deliveryLevel) gathered() *deliveryNames {
	if lv.names != nil {
		return lv.names
	}
	var judged map[int32]Counts
	if lv.kept != nil {
		judged = lv.kept.judged
	}
	var n deliveryNames
	for _, p := range slices.Sorted(maps.Keys(judged)) {
		c := judged[p]
		n.dup = append(n.dup, c.DuplicateNames...)
		n.lost = append(n.lost, c.LostNames...)
		n.held = append(n.held, c.HeldBackNames...)
	}
	sort.Strings(n.dup)
	lv.names = &n
	return lv.names
}

// byLo and byHi order runs by input partition, then first (last) offset.
func byLo(a, b deliveryRun) int { return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.lo, b.lo)) }
func byHi(a, b deliveryRun) int { return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.hi, b.hi)) }

func sortRuns(runs []deliveryRun, by func(a, b deliveryRun) int) []deliveryRun {
	slices.SortFunc(runs, by)
	return runs
}

// partRange is the runs of input partition p among runs sorted by
// partition first.
func partRange(runs []deliveryRun, p int32) []deliveryRun {
	i := sort.Search(len(runs), func(i int) bool { return runs[i].part >= p })
	j := i
	for j < len(runs) && runs[j].part == p {
		j++
	}
	return runs[i:j]
}

// deliveryRead is what Delivery read of one output log at one level: its
// cells from the log's start (start) to upto-1, all below the cut they
// were read at (the high watermark, or the LSO for read_committed: cells
// whose transaction is over), as runs (joined ones, runs) and the chains
// still open at upto (tails, to join on from there, one an input
// partition, in partition order), and the sources that are no input
// record's (odd).
type deliveryRead struct {
	start, upto int
	runs, tails []deliveryRun
	odd         map[string]int
}

// valid reports whether r, a read of the world's log l (the log of its
// output partition, or the log it was copied from: World.clone), holds
// for l as it is now, to read on from upto to cut: nothing let go of
// since (its start; the cells let go of are then in its forgotten level,
// and the level is made anew), and not read past cut (a high watermark and an
// LSO never go back, but a read that did would have kept cells that
// changed). A world's output log only grows at its end and lets go at its
// start, and below its high watermark (or LSO) no cell changes.
func (r *deliveryRead) valid(l *broker.Log, cut int) bool {
	return r.start == l.Cells.Start() && r.upto <= cut
}

// bitset is a set of input partitions' numbers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)   { b[i>>6] |= 1 << (uint(i) & 63) }

// all yields the numbers in the set, in ascending order.
func (b bitset) all() iter.Seq[int] {
	return func(yield func(int) bool) {
		for k, word := range b {
			for word != 0 {
				if !yield(k<<6 + bits.TrailingZeros64(word)) {
					return
				}
				word &= word - 1
			}
		}
	}
}
