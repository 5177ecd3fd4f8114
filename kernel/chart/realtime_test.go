package chart_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
)

// TestRealTimeAxes: with a real-time clock every kind's x axis marks times
// and says the tick's length and the ticks shown, the pause meter reads
// partition x seconds, and the data stays in ticks (the notebook's XAxis).
// With the page's clock (the zero Clock) a chart is the one it always was:
// the golden SVGs (TestChartsGolden) pin that byte for byte, and here the
// zero Clock is checked to draw exactly what Options without one draws.
func TestRealTimeAxes(t *testing.T) {
	s := demoSession(t, 2)
	run := record(t, s, chart.NeedAll)
	clk := wallclock.Clock{TickMS: 5}
	for _, kind := range chart.Kinds {
		page, err := chart.Build(kind, chart.Options{}, run)
		if err != nil {
			t.Fatal(err)
		}
		zero, _ := chart.Build(kind, chart.Options{Clock: wallclock.Clock{}}, run)
		a, _ := page.SVG()
		b, _ := zero.SVG()
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the zero Clock draws another chart", kind)
		}
		c, err := chart.Build(kind, chart.Options{Clock: clk, From: 0, To: 30}, run)
		if err != nil {
			t.Fatal(err)
		}
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, svg)
		if !contains(texts, "time from the start (m:ss; a tick is 5 ms: ticks 0–30)") {
			t.Errorf("%s: no time axis title in %q", kind, texts)
		}
		// Ticks 0..30 of 5 ms are 0.155 s: marks at round hundredths.
		for _, want := range []string{"0:00.00", "0:00.05", "0:00.10"} {
			if !contains(texts, want) {
				t.Errorf("%s: no mark %q in %q", kind, want, texts)
			}
		}
		if contains(texts, "tick") {
			t.Errorf("%s: the x axis is still titled tick", kind)
		}
		if ax := c.XAxis(); ax.Min != 0 || ax.Max != 31 {
			t.Errorf("%s: the axis left ticks: %+v", kind, ax)
		}
		if kind == "pause" {
			joined := strings.Join(texts, "|")
			for _, want := range []string{"partition × seconds paused (total)", "Pause meter: paused partitions × seconds (main, range)"} {
				if !strings.Contains(joined, want) {
					t.Errorf("pause: no %q in %q", want, texts)
				}
			}
			want := clk.Seconds(run.FinalPause)
			if !strings.Contains(joined, want+" in ") {
				t.Errorf("pause: the legend does not give %s (%d partition x ticks) in seconds: %q", want, run.FinalPause, texts)
			}
		}
	}
}

// TestTimeTicks: the marks fall on round times, never finer than a tick,
// with as many decimals as the step has, in h:mm:ss past an hour.
func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		tickMS   int
		min, max float64 // ticks
		want     string
	}{
		{5, 0, 12001, "0:00 0:10 0:20 0:30 0:40 0:50 1:00"}, // 5 s steps would make 13 marks
		{5, 1190, 1230, "0:05.96 0:05.98 0:06.00 0:06.02 0:06.04 0:06.06 0:06.08 0:06.10 0:06.12 0:06.14"},
		{5, 0, 3, "0:00.000 0:00.005 0:00.010 0:00.015"}, // a 5 ms tick: no 1 or 2 ms steps
		{1000, 0, 3, "0:00 0:01 0:02 0:03"},              // a 1 s tick: whole seconds, no decimals
		{100, 0, 36_000 * 2, "0:00:00 0:10:00 0:20:00 0:30:00 0:40:00 0:50:00 1:00:00 1:10:00 1:20:00 1:30:00 1:40:00 1:50:00 2:00:00"},
	} {
		got := chart.TimeTickLabels(tc.tickMS, tc.min, tc.max, 12)
		if got != tc.want {
			t.Errorf("tick.ms %d, ticks %v..%v: %q, want %q", tc.tickMS, tc.min, tc.max, got, tc.want)
		}
	}
}
