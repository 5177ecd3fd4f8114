package chart

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Compare is the grouped bar chart of `compare`: one group per metric
// (rebalances, pause meter, duplicates, lost), one bar per combination of
// settings, in the order given. values[i][j] is metric j under setting i.
func Compare(settings, metrics []string, values [][]float64) (*Chart, error) {
	if len(settings) == 0 || len(metrics) == 0 {
		return nil, fmt.Errorf("compare chart: nothing to draw")
	}
	p := newPlot("One history, other settings", "", "")
	p.NominalX(metrics...)
	c := newChart(p, Options{}, 864, 336) // 9 × 3.5 inches
	if err := groupedBars(p, c, settings, len(metrics), values); err != nil {
		return nil, err
	}
	p.Y.Label.Text = "count (pause: partition x ticks)"
	return c, nil
}

// CompareMembers is the lower half of compare's picture: for each member,
// one bar per combination of settings, as high as the partitions it holds
// at the end (no bar: idle). counts[i][j] is member j under setting i.
func CompareMembers(settings, members []string, counts [][]float64) (*Chart, error) {
	if len(settings) == 0 || len(members) == 0 {
		return nil, fmt.Errorf("compare chart: no members to draw")
	}
	p := newPlot("Partitions each member holds at the end (no bar: idle)", "", "partitions")
	p.NominalX(members...)
	c := newChart(p, Options{}, 864, 288) // 9 × 3 inches
	if err := groupedBars(p, c, settings, len(members), counts); err != nil {
		return nil, err
	}
	return c, nil
}

// groupedBars adds one bar series per combination of settings, in its
// colour, to a plot of groups nominal x positions: values[i][j] is the bar
// of setting i in group j (missing values are 0). Each group gets about
// (plot width / groups) points; the bars of a group fill 80% of it.
func groupedBars(p *plot.Plot, c *Chart, settings []string, groups int, values [][]float64) error {
	n := float64(len(settings))
	w := vg.Points(0.8 * 380 / float64(groups) / n)
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

// Figure is charts stacked top to bottom in one picture.
type Figure struct {
	Charts        []*Chart
	Width, Height vg.Length
}

// CompareFigure is compare's picture: the metrics' grouped bars (Compare)
// above, each member's partitions at the end (CompareMembers) below when
// there are members.
func CompareFigure(settings, metrics []string, values [][]float64, members []string, counts [][]float64) (*Figure, error) {
	top, err := Compare(settings, metrics, values)
	if err != nil {
		return nil, err
	}
	f := &Figure{Charts: []*Chart{top}, Width: top.Width, Height: top.Height}
	if len(members) > 0 {
		low, err := CompareMembers(settings, members, counts)
		if err != nil {
			return nil, err
		}
		f.Charts = append(f.Charts, low)
		f.Height += low.Height
	}
	return f, nil
}

// Draw draws each chart in its share of the height, in order from the top.
func (f *Figure) Draw(dc draw.Canvas) {
	top := dc.Max.Y
	for _, c := range f.Charts {
		h := (dc.Max.Y - dc.Min.Y) * c.Height / f.Height
		c.Draw(draw.Crop(dc, 0, 0, top-h-dc.Min.Y, top-dc.Max.Y))
		top -= h
	}
}

// SVG renders the figure as SVG.
func (f *Figure) SVG() ([]byte, error) { return renderSVG(f.Draw, f.Width, f.Height) }

// PNG renders the figure as PNG at PNGDPI.
func (f *Figure) PNG() ([]byte, error) { return renderPNG(f.Draw, f.Width, f.Height) }

// PDF renders the figure as a one-page PDF.
func (f *Figure) PDF() ([]byte, error) { return renderPDF(f.Draw, f.Width, f.Height) }
