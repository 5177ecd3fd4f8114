package trace

import "github.com/kgrepl/kgrepl/sim/wire"

// ErrorsFrom calls f, oldest first, for every packet from ID i on that
// carries an error code, with its type and whether it is an answer. It is
// PacketLog.Headers for a reader that looks only at errors (the explorer,
// after every branch, over the packets the branch sent): it reads the
// compact records and builds no Packet for the others.
func (l *PacketLog) ErrorsFrom(i int, f func(t wire.API, response bool, e wire.ErrorCode)) {
	for n, i := l.recs.Len(), max(i, l.First()); i < n; i++ {
		if h, ok := l.recs.errAt(i); ok {
			f(wire.APIs[h.api], h.flags&pkResponse != 0, wire.ErrorCode(h.err))
		}
	}
}
