package broker

import (
	"fmt"
	"slices"
	"sort"
	"weak"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Letting go of the output logs' past (issue 26: a world may keep only a
// window of its history in detail). ForgetOutputBefore moves each output
// log's start offset (Kafka's logStartOffset, as retention does) up to its
// first cell written at or after a tick, never past the LSO (a cell of a
// transaction not yet decided is kept, as is everything after it), and
// lets go of the chunks of cells wholly below it. What the cells let go
// of contribute to Delivery is folded first into the log's Forgotten:
// the runs of input records their invoices name, with how many times,
// at each isolation level: one run an input partition while every record
// was written once (a chain of a batch after another), more only where a
// record was written twice or never.
//
// No reader of an output log reaches below its start: members fetch only
// input partitions; Runs, Sources, From and All begin at Start; At and
// every read of one cell panic below it. The trace refers to an invoice
// by its place (InvoiceSource) from the tick it was written: a world
// forgets its output logs before the first tick whose trace it keeps, so
// every text it can still spell finds its cell.

// Forgotten is what the cells an output log let go of contribute to
// Delivery (sim/delivery.go), at each isolation level. It is never
// changed once made (a fold makes a new one), so clones share it.
type Forgotten struct {
	Uncommitted, Committed ForgotLevel
	// same: no aborted cell was let go of, so Committed is Uncommitted
	// (the same runs and map, folded once).
	same bool
}

// ForgotLevel is what a reader at one isolation level saw of the cells
// let go of: the runs of input records their invoices name (by input
// partition, then first offset) and, by name, the sources that are no
// input record's. Every cell let go of lay below the LSO, so nothing of
// it is held back: read_committed sees all but the aborted ones.
type ForgotLevel struct {
	Runs []ForgotRun
	Odd  map[string]int
	// room is the array Runs is in, with its capacity (Runs is cut to
	// its length), when the general fold made it (fold), at copy epoch
	// made (store.CopyEpoch): once a later fold has replaced the level
	// and no copy was made since, no world reads it, and the next fold
	// writes there (foldScratch.rooms) instead of in fresh memory.
	room []ForgotRun
	made uint64
}

// ForgotRun is N invoices of each record from offset First to Last of the
// input partition numbered Part: every one of them, or when Slotted those
// the default partitioner sends to the log's partition.
type ForgotRun struct {
	Part, First, Last, N int32
	Slotted              bool
}

// Start is the log start offset: the first cell still kept.
func (c *CellLog) Start() int { return int(c.startOff) }

// Start is the log start offset (Kafka's logStartOffset): cells below it
// were let go of (ForgetOutputBefore).
func (l *Log) Start() int { return int(l.Cells.startOff) }

// Forgotten is what the cells below Start contribute to Delivery; nil
// while the log has let go of none.
func (l *Log) Forgotten() *Forgotten { return l.forgot }

// forgotten panics for a read of cell i, below the log's start.
func (c *CellLog) forgotten(i int) {
	panic(fmt.Sprintf("sim: cell %d of %s was let go of: the log starts at offset %d (history.ms)", i, c.tp, int(c.startOff)))
}

// spanFrom is the index of the first span whose first cell is at or
// past offset i (never inside a span) and how many cells the spans before
// it hold.
func (c *CellLog) spanFrom(i int) (k, before int) {
	if c.spans == nil {
		return 0, 0
	}
	n, first := c.spans.Len(), c.spans.First()
	if h := c.spans.cutHint; first <= h && h < n {
		// The span cutBefore found: where a log is cut (worthLettingGo,
		// onlySpans, letGo), without a search from the start through
		// spans written a window ago. Spans' first cells only grow (a
		// span holds one at least), so it is the first at or past i.
		if s := c.spans.At(h); int(s.first) == i {
			return h, int(s.before)
		}
	}
	k = searchFrom(first, n, func(k int) bool { return int(c.spans.At(k).first) >= i }) // near first: the start's
	if k < n {
		return k, int(c.spans.At(k).before)
	}
	last := c.spans.Last()
	return n, int(last.before + last.n)
}

// ForgetOutputBefore lets each output log go of its cells written before
// tick, whole chunks at a time, as retention does: its start offset moves
// to its first cell written at or after tick (a batch's cells together),
// never past its LSO; Delivery keeps counting them (Forgotten).
func (b *Broker) ForgetOutputBefore(tick int) {
	sc := b.foldLists()
	moved := false
	for _, tp := range b.layout.Outputs() {
		moved = b.Log(tp).forgetBeforeFrom(tick, false, sc, b.hints) || moved
	}
	if moved && b.hints != nil {
		b.dropPassedHints()
	}
}

// foldLists is the general folds' lists (foldScratch), those of the
// folds before when the collector has not taken them. Held weakly: they
// are a fold's temporaries, reused while they last (the folds of a log,
// and of the next, come a few hundred ticks apart, seldom a collection
// between), never memory the world keeps (a 10-restart T2 roll's retained
// heap grew by 7 MB, the largest fold's lists, when the Broker held them).
func (b *Broker) foldLists() *foldScratch {
	sc := b.fold.Value()
	if sc == nil {
		sc = new(foldScratch)
		b.fold = weak.Make(sc)
	}
	return sc
}

// ForgetAllOutputBefore is ForgetOutputBefore moving every output log's
// start as far as it may go even when that lets go of no chunk: for a
// session's checkpoint (sim.World.ForgetHistoryBefore), which keeps as
// little as it can, and for the tests of views and pictures, whose worlds
// are smaller than a chunk.
func (b *Broker) ForgetAllOutputBefore(tick int) {
	sc := b.foldLists()
	for _, tp := range b.layout.Outputs() {
		b.Log(tp).forgetBeforeFrom(tick, true, sc, b.hints)
	}
	b.dropPassedHints()
}

// OutputFold is what an output log had folded at one moment: its start
// and the Forgotten of its cells below it, which is never changed once
// made (a fold makes a new one), so a note of it stays true.
type OutputFold struct {
	tp     wire.TopicPartition
	start  int32
	forgot *Forgotten
	names  *topo.Layout
}

// HintFoldsOf notes what each of cp's output logs has folded (its start
// and Forgotten) as hints for b's folds: cp must be a copy of b as it was
// (or of an earlier state of b's line), so that every cell cp let go of
// is a cell b holds or let go of, the same; the copies of b, made later,
// keep the hints. A log's fold is the same runs however its cells are cut
// into folds (canonical: foldSpans folds on from any Forgotten as
// foldGeneral would), so b's next fold past a hint's start starts from
// the hint's Forgotten and reads only the cells after it: a session's
// checkpoint of a windowed world folds the world's whole window of output
// cells (its copy keeps no history, sim.World.ForgetHistoryBefore), which
// the world, and the next checkpoint, then read again as they let them
// go (about a twelfth of T1's hour typed into the REPL).
func (b *Broker) HintFoldsOf(cp *Broker) {
	hints := slices.Clip(b.hintsAhead()) // appended to in a new array: copies share the old
	for _, tp := range cp.layout.Outputs() {
		l := cp.Log(tp)
		if l.forgot != nil && l.Cells.startOff > b.Log(tp).Cells.startOff {
			hints = append(hints, OutputFold{tp: tp, start: l.Cells.startOff, forgot: l.forgot, names: l.Cells.names})
		}
	}
	b.hints = hints
}

// dropPassedHints lets go of the hints no fold of b can start from any
// more: those at or below their log's start.
func (b *Broker) dropPassedHints() { b.hints = b.hintsAhead() }

// hintsAhead is b's hints a fold can still start from, those past their
// log's start: b.hints itself when every one is, else a new list (never
// changed in place: copies share b.hints).
func (b *Broker) hintsAhead() []OutputFold {
	ahead := func(h OutputFold) bool { return h.start > b.Log(h.tp).Cells.startOff }
	for i, h := range b.hints {
		if !ahead(h) {
			hints := append([]OutputFold(nil), b.hints[:i]...) // nil when none is left
			for _, h := range b.hints[i+1:] {
				if ahead(h) {
					hints = append(hints, h)
				}
			}
			return hints
		}
	}
	return b.hints
}

// forgetBeforeFrom is ForgetOutputBefore for one log; always, even when
// that lets go of no chunk (worthLettingGo); a general fold's lists in
// sc's room (nil: made for it). Its fold starts from the furthest of
// ahead's folds of this log (Broker.hints; nil: none) that starts between
// l's start and the cut, when every cell from there to the cut is in a
// span and foldSpans folds them on from it; otherwise from l's start. It
// reports whether the log's start moved.
func (l *Log) forgetBeforeFrom(tick int, always bool, sc *foldScratch, ahead []OutputFold) bool {
	c := &l.Cells
	if !c.inRecs {
		return false // no cell yet, or only records of the upstream producer: no invoice to fold
	}
	to := c.cutBefore(tick, l.LSO())
	if to <= int(c.startOff) || !always && !c.worthLettingGo(to) {
		return false
	}
	slot := outputIndex(c.names, c.tp)
	f := Forgotten{same: true}
	if l.forgot != nil {
		f = *l.forgot
	}
	if g, ok := c.foldOnFrom(ahead, to, slot); ok {
		f = g
	} else if k0, k1, ok := c.onlySpans(to); !ok || foldGeneralOnly || !c.foldSpans(&f, k0, k1, slot) {
		c.foldGeneral(&f, to, slot, sc)
	}
	l.forgot = &f
	c.letGo(to)
	// Kafka's LogSegment drops the aborted transaction index with its
	// segment: the entries wholly below the start go.
	k := 0
	for k < len(l.Aborted) && l.Aborted[k].Last < to {
		k++
	}
	if k > 0 {
		l.Aborted = slices.Clone(l.Aborted[k:])
	}
	return true
}

// foldOnFrom is the fold of c's cells below to made from the furthest
// of ahead's folds of c's partition whose start s lies between c's start
// and to, when c's cells from s to to are all in spans and foldSpans
// folds them on from it; false otherwise (c folds from its own start).
func (c *CellLog) foldOnFrom(ahead []OutputFold, to, slot int) (Forgotten, bool) {
	if len(ahead) == 0 || foldGeneralOnly || c.spans == nil {
		return Forgotten{}, false
	}
	var best *OutputFold
	for i := range ahead {
		a := &ahead[i]
		if a.tp != c.tp || a.names != c.names || a.forgot == nil || int(a.start) < int(c.startOff) || int(a.start) > to {
			continue
		}
		if best == nil || a.start > best.start {
			best = a
		}
	}
	if best == nil {
		return Forgotten{}, false
	}
	// The hint's start, like the cut, is no span's middle (cutBefore).
	k0, k1, ok := c.spansBetween(int(best.start), to)
	if !ok {
		return Forgotten{}, false
	}
	f := *best.forgot
	if !c.foldSpans(&f, k0, k1, slot) {
		return Forgotten{}, false
	}
	return f, true
}

// cutBefore is where the log may start for tick: its first cell written
// at or after tick, at most lso, moved down to the first cell of the
// batch (span) it falls in.
func (c *CellLog) cutBefore(tick, lso int) int {
	n := min(c.Len(), lso)
	if n <= int(c.startOff) {
		return int(c.startOff)
	}
	if c.recs.Len() == 0 && c.spans != nil {
		// Spans only (T1's logs): the first written at or after tick, by
		// their ticks, rather than a cell at a time (TickAt finds its span).
		// From where the last cut was found (a tick ago, in steady
		// state: a few hundred spans on, in the chunks it read), not by
		// halving the whole log (a cache miss a probe, every tick).
		k0, _ := c.spanFrom(int(c.startOff))
		m := c.spans.Len()
		atTick := func(k int) bool { return int(c.spans.At(k).tick) >= tick }
		k := hintedCut(k0, c.spans.cutHint, m, atTick)
		c.spans.cutHint = k
		if k < m && int(c.spans.At(k).first) <= n {
			return int(c.spans.At(k).first) // a span's first cell
		}
		return c.spanStart(n)
	}
	// Cells and spans (T2's logs): the first cell written at or after
	// tick, by its tick (TickAt, itself a search of the spans), from
	// where the last cut was found, as above: the world asks every tick,
	// for a tick that moved a little or not at all, where a search of the
	// whole log made two nested binary searches, a cache miss a probe.
	lo := int(c.startOff)
	atTick := func(i int) bool { return c.TickAt(i) >= tick }
	if c.spans == nil {
		return c.spanStart(lo + sort.Search(n-lo, func(k int) bool { return atTick(lo + k) }))
	}
	i := hintedCut(lo, c.spans.cellCutHint, n, atTick)
	c.spans.cellCutHint = i
	return c.spanStart(i)
}

// hintedCut is the first of lo..hi-1 where at turns true (false before
// it, true from it on; hi when nowhere), searched from hint, where the
// last cut was found: back by halving when at already holds before it (a
// cut before the last one's), else on from it (searchFrom).
func hintedCut(lo, hint, hi int, at func(int) bool) int {
	h := max(lo, min(hint, hi))
	if h > lo && at(h-1) {
		return lo + sort.Search(h-lo, func(k int) bool { return at(lo + k) })
	}
	return searchFrom(h, hi, at)
}

// searchFrom is sort.Search over lo to hi-1 (f false, then true): the
// first k at which f is true, or hi. It probes lo, lo+1, lo+3, lo+7, ...
// before halving, so an answer d past lo costs about 2 log d probes, all
// near lo, where sort.Search halves the whole range.
func searchFrom(lo, hi int, f func(int) bool) int {
	for step := 1; lo < hi; step *= 2 {
		p := min(lo+step, hi) - 1
		if f(p) { // the answer is in lo..p
			return lo + sort.Search(p-lo, func(k int) bool { return f(lo + k) })
		}
		lo = p + 1
	}
	return hi
}

// spanStart is offset to, or the first cell of the span it falls in.
func (c *CellLog) spanStart(to int) int {
	if to >= c.Len() {
		return to
	}
	if k, _, _, in := c.locate(to); in {
		to = int(c.spans.At(k).first)
	}
	return to
}

// letGo moves the log's start to to (no span's middle) and lets go of
// the chunks wholly below it: of its cells (recs, and their chunks' base
// ticks and far ticks), its far writers, its spans and their runs.
func (c *CellLog) letGo(to int) {
	ks, before := c.spanFrom(to)
	rs := to - before      // the cells below to that are in recs
	c.startOff = int32(to) // offsets are 32-bit (limitPartitionRecords)
	c.recs.ForgetBefore(rs)
	c.bases.ForgetBefore(c.recs.First() / store.SeqChunk())
	c.farTicks.ForgetBefore(firstFrom(&c.farTicks, c.recs.First(), func(f tickRun) int32 { return f.first }))
	c.far.ForgetBefore(firstFrom(&c.far, to, func(f farCell) int32 { return f.off }))
	if c.others.Len()-c.others.First() >= store.SeqChunk() {
		// The odd cells' strings (an invoice of an input partition past
		// maxSrcPart, T2's 100,000, written a cell at a time: a
		// rebalance's batches) went with their cells too: were they kept,
		// a long roll's heap grew by about 0.4 MB a restart.
		c.others.ForgetBefore(c.firstOtherFrom(rs))
	}
	if c.spans == nil {
		return
	}
	c.spans.ForgetBeforeSpare(ks, &c.spans.spare)
	// The runs of the first multi-run span at or past to, and every one
	// after, are in its chunk of the arena or later ones; with no such
	// span, no span left reads the arena, and all of it goes. (It was
	// kept whole: a session's checkpoint, whose copy lets go of all its
	// history (World.ForgetHistoryBefore), kept its window's runs, and
	// its checkpoints together every chunk of runs a long run wrote.)
	keep := c.spans.runs.Next()
	for k := ks; k < c.spans.Len(); k++ {
		if s := c.spans.At(k); s.part == multiRun {
			keep = uint32(s.src)
			break
		}
	}
	c.spans.runs.ForgetBefore(keep)
}

// firstOtherFrom is the index in others of the first odd cell (cellOther)
// among the recs from index r on, or others.Len() when none is: those
// before it are only recs' before r. Read in place, a chunk at a time,
// through the window's recs (a few times a window: letGo).
func (c *CellLog) firstOtherFrom(r int) int {
	for n := c.recs.Len(); r < n; {
		chunk := c.recs.ChunkFrom(r)
		for i := range chunk {
			if chunk[i].kind() == cellOther {
				return int(chunk[i].srcOff)
			}
		}
		r += len(chunk)
	}
	return c.others.Len()
}

// firstFrom is the index of the first item of s (ordered by id) whose id
// is at least i.
func firstFrom[T any](s *store.Seq[T], i int, id func(T) int32) int {
	n, first := s.Len(), s.First()
	return first + sort.Search(n-first, func(k int) bool { return int(id(s.At(first+k))) >= i })
}

// onlySpans reports whether every cell from the start to offset to (no
// span's middle) is in a span, k0 to k1-1.
func (c *CellLog) onlySpans(to int) (k0, k1 int, ok bool) {
	return c.spansBetween(int(c.startOff), to)
}

// spansBetween reports whether every cell from offset from to offset to
// (neither a span's middle) is in a span, k0 to k1-1: the cells below
// each that are in none are as many.
func (c *CellLog) spansBetween(from, to int) (k0, k1 int, ok bool) {
	if c.spans == nil {
		return 0, 0, false
	}
	k0, b0 := c.spanFrom(from)
	k1, b1 := c.spanFrom(to)
	return k0, k1, to-b1 == from-b0
}

// runsBelow is at most how many runs Runs yields from the start to
// offset to (no span's middle): the spans' runs and the other cells.
func (c *CellLog) runsBelow(to int) int {
	k0, b0 := c.spanFrom(int(c.startOff))
	k1, b1 := c.spanFrom(to)
	n := (to - b1) - (int(c.startOff) - b0) // the other cells
	for k := k0; k < k1; k++ {
		s := c.spans.At(k)
		n += s.runCount()
	}
	return n
}

// worthLettingGo reports whether moving the start to to lets go of at
// least a chunk of spans or of other cells, and of at least a quarter as
// many as it keeps: each time costs about a run an input partition
// (fold), so a log folds its past a few times a window (the ticks asked
// to keep) rather than every tick, keeping at most a quarter more.
func (c *CellLog) worthLettingGo(to int) bool {
	k0, b0 := c.spanFrom(int(c.startOff))
	k1, b1 := c.spanFrom(to)
	r0, r1 := int(c.startOff)-b0, to-b1 // recs' indexes
	chunk := store.SeqChunk()
	spans, recs := 0, c.recs.Len()
	if c.spans != nil {
		spans = c.spans.Len()
	}
	return k1-k0 >= max(chunk, (spans-k1)/4) || r1-r0 >= max(chunk, (recs-r1)/4)
}

// KeptBytes is about what the log's cells hold in memory (their lists'
// kept chunks and spines, the runs of its spans, its writers and
// producers, what it let go of folded: Forgotten), for measuring what
// forgetting saves; chunks a clone shares are counted in each.
func (l *Log) KeptBytes() int {
	c := &l.Cells
	n := c.runs.KeptBytes(8) + c.recs.KeptBytes(12) + c.bases.KeptBytes(4) + c.farTicks.KeptBytes(8) +
		c.others.KeptBytes(48) + c.far.KeptBytes(24) + cap(c.writers)*16 + cap(c.producers)*16
	if c.spans != nil {
		n += c.spans.KeptBytes(36) + c.spans.spare.KeptBytes(36) + c.spans.runs.KeptBytes()
	}
	if f := l.forgot; f != nil {
		for _, lv := range [2]*ForgotLevel{&f.Uncommitted, &f.Committed} {
			n += cap(lv.Runs)*20 + len(lv.Odd)*48
			if f.same {
				break
			}
		}
	}
	return n
}

// ForgotInvoices is how many invoices of record off of the input
// partition numbered part (or, part -1, of the source named source, no
// input record's) were among the cells let go of that a reader at the
// isolation level (read_committed when committed) sees: what a reader
// from offset 0 met before the log's start.
func (l *Log) ForgotInvoices(part, off int, source string, committed bool) int {
	f := l.forgot
	if f == nil {
		return 0
	}
	lv := &f.Uncommitted
	if committed {
		lv = &f.Committed
	}
	if part < 0 {
		return lv.Odd[source]
	}
	c := &l.Cells
	slot, n := outputIndex(c.names, c.tp), 0
	k := sort.Search(len(lv.Runs), func(k int) bool { return int(lv.Runs[k].Part) >= part })
	for ; k < len(lv.Runs) && int(lv.Runs[k].Part) == part; k++ { // both kinds of runs (canonical)
		if r := lv.Runs[k]; int(r.First) <= off && off <= int(r.Last) && (!r.Slotted || c.names.Partitioner(c.names.Input().At(part)).Slot(off) == slot) {
			n += int(r.N)
		}
	}
	return n
}

// RunsReach is how far the places of the output log whose runs of
// invoice batches reach furthest reach (spanStore.runs: 32-bit places,
// 4 GB kept at once), in bytes, from its first chunk kept: a caller that
// steps a world without bound stops it before (kernel's step). A log that
// keeps everything reaches as far as it wrote in its life; one that lets
// go of its past (a window of history) only as far as it keeps, for its
// places go round (store.Bytes) and it runs on.
func (b *Broker) RunsReach() int {
	most := 0
	for _, tp := range b.layout.Outputs() {
		if sp := b.Log(tp).Cells.spans; sp != nil {
			most = max(most, sp.runs.Reach())
		}
	}
	return most
}
