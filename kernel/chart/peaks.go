package chart

import (
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim"
)

// LagTop is how many partitions a lag chart of more partitions than its
// palette has colours draws beside their total: those whose lag peaked
// highest (TopPeaks).
var LagTop = len(partitionColors) - 1

// Peaks is the first of two replays of a lag chart too big to record whole
// (a real group's thousand partitions over a long run): it keeps each
// partition's highest lag in the window, not its lag at every tick, so
// that the second replay records only the partitions the chart draws
// (Top) and their total (Recorder.LagTotal), a few numbers a tick. The
// chart is the one recording every partition would draw.
type Peaks struct {
	only     []int // the input partitions the chart is of; nil: all
	from, to int   // the window (to < 0: to the end)
	peak     []int
	// last holds the lags of the last tick seen, folded into peak only
	// when a later tick comes or at Top: commands between ticks change
	// what a tick ends with, and a recorder keeps a tick's last frame.
	last     []int
	lastTick int
}

// NewPeaks starts the first replay of a lag chart of the input partitions
// at only (nil: all) over the ticks from to to (to <= 0: to the end, as
// Window).
func NewPeaks(only []int, from, to int) *Peaks {
	if to <= 0 {
		to = -1
	}
	return &Peaks{only: slices.Clone(only), from: from, to: to, lastTick: -1}
}

// Visit reads each partition's lag now.
func (p *Peaks) Visit(w *sim.World) {
	if !inWindow(w.Tick, p.from, p.to) {
		return
	}
	if p.last != nil && w.Tick != p.lastTick {
		p.fold()
	}
	p.last = w.InputLags(p.last, p.only)
	p.lastTick = w.Tick
}

func (p *Peaks) fold() {
	if p.peak == nil {
		p.peak = make([]int, len(p.last))
	}
	for i, v := range p.last {
		p.peak[i] = max(p.peak[i], v)
	}
}

// Top visits the world as it is now (commands after the last tick change
// it, as Recorder.Finish) and returns the input partitions the chart
// draws beside the total: TopPeaks of the peaks, as indexes among the
// world's inputs, in their order.
func (p *Peaks) Top(now *sim.World) []int {
	p.Visit(now)
	if p.last != nil {
		p.fold()
	}
	n := len(onlyOf(now.Layout().Inputs(), p.only))
	peak := make([]int, n)
	copy(peak, p.peak) // no tick in the window: every peak 0, as an empty run's
	top := TopPeaks(peak, LagTop)
	if p.only != nil {
		for j, i := range top {
			top[j] = p.only[i]
		}
	}
	return top
}

// TopPeaks is the n partitions with the highest peak (the first in the
// world's order among equals), as indexes into peak, in ascending order.
func TopPeaks(peak []int, n int) []int {
	order := make([]int, len(peak))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return peak[order[a]] > peak[order[b]] })
	order = order[:min(n, len(order))]
	sort.Ints(order)
	return order
}
