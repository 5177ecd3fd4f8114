package trace

import (
	"strconv"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Reading the tokens of partition lists and positions (parts.go writes
// them): {o0 o1 p0} and o0@3 o1@5, plain, as runs, and in a fetch's
// rotated order.

// offsets reads a tOffsets token: o0@3 o1@5.
func (r *textReader) offsets(out []byte) ([]byte, bool) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return out, false
	}
	v := int64(0)
	for i := uint64(0); i < n; i++ {
		tp, ok := r.tp()
		d, ok2 := r.varint()
		if !ok || !ok2 {
			return out, false
		}
		v += d
		if i > 0 {
			out = append(out, ' ')
		}
		out = appendPosition(r.tx.layout, out, tp, v)
	}
	return out, true
}

// offsetsRot reads a tOffsetsRot token: the positions of the tOffsets
// token it refers back to, from the k-th on and then from the first.
func (r *textReader) offsetsRot(out []byte) ([]byte, bool) {
	d, ok := r.uvarint()
	k, ok2 := r.uvarint()
	at, ok3 := r.back(d)
	if !ok || !ok2 || !ok3 {
		return out, false
	}
	var buf [maxRotation]offsetEntry
	ents, ok := offsetEntries(buf[:0], r.tx.arena.bytes(at))
	if !ok || k >= uint64(len(ents)) {
		return out, false
	}
	return r.appendRotated(out, ents, int(k))
}

// appendRotated spells positions from the k-th on and then from the
// first (a fetch's rotated order): o1@4 o2@0 o0@3.
func (r *textReader) appendRotated(out []byte, ents []offsetEntry, k int) ([]byte, bool) {
	for i := range ents {
		e := ents[(k+i)%len(ents)]
		tp, _, ok := r.tx.layout.Numbered(e.tp)
		if !ok {
			return out, false
		}
		if i > 0 {
			out = append(out, ' ')
		}
		out = appendPosition(r.tx.layout, out, tp, e.off)
	}
	return out, true
}

// appendPosition is one committed position: o0@3.
func appendPosition(l *topo.Layout, out []byte, tp wire.TopicPartition, off int64) []byte {
	out = append(l.AppendShortName(out, tp), '@')
	return strconv.AppendInt(out, off, 10)
}

// partList reads a tPartList token: {o0 o1 p0}.
func (r *textReader) partList(out []byte) ([]byte, bool) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return out, false
	}
	out = append(out, '{')
	for i := uint64(0); i < n; i++ {
		tp, ok := r.tp()
		if !ok {
			return out, false
		}
		if i > 0 {
			out = append(out, ' ')
		}
		out = r.tx.layout.AppendShortName(out, tp)
	}
	return append(out, '}'), true
}

// partRuns reads a tPartRuns token: {o0 o1 p0}, as tPartList.
func (r *textReader) partRuns(out []byte) ([]byte, bool) {
	out = append(out, '{')
	first := true
	ok := r.runs(func(i uint64) bool {
		tp, _, ok := r.tx.layout.Numbered(i)
		if !ok {
			return false
		}
		if !first {
			out = append(out, ' ')
		}
		first = false
		out = r.tx.layout.AppendShortName(out, tp)
		return true
	})
	return append(out, '}'), ok
}

// offsetsRuns reads a tOffsetsRuns token: o0@3 o1@5, as tOffsets.
func (r *textReader) offsetsRuns(out []byte) ([]byte, bool) {
	first, v := true, int64(0)
	ok := r.runs(func(i uint64) bool {
		tp, _, ok := r.tx.layout.Numbered(i)
		d, ok2 := r.varint()
		if !ok || !ok2 {
			return false
		}
		v += d
		if !first {
			out = append(out, ' ')
		}
		first = false
		out = appendPosition(r.tx.layout, out, tp, v)
		return true
	})
	return out, ok
}

// offsetsRunsRot reads a tOffsetsRunsRot token: the positions of its
// tOffsetsRuns arguments from the k-th on, then from the first.
func (r *textReader) offsetsRunsRot(out []byte) ([]byte, bool) {
	k, ok := r.uvarint()
	if !ok {
		return out, false
	}
	var buf [128]offsetEntry
	ents, v := buf[:0], int64(0)
	ok = r.runs(func(i uint64) bool {
		d, ok := r.varint()
		if !ok {
			return false
		}
		v += d
		ents = append(ents, offsetEntry{tp: i, off: v})
		return true
	})
	if !ok || k >= uint64(len(ents)) {
		return out, false
	}
	return r.appendRotated(out, ents, int(k))
}

// runs reads the runs of a tPartRuns or tOffsetsRuns token, calling f
// with each partition's number in turn (f reads what follows each, if
// anything); false when they do not parse or f says so.
func (r *textReader) runs(f func(i uint64) bool) bool {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return false
	}
	end := uint64(0)
	for range n {
		g, ok := r.uvarint()
		l, ok2 := r.uvarint()
		if !ok || !ok2 || g > 1<<40 || l > 1<<40 {
			return false
		}
		for i := end + g; i <= end+g+l; i++ {
			if !f(i) {
				return false
			}
		}
		end += g + l + 1
	}
	return true
}

// offsetEntry is one position of a tOffsets token: its partition's number
// (tpIndex) and its offset.
type offsetEntry struct {
	tp  uint64
	off int64
}

// offsetEntries appends to ents the positions of the tOffsets token b
// begins with, its partitions by number; false when b is not one or does
// not parse.
func offsetEntries(ents []offsetEntry, b []byte) ([]offsetEntry, bool) {
	if firstByte(b) != tOffsets {
		return ents, false
	}
	r := textReader{b: b[1:]}
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return ents, false
	}
	v := int64(0)
	for i := uint64(0); i < n; i++ {
		tp, ok := r.uvarint()
		d, ok2 := r.varint()
		if !ok || !ok2 {
			return ents, false
		}
		v += d
		ents = append(ents, offsetEntry{tp: tp, off: v})
	}
	return ents, true
}
