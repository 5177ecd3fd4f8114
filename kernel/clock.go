package kernel

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kgrepl/kgrepl/kernel/wallclock"
	"github.com/kgrepl/kgrepl/sim"
)

// clock reads a world's ticks as time, at the kernel's edge: the engine
// counts ticks, and in real time (SPEC §3a: time ms) the views show each
// tick as the time it is, tick x tick.ms milliseconds from the world's
// start. On the page's scale (time ticks) every view prints ticks, as it
// always has.
type clock struct {
	real   bool
	tickMS int
}

func clockOf(w *sim.World) clock {
	return clock{real: w.Cfg.Time == sim.TimeMS, tickMS: w.Cfg.TickMS}
}

// ms is a tick's time in milliseconds.
func (c clock) ms(tick int) int64 { return int64(tick) * int64(c.tickMS) }

// at is a tick as a time of day from the world's start: 00:01:32.100.
func (c clock) at(tick int) string { return clockText(c.ms(tick)) }

func clockText(ms int64) string { return wallclock.Text(ms) }

// pictures is the clock as the pictures (kernel/chart, kernel/draw) read
// it: the zero wallclock.Clock on the page's scale.
func (c clock) pictures() wallclock.Clock {
	if !c.real {
		return wallclock.Clock{}
	}
	return wallclock.Clock{TickMS: c.tickMS}
}

// stamp begins a narration line: t=N on the page's scale (padded as it
// always was), t=TIME (N) in real time.
func (c clock) stamp(tick int) string {
	if !c.real {
		return fmt.Sprintf("t=%-4d", tick)
	}
	return fmt.Sprintf("t=%s (%d)", c.at(tick), tick)
}

// cell is a tick in a table's column: N on the page's scale, TIME (N) in
// real time (trace's SENT, offsets' TICK, the rolls' span).
func (c clock) cell(tick int) string {
	if !c.real {
		return strconv.Itoa(tick)
	}
	return fmt.Sprintf("%s (%d)", c.at(tick), tick)
}

// tickAt names a tick where a message says "tick N": with its time in
// real time ("tick 9000 (t=00:00:45.000)").
func (c clock) tickAt(tick int) string {
	if !c.real {
		return "tick " + strconv.Itoa(tick)
	}
	return fmt.Sprintf("tick %d (t=%s)", tick, c.at(tick))
}

// dur is a span of ticks as a duration: "12.4 s".
func (c clock) dur(ticks int) string { return durationText(c.ms(ticks)) }

// durationText writes milliseconds as a person reads them: 45 ms, 12.4 s,
// 5 min, 1 h 2 min 3.5 s (no rounding: every millisecond is shown).
func durationText(ms int64) string { return wallclock.Duration(ms) }

// durationUnits are the units a typed duration may carry.
const durationUnits = "ms, s, m or h"

// parseDuration reads a duration typed with a unit (300ms, 30s, 1.5m,
// 10m, 1h30m: Go's duration syntax, in the units ms, s, m and h) as whole
// milliseconds. hasUnit says whether the word carries a unit at all (a
// bare number is ticks, everywhere).
func parseDuration(word string) (ms int64, hasUnit bool, err error) {
	if strings.Trim(strings.TrimPrefix(word, "-"), "0123456789") == "" {
		return 0, false, nil // a number: ticks, which the caller reads and bounds
	}
	for _, u := range []string{"ns", "us", "µs", "μs"} {
		if strings.Contains(word, u) {
			return 0, true, fmt.Errorf("%q: the units are %s (a tick lasts at least a millisecond)", word, durationUnits)
		}
	}
	d, e := time.ParseDuration(word)
	if e != nil || d <= 0 {
		return 0, true, fmt.Errorf("%q is not a duration: a positive number with a unit (%s), e.g. 30s, 1.5m, 10m, 1h30m, 250ms", word, durationUnits)
	}
	if d%time.Millisecond != 0 {
		return 0, true, fmt.Errorf("%q is not a whole number of milliseconds (%s)", word, d)
	}
	return d.Milliseconds(), true, nil
}

// durationTicks converts a typed duration into ticks for cmd: bare
// numbers are ticks; a duration with a unit needs a world in real time,
// and is at least one tick, rounded up to whole ticks. It also says how
// the duration read, for the command's answer ("" for bare ticks).
func durationTicks(cmd, word string, w *sim.World) (ticks int, read string, err error) {
	c := clockOf(w)
	ms, hasUnit, err := parseDuration(word)
	if err != nil && !c.real && !strings.ContainsAny(word, "0123456789") {
		return 0, "", nil // not a duration at all: the caller's error for a number of ticks says what to type here
	}
	if err != nil {
		return 0, "", usageErr(cmd, "%v", err)
	}
	if !hasUnit {
		return 0, "", nil
	}
	if !c.real {
		return 0, "", usageErr(cmd, "%s is a time, and this world counts ticks (time ticks, the page's scale): a time needs real time (set time ms, or new --kafka-defaults); here give ticks, a whole number", word)
	}
	if ms < int64(c.tickMS) {
		return 0, "", usageErr(cmd, "%s is less than one tick (tick.ms %d): the clock moves a tick at a time", word, c.tickMS)
	}
	t := (ms + int64(c.tickMS) - 1) / int64(c.tickMS)
	if t > int64(limitClock.max) {
		return 0, "", limitClock.checkf(cmd, limitClock.max+1, fmt.Sprintf("%s = %d ticks of %d ms", word, t, c.tickMS))
	}
	read = fmt.Sprintf("%s = %d tick(s) of %d ms", durationText(ms), t, c.tickMS)
	if t*int64(c.tickMS) != ms {
		read = fmt.Sprintf("%s, rounded up to %d tick(s) of %d ms (%s)", durationText(ms), t, c.tickMS, durationText(t*int64(c.tickMS)))
	}
	return int(t), read, nil
}

// partSeconds writes partition x ticks as partition x seconds: "1.25 s".
func partSeconds(c clock, partitionTicks int) string {
	return wallclock.SecondsText(c.ms(partitionTicks))
}

// tickCount is what a table's count of ticks counts.
type tickCount int

const (
	aTick          tickCount = iota // a moment: the clock's tick (TICK)
	aSpan                           // a span of ticks (TICKS)
	partitionTicks                  // partition x ticks (UNAVAILABLE, PAUSE, a cause)
)

// count is a table cell that counts ticks: the number on the page's
// scale, and in real time as metrics writes it: a moment as its time with
// the tick (00:01:00.000 (12000)), a span as a duration (12.4 s),
// partition x ticks as partition x seconds (36.15 s). compare's and
// explore's tables write their ticks with it.
func (c clock) count(n int, k tickCount) string {
	if !c.real {
		return strconv.Itoa(n)
	}
	switch k {
	case aTick:
		return c.cell(n)
	case aSpan:
		return c.dur(n)
	}
	return partSeconds(c, n)
}

// annotate reads the engine's tick counts in an event text as time, in
// real time (wallclock.Clock.Annotate).
func (c clock) annotate(text string) string { return c.pictures().Annotate(text) }
