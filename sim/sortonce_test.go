package sim

import (
	"math/rand"
	"slices"
	"testing"
)

// sortOnce is slices.Sort then slices.Compact, over journals of every
// size and spread (close numbers read through the bitset, far ones
// sorted), with its bitset left all zero for the next call.
func TestSortOnceSortsAndDropsRepeats(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	var seen []uint64
	for round := 0; round < 3000; round++ {
		n := 1 + r.Intn(200000)
		k := r.Intn(400)
		at, span := r.Intn(n), 1+r.Intn(n)
		l := make([]int32, k)
		for j := range l {
			l[j] = int32((at + r.Intn(span)) % n)
			if j > 0 && r.Intn(4) == 0 {
				l[j] = l[r.Intn(j)] // a partition written twice in a tick
			}
		}
		want := slices.Compact(slices.Sorted(slices.Values(l)))
		got := sortOnce(slices.Clone(l), &seen)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: sortOnce(%v) = %v, want %v", round, l, got, want)
		}
		for w, x := range seen {
			if x != 0 {
				t.Fatalf("round %d: word %d of the bitset left %#x", round, w, x)
			}
		}
	}
}
