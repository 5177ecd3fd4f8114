// marks.go: what a chart marks over its data: a run's rebalances as bands,
// its marks (a crash, a poll timeout) as dotted lines, their labels laid out
// in rows that never overlap; chart.go draws the chart and its legend.

package chart

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kgrepl/kgrepl/sim"

	kdraw "github.com/kgrepl/kgrepl/kernel/draw"
)

// marks draws the rebalances as bands with their generation on top, and
// crashes as dotted lines, with labels placed in rows so they never overlap.
// With several branches (lanes), each branch has rows of its own, and a
// rebalance is a strip in its branch's colour in those rows with a dashed
// line down through the data: full-height bands of two colours would mix.
type marks struct {
	bands []bandMark
	lines []lineMark
	lanes bool
	bare  bool // no labels, thin rows: the chart is too small for them
	// The layout, made by layout before the plot is drawn.
	placed []placedLabel
}

// rowHeight is the height of a row of labels (or of bare strips), in points.
func (m *marks) rowHeight() float64 {
	if m.bare {
		return 5
	}
	return labelRowH
}

type bandMark struct {
	from, to float64
	label    string
	col      color.Color
	lane     int
}

type lineMark struct {
	at    float64
	label string
	col   color.Color
	lane  int
}

type placedLabel struct {
	x   vg.Length // where the text starts
	row int
}

var labelStyle = text.Style{Font: font.From(sans, 9), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}

const labelRowH = 12 // points per label row

// layout places every label (bands first, then lines) in the first row of
// its lane where it fits, and returns the number of rows.
func (m *marks) layout(trX func(float64) vg.Length, left, right vg.Length) int {
	type item struct {
		x0, x1 vg.Length // the strip or line
		w      vg.Length // the label's width
		lane   int
	}
	var items []item
	width := func(s string) vg.Length {
		if m.bare {
			return 0
		}
		return labelStyle.Width(s)
	}
	for _, b := range m.bands {
		items = append(items, item{x0: trX(b.from), x1: trX(b.to), w: width(b.label), lane: b.lane})
	}
	for _, l := range m.lines {
		items = append(items, item{x0: trX(l.at), x1: trX(l.at), w: width(l.label), lane: l.lane})
	}
	lanes := 0
	for _, it := range items {
		lanes = max(lanes, it.lane+1)
	}
	m.placed = make([]placedLabel, len(items))
	row0 := 0
	for lane := 0; lane < lanes; lane++ {
		var ends []vg.Length
		for i, it := range items {
			if it.lane != lane {
				continue
			}
			x := max(it.x0, left) + vg.Points(2)
			if x+it.w > right {
				x = right - it.w - vg.Points(1)
			}
			end := x + it.w + vg.Points(4)
			if m.lanes {
				end = max(end, it.x1)
			}
			// A row is free from where the last label (or strip) in it ended;
			// strips may touch end to start.
			from := x - vg.Points(2)
			if m.lanes {
				from = min(from, it.x0)
			}
			r := 0
			for ; r < len(ends) && ends[r] > from; r++ {
			}
			if r == len(ends) {
				ends = append(ends, 0)
			}
			ends[r] = end
			m.placed[i] = placedLabel{x: x, row: row0 + r}
		}
		row0 += len(ends)
	}
	return row0
}

func (m *marks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	if len(m.placed) != len(m.bands)+len(m.lines) {
		m.layout(trX, c.Min.X, c.Max.X)
	}
	top := c.Max.Y - vg.Points(2)
	rowH := vg.Points(m.rowHeight())
	rowTop := func(r int) vg.Length { return top - vg.Length(r)*rowH }
	for i, b := range m.bands {
		x0, x1 := trX(b.from), trX(b.to)
		if m.lanes {
			r := m.placed[i].row
			y1 := rowTop(r) + vg.Points(1)
			y0 := y1 - rowH + vg.Points(1)
			pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			c.FillPolygon(fade(b.col, 0x30), c.ClipPolygonXY(pts))
			if x0 >= c.Min.X {
				c.StrokeLine2(draw.LineStyle{Color: fade(b.col, 0x90), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}},
					x0, c.Min.Y, x0, y1)
			}
			continue
		}
		pts := []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}}
		c.FillPolygon(fade(b.col, 0x22), c.ClipPolygonXY(pts))
		if x0 >= c.Min.X {
			c.StrokeLine2(draw.LineStyle{Color: fade(b.col, 0xaa), Width: vg.Points(0.8)}, x0, c.Min.Y, x0, c.Max.Y)
		}
	}
	if m.bare {
		for _, l := range m.lines {
			if x := trX(l.at); x >= c.Min.X && x <= c.Max.X {
				c.StrokeLine2(draw.LineStyle{Color: l.col, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
			}
		}
		return
	}
	for i, b := range m.bands {
		sty := labelStyle
		sty.Color = b.col
		c.FillText(sty, vg.Point{X: m.placed[i].x, Y: rowTop(m.placed[i].row)}, b.label)
	}
	for j, l := range m.lines {
		x := trX(l.at)
		if x < c.Min.X || x > c.Max.X {
			continue
		}
		c.StrokeLine2(draw.LineStyle{Color: l.col, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
		pl := m.placed[len(m.bands)+j]
		sty := labelStyle
		sty.Color = l.col
		c.FillText(sty, vg.Point{X: pl.x, Y: rowTop(pl.row)}, l.label)
	}
}

// rebalanceMarks turns a run's rebalances into bands labelled by generation.
func rebalanceMarks(r *Run, col color.Color, lane int) []bandMark {
	var out []bandMark
	word := "gen"
	if r.Protocol == sim.ConsumerGroup {
		word = "epoch" // a consumer group's pauses are keyed by group epoch
	}
	for _, e := range r.Rebalances {
		out = append(out, bandMark{from: float64(e.FirstTick), to: float64(e.LastTick + 1),
			label: fmt.Sprintf("%s %d: %d paused", word, e.Generation, len(e.Partitions)), col: col, lane: lane})
	}
	return out
}

func crashMarks(r *Run, lane int) []lineMark {
	var out []lineMark
	for _, m := range r.Marks {
		out = append(out, lineMark{at: float64(m.Tick), label: m.Text, col: kdraw.ClientColor(m.Client), lane: lane})
	}
	return out
}
