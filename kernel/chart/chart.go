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
	"gonum.org/v1/plot/vg/vgpdf"

	kdraw "github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
)

// Chart is a plot and its legend. The legend sits in rows under the plot,
// so it never covers the data and takes no width from it.
type Chart struct {
	Plot          *plot.Plot
	Width, Height vg.Length
	// Names lists the legend's entries, in order (for tests and captions).
	Names   []string
	legend  []legendEntry
	marks   *marks  // rebalance bands and crash lines, if any
	yLo     float64 // the data's extent on the y axis, before room is made
	yHi     float64 // above it for the marks' labels
	nominal bool    // the y axis names rows (timeline): no room under the data
	xAxis   XAxis   // where the x axis fell, the last time the chart was drawn
}

// XAxis says where a chart's x axis lies across the chart as it was last
// drawn (SVG or PNG): its ends as fractions of the chart's width from the
// left, and the values there. A notebook's tick slider puts its cursor on
// the pause meter with it.
type XAxis struct {
	Left, Right float64 // fractions of the width
	Min, Max    float64 // the values at Left and Right (ticks)
}

// At is where value v falls, as a fraction of the chart's width.
func (a XAxis) At(v float64) float64 {
	if a.Max <= a.Min {
		return a.Left
	}
	return a.Left + (v-a.Min)/(a.Max-a.Min)*(a.Right-a.Left)
}

// XAxis is where the x axis lay when the chart was last drawn; the zero
// XAxis before it was drawn.
func (c *Chart) XAxis() XAxis { return c.xAxis }

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Options are what every chart takes from the picture commands.
type Options struct {
	// Width and Height in CSS pixels (0 = the kind's own size); an SVG is
	// this size in a browser and a PNG this many pixels.
	Width, Height int
	Title         string // replaces the chart's own title when not ""
	// From and To bound the ticks shown; To <= 0 leaves the end open (a
	// chart of one tick has nothing to show).
	From, To int
	// Clock reads the ticks as time in a real-time world (its zero value,
	// the page's scale, draws ticks).
	Clock wallclock.Clock
}

// The bounds of a chart's size, in pixels.
const (
	MinWidth, MaxWidth   = 480, 4000
	MinHeight, MaxHeight = 300, 4000
)

// px is one CSS pixel in points.
const px = vg.Length(0.75)

// size applies the options' size, or the kind's default in pixels.
func (o Options) size(defW, defH int) (vg.Length, vg.Length) {
	w, h := defW, defH
	if o.Width > 0 {
		w = o.Width
	}
	if o.Height > 0 {
		h = o.Height
	}
	return vg.Length(w) * px, vg.Length(h) * px
}

// Check says what is wrong with the options' size, if anything.
func (o Options) Check() error {
	if o.Width != 0 && (o.Width < MinWidth || o.Width > MaxWidth) {
		return fmt.Errorf("--width %d is out of bounds (%d..%d pixels)", o.Width, MinWidth, MaxWidth)
	}
	if o.Height != 0 && (o.Height < MinHeight || o.Height > MaxHeight) {
		return fmt.Errorf("--height %d is out of bounds (%d..%d pixels)", o.Height, MinHeight, MaxHeight)
	}
	return nil
}

// The charts' fonts: Liberation Sans, embedded in gonum/plot. PNGs draw it
// directly, PDFs embed it; SVGs draw its glyphs as outlines (see
// kdraw.SVGCanvas), so every viewer shows the same letters at the same widths.
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// PNGDPI is the resolution of PNG renderings: one pixel per CSS pixel, so
// a PNG has the size its SVG has in a browser.
const PNGDPI = kdraw.PNGDPI

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
	p.X.Label.Padding = vg.Points(4)
	p.X.Min = 0
	p.Y.Min = 0
	return p
}

func newChart(p *plot.Plot, opt Options, defW, defH int) *Chart {
	c := &Chart{Plot: p}
	c.Width, c.Height = opt.size(defW, defH)
	if opt.Title != "" {
		p.Title.Text = opt.Title
	}
	return c
}

func (c *Chart) add(name string, thumbs ...plot.Thumbnailer) {
	c.legend = append(c.legend, legendEntry{name, thumbs})
	c.Names = append(c.Names, name)
}

var legendStyle = text.Style{Font: font.From(sans, 10), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YCenter}

const (
	legendThumbW = 18 // points
	legendRowH   = 14
	legendGap    = 14
)

// legendRows lays the legend's entries out in rows across a width: the x
// of each entry and its row.
func (c *Chart) legendRows(width vg.Length) (xs []vg.Length, rows []int, n int) {
	x, row := vg.Length(0), 0
	for i, e := range c.legend {
		w := vg.Points(legendThumbW+4) + legendStyle.Width(cut(e.name, legendStyle, width-vg.Points(legendThumbW+4)))
		if i > 0 && x+w > width {
			x, row = 0, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += w + vg.Points(legendGap)
	}
	if len(c.legend) > 0 {
		n = row + 1
	}
	return xs, rows, n
}

// Draw draws the chart on a canvas: the plot, and the legend in rows under it.
func (c *Chart) Draw(dc draw.Canvas) {
	pad := vg.Points(8)
	xs, rows, n := c.legendRows(dc.Max.X - dc.Min.X - 2*pad)
	legendH := vg.Length(0)
	if n > 0 {
		legendH = vg.Points(float64(n*legendRowH) + 6)
	}
	// A margin of 2 points: a font's ascent and descent reach past its letters.
	area := draw.Crop(dc, vg.Points(2), -vg.Points(2), legendH+vg.Points(2), -vg.Points(2))
	if c.yHi > c.yLo {
		// The data's range; measuring the plot below would otherwise widen
		// an empty range (gonum's Axis.sanitizeRange) for good.
		c.Plot.Y.Min, c.Plot.Y.Max = c.yLo, c.yHi
	}
	c.fitTitle(area.Max.X - area.Min.X)
	c.fitTicks(area)
	if da := c.Plot.DataCanvas(area); c.Plot.Y.Label.Text != "" {
		fit(&c.Plot.Y.Label.Text, &c.Plot.Y.Label.TextStyle, da.Max.Y-da.Min.Y)
	}
	c.makeRoom(area)
	c.Plot.Draw(area)
	if w := dc.Max.X - dc.Min.X; w > 0 {
		da := c.Plot.DataCanvas(area)
		c.xAxis = XAxis{Left: float64((da.Min.X - dc.Min.X) / w), Right: float64((da.Max.X - dc.Min.X) / w), Min: c.Plot.X.Min, Max: c.Plot.X.Max}
	}
	for i, e := range c.legend {
		y := dc.Min.Y + legendH - vg.Points(float64(rows[i]*legendRowH)+legendRowH/2+2)
		x := dc.Min.X + pad + xs[i]
		tc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - vg.Points(4.5)}, Max: vg.Point{X: x + vg.Points(legendThumbW), Y: y + vg.Points(4.5)}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&tc)
		}
		name := cut(e.name, legendStyle, dc.Max.X-dc.Min.X-2*pad-vg.Points(legendThumbW+4))
		dc.FillText(legendStyle, vg.Point{X: x + vg.Points(legendThumbW+4), Y: y}, name)
	}
}

// fitTitle makes the title fit the width: a smaller size down to 9
// points, then cut with an ellipsis.
func (c *Chart) fitTitle(width vg.Length) {
	fit(&c.Plot.Title.Text, &c.Plot.Title.TextStyle, width)
}

// fit makes a text fit a length: a smaller font down to 8 points, then
// cut with an ellipsis.
func fit(t *string, sty *text.Style, width vg.Length) {
	for sty.Font.Size > vg.Points(8) && sty.Width(*t) > width {
		sty.Font.Size -= vg.Points(0.5)
	}
	*t = cut(*t, *sty, width)
}

// cut shortens t with an ellipsis until it is at most width wide.
func cut(t string, sty text.Style, width vg.Length) string {
	r := []rune(t)
	for len(r) > 1 && sty.Width(t) > width {
		r = r[:len(r)-1]
		t = string(r) + "…"
	}
	return t
}

// fitTicks gives each axis as many marks as its length has room for.
func (c *Chart) fitTicks(area draw.Canvas) {
	da := c.Plot.DataCanvas(area)
	if _, ok := c.Plot.X.Tick.Marker.(intTicks); ok {
		lw := c.Plot.X.Tick.Label.Width("0000") + vg.Points(6)
		c.Plot.X.Tick.Marker = intTicks{max: max(1, int((da.Max.X-da.Min.X)/lw))}
	}
	if t, ok := c.Plot.X.Tick.Marker.(timeTicks); ok {
		t.max = max(1, int((da.Max.X-da.Min.X)/(c.Plot.X.Tick.Label.Width(t.label(0, 10))+vg.Points(8))))
		c.Plot.X.Tick.Marker = t
	}
	if t, ok := c.Plot.Y.Tick.Marker.(timeTicks); ok {
		t.max = max(1, int((da.Max.Y-da.Min.Y)/(c.Plot.Y.Tick.Label.Height("0")+vg.Points(6))))
		c.Plot.Y.Tick.Marker = t
	}
	if _, ok := c.Plot.Y.Tick.Marker.(intTicks); ok {
		lh := c.Plot.Y.Tick.Label.Height("0") + vg.Points(6)
		c.Plot.Y.Tick.Marker = intTicks{max: max(1, int((da.Max.Y-da.Min.Y)/lh))}
	}
	if c.nominal {
		// One label per row: a font no taller than a row.
		rows := c.Plot.Y.Max - c.Plot.Y.Min
		if c.marks != nil {
			rows = c.yHi - c.yLo + 1 // makeRoom has not raised the axis yet; leave room for its labels
		}
		pitch := (da.Max.Y - da.Min.Y) / vg.Length(rows)
		l := &c.Plot.Y.Tick.Label
		for l.Font.Size > vg.Points(5) && l.Height("0") > pitch-vg.Points(1) {
			l.Font.Size -= vg.Points(0.5)
		}
	}
}

// makeRoom raises the y axis so that the marks' label rows fit above the
// data; it lays the labels out on the real data area, twice, because the
// y axis's tick labels change that area's width a little.
func (c *Chart) makeRoom(area draw.Canvas) {
	if c.marks == nil {
		return
	}
	for i := 0; i < 3; i++ {
		da := c.Plot.DataCanvas(area)
		trX, _ := c.Plot.Transforms(&da)
		rows := c.marks.layout(trX, da.Min.X, da.Max.X)
		h := float64(da.Max.Y - da.Min.Y)
		need := float64(rows)*c.marks.rowHeight() + 6
		if need > 0.5*h && !c.marks.bare {
			// No room for the labels: thin strips and lines only (the
			// legend still says what they are).
			c.marks.bare = true
			rows = c.marks.layout(trX, da.Min.X, da.Max.X)
			need = float64(rows)*c.marks.rowHeight() + 6
		}
		need = min(need, 0.6*h)
		span := c.yHi - c.yLo
		if span <= 0 {
			span = 1
		}
		c.Plot.Y.Max = c.yHi + span*need/(h-need)
		if rows == 0 {
			c.Plot.Y.Max = c.yHi
		}
	}
}

// SVG renders the chart as SVG on kgrepl's SVG canvas (kdraw.SVGCanvas),
// its letters drawn as glyph outlines over their text, as the diagrams are.
func (c *Chart) SVG() ([]byte, error) { return renderSVG(c.Draw, c.Width, c.Height) }

// PNG renders the chart as PNG at PNGDPI.
func (c *Chart) PNG() ([]byte, error) { return renderPNG(c.Draw, c.Width, c.Height) }

// PDF renders the chart as a one-page PDF (its text in the embedded
// Liberation fonts).
func (c *Chart) PDF() ([]byte, error) { return renderPDF(c.Draw, c.Width, c.Height) }

func renderSVG(draw func(draw.Canvas), w, h vg.Length) ([]byte, error) {
	cv := kdraw.NewSVG(w, h)
	draw(dcanvas(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func renderPNG(draw func(draw.Canvas), w, h vg.Length) ([]byte, error) {
	cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI))}
	draw(dcanvas(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func renderPDF(draw func(draw.Canvas), w, h vg.Length) (out []byte, err error) {
	defer func() {
		// vgpdf panics when it cannot make a font; say so as an error.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("writing the PDF: %v", r)
		}
	}()
	pc := vgpdf.New(w, h)
	draw(dcanvas(kdraw.PDFCanvas(pc)))
	var b bytes.Buffer
	if _, err := pc.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// dcanvas is a whole canvas as gonum's draw package draws on it.
func dcanvas(c vg.CanvasSizer) draw.Canvas { return draw.New(c) }

// intTicks marks whole numbers only (ticks and counts are whole), at a
// step of 1, 2 or 5 times a power of ten giving at most max marks (10
// when max is 0; the chart sets it from the axis's length).
type intTicks struct{ max int }

func (it intTicks) Ticks(min, max float64) []plot.Tick {
	most := 10.0
	if it.max > 0 {
		most = float64(it.max)
	}
	if most < 2 {
		most = 2
	}
	lo, hi := math.Ceil(min), math.Floor(max)
	if hi < lo {
		return nil
	}
	span := hi - lo
	step := 1.0
	for p := 1.0; ; p *= 10 {
		found := false
		for _, m := range []float64{1, 2, 5} {
			if span/(m*p) <= most {
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

// strip is the legend thumbnail of an overlaid branch's rebalance: a strip
// in its colour with the dashed line its start draws through the data.
type strip struct{ col color.Color }

func (b strip) Thumbnail(c *draw.Canvas) {
	box{fill: fade(b.col, 0x30)}.Thumbnail(c)
	x := c.Min.X + vg.Points(1)
	c.StrokeLine2(draw.LineStyle{Color: fade(b.col, 0x90), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}, x, c.Min.Y, x, c.Max.Y)
}

func fade(c color.Color, alpha uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), alpha}
}

// firstTick and lastTick bound a run's ticks: the x axis runs from the
// first frame to one tick past the last.
func firstTick(r *Run) float64 {
	if len(r.Frames) == 0 {
		return 0
	}
	return float64(r.Frames[0].Tick)
}

func lastTick(r *Run) float64 {
	if len(r.Frames) == 0 {
		return 1
	}
	return float64(r.Frames[len(r.Frames)-1].Tick) + 1
}

// Window keeps the part of a run from tick from to tick to (to <= 0: to
// the end): the frames in it, and the rebalances and marks that touch it.
func Window(r *Run, from, to int) *Run {
	if to <= 0 {
		to = -1
	}
	if from <= 0 && to < 0 {
		return r
	}
	in := func(t int) bool { return inWindow(t, from, to) }
	out := *r
	out.Frames = nil
	for _, f := range r.Frames {
		if in(f.Tick) {
			out.Frames = append(out.Frames, f)
		}
	}
	out.Rebalances = nil
	for _, e := range r.Rebalances {
		if e.LastTick >= from && (to < 0 || e.FirstTick <= to) {
			out.Rebalances = append(out.Rebalances, e)
		}
	}
	out.Marks = nil
	for _, m := range r.Marks {
		if in(m.Tick) {
			out.Marks = append(out.Marks, m)
		}
	}
	return &out
}
