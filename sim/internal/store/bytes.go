package store

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
// A place is a uint32: chunk<<bytesShift | offset in it, so a Bytes holds
// up to 4 GB at once (its chunks' unused ends counted). The chunk is
// numbered round a ring of 1<<(32-bytesShift) (the chunk's number since
// the first, modulo that): a Bytes that lets go of its past (ForgetBefore)
// may append 4 GB and more in its life. The zero Bytes is empty and ready
// to use.
type Bytes struct {
	full [][]byte // full chunks kept; the spine is shared with clones, cut to its length
	open []byte   // the chunk being filled
	gone int      // the chunks let go of, before full[0] (ForgetBefore)
}

// ringChunks is how many chunk numbers a place can spell.
func ringChunks() int { return 1 << (placeBits - bytesShift()) }

// placeBits is how many bits of a place a Bytes uses: 32 (a var only so
// that a test can make the ring small).
var placeBits uint = 32

// chunk is the index in full (len(full): the open chunk) of place at's
// chunk; past len(full) for a chunk let go of.
func (s *Bytes) chunk(at uint32) int {
	m := ringChunks()
	return (int(at>>bytesShift()) - s.gone%m + m) % m
}

// bytesShift: a chunk is 1<<bytesShift bytes, 16 times a Seq chunk's
// items (2 KB, as a Seq chunk of 16-byte items; 64 bytes while a test
// makes Seq chunks 4 items long, so that small worlds cross chunks and
// write encodings longer than one).
func bytesShift() uint { return seqShift + 4 }

// Append adds b as one encoding and returns its place.
func (s *Bytes) Append(b []byte) uint32 {
	size := 1 << bytesShift()
	if len(s.open)+len(b) > size && len(s.open) > 0 {
		if len(s.full)+1 >= ringChunks() {
			panic("sim: a Bytes is full (4 GB of encodings kept)")
		}
		s.full = append(s.full, s.open)
		// One that filled a chunk fills the next: whole at once.
		s.open = make([]byte, 0, max(size, len(b)))
	}
	at := uint32((s.gone+len(s.full))%ringChunks()<<bytesShift() | len(s.open))
	if need := len(s.open) + len(b); need > cap(s.open) {
		// A young chunk, or one shared with a clone (cut to its length):
		// copied to twice its room (at least 64 bytes), up to a whole
		// chunk, so that a log of a few batches stays small.
		s.open = append(make([]byte, 0, max(min(2*cap(s.open), size), need, 64)), s.open...)
	}
	s.open = append(s.open, b...)
	return at
}

// At is the bytes from place at to the end of its chunk: the encoding
// appended there and those after it in the chunk.
func (s *Bytes) At(at uint32) []byte {
	c, off := s.chunk(at), int(at&(1<<bytesShift()-1))
	switch {
	case c < len(s.full):
		return s.full[c][off:]
	case c > len(s.full):
		panic("sim: a place in a chunk a Bytes let go of")
	}
	return s.open[off:]
}

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
	return Bytes{full: s.full[:len(s.full):len(s.full)], open: s.open[:len(s.open):len(s.open)], gone: s.gone}
}
