package broker

import (
	"cmp"
	"maps"
	"slices"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// The general fold (foldGeneral): every run an output log lets go of
// listed (foldRuns, or straight from the spans), grouped by input
// partition (byPart) and merged with what was folded before, each
// partition's runs canonical (fold, merge, canonical), for any cells.

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
	// rooms are the runs arrays of levels this world's folds replaced,
	// made since the last copy (ForgotLevel.room): no world reads them,
	// and a fold writes its level in one that fits rather than in a new
	// array (a T2 roll's output logs fold a few hundred thousand runs
	// every few seconds, each fold a new array the size of the last: a
	// quarter of what a roll allocated, for the collector to clear and
	// take back). Held as the rest (weakly): a collection lets them go.
	rooms [][]ForgotRun
}

// maxRooms is the most arrays foldScratch.rooms keeps: a level of each
// output log of T2 and T1 (4), and their read_committed levels.
const maxRooms = 8

// room is an empty array with room for n runs that takes as much memory
// as a new one of n runs would (newRoom: the same runtime pages), taken
// from rooms, or nil. The level written there keeps the whole array, and
// what a world keeps must not grow with the collector's timing (the
// rooms go at each collection): a larger room would hold more.
func (sc *foldScratch) room(n int) []ForgotRun {
	pages := runPages(n)
	if pages == 0 {
		return nil // small: not worth keeping
	}
	best := -1
	for k, r := range sc.rooms {
		if runPages(cap(r)) == pages && (best < 0 || cap(r) < cap(sc.rooms[best])) {
			best = k
		}
	}
	if best < 0 {
		return nil
	}
	r := sc.rooms[best]
	last := len(sc.rooms) - 1
	sc.rooms[best], sc.rooms[last] = sc.rooms[last], nil
	sc.rooms = sc.rooms[:last]
	return r[:0]
}

// The runtime keeps an object over 32 KB in whole 8 KB pages: an array
// of runs that large takes its pages whatever its length within them.
const (
	largeObject = 32 << 10
	runtimePage = 8 << 10
	runSize     = int(unsafe.Sizeof(ForgotRun{}))
)

// runPages is how many runtime pages an array of n runs takes when it is
// a large object, 0 when it is not.
func runPages(n int) int {
	if b := n * runSize; b > largeObject {
		return (b + runtimePage - 1) / runtimePage
	}
	return 0
}

// newRoom is a new empty array for n runs: as many as its runtime pages
// hold when it is large, so that a later fold of a few runs more finds it
// a room (room) in the same memory.
func newRoom(n int) []ForgotRun {
	if p := runPages(n); p > 0 {
		n = p * runtimePage / runSize
	}
	return make([]ForgotRun, 0, n)
}

// letGoOf keeps the arrays of the levels old held that the levels now
// held (now) do not, when no copy was made since they were (no other
// world can hold them), for the next folds (room); while there is room,
// the smallest dropped first.
func (sc *foldScratch) letGoOf(old [2]ForgotLevel, now [2]ForgotLevel) {
	e := store.CopyEpoch()
	for k, lv := range old {
		if lv.made != e || cap(lv.room) == 0 || k == 1 && sameArray(lv.room, old[0].room) ||
			sameArray(lv.room, now[0].room) || sameArray(lv.room, now[1].room) {
			continue
		}
		if len(sc.rooms) < maxRooms {
			sc.rooms = append(sc.rooms, lv.room)
			continue
		}
		small := 0
		for j, r := range sc.rooms {
			if cap(r) < cap(sc.rooms[small]) {
				small = j
			}
		}
		if cap(sc.rooms[small]) < cap(lv.room) {
			sc.rooms[small] = lv.room
		}
	}
}

// sameArray reports whether a and b are in the same array (both with room).
func sameArray(a, b []ForgotRun) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// scratchRuns is *s emptied with room for n runs at least: a quarter
// more when it grows, as a T2 roll's folds grow a little each time (a
// fold's lists made anew at each, 150 MB of a 30-restart roll's 1,300).
func scratchRuns(s *[]ForgotRun, n int) []ForgotRun {
	if cap(*s) < n {
		*s = make([]ForgotRun, 0, n+n/4)
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
	old := [2]ForgotLevel{f.Uncommitted, f.Committed}
	f.Uncommitted = c.fold(f.Uncommitted, all, oddAll, slot, sc)
	if f.same = f.same && !anyAborted; f.same {
		f.Committed = f.Uncommitted
	} else {
		f.Committed = c.fold(f.Committed, committed, oddCommitted, slot, sc)
	}
	sc.letGoOf(old, [2]ForgotLevel{f.Uncommitted, f.Committed})
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
func (c *CellLog) fold(old ForgotLevel, add []ForgotRun, odd map[string]int, slot int, sc *foldScratch) ForgotLevel {
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
		out.Runs, out.room, out.made = old.Runs, old.room, old.made
		return out
	}
	runs := sc.room(len(old.Runs) + len(add))
	if runs == nil {
		runs = newRoom(len(old.Runs) + len(add))
	}
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
	out.room, out.made = runs[:0], store.CopyEpoch()
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
	c.appendJoined(out, from, add, slotted, slot, hund)
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
	c.appendJoined(out, len(*out), part, slotted, slot, hund)
	return true
}

// appendJoined appends to out the runs of runs of one kind (slotted), in
// order, each joined onto the run before it (from out[from] on) when the
// two hold the same number of runs and nothing lies between them.
func (c *CellLog) appendJoined(out *[]ForgotRun, from int, runs []ForgotRun, slotted bool, slot int, hund *topo.Hundred) {
	for _, r := range runs {
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
