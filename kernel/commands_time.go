package kernel

// The commands that move through time: step, run, back, fork, switch and
// branches.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/sim"
)

// outputLevel takes --quiet or --verbose out of a step or run line and
// sets the level of the command; one of them, once.
func (s *Session) outputLevel(cmd string, args []string) ([]string, error) {
	var rest []string
	given := ""
	for _, a := range args {
		switch a {
		case "--quiet", "--verbose":
			switch {
			case given == a:
				return nil, usageErr(cmd, "%s is given twice (give each option once)", a)
			case given != "":
				return nil, usageErr(cmd, "%s and %s contradict each other (give one)", given, a)
			}
			given = a
			s.quietNow = a == "--quiet"
		default:
			rest = append(rest, a)
		}
	}
	return rest, nil
}

func cmdStep(s *Session, args []string) (*Result, error) {
	args, err := s.outputLevel("step", args)
	if err != nil {
		return nil, err
	}
	if err := needArgs("step", args, 0, 1); err != nil {
		return nil, err
	}
	n, read := 1, ""
	if len(args) == 1 {
		// step DURATION in real time: 30s, 1.5m (ticks, rounded up).
		if n, read, err = durationTicks("step", args[0], s.World()); err != nil {
			return nil, err
		}
		if read != "" {
			if err := limitStep.checkf("step", n, fmt.Sprintf("%s = %d ticks", args[0], n)); err != nil {
				return nil, err
			}
		} else if n, err = parseAtLeast("step", "N", args[0], 1, limitStep); err != nil {
			return nil, err
		}
	}
	if err := checkSteps("step", s.World(), n); err != nil {
		return nil, err
	}
	ran, why := s.step(n, nil)
	if why == "interrupted" {
		return nil, interrupted("step")
	}
	r := s.afterRun(ran, why)
	if read != "" {
		r.Text = "step " + read + "\n" + r.Text
	}
	return r, nil
}

func (s *Session) afterRun(ran int, why string) *Result {
	w := s.World()
	c := clockOf(w)
	msg := fmt.Sprintf("%s: group %s, %s", c.tickAt(w.Tick), w.Group.State(), EpochText(w.Group))
	if why != "" {
		after := fmt.Sprintf("%d tick(s)", ran)
		if c.real {
			after += " (" + c.dur(ran) + ")"
		}
		msg = fmt.Sprintf("stopped after %s, %s\n%s", after, why, msg)
	}
	return &Result{Text: msg}
}

func cmdRun(s *Session, args []string) (*Result, error) {
	args, err := s.outputLevel("run", args)
	if err != nil {
		return nil, err
	}
	if len(args) < 2 || args[0] != "until" {
		return nil, usageErr("run", "want `run until stable`, `run until tick N`, `run until time T`, `run until closed|left Cn` or `run until polled|processed RECORD`")
	}
	if args[1] == "time" && len(args) == 3 {
		// run until time T (real time): to the first tick at or after T.
		w := s.World()
		n, read, err := durationTicks("run until time", args[2], w)
		if err == nil && read == "" {
			err = usageErr("run until time", "%s has no unit: a time is a number with a unit (%s), e.g. 10m; for a tick, run until tick %s", args[2], durationUnits, args[2])
		}
		if err != nil {
			return nil, err
		}
		if n > w.Tick {
			if err := checkSteps("run until time "+args[2], w, n-w.Tick); err != nil {
				return nil, err
			}
		}
		ran, why := s.step(limitStep.max, func(w *sim.World) bool { return w.Tick >= n })
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		return s.afterRun(ran, why), nil
	}
	switch {
	case args[1] == "stable" && len(args) == 2:
		bound, recs := runBound(s.World(), min(limitRunUntil.max, limitClock.max-s.World().Tick))
		ran, why := s.step(bound, func(w *sim.World) bool { return w.Settled() })
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		if w := s.World(); why == "" && !w.Settled() && recs {
			return nil, recordsStopped("run until stable", w, ran)
		}
		if w := s.World(); why == "" && !w.Settled() {
			pending := ""
			if p := w.Pending(); len(p) > 0 {
				pending = "; still pending: " + strings.Join(p, "; ")
			}
			return nil, fmt.Errorf("run until stable: the group is not stable after %d ticks (%s)%s", ran, limitRunUntil.helpLine(), pending)
		}
		return s.afterRun(ran, why), nil
	case (args[1] == "closed" || args[1] == "left") && len(args) == 3:
		return runUntilGone(s, args[1], args[2])
	case args[1] == "tick" && len(args) == 3:
		n, err := parseAtLeast("run", "tick", args[2], 0, limitClock)
		if err != nil {
			return nil, err
		}
		if n > s.World().Tick {
			if err := checkSteps("run until tick "+args[2], s.World(), n-s.World().Tick); err != nil {
				return nil, err
			}
		}
		ran, why := s.step(limitStep.max, func(w *sim.World) bool { return w.Tick >= n })
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		return s.afterRun(ran, why), nil
	case (args[1] == "polled" || args[1] == "processed") && (len(args) == 3 || len(args) == 5 && args[3] == "by"):
		kind := sim.EvPolled
		if args[1] == "processed" {
			kind = sim.EvProcessed
		}
		rec, by := args[2], ""
		if len(args) == 5 {
			by = args[4]
			if s.World().Member(by) == nil {
				return nil, fmt.Errorf("run until %s %s by %s: no member %s (members: %s)", args[1], rec, by, by, strings.Join(liveClients(s), " "))
			}
		}
		if !s.World().IsRecord(rec) {
			return nil, fmt.Errorf("run until %s: no input record %q (records are named like %s)", args[1], rec, s.World().Layout().Name(s.World().Layout().Inputs()[0], 3))
		}
		seen := s.World().Events.Len()
		found := false
		bound, recs := runBound(s.World(), min(limitRunUntil.max, limitClock.max-s.World().Tick))
		ran, why := s.step(bound, func(w *sim.World) bool {
			// Headers, then the records of the few of that kind: no text
			// is formatted for the rest, and a run is asked, not spelled.
			for i, h := range w.Events.Headers(seen) {
				if h.Kind == kind && (by == "" || h.Member == by) && w.Events.At(i).Records.Has(rec) {
					found = true
				}
			}
			seen = w.Events.Len()
			return found
		})
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		if why == "" && !found && recs {
			return nil, recordsStopped("run until "+strings.Join(args[1:], " "), s.World(), ran)
		}
		if why == "" && !found {
			cond := args[1] // polled or processed, and by whom if asked
			if by != "" {
				cond += " by " + by
			}
			return nil, fmt.Errorf("run until %s: not %s within %d ticks (%s)", strings.Join(args[1:], " "), cond, ran, limitRunUntil.helpLine())
		}
		return s.afterRun(ran, why), nil
	}
	return nil, usageErr("run", "%q: want `until stable`, `until tick N`, `until time T`, `until closed|left Cn` or `until polled|processed RECORD`", strings.Join(args, " "))
}

func cmdBack(s *Session, args []string) (*Result, error) {
	if err := needArgs("back", args, 0, 1); err != nil {
		return nil, err
	}
	n := 1
	if len(args) == 1 {
		var err error
		if n, err = parseCount("back", "N", args[0], 0, 10_000_000); err != nil {
			return nil, err
		}
	}
	w := s.World()
	if n > w.Tick {
		return nil, fmt.Errorf("back %d: the clock is at tick %d; back goes at most to tick 0 of this world (back %d)", n, w.Tick, w.Tick)
	}
	// From the nearest checkpoint: at most the ticks between two of them
	// are replayed, however long the branch.
	nw, h, err := s.replay(s.cur.hist, w.Tick-n, true)
	if errors.Is(err, ErrInterrupted) {
		return nil, interrupted("back")
	}
	if err != nil {
		return nil, fmt.Errorf("back: %v", err)
	}
	s.cur.world, s.cur.hist, s.cur.frozen = nw, h, false
	return &Result{Text: fmt.Sprintf("back at %s: group %s, %s", clockOf(nw).tickAt(nw.Tick), nw.Group.State(), EpochText(nw.Group))}, nil
}

// maxBranchName bounds a branch name: it is a word typed in commands,
// printed in tables and lists, and written in a saved session's first line.
const maxBranchName = 64

// validBranch accepts a name of letters, digits, '-', '_' and '.': a name is
// one word of the command language (no quoting, ';' and '#' end it), is
// listed after `plot --branches` (',' separates names there), and is
// printed back in tables and errors (no control characters).
func validBranch(cmd, name string) error {
	// Not starting with '-': `switch --json` would read as an option.
	ok := name != "" && utf8.RuneCountInString(name) <= maxBranchName && name[0] != '-'
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.' {
			ok = false
		}
	}
	if !ok {
		return usageErr(cmd, "%q is not a branch name (1 to %d letters, digits, '-', '_' or '.', not starting with '-')", name, maxBranchName)
	}
	return nil
}

func cmdFork(s *Session, args []string) (*Result, error) {
	if err := needArgs("fork", args, 1, 1); err != nil {
		return nil, err
	}
	name := args[0]
	if err := validBranch("fork", name); err != nil {
		return nil, err
	}
	if _, ok := s.branches[name]; ok {
		return nil, fmt.Errorf("fork %s: a branch %s exists already (branches: %s)", name, name, strings.Join(s.branchNames(), " "))
	}
	// Neither a copy nor a replay: the world now becomes a checkpoint both
	// branches share, with the history before it; the first command that
	// changes either world works on a clone of it.
	b := s.cur
	if !b.frozen {
		b.hist.cps = append(b.hist.cps, &checkpoint{tick: b.world.Tick, next: len(b.hist.inputs), world: b.world})
		b.frozen = true
	}
	// Both count toward their next checkpoint from this one.
	b.cp = cpClock{lastClone: b.cp.lastClone}
	nb := &branch{name: name, hist: b.hist.shared(), world: b.world, frozen: true, cp: b.cp}
	s.branches[name] = nb
	from := s.cur.name
	s.cur = nb
	return &Result{Text: fmt.Sprintf("forked %s from %s at %s; now on %s", name, from, clockOf(nb.world).tickAt(nb.world.Tick), name)}, nil
}

func cmdSwitch(s *Session, args []string) (*Result, error) {
	if err := needArgs("switch", args, 1, 1); err != nil {
		return nil, err
	}
	b, ok := s.branches[args[0]]
	if !ok {
		return nil, fmt.Errorf("switch %s: no branch %s (branches: %s)", args[0], args[0], strings.Join(s.branchNames(), " "))
	}
	s.cur = b
	return &Result{Text: fmt.Sprintf("on %s at %s", b.name, clockOf(b.world).tickAt(b.world.Tick))}, nil
}

func cmdBranches(s *Session, args []string) (*Result, error) {
	if err := needArgs("branches", args, 0, 0); err != nil {
		return nil, err
	}
	t := &Table{Header: []string{"", "BRANCH", "TICK", "STATE", "GENERATION"}}
	for _, n := range s.branchNames() {
		b := s.branches[n]
		mark := ""
		if b == s.cur {
			mark = "*"
		}
		tick := strconv.Itoa(b.world.Tick)
		if c := clockOf(b.world); c.real {
			tick += " (t=" + c.at(b.world.Tick) + ")"
		}
		t.Add(mark, n, tick, string(b.world.Group.State()), strconv.Itoa(generationOf(b.world.Group)))
	}
	return &Result{Text: t.Text(), Table: t, HTML: s.htmlOf(t)}, nil
}
