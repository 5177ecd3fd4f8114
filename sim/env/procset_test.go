package env

import (
	"math/rand"
	"slices"
	"testing"
)

// TestProcSetMatchesMap: procSet gives the same answers as a
// map[*process]bool, under random adds, removes, unions and
// clears, and lists its members in process-number order; a clone is
// independent of its source.
func TestProcSetMatchesMap(t *testing.T) {
	type proc struct{ proc int }
	procs := make([]*proc, 300)
	for i := range procs {
		procs[i] = &proc{proc: i}
	}
	rng := rand.New(rand.NewSource(13))
	for round := 0; round < 200; round++ {
		var s, o procSet
		ms, mo := map[*proc]bool{}, map[*proc]bool{}
		n := 1 + rng.Intn(len(procs)) // how many processes exist in this round
		for op := 0; op < 500; op++ {
			m := procs[rng.Intn(n)]
			switch k := rng.Intn(20); {
			case k < 9:
				s.add(m.proc)
				ms[m] = true
			case k < 14:
				s.remove(m.proc)
				delete(ms, m)
			case k < 18:
				o.add(m.proc)
				mo[m] = true
			case k < 19:
				s.addAll(&o)
				for x := range mo {
					ms[x] = true
				}
				o.clear()
				clear(mo)
			default:
				c := s.clone()
				c.add(procs[0].proc)
				c.remove(procs[1].proc)
				if s.has(0) != ms[procs[0]] || s.has(1) != ms[procs[1]] {
					t.Fatalf("round %d op %d: changing a clone changed its source", round, op)
				}
			}
			if s.len() != len(ms) {
				t.Fatalf("round %d op %d: len %d, map %d", round, op, s.len(), len(ms))
			}
			if x := procs[rng.Intn(len(procs))]; s.has(x.proc) != ms[x] {
				t.Fatalf("round %d op %d: has(%d) %v, map %v", round, op, x.proc, s.has(x.proc), ms[x])
			}
		}
		var got []int
		for _, m := range appendProcs(&s, nil, procs) {
			got = append(got, m.proc)
		}
		var want []int
		for m := range ms {
			want = append(want, m.proc)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: members %v, map %v", round, got, want)
		}
		s.clear()
		if s.len() != 0 || len(appendProcs(&s, nil, procs)) != 0 {
			t.Fatalf("round %d: not empty after clear", round)
		}
	}
}
