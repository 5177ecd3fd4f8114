// Package wallclock reads a world's ticks as time (SPEC §3a): on the
// page's scale (time ticks) a picture or a view prints ticks, as it always
// has; in real time (time ms) a tick lasts tick.ms milliseconds from the
// world's start, and times print as times. The kernel's views and the
// pictures (kernel/chart, kernel/draw) share these texts, so a time reads
// the same everywhere.
package wallclock

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// Clock is a world's clock as the pictures read it: TickMS 0 is the
// page's scale (ticks), TickMS > 0 real time with a tick of that many
// milliseconds.
type Clock struct{ TickMS int }

// Of is a world's clock: real time when its setting time is ms.
func Of(w *sim.World) Clock {
	if w.Cfg.Time != sim.TimeMS {
		return Clock{}
	}
	return Clock{TickMS: w.Cfg.TickMS}
}

// Real says whether the clock reads ticks as time.
func (c Clock) Real() bool { return c.TickMS > 0 }

// MS is a tick's time in milliseconds from the world's start.
func (c Clock) MS(tick int) int64 { return int64(tick) * int64(c.TickMS) }

// At is a tick as a time of day from the world's start: 00:01:32.100.
func (c Clock) At(tick int) string { return Text(c.MS(tick)) }

// Stamp is how a picture names a tick: t=N on the page's scale, t=TIME
// (N) in real time.
func (c Clock) Stamp(tick int) string {
	if !c.Real() {
		return "t=" + strconv.Itoa(tick)
	}
	return fmt.Sprintf("t=%s (%d)", c.At(tick), tick)
}

// TickAt names a tick in a sentence: "tick N", or in real time
// "00:00:45.000 (tick 9000)".
func (c Clock) TickAt(tick int) string {
	if !c.Real() {
		return "tick " + strconv.Itoa(tick)
	}
	return fmt.Sprintf("%s (tick %d)", c.At(tick), tick)
}

// Dur is a span of ticks as a duration ("12.4 s"), or "N" ticks on the
// page's scale.
func (c Clock) Dur(ticks int) string {
	if !c.Real() {
		return strconv.Itoa(ticks)
	}
	return Duration(c.MS(ticks))
}

// Seconds writes a count of ticks (partition x ticks, say) as seconds
// ("36.15 s"), or "N" on the page's scale.
func (c Clock) Seconds(ticks int) string {
	if !c.Real() {
		return strconv.Itoa(ticks)
	}
	return SecondsText(c.MS(ticks))
}

// Text writes milliseconds from the world's start as a time of day:
// 00:01:32.100.
func Text(ms int64) string {
	h, ms := ms/3_600_000, ms%3_600_000
	m, ms := ms/60_000, ms%60_000
	return fmt.Sprintf("%02d:%02d:%02d.%03d", h, m, ms/1000, ms%1000)
}

// Duration writes milliseconds as a person reads them: 45 ms, 12.4 s,
// 5 min, 1 h 2 min 3.5 s (no rounding: every millisecond is shown).
func Duration(ms int64) string {
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
		parts = append(parts, trimDecimals(float64(s)/1000)+" s")
	}
	return strings.Join(parts, " ")
}

// SecondsText writes milliseconds as seconds, to the millisecond: "1.25 s".
func SecondsText(ms int64) string { return trimDecimals(float64(ms)/1000) + " s" }

func trimDecimals(v float64) string {
	txt := strconv.FormatFloat(v, 'f', 3, 64)
	return strings.TrimRight(strings.TrimRight(txt, "0"), ".")
}

// The engine's event texts count ticks ("9000 ticks of silence",
// "(max.poll.interval.ms 60000)", "within request.timeout.ms (6000)",
// "restarted in 400 tick(s)", "pause meter 120 partition x ticks"):
// it knows no clock. In real time, Annotate reads each such count as the
// time it is, at the kernel's edge, leaving the engine's words as they are.
var (
	ticksCount = regexp.MustCompile(`\b(\d+) (?:ticks\b|tick\(s\))`)
	partTicks  = regexp.MustCompile(`\b(\d+) partition x ticks\b`)
	msCount    = regexp.MustCompile(`(\b[a-z.]+\.ms) \(?(\d+)\)?`)
)

// Annotate reads an event text's tick counts as time; on the page's scale
// the text is returned as it is.
func (c Clock) Annotate(text string) string {
	if !c.Real() || !strings.Contains(text, "tick") && !strings.Contains(text, ".ms") {
		return text
	}
	text = ticksCount.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(ticksCount.FindStringSubmatch(m)[1])
		return m + " = " + c.Dur(n)
	})
	text = partTicks.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(partTicks.FindStringSubmatch(m)[1])
		return m + " = " + strings.TrimSuffix(c.Seconds(n), " s") + " partition x seconds"
	})
	return msCount.ReplaceAllStringFunc(text, func(m string) string {
		sub := msCount.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return sub[1] + " " + c.Dur(n)
	})
}
