package sim

import (
	"iter"
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// SinkCounts counts the external sink's calls per input record (how many
// times a record's side effect ran). It grows with the records processed,
// so it is kept dense, per input partition and by offset, a byte a record
// (a map keyed by record name cost about 30), in chunks of sinkChunkLen
// offsets made only where records were processed; a chunk where a record
// ran 255 times keeps its counts in four bytes each from then on.
//
// Clones share the chunks: a world writes in place only a chunk (and a
// partition's list of chunks) it made after its last Clone; otherwise it
// copies it first (copy-on-write), so neither world sees the other's calls.
type SinkCounts struct {
	names *topo.Layout // shared, read-only
	parts []sinkPart   // per input partition, in the world's input order; copied by clone
	own   *owner
}

// sinkChunkLen is the number of offsets one chunk counts: 256 bytes, so
// that the copy a world makes of the chunk it writes after a Clone (every
// explorer branch, in every input partition it processes) stays small; a
// chunk's header and its pointer add a tenth of a byte a record.
const sinkChunkLen = 256

type sinkPart struct {
	chunks []*sinkChunk // chunk k counts offsets k*sinkChunkLen on; nil where nothing was counted
	owner  *owner
	epoch  int64
}

type sinkChunk struct {
	n [sinkChunkLen]uint8
	// wide holds the chunk's counts once one of them passed 255 (then n
	// is not read): a record run that often is rare.
	wide  *[sinkChunkLen]int32
	owner *owner
	epoch int64
}

func (ch *sinkChunk) count(i int) int {
	if ch.wide != nil {
		return int(ch.wide[i])
	}
	return int(ch.n[i])
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

func (c *SinkCounts) count(p, off int) int {
	if p >= len(c.parts) {
		return 0
	}
	chunks := c.parts[p].chunks
	if k := off / sinkChunkLen; k < len(chunks) && chunks[k] != nil {
		return chunks[k].count(off % sinkChunkLen)
	}
	return 0
}

// inc adds one to the count of record off of input partition tp and
// returns the new count. hint is tp's slot if known (-1: not; checked
// before it is trusted).
func (c *SinkCounts) inc(tp TopicPartition, hint int32, off int) int {
	ch := c.chunkFor(c.partFor(tp, hint, off), off/sinkChunkLen)
	return ch.inc(off % sinkChunkLen)
}

// incRun adds one to the counts of n records of input partition tp from
// off on (hint as inc's), a chunk at a time: again is told each stretch
// of records (first, count) whose new count, the same for each, is above
// one (a duplicate side effect), in offset order.
func (c *SinkCounts) incRun(tp TopicPartition, hint int32, off, n int, again func(first, count, times int)) {
	sp := c.partFor(tp, hint, off)
	from, times := -1, 0 // the stretch of duplicates being gathered
	for end := off + n; off < end; {
		k, i := off/sinkChunkLen, off%sinkChunkLen
		m := min(end-off, sinkChunkLen-i)
		ch := c.chunkFor(sp, k)
		for j := i; j < i+m; j++ {
			v := ch.inc(j)
			at := k*sinkChunkLen + j
			if from >= 0 && v != times {
				again(from, at-from, times)
				from = -1
			}
			if v > 1 && from < 0 {
				from, times = at, v
			}
		}
		off += m
	}
	if from >= 0 {
		again(from, off-from, times)
	}
}

// partFor is input partition tp's counts, made writable by this world.
func (c *SinkCounts) partFor(tp TopicPartition, hint int32, off int) *sinkPart {
	p, ok := c.names.Input().SlotCached(tp, hint, nil)
	if !ok || off < 0 {
		panic("sim: the external sink is called for input records only, not " + tp.String())
	}
	if c.own == nil {
		c.own = &owner{}
	}
	if c.parts == nil {
		c.parts = make([]sinkPart, c.names.Input().Len())
	}
	epoch := c.own.epoch.Load()
	sp := &c.parts[p]
	if sp.owner != c.own || sp.epoch != epoch {
		sp.chunks = store.Copy(sp.chunks)
		sp.owner, sp.epoch = c.own, epoch
	}
	return sp
}

// chunkFor is chunk k of sp, made (or copied, when shared) for this world.
func (c *SinkCounts) chunkFor(sp *sinkPart, k int) *sinkChunk {
	epoch := sp.epoch
	for len(sp.chunks) <= k {
		sp.chunks = append(sp.chunks, nil)
	}
	ch := sp.chunks[k]
	switch {
	case ch == nil:
		ch = &sinkChunk{owner: c.own, epoch: epoch}
		sp.chunks[k] = ch
	case ch.owner != c.own || ch.epoch != epoch:
		n := &sinkChunk{n: ch.n, owner: c.own, epoch: epoch}
		if ch.wide != nil {
			wide := *ch.wide
			n.wide = &wide
		}
		sp.chunks[k], ch = n, n
	}
	return ch
}

// inc adds one to the count of the chunk's i-th offset and returns it.
func (ch *sinkChunk) inc(i int) int {
	if ch.wide == nil {
		if ch.n[i] < 255 {
			ch.n[i]++
			return int(ch.n[i])
		}
		ch.wide = new([sinkChunkLen]int32)
		for j, v := range ch.n {
			ch.wide[j] = int32(v)
		}
	}
	v := &ch.wide[i]
	if *v == 1<<31-1 {
		panic("sim: a record's side effect ran 2^31 times") // needs more ticks than a world lives (kernel/limits.go)
	}
	*v++
	return int(*v)
}

// All ranges over every record the sink was called for and its count, by
// input partition (in the world's sorted order), then by offset.
func (c *SinkCounts) All() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for p, sp := range c.parts {
			for k, ch := range sp.chunks {
				if ch == nil {
					continue
				}
				for i := range sinkChunkLen {
					if v := ch.count(i); v > 0 && !yield(c.names.Name(c.names.Input().At(p), k*sinkChunkLen+i), v) {
						return
					}
				}
			}
		}
	}
}

func (c *SinkCounts) clone() SinkCounts {
	if c.own != nil {
		c.own.epoch.Add(1) // the source's chunks are shared from now on
	}
	return SinkCounts{names: c.names, parts: store.Copy(c.parts), own: &owner{}}
}
