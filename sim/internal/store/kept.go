package store

// KeptBytes is about what s holds in memory: its kept chunks' room and
// its spine (a slice header a chunk), itemSize bytes an item: for
// measuring what letting go of the past (ForgetBefore) saves.
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
	n := cap(s.open) + cap(s.full)*24 + s.spare.KeptBytes(1)
	for _, c := range s.full {
		n += cap(c)
	}
	return n
}
