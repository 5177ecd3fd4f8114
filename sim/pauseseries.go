package sim

import (
	"sort"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// PauseSeries is the pause meter's running total after each tick (index =
// tick), for charts. The total moves only while a rebalance pauses
// partitions and stays flat the rest of the time, so the series keeps the
// stretches of equal totals (where each starts, and its total), not a number
// per tick: steady traffic adds nothing to it. Len, At and Slice read it as
// the list of totals it stands for. The stretches are a Seq, shared between
// clones chunk by chunk.
type PauseSeries struct {
	n     int                   // totals recorded
	steps store.Seq[pauseSteps] // a stretch per change of the total, oldest first
}

// pauseSteps is a stretch of equal totals: from index at to the next
// stretch's at.
type pauseSteps struct {
	at, total int
}

// Len is the number of totals (ticks recorded).
func (s *PauseSeries) Len() int { return s.n }

// At returns the total after tick i.
func (s *PauseSeries) At(i int) int {
	if i < 0 || i >= s.n {
		panic("sim: pause series index out of range")
	}
	if last := s.steps.Last(); last != nil && last.at <= i {
		return last.total
	}
	k := sort.Search(s.steps.Len(), func(k int) bool { return s.steps.At(k).at > i }) - 1
	return s.steps.At(k).total
}

// Slice copies totals [from, to) into a new slice.
func (s *PauseSeries) Slice(from, to int) []int { return store.SliceOf(from, to, s.At) }

// add records the total after the next tick.
func (s *PauseSeries) add(total int) {
	if last := s.steps.Last(); last == nil || last.total != total {
		s.steps.Append(pauseSteps{at: s.n, total: total})
	}
	s.n++
}

func (s *PauseSeries) clone() PauseSeries {
	return PauseSeries{n: s.n, steps: s.steps.Clone()}
}
