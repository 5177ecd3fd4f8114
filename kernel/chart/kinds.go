package chart

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	kdraw "github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/sim"
)

// Kinds names the charts, for commands and errors.
var Kinds = []string{"pause", "duplicates", "lag", "timeline", "unavailable"}

// NeedOf is what a kind of chart samples.
func NeedOf(kind string) Need {
	switch kind {
	case "pause":
		return NeedPause
	case "duplicates":
		return NeedDelivery
	case "lag":
		return NeedLag
	case "timeline":
		return NeedOwners
	case "unavailable":
		return NeedUnavailable
	}
	return NeedAll
}

// Build makes a chart of a kind from one run, or from several branches'
// runs for the kinds that overlay them (pause, duplicates).
func Build(kind string, opt Options, runs ...*Run) (*Chart, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no run to chart")
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	var win []*Run
	for _, r := range runs {
		win = append(win, Window(r, opt.From, opt.To))
	}
	c, err := build(kind, opt, win)
	if err == nil && opt.Clock.Real() {
		c.inTime(opt.Clock)
	}
	return c, err
}

func build(kind string, opt Options, win []*Run) (*Chart, error) {
	switch kind {
	case "pause":
		return Pause(opt, win...), nil
	case "duplicates":
		return Duplicates(opt, win...), nil
	case "lag", "timeline", "unavailable":
		if len(win) > 1 {
			return nil, fmt.Errorf("a %s chart shows one branch (overlays: pause duplicates)", kind)
		}
		switch kind {
		case "lag":
			return Lag(opt, win[0]), nil
		case "unavailable":
			return Unavailable(opt, win[0]), nil
		}
		return Timeline(opt, win[0]), nil
	}
	return nil, fmt.Errorf("no chart %q (charts: %s)", kind, strings.Join(Kinds, " "))
}

// branchColors tell overlaid branches apart (they are not clients).
var branchColors = []color.RGBA{
	{0x22, 0x22, 0x22, 0xff},
	{0xC0, 0x1C, 0x28, 0xff},
	{0x1F, 0x5F, 0xA8, 0xff},
	{0x2E, 0x7D, 0x32, 0xff},
	{0x8E, 0x44, 0xAD, 0xff},
}

func branchColor(i int) color.RGBA { return branchColors[i%len(branchColors)] }

var branchDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

func branchDash(i int) []vg.Length { return branchDashes[i%len(branchDashes)] }

// The charts' default size, in pixels.
const (
	chartW = 960
	chartH = 460
)

func ticks(r *Run) []float64 {
	xs := make([]float64, len(r.Frames))
	for i, f := range r.Frames {
		xs[i] = float64(f.Tick)
	}
	return xs
}

// Pause is the pause meter over ticks as a step line, one per branch, with
// each rebalance drawn as a band labelled with the generation it formed.
// Overlaid branches get a lane of label rows each, in their colour.
func Pause(opt Options, runs ...*Run) *Chart {
	title := "Pause meter: paused partitions × ticks"
	if len(runs) == 1 {
		title += " (" + runs[0].Name + ", " + runs[0].Assignor + ")"
	}
	ylabel := "partition × ticks paused (total)"
	if opt.Clock.Real() {
		title = strings.Replace(title, "partitions × ticks", "partitions × seconds", 1)
		ylabel = "partition × seconds paused (total)"
	}
	p := newPlot(title, "tick", ylabel)
	c := newChart(p, opt, chartW, chartH)
	if opt.Clock.Real() {
		c.secondsAxis(opt.Clock, ylabel)
	}
	m := &marks{lanes: len(runs) > 1}
	ymax, xmin, xmax := 0.0, -1.0, 1.0
	for i, r := range runs {
		xs := ticks(r)
		ys := make([]float64, len(r.Frames))
		for k, f := range r.Frames {
			ys[k] = float64(f.Pause)
			ymax = max(ymax, ys[k])
		}
		xs, ys = extend(xs, ys)
		col := branchColor(i)
		l := stepLine(xs, ys, col, 2, branchDash(i))
		p.Add(l)
		m.bands = append(m.bands, rebalanceMarks(r, col, i)...)
		c.add(fmt.Sprintf("%s · %s: %s in %d rebalance(s)", r.Name, r.Assignor, opt.Clock.Seconds(r.FinalPause), len(r.Rebalances)), l)
		xmax = max(xmax, lastTick(r))
		if xmin < 0 || firstTick(r) < xmin {
			xmin = firstTick(r)
		}
	}
	addBandLegend(c, runs, pauseBands)
	p.X.Min, p.X.Max = max(xmin, 0), xmax
	p.Add(m)
	c.marks, c.yLo, c.yHi = m, 0, max(ymax, 1)
	return c
}

// addBandLegend explains the rebalance bands: one entry, or one per
// overlaid branch in its colour.
// pauseBands is the pause chart's legend for its bands, for a classic run.
const pauseBands = "rebalance (generation formed)"

func addBandLegend(c *Chart, runs []*Run, what string) {
	for i, r := range runs {
		if len(r.Rebalances) == 0 {
			continue
		}
		w := what
		if r.Protocol == sim.ConsumerGroup && what == pauseBands {
			w = "rebalance (group epoch bumped)" // KIP-848 has no generations
		}
		if len(runs) == 1 {
			c.add(w, band{col: branchColor(0)})
			return
		}
		c.add(r.Name+": "+w, strip{col: branchColor(i)})
	}
}

// Duplicates is the duplicates and lost counters over ticks, as the audit
// reader sees invoices; with transactions, at both isolation levels.
func Duplicates(opt Options, runs ...*Run) *Chart {
	title := "Duplicates and lost records"
	if len(runs) == 1 {
		title += " (" + runs[0].Name + ")"
	}
	p := newPlot(title, "tick", "input records")
	c := newChart(p, opt, chartW, chartH)
	m := &marks{lanes: len(runs) > 1}
	ymax, xmin, xmax := 0.0, -1.0, 1.0
	dupCol := color.RGBA{0xC0, 0x1C, 0x28, 0xff}
	lostCol := color.RGBA{0x22, 0x22, 0x22, 0xff}
	heldCol := color.RGBA{0x88, 0x88, 0x88, 0xff}
	for i, r := range runs {
		xs := ticks(r)
		levels := []string{r.Isolation}
		if r.Transactional {
			levels = Isolations
		}
		name := ""
		if len(runs) > 1 {
			name = r.Name + ": "
		}
		for li, iso := range levels {
			dups := make([]float64, len(r.Frames))
			lost := make([]float64, len(r.Frames))
			for k, f := range r.Frames {
				dups[k], lost[k] = float64(f.Duplicates[iso]), float64(f.Lost[iso])
				ymax = max(ymax, dups[k], lost[k])
			}
			dash := branchDash(i + li)
			ex, ey := extend(append([]float64{}, xs...), dups)
			ld := stepLine(ex, ey, dupCol, 2.2-0.6*float64(li), dash)
			ex, ey = extend(append([]float64{}, xs...), lost)
			ll := stepLine(ex, ey, lostCol, 2.2-0.6*float64(li), dash)
			p.Add(ld, ll)
			suffix := ""
			if r.Transactional || len(runs) > 1 {
				suffix = " (" + iso + ")"
			}
			c.add(name+"duplicates"+suffix, ld)
			c.add(name+"lost"+suffix, ll)
		}
		if r.Transactional {
			held := make([]float64, len(r.Frames))
			for k, f := range r.Frames {
				held[k] = float64(f.HeldBack)
				ymax = max(ymax, held[k])
			}
			ex, ey := extend(append([]float64{}, xs...), held)
			lh := stepLine(ex, ey, heldCol, 1.4, []vg.Length{vg.Points(1), vg.Points(2)})
			p.Add(lh)
			c.add(name+"held back by the LSO (read_committed)", lh)
		}
		m.bands = append(m.bands, rebalanceMarks(r, branchColor(i), i)...)
		m.lines = append(m.lines, crashMarks(r, i)...)
		xmax = max(xmax, lastTick(r))
		if xmin < 0 || firstTick(r) < xmin {
			xmin = firstTick(r)
		}
	}
	addBandLegend(c, runs, "rebalance")
	p.X.Min, p.X.Max = max(xmin, 0), xmax
	p.Add(m)
	c.marks, c.yLo, c.yHi = m, 0, max(ymax, 3)
	return c
}

// partitionColors give every partition on the lag chart a colour of its
// own (Tableau 10, which stays apart for most colour-blind readers too);
// the topic is also told by the dash pattern.
var partitionColors = []color.RGBA{
	{0x4E, 0x79, 0xA7, 0xff},
	{0xF2, 0x8E, 0x2B, 0xff},
	{0xE1, 0x57, 0x59, 0xff},
	{0x76, 0xB7, 0xB2, 0xff},
	{0x59, 0xA1, 0x4F, 0xff},
	{0xED, 0xC9, 0x48, 0xff},
	{0xB0, 0x7A, 0xA1, 0xff},
	{0xFF, 0x9D, 0xA7, 0xff},
	{0x9C, 0x75, 0x5F, 0xff},
	{0xBA, 0xB0, 0xAC, 0xff},
}

// Lag is each input partition's lag (log end minus committed offset) over
// ticks. A world of more partitions than the palette has colours (a real
// group's thousands, each a line and a legend entry, buried the plot under
// its legend) gets the total lag and the partitions whose lag peaked
// highest, the legend saying how many others the total holds.
func Lag(opt Options, r *Run) *Chart {
	if len(r.Partitions) > len(partitionColors) || r.InTotal > 0 {
		return lagTotal(opt, r)
	}
	p := newPlot("Consumer lag per partition ("+r.Name+")", "tick", "lag (records)")
	c := newChart(p, opt, chartW, chartH)
	xs := ticks(r)
	ymax := 0.0
	topicIdx := map[string]int{}
	for i, name := range r.Partitions {
		t := lagTopicOf(name)
		if _, ok := topicIdx[t]; !ok {
			topicIdx[t] = len(topicIdx)
		}
		ys := lagOf(r, i)
		for _, y := range ys {
			ymax = max(ymax, y)
		}
		ex, ey := extend(append([]float64{}, xs...), ys)
		col := partitionColors[i%len(partitionColors)]
		l := stepLine(ex, ey, col, 1.8, branchDash(topicIdx[t]))
		p.Add(l)
		c.add(name, l)
	}
	return lagMarks(c, p, r, ymax)
}

// lagTotal is Lag for many partitions: the sum over every partition, and
// the LagTop partitions with the highest peak (the first in the world's
// order among equals). A run recorded as a total and those partitions
// (Run.InTotal, Recorder.LagTotal) is drawn as the run of every partition
// would be.
func lagTotal(opt Options, r *Run) *Chart {
	top := LagTop
	p := newPlot(fmt.Sprintf("Consumer lag: total and the %d partitions with the most (%s)", top, r.Name), "tick", "lag (records)")
	c := newChart(p, opt, chartW, chartH)
	xs := ticks(r)
	total := make([]float64, len(r.Frames))
	var order []int
	inTotal := r.InTotal
	if inTotal > 0 {
		for k, f := range r.Frames {
			total[k] = float64(f.LagTotal)
		}
		order = make([]int, len(r.Partitions))
		for i := range order {
			order[i] = i
		}
	} else {
		inTotal = len(r.Partitions)
		peak := make([]int, len(r.Partitions))
		for k, f := range r.Frames {
			for i, v := range f.Lag {
				total[k] += float64(v)
				peak[i] = max(peak[i], v)
			}
		}
		order = TopPeaks(peak, top)
	}
	ymax := 0.0
	for _, y := range total {
		ymax = max(ymax, y)
	}
	ex, ey := extend(append([]float64{}, xs...), total)
	l := stepLine(ex, ey, color.RGBA{0x22, 0x22, 0x22, 0xff}, 2.4, nil)
	p.Add(l)
	c.add(fmt.Sprintf("total (%d partitions)", inTotal), l)
	for j, i := range order {
		ex, ey := extend(append([]float64{}, xs...), lagOf(r, i))
		l := stepLine(ex, ey, partitionColors[j], 1.8, nil)
		p.Add(l)
		c.add(r.Partitions[i], l)
	}
	c.add(fmt.Sprintf("+%d other partitions, in the total", inTotal-top))
	return lagMarks(c, p, r, ymax)
}

// lagOf is partition i's lag in each frame.
func lagOf(r *Run, i int) []float64 {
	ys := make([]float64, len(r.Frames))
	for k, f := range r.Frames {
		if i < len(f.Lag) {
			ys[k] = float64(f.Lag[i])
		}
	}
	return ys
}

// lagTopicOf is a partition name's topic (o for the page's o2).
func lagTopicOf(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name[:1]
}

// lagMarks adds the rebalances and crashes to a lag chart and sets its axes.
func lagMarks(c *Chart, p *plot.Plot, r *Run, ymax float64) *Chart {
	m := &marks{bands: rebalanceMarks(r, branchColor(0), 0), lines: crashMarks(r, 0)}
	addBandLegend(c, []*Run{r}, "rebalance")
	p.Add(m)
	p.X.Min, p.X.Max = firstTick(r), lastTick(r)
	c.marks, c.yLo, c.yHi = m, 0, max(ymax, 1)
	return c
}

// clientThumb is a client's legend swatch.
func clientThumb(client string) box { return box{fill: kdraw.ClientColor(client)} }
