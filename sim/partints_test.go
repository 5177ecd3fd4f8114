package sim

import (
	"fmt"
	"math/rand"
	"testing"
)

// partInts answers as map[TopicPartition]int over random gets, sets,
// deletes, resets and clones, across the slice and the map (more than
// partIntsFew partitions), and spells itself as fmt spells the map.
func TestPropertyPartIntsAsMap(t *testing.T) {
	for seed := int64(0); seed < 60; seed++ {
		r := rand.New(rand.NewSource(seed))
		parts := 3 + r.Intn(2*partIntsFew)
		var p partInts
		ref := map[TopicPartition]int{}
		var frozen []partInts // clones, each with the map it must still be
		var frozenRef []map[TopicPartition]int
		for i := 0; i < 600; i++ {
			tp := TopicPartition{Topic: []string{"orders", "payments", "x"}[r.Intn(3)], Partition: r.Intn(parts)}
			switch op := r.Intn(20); {
			case op < 8:
				v := r.Intn(1000)
				p.set(tp, v)
				ref[tp] = v
			case op < 12:
				p.del(tp)
				delete(ref, tp)
			case op == 12:
				p.reset()
				ref = map[TopicPartition]int{}
			case op == 13:
				frozen = append(frozen, p.clone())
				frozenRef = append(frozenRef, cpMap(ref))
			}
			got, ok := p.get(tp)
			want, wok := ref[tp]
			if got != want || ok != wok || p.at(tp) != want || p.len() != len(ref) {
				t.Fatalf("seed %d, op %d: get(%v) = %d %v (len %d), want %d %v (len %d)", seed, i, tp, got, ok, p.len(), want, wok, len(ref))
			}
			if i%50 == 0 {
				if a, b := p.String(), fmt.Sprint(ref); a != b {
					t.Fatalf("seed %d: spelled %s, the map %s", seed, a, b)
				}
			}
		}
		for j := range frozen {
			if a, b := frozen[j].String(), fmt.Sprint(frozenRef[j]); a != b {
				t.Fatalf("seed %d: clone %d changed: %s, want %s", seed, j, a, b)
			}
		}
	}
}
