package chart

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CompareMetric is one metric of `compare`: its name (with its unit) and
// its value under each combination of settings, in the combinations'
// order.
type CompareMetric struct {
	Name   string
	Values []float64
}

// comparePanel is one metric's panel: a bar per combination, in its
// colour, its value over it, on an axis of the metric's own (a pause meter
// in the thousands beside duplicates in the tens each read on their own
// scale).
func comparePanel(m CompareMetric, settings []string) (*Chart, error) {
	p := newPlot(m.Name, "", "")
	p.Title.TextStyle.Font = font.From(sansBold, 10.5)
	p.Title.Padding = vg.Points(4)
	p.HideX()
	p.X.Min, p.X.Max = -0.6, float64(len(settings))-0.4
	c := newChart(p, Options{}, 300, 210)
	top := 0.0
	for _, v := range m.Values {
		top = max(top, v)
	}
	w := vg.Points(min(34, 190/float64(max(1, len(settings)))))
	for i := range settings {
		v := 0.0
		if i < len(m.Values) {
			v = m.Values[i]
		}
		bars, err := plotter.NewBarChart(plotter.Values{v}, w)
		if err != nil {
			return nil, err
		}
		bars.XMin = float64(i)
		bars.Color = branchColor(i)
		bars.LineStyle.Width = 0
		p.Add(bars)
	}
	// The values over the bars, so the panel reads without the axis.
	var pts plotter.XYs
	var labels []string
	for i, v := range m.Values {
		pts = append(pts, plotter.XY{X: float64(i), Y: v})
		labels = append(labels, strconv.FormatFloat(v, 'f', -1, 64))
	}
	if len(pts) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i] = text.Style{Color: branchColor(i), Font: font.From(sans, 9), Handler: plot.DefaultTextHandler,
				XAlign: draw.XCenter, YAlign: draw.YBottom}
			l.Offset = vg.Point{Y: vg.Points(2)}
		}
		p.Add(l)
	}
	// Room over the tallest bar for its value.
	c.yLo, c.yHi = 0, math.Max(1, top*1.18)
	return c, nil
}

// CompareMembers is the lower part of compare's picture: for each member,
// one bar per combination of settings, as high as the partitions it holds
// at the end (no bar: idle or not in the group). counts[i][j] is member j
// under setting i.
func CompareMembers(settings, members []string, counts [][]float64) (*Chart, error) {
	if len(settings) == 0 || len(members) == 0 {
		return nil, fmt.Errorf("compare chart: no members to draw")
	}
	p := newPlot("Partitions each member holds at the end (no bar: idle or not in the group)", "", "partitions")
	p.Title.TextStyle.Font = font.From(sansBold, 10.5)
	p.NominalX(members...)
	c := newChart(p, Options{}, 900, 260)
	if err := groupedBars(p, c, settings, len(members), counts); err != nil {
		return nil, err
	}
	c.legend, c.Names = nil, nil // the figure's legend names the combinations
	return c, nil
}

// groupedBars adds one bar series per combination of settings, in its
// colour, to a plot of groups nominal x positions: values[i][j] is the bar
// of setting i in group j (missing values are 0). Each group gets about
// (plot width / groups) points; the bars of a group fill 80% of it.
func groupedBars(p *plot.Plot, c *Chart, settings []string, groups int, values [][]float64) error {
	n := float64(len(settings))
	w := vg.Points(0.8 * 560 / float64(groups) / n)
	if w > vg.Points(28) {
		w = vg.Points(28)
	}
	for i, s := range settings {
		vals := make(plotter.Values, groups)
		for j := range vals {
			if i < len(values) && j < len(values[i]) {
				vals[j] = values[i][j]
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Color = branchColor(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-(n-1)/2) * w
		p.Add(bars)
		c.add(s, bars)
	}
	return nil
}

// Figure is compare's picture: a title, a legend of the combinations, rows
// of panels side by side, and the members' chart under them.
type Figure struct {
	Title string
	// Names lists the legend's entries (the combinations), in order.
	Names         []string
	Rows          [][]*Chart
	Width, Height vg.Length
	legend        *Chart // a chart with no plot drawn: its legend rows
}

// The figure's header: the title's height, and the legend's.
const (
	figureTitleH = 26 // points
	figureCols   = 3  // panels in a row
)

var figureTitleStyle = text.Style{Font: font.From(sansBold, 12.5), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}

// CompareFigure is compare's picture for the combinations settings (named
// in the legend in their order): a panel per metric, three to a row, and
// each member's partitions at the end when there are members. The title
// names the settings compared and the history they were compared on.
func CompareFigure(title string, settings []string, metrics []CompareMetric, members []string, counts [][]float64) (*Figure, error) {
	if len(settings) == 0 || len(metrics) == 0 {
		return nil, fmt.Errorf("compare chart: nothing to draw")
	}
	f := &Figure{Title: title, Names: settings, legend: &Chart{}}
	for i, s := range settings {
		f.legend.add(s, box{fill: branchColor(i)})
	}
	var row []*Chart
	for _, m := range metrics {
		c, err := comparePanel(m, settings)
		if err != nil {
			return nil, err
		}
		if row = append(row, c); len(row) == figureCols {
			f.Rows, row = append(f.Rows, row), nil
		}
	}
	if len(row) > 0 {
		f.Rows = append(f.Rows, row)
	}
	if len(members) > 0 {
		low, err := CompareMembers(settings, members, counts)
		if err != nil {
			return nil, err
		}
		f.Rows = append(f.Rows, []*Chart{low})
	}
	f.Width = vg.Length(900) * px
	f.Height = vg.Points(figureTitleH) + f.legendHeight(f.Width)
	for _, r := range f.Rows {
		f.Height += rowHeight(r)
	}
	return f, nil
}

// rowGap is the space under each row of the figure, in points.
const rowGap = 8

func rowHeight(r []*Chart) vg.Length {
	h := vg.Points(rowGap)
	for _, c := range r {
		h = max(h, c.Height)
	}
	return h
}

func (f *Figure) legendHeight(width vg.Length) vg.Length {
	_, _, n := f.legend.legendRows(width - vg.Points(16))
	return vg.Points(float64(n*legendRowH) + 6)
}

// Draw draws the title and the legend at the top, then each row of
// panels in its share of the height, the panels of a row side by side.
func (f *Figure) Draw(dc draw.Canvas) {
	width := dc.Max.X - dc.Min.X
	scale := (dc.Max.Y - dc.Min.Y) / f.Height
	title := f.Title
	sty := figureTitleStyle
	fit(&title, &sty, width-vg.Points(16))
	top := dc.Max.Y
	titleH := vg.Points(figureTitleH) * scale
	dc.FillText(sty, vg.Point{X: dc.Min.X + width/2, Y: top - titleH/2}, title)
	top -= titleH
	// The legend: its chart draws only its rows in the area given.
	lh := f.legendHeight(width) * scale
	f.legend.drawLegend(draw.Crop(dc, 0, 0, top-lh-dc.Min.Y, top-dc.Max.Y))
	top -= lh
	for _, r := range f.Rows {
		h := rowHeight(r) * scale
		x := dc.Min.X
		total := vg.Length(0)
		for _, c := range r {
			total += c.Width
		}
		for _, c := range r {
			w := width * c.Width / total
			// A gap under each row keeps a panel's axis off the titles below.
			c.Draw(draw.Crop(dc, x-dc.Min.X, x+w-dc.Max.X, top-h-dc.Min.Y+vg.Points(rowGap)*scale, top-dc.Max.Y))
			x += w
		}
		top -= h
	}
}

// drawLegend draws the chart's legend rows alone, filling the canvas.
func (c *Chart) drawLegend(dc draw.Canvas) {
	pad := vg.Points(8)
	xs, rows, n := c.legendRows(dc.Max.X - dc.Min.X - 2*pad)
	if n == 0 {
		return
	}
	// Centred: the rows are as wide as their widest.
	right := vg.Length(0)
	for i, e := range c.legend {
		right = max(right, xs[i]+vg.Points(legendThumbW+4)+legendStyle.Width(e.name))
	}
	shift := max(0, (dc.Max.X-dc.Min.X-2*pad-right)/2)
	for i, e := range c.legend {
		y := dc.Max.Y - vg.Points(float64(rows[i]*legendRowH)+legendRowH/2+3)
		x := dc.Min.X + pad + shift + xs[i]
		tc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - vg.Points(4.5)}, Max: vg.Point{X: x + vg.Points(legendThumbW), Y: y + vg.Points(4.5)}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&tc)
		}
		dc.FillText(legendStyle, vg.Point{X: x + vg.Points(legendThumbW+4), Y: y}, e.name)
	}
}

// SVG renders the figure as SVG.
func (f *Figure) SVG() ([]byte, error) { return renderSVG(f.Draw, f.Width, f.Height) }

// PNG renders the figure as PNG at PNGDPI.
func (f *Figure) PNG() ([]byte, error) { return renderPNG(f.Draw, f.Width, f.Height) }

// PDF renders the figure as a one-page PDF.
func (f *Figure) PDF() ([]byte, error) { return renderPDF(f.Draw, f.Width, f.Height) }
