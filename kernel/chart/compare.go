package chart

import (
	"fmt"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
	// Each metric gets about (plot width / metrics) points; the bars of a
	// group fill 80% of it.
	n := float64(len(settings))
	w := vg.Points(0.8 * 380 / float64(len(metrics)) / n)
	if w > vg.Points(28) {
		w = vg.Points(28)
	}
	for i, s := range settings {
		vals := make(plotter.Values, len(metrics))
		for j := range metrics {
			if i < len(values) && j < len(values[i]) {
				vals[j] = values[i][j]
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		bars.Color = branchColor(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-(n-1)/2) * w
		p.Add(bars)
		c.add(s, bars)
	}
	p.Y.Label.Text = "count (pause: partition x ticks)"
	return c, nil
}
