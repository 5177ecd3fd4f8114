package kernel

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/sim"
)

// Scrub is a window of ticks of the current branch drawn ahead, for a
// notebook's tick slider (kernel/nb): the world diagram of every tick as
// one animated diagram (`diagram --ticks From..To`, frame k is tick
// From+k), the pause meter over the same ticks with where each tick falls
// on it, and what happened at each tick.
type Scrub struct {
	Branch   string
	From, To int
	// Diagram is the animated SVG of `diagram --ticks From..To`: it plays
	// by itself where no script runs, and a script can hold it at a frame.
	Diagram string
	// Pause is the pause meter (`plot pause --ticks From..To`) as SVG, and
	// PauseX[k] where tick From+k falls across it, as a fraction of its width.
	Pause  string
	PauseX []float64
	// Trace[k] is tick From+k: its events and the messages sent in it.
	Trace []string
}

// MaxScrubTicks bounds a scrub's window: every tick is a frame of an
// animated diagram, which holds at most this many.
const MaxScrubTicks = maxFrames

// Scrub draws ticks from..to of a branch ("" = the one in use; to < 0:
// up to the branch's tick now; from < 0: the last MaxScrubTicks ticks up
// to to; a window of more ticks is refused). Like the picture commands, it
// replays the branch and changes nothing.
func (s *Session) Scrub(branch string, from, to int) (*Scrub, error) {
	if branch != "" && branch != s.cur.name {
		b, ok := s.branches[branch]
		if !ok {
			return nil, fmt.Errorf("scrub --branch %s: no branch %s (branches: %s)", branch, branch, strings.Join(s.branchNames(), " "))
		}
		saved := s.cur
		s.cur = b
		defer func() { s.cur = saved }()
	}
	w := s.World()
	if to < 0 {
		to = w.Tick
	}
	if from < 0 {
		from = max(0, to-MaxScrubTicks+1)
	}
	ticks := strconv.Itoa(from) + ".." + strconv.Itoa(to)
	switch {
	case to < from:
		return nil, fmt.Errorf("scrub --ticks %s: want A..B with 0 <= A < B", ticks)
	case to > w.Tick:
		return nil, fmt.Errorf("scrub --ticks %s: the branch is at tick %d (step or run to reach tick %d)", ticks, w.Tick, to)
	case to == from:
		return nil, fmt.Errorf("scrub --ticks %s: a slider needs at least two ticks (A..B with B > A)", ticks)
	case to-from+1 > MaxScrubTicks:
		return nil, fmt.Errorf("scrub --ticks %s: %d ticks, and a slider holds at most %d (a frame per tick)", ticks, to-from+1, MaxScrubTicks)
	}
	d, err := cmdDiagram(s, []string{"--ticks", ticks})
	if err != nil {
		return nil, err
	}
	if d.SVG == "" {
		return nil, errors.New("scrub: the diagram command drew no SVG")
	}
	sc := &Scrub{Branch: s.cur.name, From: from, To: to, Diagram: d.SVG}

	how := plotRecording{ticks: true, from: from, to: to}
	if _, err := s.checkPlot("pause", []string{s.cur.name}, how); err != nil {
		return nil, err
	}
	run, err := s.recordBranch(s.cur.name, chart.NeedOf("pause"), how)
	if err != nil {
		if errors.Is(err, ErrInterrupted) {
			return nil, interrupted("scrub")
		}
		return nil, fmt.Errorf("scrub: %v", err)
	}
	c, err := chart.Build("pause", chart.Options{From: from, To: to, Width: scrubChartW, Height: scrubChartH}, run)
	if err != nil {
		return nil, fmt.Errorf("scrub: %v", err)
	}
	svg, err := c.SVG()
	if err != nil {
		return nil, fmt.Errorf("scrub: %v", err)
	}
	sc.Pause = string(svg)
	ax := c.XAxis()
	for t := from; t <= to; t++ {
		sc.PauseX = append(sc.PauseX, ax.At(float64(t)))
	}

	// The messages sent from the window's first tick on (trace --from),
	// made again by replaying when the world let them go (history.ms).
	if w, _, err = s.detailWorld("scrub --ticks", from); err != nil {
		return nil, err
	}
	pkts, err := s.filterPackets(w, "", "", listWindow{from: from, hasFrom: true})
	if err != nil {
		return nil, err
	}
	sc.Trace = scrubTrace(w, pkts, from, to)
	return sc, nil
}

// scrubTrace writes, for each tick of the window, the events of that tick
// and the messages sent in it, as the trace names them.
func scrubTrace(w *sim.World, pkts packetSet, from, to int) []string {
	var evs, msgs = make([][]string, to-from+1), make([][]string, to-from+1)
	for _, e := range w.Events.All() {
		if e.Kind == sim.EvProduced || e.Tick < from || e.Tick > to {
			continue
		}
		evs[e.Tick-from] = append(evs[e.Tick-from], e.Text)
	}
	for j := range pkts.len() {
		p := w.Packets.At(pkts.at(j))
		if p.Sent > to {
			break // the trace is in the order packets were sent
		}
		if p.Sent < from {
			continue
		}
		typ := string(p.Type)
		if p.Response && p.Type != sim.RebalanceNotification {
			typ += " response"
		}
		line := p.From + " → " + p.To + " " + typ
		if p.Error != sim.None {
			line += " " + p.Error.String()
		}
		if p.Summary != "" {
			line += ": " + p.Summary
		}
		switch {
		case p.Lost:
			line += " (lost)"
		case p.Delivered >= 0:
			line += fmt.Sprintf(" (arrives t=%d)", p.Delivered)
		default:
			line += " (in flight)"
		}
		msgs[p.Sent-from] = append(msgs[p.Sent-from], line)
	}
	out := make([]string, to-from+1)
	for k := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "t=%d", from+k)
		if len(evs[k]) == 0 && len(msgs[k]) == 0 {
			b.WriteString(": nothing happened")
		}
		for _, e := range evs[k] {
			b.WriteString("\n  " + e)
		}
		if len(msgs[k]) > 0 {
			fmt.Fprintf(&b, "\n  %d message(s) sent:", len(msgs[k]))
			for _, m := range msgs[k] {
				b.WriteString("\n    " + m)
			}
		}
		out[k] = b.String()
	}
	return out
}

// The pause meter's size in a scrub: narrow and low enough to sit beside
// the trace under the diagram.
const (
	scrubChartW = 640
	scrubChartH = 300
)
