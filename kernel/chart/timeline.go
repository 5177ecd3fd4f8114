package chart

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	kdraw "github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/sim"
)

// Timeline is a partition × tick chart of who consumes each partition:
// a bar in the owner's colour, a grey while nobody could consume it (one
// grey per cause of unavailability: the greys are what `metrics` counts),
// and a thin red-edged bar under it while a zombie processes one of its
// records.
//
// A world of more than MaxTimelineRows partitions draws the first of them
// (34 pixels a row: 2,000 partitions made a picture 68,150 pixels high)
// and says so in its legend; the kernel's --partitions picks others. A
// run recorded for those rows alone (Run.OfPartitions) draws the same.
func Timeline(opt Options, r *Run) *Chart {
	all := max(len(r.Partitions), r.OfPartitions)
	if len(r.Partitions) > MaxTimelineRows {
		first := make([]int, MaxTimelineRows)
		for i := range first {
			first[i] = i
		}
		r = r.Only(first)
	}
	p := newPlot("Who consumes which partition ("+r.Name+", "+r.Assignor+")", "tick", "partition")
	n := len(r.Partitions)
	c := newChart(p, opt, chartW, max(300, 150+34*n))
	// The first partition on top.
	names := make([]string, n)
	for i, name := range r.Partitions {
		names[n-1-i] = name
	}
	if n > 0 {
		p.NominalY(names...)
	}
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	// gonum draws nominal tick labels with no gap to the axis's line; a
	// left margin keeps the first letter on the canvas.
	p.Y.Padding = vg.Points(4)
	// The rebalance bands go under the bars, the bars show through them.
	m := &marks{bands: rebalanceMarks(r, kdraw.Broker, 0), lines: crashMarks(r, 0)}
	p.Add(m, &timeline{run: r})
	p.X.Min, p.X.Max = firstTick(r), lastTick(r)
	p.Y.Min = -0.6
	c.marks, c.yLo, c.yHi, c.nominal = m, -0.6, float64(n)-0.4, true
	for _, cl := range r.Clients {
		c.add(cl, clientThumb(cl))
	}
	var causes [len(causeGreys)]bool
	zombie := false
	for _, f := range r.Frames {
		for _, o := range f.Owners {
			causes[o.Cause] = true
			zombie = zombie || o.Zombie != ""
		}
	}
	for _, cause := range sim.Causes {
		if causes[cause] {
			c.add(CauseLegend(cause), box{fill: causeGreys[cause]})
		}
	}
	if zombie {
		c.add("zombie processing", box{fill: kdraw.Zombie, low: true})
	}
	if len(m.bands) > 0 {
		c.add("rebalance", band{col: kdraw.Broker})
	}
	if all > n {
		c.add(fmt.Sprintf("the first %d of %d partitions (--partitions picks others)", n, all))
	}
	return c
}

// MaxTimelineRows is the most partitions a timeline draws, a row each.
const MaxTimelineRows = 100

// causeGreys are the timeline's greys, by cause of unavailability: the
// rebalance pause is the pause meter's grey, the others darker as the
// cause is worse (a member stopped for good darkest).
var causeGreys = [...]color.Color{
	sim.Available:       color.Transparent,
	sim.CauseRebalance:  kdraw.Paused,
	sim.CauseUnassigned: color.RGBA{0xDD, 0xDD, 0xDD, 0xff},
	sim.CauseOwnerDown:  color.RGBA{0x8A, 0x8A, 0x8A, 0xff},
	sim.CauseStopped:    color.RGBA{0x4A, 0x4A, 0x4A, 0xff},
}

// CauseLegend names a cause of unavailability on charts.
func CauseLegend(c sim.Cause) string {
	switch c {
	case sim.CauseRebalance:
		return "paused (rebalance)"
	case sim.CauseOwnerDown:
		return "owner down"
	case sim.CauseUnassigned:
		return "unassigned"
	case sim.CauseStopped:
		return "owner stopped (fatal error)"
	}
	return ""
}

type timeline struct{ run *Run }

// span is one stretch of ticks with the same state on one partition.
type span struct {
	from, to float64
	owner    string
	cause    sim.Cause
}

func (t *timeline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	r := t.run
	n := len(r.Partitions)
	end := lastTick(r)
	rect := func(x0, x1, y0, y1 vg.Length, col color.Color) {
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(col, c.ClipPolygonXY(pts))
	}
	for i := 0; i < n; i++ {
		row := float64(n - 1 - i)
		y0, y1 := trY(row-0.32), trY(row+0.32)
		for _, s := range spans(r, i, end, func(o Ownership) (string, sim.Cause) { return o.Owner, o.Cause }) {
			switch {
			case s.cause != sim.Available:
				rect(trX(s.from), trX(s.to), y0, y1, causeGreys[s.cause])
			case s.owner != "":
				rect(trX(s.from), trX(s.to), y0, y1, kdraw.ClientColor(s.owner))
			}
		}
		zy0, zy1 := trY(row-0.45), trY(row-0.34)
		for _, s := range spans(r, i, end, func(o Ownership) (string, sim.Cause) { return o.Zombie, sim.Available }) {
			if s.owner == "" {
				continue
			}
			rect(trX(s.from), trX(s.to), zy0, zy1, kdraw.ClientColor(s.owner))
			c.StrokeLine2(draw.LineStyle{Color: kdraw.Zombie, Width: vg.Points(1.5)}, trX(s.from), zy0, trX(s.to), zy0)
		}
	}
}

// spans runs partition i's frames together while the key stays the same.
func spans(r *Run, i int, end float64, key func(Ownership) (string, sim.Cause)) []span {
	var out []span
	for k, f := range r.Frames {
		if i >= len(f.Owners) {
			continue
		}
		owner, cause := key(f.Owners[i])
		if cause != sim.Available {
			owner = "" // an unavailable stretch is one grey bar, whoever owned it
		}
		from := float64(f.Tick)
		to := end
		if k+1 < len(r.Frames) {
			to = float64(r.Frames[k+1].Tick)
		}
		if l := len(out); l > 0 && out[l-1].owner == owner && out[l-1].cause == cause && out[l-1].to == from {
			out[l-1].to = to
			continue
		}
		out = append(out, span{from: from, to: to, owner: owner, cause: cause})
	}
	return out
}

// DataRange makes the plot span every partition and every tick.
func (t *timeline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return firstTick(t.run), lastTick(t.run), -0.5, float64(len(t.run.Partitions)) - 0.5
}
