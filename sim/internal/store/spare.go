package store

import "sync/atomic"

// clones counts the copies that share chunks (Seq.Clone, Bytes.Clone),
// of every Seq and Bytes. A chunk made while it stood at a value, and
// let go of while it still stands there, was never in a copy: no other
// world can read it, and its owner may write it again (Spare).
var clones atomic.Uint64

// NoteCopy counts a copy of a world (sim's World.clone) as clones does
// Seq.Clone and Bytes.Clone, so that whatever the copy shares of its
// original, an array made before it is never written again in place
// (CopyEpoch), even where the copy shares no Seq or Bytes.
func NoteCopy() { clones.Add(1) }

// CopyEpoch changes whenever a copy is made (NoteCopy, Seq.Clone,
// Bytes.Clone): an array made at one epoch and still at that epoch is in
// no copy, so its owner may write it again in place.
func CopyEpoch() uint64 { return clones.Load() + 1 }

// Spare is the chunks a Seq let go of that no clone can hold
// (ForgetBeforeSpare), for its next ones (AppendSpare): a world that keeps
// a window of its past then writes its new items where its oldest were,
// rather than in fresh memory the runtime must clear first while the old
// waits for the collector. Kept beside the Seq by an owner that wants it
// (a Seq's own 56 bytes stay as they are); the zero Spare holds none, and
// a copy of its owner starts with the zero one.
//
// Why a chunk it keeps is no clone's: a Seq shares chunks only through
// Clone, which counts itself in clones before it reads the Seq's spine.
// Spare notes the count when its Seq makes a chunk (Fresh.Made) and the
// number of the first chunk made since the count last moved (from); a
// chunk let go of at or past from while the count has not moved since
// was made after every Clone there ever was, so none shares it.
type Spare[T any] struct {
	fresh  Fresh
	chunks [][]T
}

// Fresh tells which of an owner's numbered chunks were made since the
// last copy (CopyEpoch), so that once let go of they may be written
// again: Spare's for a Seq, and any other owner of numbered chunks (the
// trace's text arena). The zero Fresh owns no chunk.
type Fresh struct {
	epoch uint64 // clones+1 when chunks from on were made; 0: none yet
	from  int    // the first chunk made at epoch
}

// Made notes that the owner makes chunk c now.
func (f *Fresh) Made(c int) {
	if e := CopyEpoch(); f.epoch != e {
		f.epoch, f.from = e, c
	}
}

// Own reports whether chunk c was made since the last copy.
func (f *Fresh) Own(c int) bool {
	return f.epoch == CopyEpoch() && c >= f.from
}

// Take is a spare chunk emptied, or a new one of size items.
func (sp *Spare[T]) Take(size int) []T {
	if n := len(sp.chunks); n > 0 {
		ch := sp.chunks[n-1]
		sp.chunks[n-1] = nil
		sp.chunks = sp.chunks[:n-1]
		return ch[:0]
	}
	return make([]T, 0, size)
}

// Keep keeps chunk ch when fewer than most are kept.
func (sp *Spare[T]) Keep(ch []T, most int) {
	if len(sp.chunks) < most {
		sp.chunks = append(sp.chunks, ch)
	}
}

// KeptBytes is what the spare chunks hold, itemSize bytes an item.
func (sp *Spare[T]) KeptBytes(itemSize int) int {
	n := cap(sp.chunks) * 24
	for _, c := range sp.chunks {
		n += cap(c) * itemSize
	}
	return n
}

// spareMost is the most chunks a Spare keeps for a Seq that keeps kept
// full ones: a quarter more (as much as a log may keep past its window
// between its folds, broker's worthLettingGo), at least 8.
func spareMost(kept int) int { return max(8, kept/4) }

// AppendSpare is Append, a new chunk taken from sp when it has one.
func (s *Seq[T]) AppendSpare(v T, sp *Spare[T]) {
	if len(s.open) == seqChunk {
		s.full = append(s.full, s.open)
		sp.fresh.Made(int(s.first) + len(s.full))
		s.open = append(sp.Take(seqChunk), v)
		return
	}
	s.Append(v)
}

// AppendSpareSlot is AppendSpare of an item the caller writes in place
// at once, through the pointer it returns (its old contents, from a
// spare chunk, are garbage): an item built on the stack and passed to
// AppendSpare was written there field by field and read back in wider
// words, which the processor cannot forward from its store buffer, and
// copied twice (broker's spans: a stall on every batch written). The
// item is in the open chunk, this Seq's own (Last).
func (s *Seq[T]) AppendSpareSlot(sp *Spare[T]) *T {
	if n := len(s.open); n < cap(s.open) && n < seqChunk {
		// Room in the open chunk (a clone's is cut to its length):
		// Append's append, without the item.
		s.open = s.open[:n+1]
		return &s.open[n]
	}
	var zero T
	s.AppendSpare(zero, sp)
	return &s.open[len(s.open)-1]
}

// ForgetBeforeSpare is ForgetBefore keeping in sp the chunks let go of
// that no clone can hold (Spare), up to a quarter of those it keeps.
// Nothing may hold an item's place in them past it (At and ChunkFrom
// are read before).
func (s *Seq[T]) ForgetBeforeSpare(i int, sp *Spare[T]) int {
	n := min(i>>seqShift-int(s.first), len(s.full))
	most := spareMost(len(s.full) - n)
	for c := 0; c < n; c++ {
		if ch := s.full[c]; cap(ch) == seqChunk && sp.fresh.Own(int(s.first)+c) {
			sp.Keep(ch, most)
		}
	}
	return s.ForgetBefore(i)
}
