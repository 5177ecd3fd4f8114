package trace

import (
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
)

// TestNextNotInAsKindAt: from each event, NextNotIn finds the next event
// whose kind (KindAt's; a stop event's too) is not in a random set, over
// more than a chunk of events.
func TestNextNotInAsKindAt(t *testing.T) {
	now := 0
	tr := newTestTrace(t, topo.Default(), &now, nil)
	r := rand.New(rand.NewSource(1))
	for i := range 400 { // past a chunk of events, runs of kinds within one
		now = i / 3
		k := eventKinds[r.Intn(len(eventKinds))]
		if i%7 != 0 {
			k = eventKinds[r.Intn(3)]
		}
		if r.Intn(20) == 0 {
			tr.StopEventf(k, "C1", "stop")
		} else {
			tr.Event(k, "C1", "x")
		}
	}
	for range 200 {
		var ks []EventKind
		in := map[EventKind]bool{}
		for _, k := range eventKinds {
			if r.Intn(3) == 0 {
				ks, in[k] = append(ks, k), true
			}
		}
		s := KindSetOf(ks...)
		for i := range tr.Events.Len() {
			want := i
			for want < tr.Events.Len() && in[tr.Events.KindAt(want)] {
				want++
			}
			if got := tr.Events.NextNotIn(i, s); got != want {
				t.Fatalf("next event from %d not in %v: %d, want %d", i, ks, got, want)
			}
		}
	}
}
