package trace

import (
	"sort"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// ErrorsFrom calls f, oldest first, for every packet from ID i on that
// carries an error code, with its type and whether it is an answer. It is
// PacketLog.Headers for a reader that looks only at errors (the explorer,
// after every branch, over the packets the branch sent): it reads the
// compact records and builds no Packet for the others.
//
// In a windowed trace (history.go) the packets let go of are counted too
// when i is before the first kept: each error code they carried, as many
// times, in the order of their types and codes rather than of the packets.
func (l *PacketLog) ErrorsFrom(i int, f func(t wire.API, response bool, e wire.ErrorCode)) {
	if i < l.First() {
		for _, t := range l.recs.gone {
			for range t.n {
				f(wire.APIs[t.api], t.response, wire.ErrorCode(t.err))
			}
		}
	}
	for n, i := l.recs.Len(), max(i, l.First()); i < n; i++ {
		if h, ok := l.recs.errAt(i); ok {
			f(wire.APIs[h.api], h.flags&pkResponse != 0, wire.ErrorCode(h.err))
		}
	}
}

// errTally is how many packets let go of carried one error code: their
// type, direction and code.
type errTally struct {
	api      uint8
	response bool
	err      uint8
	n        int
}

// tallyErrors is gone with the error codes of packets [from, to) added,
// a new list (gone is shared with clones), kept in (type, direction,
// code) order.
func (s *packetRecs) tallyErrors(from, to int) []errTally {
	var add []errTally
	for i := from; i < to; i++ {
		h, ok := s.errAt(i)
		if !ok {
			continue
		}
		t := errTally{api: h.api, response: h.flags&pkResponse != 0, err: h.err, n: 1}
		k := sort.Search(len(add), func(k int) bool { return !add[k].before(t) })
		if k < len(add) && add[k].same(t) {
			add[k].n++
			continue
		}
		add = append(add[:k], append([]errTally{t}, add[k:]...)...)
	}
	if len(add) == 0 {
		return s.gone
	}
	out := append([]errTally(nil), s.gone...)
	for _, t := range add {
		k := sort.Search(len(out), func(k int) bool { return !out[k].before(t) })
		if k < len(out) && out[k].same(t) {
			out[k].n += t.n
			continue
		}
		out = append(out[:k], append([]errTally{t}, out[k:]...)...)
	}
	return out
}

func (t errTally) same(u errTally) bool {
	return t.api == u.api && t.response == u.response && t.err == u.err
}

func (t errTally) before(u errTally) bool {
	if t.api != u.api {
		return t.api < u.api
	}
	if t.response != u.response {
		return !t.response
	}
	return t.err < u.err
}
