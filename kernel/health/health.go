// Package health puts a world's unavailability and its health at the end
// into the words and numbers every view shows them with: metrics, compare
// and explore say the same things the same way. The unit unavailability
// is counted in is named here once: partition x ticks (in real time,
// metrics and the tables of compare and explore write them as partition x
// seconds; so do compare's verdict, chart and CSV, and --json adds
// partition x seconds beside the ticks).
package health

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

// Unit is what unavailability and the pause meter count: partitions times
// ticks. JSONKey is its key in metrics --json and compare --json.
const (
	Unit    = "partition x ticks"
	JSONKey = "unavailable_partition_ticks"
)

// CauseName is a cause as the text views name it.
func CauseName(c sim.Cause) string {
	switch c {
	case sim.CauseRebalance:
		return "rebalance"
	case sim.CauseOwnerDown:
		return "owner down"
	case sim.CauseUnassigned:
		return "unassigned"
	case sim.CauseStopped:
		return "stopped"
	}
	return "available"
}

// Summary is a world's unavailability, most lag and health, as every view
// reads them (and compare --json and explore --json write them).
type Summary struct {
	Unavailable int            `json:"unavailable_partition_ticks"`
	ByCause     map[string]int `json:"unavailable_by_cause"`
	// In real time (time ms): the same in partition x seconds; absent on
	// the page's scale. (metrics --json writes the total from its own
	// field of the same name, at its place after the rolls.)
	UnavailableSeconds *float64           `json:"unavailable_partition_seconds,omitempty"`
	ByCauseSeconds     map[string]float64 `json:"unavailable_by_cause_seconds,omitempty"`
	MaxLag             Lag                `json:"max_lag"`
	Health             Health             `json:"health"`
}

// Lag is the most records an input partition fell behind, where and when
// (first). In real time (time ms) it also has the most time one fell
// behind (sim.Unavailability.TimeLag: the age of the oldest record the
// group has not committed), in seconds, where and when (first): absent on
// the page's scale.
type Lag struct {
	Records   int     `json:"records"`
	Partition *string `json:"partition"`
	Tick      int     `json:"tick"`
	short     string  // the partition's short name (o0), for the text

	Seconds          *float64 `json:"seconds,omitempty"`
	SecondsPartition *string  `json:"seconds_partition,omitempty"`
	SecondsTick      *int     `json:"seconds_tick,omitempty"`
	ticks            int      // the time lag in ticks, for the text
	secondsShort     string
}

// Health is the group at the end.
type Health struct {
	OK      bool     `json:"ok"`
	Members int      `json:"members"`
	Running []string `json:"running"`
	Stopped []Stop   `json:"stopped"`
	Down    []string `json:"down"`
	// Unowned and HeldByDown are partitions by their full names.
	Unowned    []string `json:"unowned_partitions"`
	HeldByDown []string `json:"partitions_held_by_down_members"`
	// Words says it in a line: "ok", or what is wrong, a group with no
	// member running first called dead ("dead: C1..C12 stopped:
	// UNRELEASED_INSTANCE_ID; 48 partitions unowned").
	Words string `json:"words"`
}

// Stop is a member stopped by a fatal error.
type Stop struct {
	Client string `json:"client_id"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// Of reads a world's summary now.
func Of(w *sim.World) Summary {
	u := &w.Unavail
	s := Summary{Unavailable: u.Total, ByCause: map[string]int{}, MaxLag: Lag{Records: u.MaxLag, Tick: u.MaxLagTick}}
	for _, c := range sim.Causes {
		s.ByCause[c.String()] = u.ByCause[c]
	}
	if len(w.Layout().Inputs()) > 0 {
		p := u.MaxLagPartition.String()
		s.MaxLag.Partition, s.MaxLag.short = &p, w.Layout().ShortName(u.MaxLagPartition)
	}
	if w.Cfg.Time == sim.TimeMS {
		secs := func(ticks int) float64 { return float64(int64(ticks)*int64(w.Cfg.TickMS)) / 1000 }
		total := secs(u.Total)
		s.UnavailableSeconds, s.ByCauseSeconds = &total, map[string]float64{}
		for _, c := range sim.Causes {
			s.ByCauseSeconds[c.String()] = secs(u.ByCause[c])
		}
	}
	if ticks, tp, tick, ok := u.TimeLag(w); ok && w.Cfg.Time == sim.TimeMS {
		sec, p := float64(int64(ticks)*int64(w.Cfg.TickMS))/1000, tp.String()
		s.MaxLag.Seconds, s.MaxLag.SecondsPartition, s.MaxLag.SecondsTick = &sec, &p, &tick
		s.MaxLag.ticks, s.MaxLag.secondsShort = ticks, w.Layout().ShortName(tp)
	}
	s.Health = HealthOf(w)
	return s
}

// HealthOf is the world's health now, members in natural order.
func HealthOf(w *sim.World) Health {
	h := w.Health()
	out := Health{OK: h.OK(), Members: h.Clients, Running: natural.Sorted(h.Running), Down: natural.Sorted(h.Down),
		Stopped: []Stop{}, Unowned: names(h.Unowned), HeldByDown: names(h.HeldByDown)}
	if out.Running == nil {
		out.Running = []string{}
	}
	if out.Down == nil {
		out.Down = []string{}
	}
	for _, s := range h.Stopped {
		out.Stopped = append(out.Stopped, Stop{Client: s.Client, Error: s.Error, Reason: s.Reason})
	}
	sort.SliceStable(out.Stopped, func(i, j int) bool { return natural.Less(out.Stopped[i].Client, out.Stopped[j].Client) })
	out.Words = words(w, h, out)
	return out
}

func names(tps []sim.TopicPartition) []string {
	out := make([]string, 0, len(tps))
	for _, tp := range tps {
		out = append(out, tp.String())
	}
	return out
}

// words says what is wrong with the group, or "ok".
func words(w *sim.World, h sim.Health, out Health) string {
	if h.OK() {
		return "ok"
	}
	var parts []string
	// The stopped members, grouped by error, each group in natural order.
	var errs []string
	byErr := map[string][]string{}
	for _, s := range out.Stopped {
		if _, ok := byErr[s.Error]; !ok {
			errs = append(errs, s.Error)
		}
		byErr[s.Error] = append(byErr[s.Error], s.Client)
	}
	for _, e := range errs {
		parts = append(parts, Members(byErr[e])+" stopped: "+e)
	}
	if n := len(h.Unowned); n > 0 {
		parts = append(parts, count(n, "partition")+" unowned"+few(w, h.Unowned))
	}
	if n := len(h.HeldByDown); n > 0 {
		var holders []string
		for _, gm := range w.Group.Members() {
			for _, tp := range append(slices.Clone(gm.Assignment), gm.Revoking...) {
				if slices.Contains(h.HeldByDown, tp) && !slices.Contains(holders, gm.ClientID) {
					holders = append(holders, gm.ClientID)
				}
			}
		}
		parts = append(parts, count(n, "partition")+few(w, h.HeldByDown)+" held by members down ("+Members(holders)+")")
	}
	if out.Members > 0 && len(out.Running) == 0 {
		// Dead: no member runs, and nothing will consume again until
		// someone starts one.
		return "dead: " + strings.Join(parts, "; ")
	}
	return strings.Join(parts, "; ")
}

// few lists a handful of partitions by their short names ( {o0 p2}), and
// nothing for more.
func few(w *sim.World, tps []sim.TopicPartition) string {
	if len(tps) > 6 {
		return ""
	}
	return " " + w.Layout().PartList(tps)
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Members names clients in natural order, runs of three or more
// consecutive numbers as a range: C1..C12, C1 C3, C2..C4 C7.
func Members(clients []string) string {
	cs := natural.Sorted(clients)
	var out []string
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && next(cs[j], cs[j+1]) {
			j++
		}
		switch {
		case j-i >= 2:
			out = append(out, cs[i]+".."+cs[j])
		case j > i:
			out = append(out, cs[i], cs[j])
		default:
			out = append(out, cs[i])
		}
		i = j + 1
	}
	return strings.Join(out, " ")
}

// next reports whether b is the client after a (C9, C10).
func next(a, b string) bool {
	pa, na, oka := split(a)
	pb, nb, okb := split(b)
	return oka && okb && pa == pb && nb == na+1
}

// split is a name's prefix and trailing number (C12: C, 12).
func split(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || (s[i] == '0' && i < len(s)-1) {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i:])
	return s[:i], n, err == nil
}

// Line is the unavailability in one line: "196 (rebalance 168, owner down
// 28)", the causes that count anything, in the views' order.
func (s Summary) Line() string {
	var parts []string
	for _, c := range sim.Causes {
		if n := s.ByCause[c.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", CauseName(c), n))
		}
	}
	if len(parts) == 0 {
		return strconv.Itoa(s.Unavailable)
	}
	return fmt.Sprintf("%d (%s)", s.Unavailable, strings.Join(parts, ", "))
}

// LagLine is the most lag in words, its tick named by at: "10 on o0 at
// tick 0" (the kernel's clock names it with its time in real time).
func (s Summary) LagLine(at func(tick int) string) string {
	if s.MaxLag.Partition == nil {
		return "-"
	}
	return fmt.Sprintf("%d on %s at %s", s.MaxLag.Records, s.MaxLag.short, at(s.MaxLag.Tick))
}

// TimeLagLine is the most time lag in words, in real time only (ok false
// on the page's scale): its length written by dur, its tick named by at:
// "12.5 s (2500 ticks) on o0 at tick 2500 (t=00:00:12.500)".
func (s Summary) TimeLagLine(dur func(ticks int) string, at func(tick int) string) (string, bool) {
	if s.MaxLag.SecondsTick == nil {
		return "", false
	}
	return fmt.Sprintf("%s (%d ticks) on %s at %s", dur(s.MaxLag.ticks), s.MaxLag.ticks, s.MaxLag.secondsShort, at(*s.MaxLag.SecondsTick)), true
}
