package trace

import (
	"weak"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// weakSpare is the chunks a windowed trace let go of that no copy holds
// (store.Spare), for its next chunks: its packets' and events' records
// (their Seq: a T2 roll with -historyms 10000 writes and lets go of about
// 4 MB of event records a restart, each chunk made anew and cleared by
// the runtime) and its texts' arena (textArena.pool). Held weakly: a
// collection lets the chunks go, so it is never memory the trace keeps; a
// Spare made again owns no chunk until the Seq makes one, so it keeps
// none made before a copy. A copy of the records starts without one
// (their clone).
type weakSpare[T any] struct{ p weak.Pointer[store.Spare[T]] }

// spare is the Spare, made anew if a collection let it go.
func (sp *weakSpare[T]) spare() *store.Spare[T] {
	p := sp.p.Value()
	if p == nil {
		p = new(store.Spare[T])
		sp.p = weak.Make(p)
	}
	return p
}

// appendChunk appends v to s, which it starts a chunk of past the first:
// the chunk taken from the spare when it has one. Only then: the
// other appends stay Seq.Append, one call (the T1 hour's trace appends
// millions of records).
func (sp *weakSpare[T]) appendChunk(s *store.Seq[T], v T) {
	s.AppendSpare(v, sp.spare())
}

// forgetBefore is s.ForgetBefore(i), the chunks let go of that no copy
// holds kept in the spare.
func (sp *weakSpare[T]) forgetBefore(s *store.Seq[T], i int) {
	if p := sp.p.Value(); p != nil {
		s.ForgetBeforeSpare(i, p)
		return
	}
	s.ForgetBefore(i)
}
