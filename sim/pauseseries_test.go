package sim

import (
	"math/rand"
	"slices"
	"testing"
)

// TestPauseSeriesMatchesAList: a family of series, cloned from each other
// at random moments, each fed totals that stay flat for a while and then
// climb (as during a rebalance), reads back as the plain list of totals,
// and keeps a stretch per change, not a number per tick.
func TestPauseSeriesMatchesAList(t *testing.T) {
	setSeqChunk(t, 4)
	r := rand.New(rand.NewSource(3))
	type pair struct {
		s     PauseSeries
		model []int
	}
	fam := []*pair{{}}
	for step := 0; step < 5000; step++ {
		p := fam[r.Intn(len(fam))]
		if r.Intn(30) == 0 && len(fam) < 20 {
			fam = append(fam, &pair{s: p.s.clone(), model: slices.Clone(p.model)})
			continue
		}
		total := 0
		if n := len(p.model); n > 0 {
			total = p.model[n-1]
		}
		if r.Intn(8) == 0 {
			total += r.Intn(6)
		}
		p.s.add(total)
		p.model = append(p.model, total)
	}
	for j, q := range fam {
		if q.s.Len() != len(q.model) || !slices.Equal(q.s.Slice(0, q.s.Len()), q.model) {
			t.Fatalf("series %d: %v, want %v", j, q.s.Slice(0, q.s.Len()), q.model)
		}
		for i := range q.model {
			if q.s.At(i) != q.model[i] {
				t.Fatalf("series %d: At(%d) = %d, want %d", j, i, q.s.At(i), q.model[i])
			}
		}
		changes := 1
		for i := 1; i < len(q.model); i++ {
			if q.model[i] != q.model[i-1] {
				changes++
			}
		}
		if len(q.model) > 0 && q.s.steps.Len() != changes {
			t.Fatalf("series %d: %d stretches for %d changes", j, q.s.steps.Len(), changes)
		}
	}
}
