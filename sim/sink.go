package sim

import (
	"iter"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// tallies count what the members' work did: the external sink's calls,
// the records processed (both counted by the processes' host,
// clientHost.RecordProcessed) and the ticks an open transaction held the
// LSO back (World.Step). The World holds them: their fields and methods
// are the World's.
type tallies struct {
	// Sink counts calls of the external side effect per input record (a
	// stand-in for a database write outside the transaction).
	Sink      SinkCounts
	processed int
	// LSOHeldTicks adds up, over output partitions, the ticks during which
	// an open transaction held the LSO below the high watermark (a
	// read_committed reader saw nothing past it).
	LSOHeldTicks int
}

// Processed counts records the members have processed.
func (t *tallies) Processed() int { return t.processed }

// SinkCounts counts the external sink's calls per input record (how many
// times a record's side effect ran). Records are processed in runs of
// offsets, each once in the usual case, so the counts are kept as runs
// too: per input partition, a sorted list of disjoint offset ranges with
// the count every record in it has (records never processed are in none).
// Processing a partition from its start once is one run however many
// records it holds (an hour at 1,000 records a second is 3.6 million
// records, one run); a rebalance that has some records processed again
// adds a run for them (counted twice) and one after. Counts stay exact per
// record: a range of records is counted n times exactly when each of them
// was.
//
// Adjacent runs that touch always differ in count (incRun merges those
// that come to agree), so a stretch of records whose count rose to the
// same value is one run, and one duplicate report.
//
// Clones share the lists: a world writes in place only a list it made
// after its last Clone; otherwise it copies it first (copy-on-write), so
// neither world sees the other's calls. A copy costs the partition's runs,
// which are few.
type SinkCounts struct {
	names *topo.Layout // shared, read-only
	parts []sinkPart   // per input partition, in the world's input order; copied by clone
	own   *owner
}

type sinkPart struct {
	runs  []sinkRun // sorted by offset, disjoint; touching runs differ in count
	owner *owner
	epoch int64
}

// sinkRun is the records [from, to) of one input partition, each counted n
// times (n >= 1).
type sinkRun struct {
	from, to int64
	n        int64
}

// owner identifies one world's sink; Clone bumps the epoch of the source's
// (atomically: the explorer clones one world from many goroutines), so the
// source no longer writes in place what the clone now shares.
type owner struct{ epoch atomic.Int64 }

// Get returns the count for an input record's name (0 for any other name).
func (c *SinkCounts) Get(name string) int {
	if c.names == nil {
		return 0
	}
	p, off, ok := c.names.Ref(name)
	if !ok {
		return 0
	}
	return c.count(p, off)
}

// count is how many times record off of the p-th input partition was
// counted.
func (c *SinkCounts) count(p, off int) int {
	if p >= len(c.parts) {
		return 0
	}
	runs := c.parts[p].runs
	i := sort.Search(len(runs), func(i int) bool { return runs[i].to > int64(off) })
	if i < len(runs) && runs[i].from <= int64(off) {
		return int(runs[i].n)
	}
	return 0
}

// inc adds one to the count of record off of input partition tp and
// returns the new count. hint is tp's slot if known (-1: not; checked
// before it is trusted).
func (c *SinkCounts) inc(tp TopicPartition, hint int32, off int) int {
	return c.incAt(c.slot(tp, hint), off)
}

// incAt is inc for the p-th input partition (slot).
func (c *SinkCounts) incAt(p, off int) int {
	n := 1
	c.incRunAt(p, off, 1, func(_, _, times int) { n = times })
	return n
}

// incRun adds one to the counts of n records of input partition tp from
// off on (hint as inc's): again is told each stretch of records (first,
// count) whose new count, the same for each, is above one (a duplicate
// side effect), in offset order. It costs the runs the records fall in,
// not the records: the usual call, the next records after the last ones
// counted, extends the last run.
func (c *SinkCounts) incRun(tp TopicPartition, hint int32, off, n int, again func(first, count, times int)) {
	if n > 0 {
		c.incRunAt(c.slot(tp, hint), off, n, again)
	}
}

// incRunAt is incRun for the p-th input partition: p is its number in
// the world's input order (slot, or a number checked against tp), trusted.
func (c *SinkCounts) incRunAt(p, off, n int, again func(first, count, times int)) {
	if n <= 0 {
		return
	}
	if off < 0 {
		panic("sim: the external sink is called for input records only, not offset " + strconv.Itoa(off))
	}
	sp := c.partAt(p)
	from, to := int64(off), int64(off)+int64(n)
	runs := sp.runs
	if k := len(runs); k == 0 || runs[k-1].to <= from {
		// Past every record counted so far: counted once.
		if k > 0 && runs[k-1].to == from && runs[k-1].n == 1 {
			sp.runs[k-1].to = to
		} else {
			sp.runs = append(sp.runs, sinkRun{from, to, 1})
		}
		return
	}
	// The runs [i, j) overlap [from, to); what they and the gaps between
	// them become, with what is left of the first and last outside it.
	i := sort.Search(len(runs), func(i int) bool { return runs[i].to > from })
	j := i
	for j < len(runs) && runs[j].from < to {
		j++
	}
	var repl []sinkRun
	if i < j && runs[i].from < from {
		repl = append(repl, sinkRun{runs[i].from, from, runs[i].n})
	}
	at, k := from, i
	for at < to {
		if k < j && runs[k].from <= at {
			end := min(runs[k].to, to)
			repl = appendRun(repl, sinkRun{at, end, runs[k].n + 1})
			at = end
			k++
			continue
		}
		end := to
		if k < j {
			end = min(runs[k].from, to)
		}
		repl = appendRun(repl, sinkRun{at, end, 1})
		at = end
	}
	for _, r := range repl {
		if r.n > math.MaxInt32 {
			panic("sim: a record's side effect ran 2^31 times") // needs more ticks than a world lives (kernel/limits.go)
		}
		if r.n > 1 && r.to > from && r.from < to {
			first, last := max(r.from, from), min(r.to, to)
			again(int(first), int(last-first), int(r.n))
		}
	}
	if j > i && runs[j-1].to > to {
		repl = appendRun(repl, sinkRun{to, runs[j-1].to, runs[j-1].n})
	}
	// Splice, merging with the neighbours where they now touch with the
	// same count.
	lo, hi := i, j
	if lo > 0 && len(repl) > 0 && runs[lo-1].to == repl[0].from && runs[lo-1].n == repl[0].n {
		repl[0].from = runs[lo-1].from
		lo--
	}
	if hi < len(runs) && len(repl) > 0 && runs[hi].from == repl[len(repl)-1].to && runs[hi].n == repl[len(repl)-1].n {
		repl[len(repl)-1].to = runs[hi].to
		hi++
	}
	// In place: partAt made the list this world's own.
	sp.runs = slices.Replace(sp.runs, lo, hi, repl...)
}

// appendRun appends r to runs, joining it to the last one when they touch
// with the same count.
func appendRun(runs []sinkRun, r sinkRun) []sinkRun {
	if r.from >= r.to {
		return runs
	}
	if k := len(runs); k > 0 && runs[k-1].to == r.from && runs[k-1].n == r.n {
		runs[k-1].to = r.to
		return runs
	}
	return append(runs, r)
}

// slot is input partition tp's number (hint: as inc's); it panics for
// any other partition (incRunAt, for a negative offset).
func (c *SinkCounts) slot(tp TopicPartition, hint int32) int {
	p, ok := c.names.Input().SlotCached(tp, hint, nil)
	if !ok {
		panic("sim: the external sink is called for input records only, not " + tp.String())
	}
	return p
}

// partAt is the p-th input partition's counts, made writable by this
// world.
func (c *SinkCounts) partAt(p int) *sinkPart {
	if c.own == nil {
		c.own = &owner{}
	}
	if c.parts == nil {
		c.parts = make([]sinkPart, c.names.Input().Len())
	}
	epoch := c.own.epoch.Load()
	sp := &c.parts[p]
	if sp.owner != c.own || sp.epoch != epoch {
		// A new array, cut to its length: appends by the world it is
		// shared with never reach it.
		sp.runs = store.Copy(sp.runs)
		sp.owner, sp.epoch = c.own, epoch
	}
	return sp
}

// SinkRun is a stretch of records of one input partition the external
// sink was called for the same number of times.
type SinkRun struct {
	TP       TopicPartition
	From, To int // offsets [From, To)
	Times    int
}

// Runs ranges over the counted records as runs, by input partition (in
// the world's sorted order), then by offset: what a view reads to count
// duplicates without a step per record.
func (c *SinkCounts) Runs() iter.Seq[SinkRun] {
	return func(yield func(SinkRun) bool) {
		for p, sp := range c.parts {
			tp := c.names.Input().At(p)
			for _, r := range sp.runs {
				if !yield(SinkRun{TP: tp, From: int(r.from), To: int(r.to), Times: int(r.n)}) {
					return
				}
			}
		}
	}
}

// All ranges over every record the sink was called for and its count, by
// input partition (in the world's sorted order), then by offset: a record
// at a time (Runs is the same a run at a time).
func (c *SinkCounts) All() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for r := range c.Runs() {
			for off := r.From; off < r.To; off++ {
				if !yield(c.names.Name(r.TP, off), r.Times) {
					return
				}
			}
		}
	}
}

func (c *SinkCounts) clone() SinkCounts {
	if c.own != nil {
		c.own.epoch.Add(1) // the source's lists are shared from now on
	}
	return SinkCounts{names: c.names, parts: store.Copy(c.parts), own: &owner{}}
}
