package env

import (
	"math/rand"
	"sort"
	"strconv"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// The timer heap (moving a hole, not swapping) pops in (at, seq) order over
// random interleavings of pushes and pops, with many timers due at the
// same tick, and so does a clone of it, the original left as it was.
func TestPropertyTimerQueueOrder(t *testing.T) {
	for seed := int64(0); seed < 100; seed++ {
		r := rand.New(rand.NewSource(seed))
		var q Timers
		var ref []wire.Timer // what is in q, kept sorted by (at, seq)
		for i := 0; i < 400; i++ {
			if r.Intn(30) == 0 { // go on with a clone; the original still pops the same
				c := q.Clone()
				for k := range ref {
					if got := q.Pop(); got.Seq != ref[k].Seq || got.Member != ref[k].Member {
						t.Fatalf("seed %d, step %d: the cloned queue popped seq %d, want %d", seed, i, got.Seq, ref[k].Seq)
					}
				}
				q = c
			}
			if r.Intn(3) > 0 || len(ref) == 0 {
				q.seq++
				tm := wire.Timer{At: r.Intn(20), Seq: q.seq, Member: strconv.Itoa(i)}
				q.Push(tm)
				j := sort.Search(len(ref), func(j int) bool { return timerLess(&tm, &ref[j]) })
				ref = append(ref[:j], append([]wire.Timer{tm}, ref[j:]...)...)
				continue
			}
			got := q.Pop()
			if got.Seq != ref[0].Seq || got.Member != ref[0].Member {
				t.Fatalf("seed %d, step %d: popped (at %d, seq %d), want (at %d, seq %d)", seed, i, got.At, got.Seq, ref[0].At, ref[0].Seq)
			}
			ref = ref[1:]
			if q.Len() != len(ref) {
				t.Fatalf("seed %d: %d timers queued, want %d", seed, q.Len(), len(ref))
			}
		}
	}
}

// timerLess orders timers as the queue does (keyLess): by due tick, then
// by the order they were set; the model queue above keeps this order.
func timerLess(a, b *wire.Timer) bool {
	return KeyLess(a.At, a.Seq, b.At, b.Seq)
}
