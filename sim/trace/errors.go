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
// kept in (type, direction, code) order. gone is shared with clones, so it
// is copied at the first error found, and only then: a stretch without
// errors hands gone back as it is.
func (s *packetRecs) tallyErrors(from, to int) []errTally {
	out, copied := s.gone, false
	for i := from; i < to; i++ {
		h, ok := s.errAt(i)
		if !ok {
			continue
		}
		if !copied {
			out, copied = append([]errTally(nil), s.gone...), true
		}
		t := errTally{api: h.api, response: h.flags&pkResponse != 0, err: h.err, n: 1}
		k := sort.Search(len(out), func(k int) bool { return !out[k].before(t) })
		if k < len(out) && out[k].same(t) {
			out[k].n++
			continue
		}
		out = append(out, errTally{})
		copy(out[k+1:], out[k:])
		out[k] = t
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
