package kernel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

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

func clockText(ms int64) string {
	h, ms := ms/3_600_000, ms%3_600_000
	m, ms := ms/60_000, ms%60_000
	return fmt.Sprintf("%02d:%02d:%02d.%03d", h, m, ms/1000, ms%1000)
}

// stamp begins a narration line: t=N on the page's scale (padded as it
// always was), t=TIME (N) in real time.
func (c clock) stamp(tick int) string {
	if !c.real {
		return fmt.Sprintf("t=%-4d", tick)
	}
	return fmt.Sprintf("t=%s (%d)", c.at(tick), tick)
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
func durationText(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	var parts []string
	if h := ms / 3_600_000; h > 0 {
		parts = append(parts, fmt.Sprintf("%d h", h))
	}
	if m := ms / 60_000 % 60; m > 0 {
		parts = append(parts, fmt.Sprintf("%d min", m))
	}
	if s := ms % 60_000; s > 0 {
		txt := strconv.FormatFloat(float64(s)/1000, 'f', 3, 64)
		txt = strings.TrimRight(strings.TrimRight(txt, "0"), ".")
		parts = append(parts, txt+" s")
	}
	return strings.Join(parts, " ")
}

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
	v := strconv.FormatFloat(float64(c.ms(partitionTicks))/1000, 'f', 3, 64)
	return strings.TrimRight(strings.TrimRight(v, "0"), ".") + " s"
}

// The engine's event texts count ticks ("9000 ticks of silence",
// "(max.poll.interval.ms 60000)", "within request.timeout.ms (6000)"):
// it knows no clock. In real time, annotate reads each such count as the
// time it is, at the kernel's edge, leaving the engine's words as they are.
var (
	ticksCount = regexp.MustCompile(`\b(\d+) ticks\b`)
	msCount    = regexp.MustCompile(`(\b[a-z.]+\.ms) \(?(\d+)\)?`)
)

func (c clock) annotate(text string) string {
	if !c.real || !strings.Contains(text, "tick") && !strings.Contains(text, ".ms") {
		return text
	}
	text = ticksCount.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(ticksCount.FindStringSubmatch(m)[1])
		return m + " = " + c.dur(n)
	})
	return msCount.ReplaceAllStringFunc(text, func(m string) string {
		sub := msCount.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return sub[1] + " " + c.dur(n)
	})
}
