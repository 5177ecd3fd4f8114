package trace

import (
	"weak"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// recSpare is the chunks of a windowed trace's records (its packets' or
// events' Seq) let go of that no copy holds (store.Spare), for its next
// chunks: a T2 roll with -historyms 10000 writes and lets go of about
// 4 MB of event records a restart, each chunk made anew and cleared by
// the runtime. Held weakly, as textArena.pool is: a collection lets the
// chunks go, so it is never memory the trace keeps; a Spare made again
// owns no chunk until the Seq makes one, so it keeps none made before a
// copy. A copy of the records starts without one (their clone).
type recSpare[T any] struct{ p weak.Pointer[store.Spare[T]] }

// append appends v to s, its new chunk, when it starts one past the
// first, taken from the spare.
func (sp *recSpare[T]) append(s *store.Seq[T], v T) {
	if s.Len() == 0 || !s.StartsChunk() {
		s.Append(v)
		return
	}
	p := sp.p.Value()
	if p == nil {
		p = new(store.Spare[T])
		sp.p = weak.Make(p)
	}
	s.AppendSpare(v, p)
}

// forgetBefore is s.ForgetBefore(i), the chunks let go of that no copy
// holds kept in the spare.
func (sp *recSpare[T]) forgetBefore(s *store.Seq[T], i int) {
	if p := sp.p.Value(); p != nil {
		s.ForgetBeforeSpare(i, p)
		return
	}
	s.ForgetBefore(i)
}
