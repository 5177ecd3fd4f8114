package server

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/javaorder"
)

// intSetOrder's shortcuts give the order javaorder.Order replays for a
// HashSet of Integers: sets below the table's size, up to eight times it
// (several keys a bucket, no tree), past it and past 1<<16 (where HashMap's
// spread mixes the high bits in).
func TestIntSetOrderIsJavas(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 3000; i++ {
		n := 1 + r.Intn(600)
		span := n + r.Intn([]int{2, 8, 20, 200}[i%4]*n+1)
		if i%7 == 0 {
			span += 1 << 16
		}
		set := map[int32]bool{}
		for len(set) < n {
			set[int32(r.Intn(span))] = true
		}
		ps := make([]int32, 0, n)
		for p := range set {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		keys := make([]int, n)
		for j, p := range ps {
			keys[j] = int(p)
		}
		want, wok := javaorder.Order(keys, javaorder.IntegerHash, cmp.Compare[int], javaorder.CollectionCapacity(n))
		got, ok := intSetOrder(ps)
		if ok != wok || len(got) != len(want) {
			t.Fatalf("set %v: ok %v, %d keys; want ok %v, %d keys", ps, ok, len(got), wok, len(want))
		}
		for j := range got {
			if int(got[j]) != want[j] {
				t.Fatalf("set %v:\n got %v\nwant %v", ps, got, want)
			}
		}
	}
}
