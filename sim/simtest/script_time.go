package simtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kgrepl/kgrepl/sim"
)

// maxRun bounds `run until stable` and `run until closed Cn`, so a
// scenario that never gets there fails at its line instead of hanging: a
// member stopped by a fatal error, or one retrying for ever, must not keep
// a script running. Scripts are short (none needs a hundred ticks to
// settle); the kernel's `run`, for users' long sessions, allows 100,000.
const maxRun = 2_000

// step [N]: N ticks (1 by default), printing their events; like the
// kernel's step it halts at a stop event (a crash taking effect, a slow
// record starting).
func (s *Script) handleStep(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 0, 1, "step [N]")
	n := 1
	if len(ws) == 1 {
		n = number(t, d, "N", ws[0], 1)
	}
	return s.steps(t, d, n, nil), nil
}

// run until stable | run until tick N | run until closed Cn: ticks until
// the group is settled (World.GroupSettled), the clock reaches N, or Cn's
// process has stopped, halting at a stop event.
func (s *Script) handleRun(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 2, 3, "run until stable, run until tick N, or run until closed Cn")
	switch {
	case ws[0] == "until" && ws[1] == "stable" && len(ws) == 2:
		out := s.steps(t, d, maxRun, (*sim.World).GroupSettled)
		if !s.w.GroupSettled() && !strings.Contains(out, "stopped after") {
			d.Fatalf(t, "run until stable: not stable after %d ticks", maxRun)
		}
		return out, nil
	case ws[0] == "until" && ws[1] == "tick" && len(ws) == 3:
		n := number(t, d, "tick", ws[2], 0)
		return s.steps(t, d, max(n-s.w.Tick, 0), func(w *sim.World) bool { return w.Tick >= n }), nil
	case ws[0] == "until" && ws[1] == "closed" && len(ws) == 3:
		if s.w.Member(ws[2]) == nil {
			d.Fatalf(t, "run until closed %s: no member %s", ws[2], ws[2])
		}
		out := s.steps(t, d, maxRun, func(w *sim.World) bool { return !w.Member(ws[2]).Alive })
		if s.w.Member(ws[2]).Alive && !strings.Contains(out, "stopped after") {
			d.Fatalf(t, "run until closed %s: still running after %d ticks", ws[2], maxRun)
		}
		return out, nil
	}
	d.Fatalf(t, "run: want run until stable, run until tick N, or run until closed Cn")
	return "", nil
}

// steps runs at most n ticks, until done holds (nil: never), checking the
// engine's invariants after each, and prints their events and where the
// group stands at the end, as the kernel's step and run do.
func (s *Script) steps(t testing.TB, d *datadriven.TestData, n int, done func(*sim.World) bool) string {
	var b strings.Builder
	ran, why := 0, ""
	for ran < n && (done == nil || !done(s.w)) {
		from := s.w.Events.Len()
		stop := s.w.Step()
		ran++
		if err := s.check.Check(s.w); err != nil {
			d.Fatalf(t, "invariant broken: %v", err)
		}
		evs := s.w.Events.Slice(from, s.w.Events.Len())
		s.narrate(&b, evs)
		if stop {
			for _, e := range evs {
				if e.Stop {
					why = e.Text
				}
			}
			break
		}
	}
	if why != "" {
		fmt.Fprintf(&b, "stopped after %d tick(s), stop event: %s\n", ran, why)
	}
	g := s.w.Group.Describe()
	epoch := fmt.Sprintf("generation %d", g.Generation)
	if g.Type == sim.ConsumerGroup {
		epoch = fmt.Sprintf("group epoch %d", g.GroupEpoch)
	}
	fmt.Fprintf(&b, "tick %d: group %s, %s", s.w.Tick, g.State, epoch)
	return b.String()
}

// hide [KIND ...]: the narration leaves out events of these kinds (e.g.
// polled processed) from here on; hide alone shows every kind again.
func (s *Script) handleHide(t testing.TB, d *datadriven.TestData) (string, error) {
	all := []sim.EventKind{sim.EvGroupState, sim.EvGeneration, sim.EvAssigned, sim.EvRevoked, sim.EvRemoved, sim.EvPollTimeout,
		sim.EvCrash, sim.EvSlowStart, sim.EvPolled, sim.EvProcessed, sim.EvCommitFailed, sim.EvCommitted, sim.EvClosed,
		sim.EvStarted, sim.EvStaticRejoin, sim.EvTxnState, sim.EvFenced, sim.EvRetry, sim.EvInput, sim.EvSideEffect,
		sim.EvZombie, sim.EvUnstableOffset, sim.EvProducer, sim.EvDeploy}
	kinds := map[sim.EventKind]bool{}
	for _, w := range wantWords(t, d, 0, len(all), "hide [KIND ...]") {
		known := false
		for _, k := range all {
			known = known || k == sim.EventKind(w)
		}
		if !known {
			d.Fatalf(t, "hide: no event kind %q (kinds: %v)", w, all)
		}
		kinds[sim.EventKind(w)] = true
	}
	s.hidden = kinds
	return "", nil
}
