package chart

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"

	"github.com/kgrepl/kgrepl/kernel/wallclock"
)

// Real time (SPEC §3a): a chart's data stays in ticks (bands, lines,
// windows and the notebook's XAxis all count ticks), and only the axes
// read them as time: the x axis marks round times from the world's start,
// titled with the tick's length and the ticks shown; a y axis of
// partition x ticks marks seconds. On the page's scale nothing here runs,
// so every chart is drawn as it always was.

// inTime makes a chart's x axis read as time, once the kind has set its
// range.
func (c *Chart) inTime(clk wallclock.Clock) {
	x := &c.Plot.X
	marker := timeTicks{tickMS: clk.TickMS, hours: clk.MS(int(x.Max)) >= 3_600_000}
	x.Tick.Marker = marker
	// The axis ends a tick past the last tick shown (that tick's length).
	first, last := int(math.Ceil(x.Min)), int(x.Max)-1
	last = max(last, first)
	x.Label.Text = fmt.Sprintf("time from the start (%s; a tick is %d ms: ticks %d–%d)",
		marker.form(), clk.TickMS, first, last)
}

// secondsAxis makes a y axis of partition x ticks read as partition x
// seconds.
func (c *Chart) secondsAxis(clk wallclock.Clock, label string) {
	c.Plot.Y.Tick.Marker = timeTicks{tickMS: clk.TickMS, seconds: true}
	c.Plot.Y.Label.Text = label
}

// timeTicks marks an axis counted in ticks at round times: a step of 1, 2
// or 5 times a power of ten milliseconds, or of whole seconds, minutes and
// hours past a second, giving at most max marks (10 when max is 0; the
// chart sets it from the axis's length), and never finer than a tick.
// Labels are times from the start (m:ss, h:mm:ss, with the step's
// decimals) or, for seconds, numbers of seconds.
type timeTicks struct {
	tickMS  int
	max     int
	hours   bool // the axis reaches an hour: h:mm:ss
	seconds bool // label seconds (12.5), not a time of day
}

// timeSteps are the marks' steps past a second, in milliseconds.
var timeSteps = []int64{1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
	900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000}

// form names the labels' form, for the axis title.
func (t timeTicks) form() string {
	if t.hours {
		return "h:mm:ss"
	}
	return "m:ss"
}

func (t timeTicks) Ticks(min, max float64) []plot.Tick {
	most := 10.0
	if t.max > 0 {
		most = float64(t.max)
	}
	most = math.Max(most, 2)
	lo, hi := min*float64(t.tickMS), max*float64(t.tickMS)
	if hi < lo {
		return nil
	}
	span := hi - lo
	var step int64
	for _, s := range []int64{1, 2, 5, 10, 20, 50, 100, 200, 500} {
		if s >= int64(t.tickMS) && span/float64(s) <= most {
			step = s
			break
		}
	}
	if step == 0 {
		for _, s := range timeSteps {
			if s >= int64(t.tickMS) && span/float64(s) <= most {
				step = s
				break
			}
		}
	}
	if step == 0 {
		step = timeSteps[len(timeSteps)-1]
		for span/float64(step) > most {
			step *= 2
		}
	}
	var out []plot.Tick
	for ms := int64(math.Ceil(lo/float64(step))) * step; float64(ms) <= hi+1e-9; ms += step {
		out = append(out, plot.Tick{Value: float64(ms) / float64(t.tickMS), Label: t.label(ms, step)})
	}
	return out
}

// label writes a mark: with as many decimals of a second as the step has.
func (t timeTicks) label(ms, step int64) string {
	decimals := 0
	for d := int64(1000); decimals < 3 && step%d != 0; d /= 10 {
		decimals++
	}
	if t.seconds {
		return strconv.FormatFloat(float64(ms)/1000, 'f', decimals, 64)
	}
	s := fmt.Sprintf("%02d", ms/1000%60)
	if decimals > 0 {
		frac := fmt.Sprintf("%03d", ms%1000)
		s += "." + frac[:decimals]
	}
	if t.hours {
		return fmt.Sprintf("%d:%02d:%s", ms/3_600_000, ms/60_000%60, s)
	}
	return fmt.Sprintf("%d:%s", ms/60_000, s)
}
