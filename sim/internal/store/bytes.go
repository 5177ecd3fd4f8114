package store

import "fmt"

// Bytes is an append-only string of encodings kept in chunks, for what
// grows with a world's age and is read an encoding at a time (a log's runs
// of sources, broker.spanStore): as Seq, World.Clone shares every chunk
// (the open one cut to its length: an append on either side then writes
// where the other never reads, and the copy's first append copies it), and
// no byte is written in place once appended. An encoding never straddles
// chunks: one that does not fit in the open chunk's room starts the next
// (one longer than a chunk gets a chunk of its own), so a reader reads it
// from one slice (At).
//
// A place is a uint32: chunk<<bytesShift | offset in it, the chunk's
// number counted modulo the chunks 32 bits reach (placeChunks), so a
// Bytes keeps up to 4 GB (its chunks' unused ends counted) at once, and
// one that lets go of its oldest chunks (ForgetBefore) goes on past 4 GB
// written in its life: its places go round, each kept chunk's still its
// own. The zero Bytes is empty and ready to use.
type Bytes struct {
	full [][]byte // full chunks; the spine is shared with clones, cut to its length
	open []byte   // the chunk being filled
	// first is the number of the chunk full[0] is, from the first ever
	// made: those before it were let go of (ForgetBefore). A place names
	// it modulo placeChunks.
	first int
	// spare is the chunks let go of that no clone holds, for the next
	// ones (Spare: a log that keeps a window of its past writes its new
	// runs where its oldest were). A clone starts without.
	spare Spare[byte]
}

// bytesShift: a chunk is 1<<bytesShift bytes, 16 times a Seq chunk's
// items (2 KB, as a Seq chunk of 16-byte items; 64 bytes while a test
// makes Seq chunks 4 items long, so that small worlds cross chunks and
// write encodings longer than one).
func bytesShift() uint { return seqShift + 4 }

// placeBits is a place's width: 32, a uint32; less only while a test
// makes the places go round after a few chunks (SetPlaceBitsForTest).
var placeBits uint = 32

// placeChunks is how many chunks places name before they go round.
func placeChunks() int { return 1 << (placeBits - bytesShift()) }

// SetPlaceBitsForTest makes places bits wide (so that a test passes
// their reach without writing 4 GB) and returns the function that
// restores them: tests only, never while a world exists.
func SetPlaceBitsForTest(bits uint) (restore func()) {
	old := placeBits
	placeBits = bits
	return func() { placeBits = old }
}

// kept is the index in full (len(full): the open chunk) of the chunk
// place at is in, or -1 for a place of no chunk kept: one let go of
// (or, its number gone round, one not written yet).
func (s *Bytes) kept(at uint32) int {
	c := (int(at>>bytesShift()) - s.first) & (placeChunks() - 1)
	if c > len(s.full) {
		return -1
	}
	return c
}

// Append adds b as one encoding and returns its place.
func (s *Bytes) Append(b []byte) uint32 {
	size := 1 << bytesShift()
	if len(s.open)+len(b) > size && len(s.open) > 0 {
		if len(s.full)+2 > placeChunks() {
			panic("sim: a Bytes is full (4 GB of encodings kept)")
		}
		s.full = append(s.full, s.open)
		// One that filled a chunk fills the next: whole at once.
		s.spare.fresh.Made(s.first + len(s.full))
		if len(b) <= size {
			s.open = s.spare.Take(size)
		} else {
			s.open = make([]byte, 0, len(b))
		}
	}
	at := uint32(((s.first+len(s.full))&(placeChunks()-1))<<bytesShift() | len(s.open))
	if need := len(s.open) + len(b); need > cap(s.open) {
		// A young chunk, or one shared with a clone (cut to its length):
		// copied to twice its room (at least 64 bytes), up to a whole
		// chunk, so that a log of a few batches stays small.
		s.open = append(make([]byte, 0, max(min(2*cap(s.open), size), need, 64)), s.open...)
	}
	s.open = append(s.open, b...)
	return at
}

// Room is the open chunk's room past its end for one encoding of up to
// n bytes, where Append would put it: a slice of length 0 to append the
// encoding to in place and hand to AppendRoom, which then keeps it
// without copying it (an arena's runs were encoded into a scratch and
// copied into the chunk, a second pass over memory written 60 s ago:
// broker.appendRuns). Nil when the open chunk has not the room (an empty
// Bytes, a young or a clone's chunk, a chunk's end): encode elsewhere.
// The room is this Bytes' own (a clone's open chunk is cut to its
// length), and nothing there is read before AppendRoom.
func (s *Bytes) Room(n int) []byte {
	at, most := len(s.open), min(cap(s.open), 1<<bytesShift())
	if at == 0 || at+n > most {
		return nil
	}
	return s.open[at:at:most]
}

// AppendRoom is Append(b), in place when b is Room's slice with one
// encoding appended to it within its capacity (the chunk is then
// lengthened to hold it, not copied into), else by copying it as Append
// does. The place is Append's either way.
func (s *Bytes) AppendRoom(b []byte) uint32 {
	if at := len(s.open); len(b) > 0 && at < cap(s.open) && &b[:1][0] == &s.open[at : at+1][0] {
		place := uint32(((s.first+len(s.full))&(placeChunks()-1))<<bytesShift() | at)
		s.open = s.open[:at+len(b)]
		return place
	}
	return s.Append(b)
}

// At is the bytes from place at to the end of its chunk: the encoding
// appended there and those after it in the chunk, read before the next
// ForgetBefore (a chunk it lets go of may be written again: Spare). A
// place let go of panics.
func (s *Bytes) At(at uint32) []byte {
	c, off := s.kept(at), int(at&(1<<bytesShift()-1))
	if c < 0 {
		panic(fmt.Sprintf("sim: place %d was let go of (the history window keeps places from %d on)", at, s.First()))
	}
	if c < len(s.full) {
		return s.full[c][off:]
	}
	return s.open[off:]
}

// First is the first place still kept: 0 unless ForgetBefore let go of
// chunks.
func (s *Bytes) First() uint32 {
	return uint32((s.first & (placeChunks() - 1)) << bytesShift())
}

// ForgetBefore lets go of the full chunks wholly before place at (the open
// chunk is always kept), as Seq.ForgetBefore: the spine is copied without
// them, so a clone keeps what it had, and they are freed once no clone
// holds them, or kept for the next appends when no clone can (Spare).
// Places keep their numbers until they go round: a place let go of
// already lets go of nothing more.
func (s *Bytes) ForgetBefore(at uint32) {
	n := min(s.kept(at), len(s.full))
	if n <= 0 {
		return
	}
	most := spareMost(len(s.full) - n)
	for c := 0; c < n; c++ {
		if ch := s.full[c]; cap(ch) == 1<<bytesShift() && s.spare.fresh.Own(s.first+c) {
			s.spare.Keep(ch, most)
		}
	}
	s.full = append(make([][]byte, 0, len(s.full)-n+8), s.full[n:]...)
	s.first += n
}

// Next is the place the next encoding would start at, were it to fit in
// the open chunk: ForgetBefore(Next()) lets go of every full chunk.
func (s *Bytes) Next() uint32 {
	return uint32(((s.first+len(s.full))&(placeChunks()-1))<<bytesShift() | len(s.open))
}

// End is how far the next encoding would start from the first ever
// appended (those let go of counted): more than 4 GB for a Bytes that
// let go of its past (its places went round).
func (s *Bytes) End() int { return (s.first+len(s.full))<<bytesShift() | len(s.open) }

// Reach is how far its places reach from the first kept chunk's to the
// next encoding's (End less what was let go of): Append panics at 4 GB
// of it (placeChunks chunks).
func (s *Bytes) Reach() int { return s.End() - s.first<<bytesShift() }

// Size is the bytes held, the chunks' unused room not counted.
func (s *Bytes) Size() int {
	n := len(s.open)
	for _, c := range s.full {
		n += len(c)
	}
	return n
}

// Clone shares the chunks, the open one cut to its length (its room is
// the original's alone). Nothing is written to s.
func (s *Bytes) Clone() Bytes {
	NoteCopy() // before the spine is read: Spare
	return Bytes{full: s.full[:len(s.full):len(s.full)], open: s.open[:len(s.open):len(s.open)], first: s.first}
}
