package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	kdraw "github.com/kgrepl/kgrepl/kernel/draw"
)

// Chart is a plot and its legend, which is drawn to the right of the plot
// so it never covers the data.
type Chart struct {
	Plot          *plot.Plot
	Legend        plot.Legend
	Width, Height vg.Length
	// Names lists the legend's entries, in order (for tests and captions).
	Names []string
}

// The charts' fonts: Liberation Sans, embedded in gonum/plot, so PNGs look
// the same everywhere (an SVG names the family and the viewer picks it).
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// PNGDPI is the resolution of PNG renderings.
const PNGDPI = 144

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansBold, 13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 9.5)
		a.Tick.Marker = intTicks{}
	}
	p.X.Min = 0
	p.Y.Min = 0
	return p
}

func newChart(p *plot.Plot, w, h vg.Length) *Chart {
	c := &Chart{Plot: p, Legend: plot.NewLegend(), Width: w, Height: h}
	c.Legend.TextStyle.Font = font.From(sans, 10)
	c.Legend.Top, c.Legend.Left = true, true
	c.Legend.Padding = vg.Points(3)
	c.Legend.ThumbnailWidth = vg.Points(18)
	return c
}

func (c *Chart) add(name string, thumbs ...plot.Thumbnailer) {
	c.Legend.Add(name, thumbs...)
	c.Names = append(c.Names, name)
}

// Draw draws the chart on a canvas: the plot on the left, the legend in a
// column on the right.
func (c *Chart) Draw(dc draw.Canvas) {
	lw := c.legendWidth()
	c.Plot.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	if len(c.Names) == 0 {
		return
	}
	top := c.Plot.Title.TextStyle.Rectangle(c.Plot.Title.Text).Max.Y + c.Plot.Title.Padding + vg.Points(10)
	area := draw.Crop(dc, dc.Max.X-dc.Min.X-lw+vg.Points(12), 0, 0, -top)
	c.Legend.Draw(area)
}

func (c *Chart) legendWidth() vg.Length {
	if len(c.Names) == 0 {
		return 0
	}
	var w vg.Length
	for _, n := range c.Names {
		if tw := c.Legend.TextStyle.Width(" " + n); tw > w {
			w = tw
		}
	}
	return w + c.Legend.ThumbnailWidth + vg.Points(24)
}

// SVG renders the chart as SVG.
func (c *Chart) SVG() ([]byte, error) {
	cv := vgsvg.New(c.Width, c.Height)
	c.Draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// PNG renders the chart as PNG at PNGDPI.
func (c *Chart) PNG() ([]byte, error) {
	cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(c.Width, c.Height), vgimg.UseDPI(PNGDPI))}
	c.Draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// intTicks marks whole numbers only (ticks and counts are whole), at a
// step of 1, 2 or 5 times a power of ten giving at most about 10 marks.
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	if hi < lo {
		return nil
	}
	span := hi - lo
	step := 1.0
	for p := 1.0; ; p *= 10 {
		found := false
		for _, m := range []float64{1, 2, 5} {
			if span/(m*p) <= 10 {
				step, found = m*p, true
				break
			}
		}
		if found {
			break
		}
	}
	var out []plot.Tick
	start := math.Ceil(lo/step) * step
	for v := start; v <= hi+1e-9; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	// Minor ticks on every whole number when the step is small enough to read.
	if step > 1 && span/1 <= 60 {
		for v := lo; v <= hi; v++ {
			if math.Mod(v, step) != 0 {
				out = append(out, plot.Tick{Value: v})
			}
		}
	}
	return out
}

// stepLine is a post-step line of (tick, value) points.
func stepLine(xs []float64, ys []float64, col color.Color, width float64, dashes []vg.Length) *plotter.Line {
	pts := make(plotter.XYs, len(xs))
	for i := range xs {
		pts[i].X, pts[i].Y = xs[i], ys[i]
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		// NewLine fails only on NaN or infinite values, which the counters never are.
		panic(fmt.Sprintf("chart: %v", err))
	}
	l.StepStyle = plotter.PostStep
	l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(width), Dashes: dashes}
	return l
}

// extend adds a last point one tick after the last frame, so a step line
// shows the final tick's value for the length of a tick.
func extend(xs, ys []float64) ([]float64, []float64) {
	if len(xs) == 0 {
		return []float64{0}, []float64{0}
	}
	return append(xs, xs[len(xs)-1]+1), append(ys, ys[len(ys)-1])
}

// box is a legend thumbnail: a filled rectangle, optionally outlined.
type box struct {
	fill    color.Color
	outline color.Color
	low     bool // a thin bar at the bottom (zombie processing)
}

func (b box) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	if b.low {
		h := (r.Max.Y - r.Min.Y) * 0.35
		r.Max.Y = r.Min.Y + h
	}
	pts := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
	c.FillPolygon(b.fill, pts)
	if b.outline != nil {
		c.StrokeLines(draw.LineStyle{Color: b.outline, Width: vg.Points(1)}, append(pts, pts[0]))
	}
}

// band is a legend thumbnail for a rebalance band.
type band struct{ col color.Color }

func (b band) Thumbnail(c *draw.Canvas) {
	box{fill: fade(b.col, 0x30)}.Thumbnail(c)
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(draw.LineStyle{Color: b.col, Width: vg.Points(1)}, x, c.Min.Y, x, c.Max.Y)
}

func fade(c color.Color, alpha uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), alpha}
}

// marks draws the rebalances as bands with their generation on top, and
// crashes as dotted lines, with labels placed in rows so they never overlap.
type marks struct {
	bands []bandMark
	lines []lineMark
	rows  int // label rows reserved at the top
}

type bandMark struct {
	from, to float64
	label    string
	col      color.Color
}

type lineMark struct {
	at    float64
	label string
	col   color.Color
}

var labelStyle = text.Style{Font: font.From(sans, 9), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}

const labelRowH = 12 // points per label row

func (m *marks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	type placed struct {
		x0, x1 vg.Length
		row    int
	}
	var rowsEnd []vg.Length
	place := func(x vg.Length, label string) int {
		w := labelStyle.Width(label)
		for r := 0; ; r++ {
			if r == len(rowsEnd) {
				rowsEnd = append(rowsEnd, x+w+vg.Points(4))
				return r
			}
			if rowsEnd[r] <= x {
				rowsEnd[r] = x + w + vg.Points(4)
				return r
			}
		}
	}
	top := c.Max.Y - vg.Points(2)
	for _, b := range m.bands {
		x0, x1 := trX(b.from), trX(b.to)
		pts := []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}}
		c.FillPolygon(fade(b.col, 0x22), c.ClipPolygonXY(pts))
		c.StrokeLine2(draw.LineStyle{Color: fade(b.col, 0xaa), Width: vg.Points(0.8)}, x0, c.Min.Y, x0, c.Max.Y)
	}
	for _, b := range m.bands {
		x0 := trX(b.from) + vg.Points(2)
		row := place(x0, b.label)
		sty := labelStyle
		sty.Color = b.col
		c.FillText(sty, vg.Point{X: x0, Y: top - vg.Length(row*labelRowH)}, b.label)
	}
	for _, l := range m.lines {
		x := trX(l.at)
		c.StrokeLine2(draw.LineStyle{Color: l.col, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
		row := place(x+vg.Points(2), l.label)
		sty := labelStyle
		sty.Color = l.col
		c.FillText(sty, vg.Point{X: x + vg.Points(2), Y: top - vg.Length(row*labelRowH)}, l.label)
	}
}

// labelRows estimates how many label rows the marks need, so the plot can
// leave room for them above the data.
func (m *marks) labelRows(xmax float64, widthPt float64) int {
	type lab struct {
		x float64
		w float64
	}
	var labs []lab
	scale := widthPt / math.Max(xmax, 1)
	for _, b := range m.bands {
		labs = append(labs, lab{b.from * scale, float64(labelStyle.Width(b.label)) + 4})
	}
	for _, l := range m.lines {
		labs = append(labs, lab{l.at * scale, float64(labelStyle.Width(l.label)) + 4})
	}
	var rows []float64
	for _, l := range labs {
		placed := false
		for r := range rows {
			if rows[r] <= l.x {
				rows[r] = l.x + l.w
				placed = true
				break
			}
		}
		if !placed {
			rows = append(rows, l.x+l.w)
		}
	}
	return len(rows)
}

// rebalanceMarks turns a run's rebalances into bands labelled by generation.
func rebalanceMarks(r *Run, col color.Color, prefix string) []bandMark {
	var out []bandMark
	for _, e := range r.Rebalances {
		out = append(out, bandMark{from: float64(e.FirstTick), to: float64(e.LastTick + 1),
			label: fmt.Sprintf("%sgen %d: %d paused", prefix, e.Generation, len(e.Partitions)), col: col})
	}
	return out
}

func crashMarks(r *Run) []lineMark {
	var out []lineMark
	for _, m := range r.Marks {
		out = append(out, lineMark{at: float64(m.Tick), label: m.Text, col: kdraw.ClientColor(m.Client)})
	}
	return out
}

// headroom raises the y axis so that rows of labels fit above the data.
func headroom(p *plot.Plot, ymax float64, rows int, height vg.Length) {
	if ymax < 1 {
		ymax = 1
	}
	data := float64(height) - 80 // the title and the x axis take about this much
	need := float64(rows*labelRowH) + 8
	frac := need / data
	if frac > 0.6 {
		frac = 0.6
	}
	p.Y.Max = ymax / (1 - frac)
}

func lastTick(r *Run) float64 {
	if len(r.Frames) == 0 {
		return 1
	}
	return float64(r.Frames[len(r.Frames)-1].Tick) + 1
}
