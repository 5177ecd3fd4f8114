// Package store holds the engine's storage helpers: append-only chunked
// lists that clones share, caches keyed by a string's place, name tables,
// free lists and copy helpers. Nothing here knows Kafka; the protocol
// packages never need to learn how their history is kept.
package store

import (
	"fmt"
	"iter"
)

// seqChunk is the number of items in one chunk of a Seq, 1<<seqShift: a
// power of two, so that finding an item's chunk is a shift and a mask, not
// a division by a variable (At is on the hot path: an answer's request, a
// fetched offset's cell). Vars only so that tests can make chunks tiny
// (setSeqChunk); never changed while a world exists.
var (
	seqShift uint = 7
	seqChunk      = 1 << seqShift
)

// Seq is an append-only list kept in fixed-size chunks, for what grows with
// a world's age (the trace, the events, the log cells, the pause series). A
// chunk is never written in place once another Seq may see it: World.Clone
// shares the chunks between the copies by pointer (the open one cut to its
// length), so a clone costs the same at tick 200 and at tick 200,000. The
// rare change to an old item (a transaction marker marks its cells) copies
// that chunk first (copy-on-write), since another world may hold it.
//
// The zero Seq is empty and ready to use.
type Seq[T any] struct {
	// full holds the full chunks, each exactly seqChunk long. Its backing
	// array may be shared with clones, so an index below len(full) is never
	// assigned without copying full first; clones get it with its capacity
	// cut to its length, so appends on either side never meet.
	full [][]T
	// open is the chunk being filled. Its items may be shared with clones
	// (clone), its room past them is this Seq's alone. It moves to full
	// when an append finds it full, so the newest item is always in open
	// and may be changed in place right after it is appended.
	open []T
	// ownOpen: the open chunk is this Seq's alone and stays so. The first
	// Update that changes an item in a shared one copies it and sets
	// ownOpen, since a Seq Update changed once (a log's cells, marked by
	// transactions; offsets' runs) is changed again: its clones then copy
	// the open chunk rather than share it, and Update changes it in place.
	ownOpen bool
	// first is the number of the chunk full[0] is: the chunks before it
	// were let go of (ForgetBefore). Indexes stay absolute: item i is in
	// chunk i>>seqShift, at full[i>>seqShift-first]. 32 bits, beside
	// ownOpen, so that a Seq stays 56 bytes (a world holds several per
	// partition): 2^32 chunks are far more items than a world makes.
	first uint32
}

// Len is the number of items ever appended, those let go of counted.
func (s *Seq[T]) Len() int { return (int(s.first)+len(s.full))*seqChunk + len(s.open) }

// First is the index of the first item still kept: 0 unless ForgetBefore
// let go of chunks.
func (s *Seq[T]) First() int { return int(s.first) * seqChunk }

// At returns item i. An item let go of (below First) panics: its index
// stays valid, its value is gone.
func (s *Seq[T]) At(i int) T {
	if c := i>>seqShift - int(s.first); uint(c) < uint(len(s.full)) {
		return s.full[c][i&(seqChunk-1)]
	} else if c < 0 {
		s.forgotten(i)
	}
	return s.open[i-(int(s.first)+len(s.full))*seqChunk]
}

// ChunkFrom is the items from i to the end of the chunk holding it (or
// to Len), for a reader that goes through many in order without copying
// each (At): read only, since clones share the chunk. An item let go of
// panics.
func (s *Seq[T]) ChunkFrom(i int) []T {
	if c := i>>seqShift - int(s.first); uint(c) < uint(len(s.full)) {
		return s.full[c][i&(seqChunk-1):]
	} else if c < 0 {
		s.forgotten(i)
	}
	return s.open[i-(int(s.first)+len(s.full))*seqChunk:]
}

// forgotten panics for item i, let go of: out of line, so that At stays
// small enough to inline.
func (s *Seq[T]) forgotten(i int) {
	panic(fmt.Sprintf("sim: item %d was let go of (the history window keeps items from %d on)", i, s.First()))
}

// ForgetBefore lets go of the full chunks whose items all come before
// index i (the open chunk is always kept), and reports how many items it
// let go of. The spine is copied without them, never changed in place
// (clones share it), so that the chunks are freed once no clone holds
// them; a clone made before keeps every chunk it had.
func (s *Seq[T]) ForgetBefore(i int) int {
	n := min(i>>seqShift-int(s.first), len(s.full))
	if n <= 0 {
		return 0
	}
	s.full = append(make([][]T, 0, len(s.full)-n+8), s.full[n:]...)
	s.first += uint32(n)
	return n * seqChunk
}

// Append adds an item at the end.
func (s *Seq[T]) Append(v T) {
	if len(s.open) == seqChunk {
		s.full = append(s.full, s.open)
		// A Seq that filled one chunk will fill the next: make it whole at
		// once rather than growing it by doubling (eight copies of up to
		// 127 items, thrown away). A first chunk grows, so that the many
		// short Seqs (a log of a few records) stay small.
		s.open = make([]T, 0, seqChunk)
	} else if len(s.open) == cap(s.open) && (len(s.full) > 0 || s.first > 0 || 2*len(s.open) >= seqChunk) {
		// Full below seqChunk items: a clone's copy (cut to its length) or
		// a young chunk. Grown straight to a whole chunk when the Seq has
		// filled one before (a branch of an old world appends to its trace
		// from the first tick: not eight doublings, each a copy) or when
		// doubling would pass seqChunk (room that the chunk, moved to full
		// at seqChunk items, would never use).
		s.open = append(make([]T, 0, seqChunk), s.open...)
	}
	s.open = append(s.open, v)
}

// StartsChunk reports whether the next item appended starts a chunk (its
// index is a multiple of seqChunk), without dividing: the open chunk is
// empty only in an empty Seq, and moves to full when an append finds it
// full.
func (s *Seq[T]) StartsChunk() bool { return len(s.open) == 0 || len(s.open) == seqChunk }

// Last points at the newest item, to finish it right after Append (it is in
// the open chunk, which no other world shares). Nil when empty.
func (s *Seq[T]) Last() *T {
	if len(s.open) == 0 {
		return nil
	}
	return &s.open[len(s.open)-1]
}

// Update calls f on every item of [from, to) that match accepts, in place:
// a full chunk (which another world may share) holding such an item is
// copied first, once (copy-on-write); chunks with none are left shared.
func (s *Seq[T]) Update(from, to int, match func(*T) bool, f func(*T)) {
	from, to = max(from, s.First()), min(to, s.Len())
	spineCopied := false
	for c := from/seqChunk - int(s.first); c < len(s.full) && (c+int(s.first))*seqChunk < to; c++ {
		lo, hi := max(from-(c+int(s.first))*seqChunk, 0), min(to-(c+int(s.first))*seqChunk, seqChunk)
		chunk := s.full[c]
		hit := false
		for i := lo; i < hi && !hit; i++ {
			hit = match(&chunk[i])
		}
		if !hit {
			continue
		}
		if !spineCopied {
			full := make([][]T, len(s.full), cap(s.full))
			copy(full, s.full)
			s.full, spineCopied = full, true
		}
		chunk = append(make([]T, 0, seqChunk), chunk...)
		s.full[c] = chunk
		for i := lo; i < hi; i++ {
			if match(&chunk[i]) {
				f(&chunk[i])
			}
		}
	}
	base := (int(s.first) + len(s.full)) * seqChunk
	for i := max(from, base); i < to; i++ {
		if v := &s.open[i-base]; match(v) {
			if !s.ownOpen {
				// The open chunk may be shared with a clone too (clone):
				// copied first, as a full one is, and kept to itself.
				s.open = append(make([]T, 0, cap(s.open)), s.open...)
				v, s.ownOpen = &s.open[i-base], true
			}
			f(v)
		}
	}
}

// Set replaces item i (copy-on-write, as Update).
func (s *Seq[T]) Set(i int, v T) {
	s.Update(i, i+1, func(*T) bool { return true }, func(p *T) { *p = v })
}

// All ranges over the items with their indexes, oldest first.
func (s *Seq[T]) All() iter.Seq2[int, T] {
	return s.From(0)
}

// From ranges over the items from index i on (from First, if i is
// before it), with their indexes.
func (s *Seq[T]) From(i int) iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		i = max(i, s.First())
		n := s.Len()
		for ; i < n; i++ {
			if !yield(i, s.At(i)) {
				return
			}
		}
	}
}

// Slice copies items [from, to) into a new slice, from clamped to First.
func (s *Seq[T]) Slice(from, to int) []T { return SliceOf(max(from, s.First()), to, s.At) }

// Clone shares the full chunks and the open one, each cut to its length:
// the copy's first append reallocates its open chunk (to a whole chunk once
// the Seq has filled one, Append), the original appends past what the copy
// sees, and neither changes a shared item in place (Update copies the open
// chunk first, as it does a full one; Last is for the item just appended).
// The open chunk of a Seq that keeps its own (ownOpen) is copied. Nothing
// is written to s, so goroutines may clone one Seq at once (the explorer's
// workers clone one world at each tick of its window) while its owner
// appends.
func (s *Seq[T]) Clone() Seq[T] {
	NoteCopy() // before the spine is read: Spare
	n := Seq[T]{full: s.full[:len(s.full):len(s.full)], open: s.open[:len(s.open):len(s.open)], first: s.first}
	if s.ownOpen {
		n.open, n.ownOpen = append(make([]T, 0, len(s.open)), s.open...), true
	}
	return n
}

// SetSeqChunkForTest makes Seq chunks n items long (a power of two) and
// returns the function that restores them: tests only, never while a
// world exists.
func SetSeqChunkForTest(n int) (restore func()) {
	oldShift, oldChunk := seqShift, seqChunk
	seqShift = 0
	for 1<<seqShift < n {
		seqShift++
	}
	seqChunk = n
	return func() { seqShift, seqChunk = oldShift, oldChunk }
}

// SeqChunk is the number of items in one chunk of a Seq.
func SeqChunk() int { return seqChunk }

// ChunkOf is the index of the chunk item i of a Seq is in.
func ChunkOf(i int) int { return i >> seqShift }
