package chart

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kgrepl/kgrepl/sim"
)

// Unavailable is the unavailability tick by tick: how many subscribed
// partitions nobody could consume in each tick, stacked by cause in the
// timeline's greys (the rebalance pause, which is the pause meter's, at
// the bottom), with the rebalances as bands and crashes as lines. The
// legend gives each cause's partition-ticks over the ticks shown.
func Unavailable(opt Options, r *Run) *Chart {
	total, by := unavailableIn(r)
	// In real time the totals read as partition × seconds (the y axis
	// counts partitions in either clock; the x axis turns to time in Build).
	amount := fmt.Sprintf("%d partition × ticks", total)
	if opt.Clock.Real() {
		amount = opt.Clock.Seconds(total) + " (partition × seconds)"
	}
	p := newPlot(fmt.Sprintf("Unavailability by cause: %s nobody could consume (%s)", amount, r.Name),
		"tick", "partitions unavailable")
	c := newChart(p, opt, chartW, chartH)
	s := &stack{run: r}
	for _, cause := range sim.Causes {
		if by[cause] > 0 {
			c.add(fmt.Sprintf("%s: %s", CauseLegend(cause), opt.Clock.Seconds(by[cause])), box{fill: causeGreys[cause], outline: stackEdge})
		}
	}
	m := &marks{bands: rebalanceMarks(r, branchColor(0), 0), lines: crashMarks(r, 0)}
	addBandLegend(c, []*Run{r}, "rebalance")
	// The bands under the columns, so the greys are the timeline's.
	p.Add(m, s)
	p.X.Min, p.X.Max = firstTick(r), lastTick(r)
	_, _, _, ymax := s.DataRange()
	c.marks, c.yLo, c.yHi = m, 0, max(ymax, 1)
	return c
}

// unavailableIn adds up the partition-ticks of each cause in a run's
// frames (each frame is the tick it was sampled at).
func unavailableIn(r *Run) (int, sim.CauseCounts) {
	var by sim.CauseCounts
	total := 0
	for _, f := range r.Frames {
		for _, c := range sim.Causes {
			by[c] += f.UnavailableNow[c]
			total += f.UnavailableNow[c]
		}
	}
	return total, by
}

// stackEdge outlines each cause's stretch, so neighbouring greys stay apart.
var stackEdge = color.RGBA{0x55, 0x55, 0x55, 0xff}

// stack draws each frame's unavailable partitions as a column one tick
// wide, a block per cause.
type stack struct{ run *Run }

func (s *stack) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	cols := s.columns()
	for _, col := range cols {
		y := 0.0
		for _, cause := range sim.Causes {
			n := float64(col.n[cause])
			if n == 0 {
				continue
			}
			x0, x1, y0, y1 := trX(col.from), trX(col.to), trY(y), trY(y+n)
			pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			c.FillPolygon(causeGreys[cause], c.ClipPolygonXY(pts))
			y += n
		}
	}
	// Each cause's top as steps over the columns, so neighbouring greys
	// stay apart.
	for i := range sim.Causes {
		var pts []vg.Point
		for _, col := range cols {
			y := 0.0
			for _, cause := range sim.Causes[:i+1] {
				y += float64(col.n[cause])
			}
			pts = append(pts, vg.Point{X: trX(col.from), Y: trY(y)}, vg.Point{X: trX(col.to), Y: trY(y)})
		}
		if len(pts) > 0 {
			c.StrokeLines(draw.LineStyle{Color: stackEdge, Width: vg.Points(0.6)}, c.ClipLinesXY(pts)...)
		}
	}
}

// column is a stretch of ticks with the same unavailable partitions by cause.
type column struct {
	from, to float64
	n        sim.CauseCounts
}

// columns runs the frames together while their counts stay the same: one
// rectangle per stretch, no seams between ticks.
func (s *stack) columns() []column {
	r := s.run
	end := lastTick(r)
	var out []column
	for k, f := range r.Frames {
		from, to := float64(f.Tick), end
		if k+1 < len(r.Frames) {
			to = float64(r.Frames[k+1].Tick)
		}
		n := f.UnavailableNow
		n[sim.Available] = 0
		if l := len(out); l > 0 && out[l-1].n == n && out[l-1].to == from {
			out[l-1].to = to
			continue
		}
		out = append(out, column{from: from, to: to, n: n})
	}
	return out
}

// DataRange spans every tick and the tallest column.
func (s *stack) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, f := range s.run.Frames {
		n := 0
		for _, c := range sim.Causes {
			n += f.UnavailableNow[c]
		}
		ymax = max(ymax, float64(n))
	}
	return firstTick(s.run), lastTick(s.run), 0, ymax
}
