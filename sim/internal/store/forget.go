package store

// Letting go of the past (issue 26: a world keeps a window of its history
// in detail): a Seq or a Bytes drops whole chunks from its start, its
// indexes staying what they were. A chunk is only ever dropped from this
// list's spine (made anew without it: clones share the old one), never
// changed, so a clone that holds it keeps it, and it is freed once no
// world does; the new spine holds only the chunks kept, so a list that
// lets go of its past as it grows stays as long as what it keeps.

// First is the index of the first item still kept: 0 until ForgetBefore
// let go of a chunk.
func (s *Seq[T]) First() int { return int(s.gone) * seqChunk }

// ForgetBefore lets go of the full chunks whose items all lie below index
// i (never the open chunk: the newest item stays, Last). At, Update and
// the iterators must then not be asked for an item below First.
func (s *Seq[T]) ForgetBefore(i int) {
	drop := min(i>>seqShift-int(s.gone), len(s.full))
	if drop <= 0 {
		return
	}
	s.full = append(make([][]T, 0, 2*(len(s.full)-drop)+1), s.full[drop:]...) // the spine is shared with clones
	s.gone += int32(drop)
}

// ForgetBefore lets go of the full chunks before the one place at is in
// (never the open chunk): At must then not be asked for a place in them.
func (s *Bytes) ForgetBefore(at uint32) {
	drop := min(s.chunk(at), len(s.full))
	if drop <= 0 {
		return
	}
	s.full = append(make([][]byte, 0, 2*(len(s.full)-drop)+1), s.full[drop:]...)
	s.gone += drop
}

// KeptBytes is about what s holds in memory: its kept chunks' room and
// its spine (a slice header a chunk, let go of or not), itemSize bytes
// an item.
func (s *Seq[T]) KeptBytes(itemSize int) int {
	n := cap(s.open)*itemSize + cap(s.full)*24
	for _, c := range s.full {
		n += cap(c) * itemSize
	}
	return n
}

// KeptBytes is about what s holds in memory: its kept chunks' room and
// its spine.
func (s *Bytes) KeptBytes() int {
	n := cap(s.open) + cap(s.full)*24
	for _, c := range s.full {
		n += cap(c)
	}
	return n
}
