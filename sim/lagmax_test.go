package sim

import (
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/broker"
)

// TestLagMaxHeaps: whether settle fixes a heap a partition at a time or
// builds them all again (rebuild), every group's heap is a heap of its
// partitions (pos in step) and most is the most of every partition's lag
// (the first partition among equals), checked against every partition's,
// over random keys, groups and changes. The random worlds of
// TestMostLagFollowsSteadyProduction rarely have two partitions at one
// rate: they do not tell a heap from a list.
func TestLagMaxHeaps(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	for round := 0; round < 200; round++ {
		n := 1 + r.Intn(300)
		m := &lagMax{key: make([]int64, n), grp: make([]int32, n), pos: make([]int32, n), marked: make([]bool, n),
			groups: []lagGroup{{}, {rate: broker.Rate{Records: 1, Ticks: 3}, since: 2}, {rate: broker.Rate{Records: 2, Ticks: 1}, since: 5}}}
		for i := range n {
			m.key[i], m.grp[i] = int64(r.Intn(20)), int32(r.Intn(len(m.groups)))
		}
		m.rebuild()
		check := func(how string) {
			for g := range m.groups {
				h := m.groups[g].heap
				for x, i := range h {
					if m.grp[i] != int32(g) || int(m.pos[i]) != x {
						t.Fatalf("round %d, %s: partition %d at %d of group %d: its group %d, its place %d", round, how, i, x, g, m.grp[i], m.pos[i])
					}
					if x > 0 && m.before(i, h[(x-1)/2]) {
						t.Fatalf("round %d, %s: group %d is not a heap at %d", round, how, g, x)
					}
				}
			}
			for _, at := range []int{5, 40} {
				var want int64
				wantAt := int32(-1)
				for i := range n {
					v := m.key[i]
					if gr := m.groups[m.grp[i]]; m.grp[i] > 0 {
						v += gr.rate.Due(at - gr.since)
					}
					if wantAt < 0 || v > want {
						want, wantAt = v, int32(i)
					}
				}
				if lag, i, ok := m.most(at); !ok || lag != want || i != wantAt {
					t.Fatalf("round %d, %s: most at %d is %d on %d, every partition's %d on %d", round, how, at, lag, i, want, wantAt)
				}
			}
		}
		check("rebuilt")
		// Some keys move, some partitions change group, fixed one at a
		// time as settle does below settleRebuild.
		for range 1 + r.Intn(20) {
			m.set(int32(r.Intn(n)), int64(r.Intn(20)), int32(r.Intn(len(m.groups))))
		}
		check("fixed")
	}
}
