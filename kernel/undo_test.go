package kernel

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrepl/kgrepl/sim"
)

// execCatching is Exec that reports a panic instead of dying of it.
func execCatching(s *Session, line string) (out string, err error, panicked any) {
	defer func() { panicked = recover() }()
	out, err = s.Exec(line)
	return out, err, nil
}

// sessionAndViews is everything a command could change (every branch and
// its history) and what the branch in use shows.
func sessionAndViews(t *testing.T, s *Session) string {
	t.Helper()
	return sessionSnapshot(t, s) + "\n" + s.Prompt()
}

// sessionLight is sessionAndViews without the trace, for long branches.
func sessionLight(t *testing.T, s *Session) string {
	t.Helper()
	var b strings.Builder
	for _, n := range s.branchNames() {
		br := s.branches[n]
		fmt.Fprintf(&b, "%s tick %d frozen %v\n%s\n", n, br.world.Tick, br.frozen, strings.TrimSuffix(scriptText(br.scriptLines(false)), "\n"))
	}
	return b.String() + "on " + s.Branch() + "\n" + runLines(t, s, "describe group --json\nmetrics --json") + s.Prompt()
}

// saveLoadRoundTrip saves the branch in use, loads the file back into it
// and checks that it shows the same: a session an undo left with a world
// apart from its history writes a file load refuses, or one that loads
// into another world.
func saveLoadRoundTrip(t *testing.T, s *Session, what string) {
	t.Helper()
	want := threeViews(t, s)
	if _, err := s.Exec("save undo.kg"); err != nil {
		t.Fatalf("%s: save: %v", what, err)
	}
	if _, err := s.Exec("load undo.kg"); err != nil {
		t.Fatalf("%s: load of what save wrote: %v", what, err)
	}
	if got := threeViews(t, s); got != want {
		t.Fatalf("%s: save and load differ: %s", what, firstLineDiff(got, want))
	}
}

// TestCtrlCHeldDownDuringUndo holds Ctrl-C down (Session.Interrupt from
// another goroutine, over and over, as the REPL passes on every SIGINT)
// while a long step runs on a branch with no checkpoint since tick 0: the
// first press stops the step, the others land in its undo. The undo must
// finish (it panicked with "rollback: the history does not replay:
// interrupted" and left the world at the tick the step reached while the
// history said otherwise, so save wrote a file load refused).
func TestCtrlCHeldDownDuringUndo(t *testing.T) {
	for _, protocol := range []string{"classic", "consumer"} {
		s := NewSession()
		s.Dir = t.TempDir()
		s.CheckpointEvery = 1_000_000 // an undo by replay would replay from tick 0
		runLines(t, s, "set group.protocol "+protocol+"\nnew --keep-settings\njoin C2\nrun until stable\nstep 10000")
		before := sessionLight(t, s)
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for !stop.Load() {
				s.Interrupt()
				time.Sleep(20 * time.Microsecond)
			}
		}()
		_, err, p := execCatching(s, "step 100000")
		stop.Store(true)
		<-done
		if p != nil {
			t.Fatalf("%s: Ctrl-C held down during step 100000: panic %v", protocol, p)
		}
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("%s: Ctrl-C held down during step 100000: %v, want interrupted", protocol, err)
		}
		if got := sessionLight(t, s); got != before {
			t.Fatalf("%s: the interrupted step changed the session: %s", protocol, firstLineDiff(got, before))
		}
		saveLoadRoundTrip(t, s, protocol)
	}
}

// TestRefusedCommandsTouchNothing: a command refused before it changes the
// world leaves the very world it found, not a copy made again by replaying
// the history (`set bogus.key 1` on a 1,000-member world replayed for 33 s
// before it said no), and a step or run stopped anywhere is undone by
// putting back the world it started from.
func TestRefusedCommandsTouchNothing(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	s.CheckpointEvery = 1_000_000
	runLines(t, s, "join C2\nrun until stable\nstep 3000\nset C1.max.poll.records 2")
	refused := []string{
		"set bogus.key 1", "set C1.bogus.key 1", "set max.poll.records x", "set commit sideways", "set producer loud",
		"set records.per.partition 2000000", "join C2", "join C3 --topics nope", "join X", "close C9", "close C1 --later",
		"crash C9", "crash C1 after 0", "crash C1 later", "restart C9", "slow C9", "produce o0 0", "produce nope 1",
		"produce invoices-0 1", "drop Bogus", "drop Produce sideways", "drop Produce C1 C2", "step 0", "step -1", "step x",
		"step 2000000", "run until never", "run until tick x", "run until processed nope", "new --members x",
		"new --topics t:0", "back 1000000", "fork main", "switch nope", "load nope.kg", "demo 99",
	}
	for _, cmd := range refused {
		w, before := s.World(), sessionAndViews(t, s)
		if _, err := s.Exec(cmd); err == nil {
			t.Fatalf("%s was not refused", cmd)
		}
		if s.World() != w {
			t.Errorf("%s: refused, and the world was replaced (an undo that remade it)", cmd)
		}
		if got := sessionAndViews(t, s); got != before {
			t.Errorf("%s: refused, and the session changed: %s", cmd, firstLineDiff(got, before))
		}
	}
	// Stopped after it changed the world: the world it started from is back.
	for _, cmd := range []string{"step 500", "run until tick 4000", "run until stable"} {
		runLines(t, s, "crash C2 now")
		w, before := s.World(), sessionAndViews(t, s)
		polls := 0
		s.interrupt.onPoll = func() {
			if polls++; polls == 3 {
				s.Interrupt()
			}
		}
		_, err := s.Exec(cmd)
		s.interrupt.onPoll = nil
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("%s interrupted at its 3rd poll: %v", cmd, err)
		}
		if s.World() != w {
			t.Errorf("%s: interrupted, and the world is not the one it started from", cmd)
		}
		if got := sessionAndViews(t, s); got != before {
			t.Errorf("%s: interrupted, and the session changed: %s", cmd, firstLineDiff(got, before))
		}
		runLines(t, s, "restart C2\nrun until stable")
	}
}

// TestInterruptAtEveryPoint presses Ctrl-C at every point where a long
// command looks for it (each poll of the flag, Session.stopRequested), and
// holds it down from there on, through the command's undo: each time the
// command fails as interrupted (or ends, when pressed after its last
// look), the session is as it was, and save and load agree. Under both
// protocols, with checkpoints close and far apart (each spacing under
// each protocol with -long).
func TestInterruptAtEveryPoint(t *testing.T) {
	setup := "join C2\nrun until stable\nstep 23\nsave f.kg\ncrash C1 now\njoin C3"
	cmds := []string{"step 30", "run until stable", "run until tick 70", "back 25", "load f.kg", "offsets", "trace --events",
		"consume invoices", "metrics", "demo 1"}
	for i, protocol := range []string{"classic", "consumer"} {
		cps := []int{[]int{0, 7}[i]} // -long: both spacings under both protocols
		if *long {
			cps = []int{0, 7}
		}
		for _, cp := range cps {
			dir := t.TempDir()
			for _, cmd := range cmds {
				for k := 1; ; k++ {
					s := NewSession()
					s.Dir, s.CheckpointEvery = dir, cp
					runLines(t, s, "set group.protocol "+protocol+"\nnew --keep-settings\n"+setup)
					before := sessionAndViews(t, s)
					polls := 0
					s.interrupt.onPoll = func() {
						if polls++; polls >= k {
							s.Interrupt()
						}
					}
					s.interrupt.onUndo = s.Interrupt
					_, err, p := execCatching(s, cmd)
					s.interrupt.onPoll, s.interrupt.onUndo = nil, nil
					where := fmt.Sprintf("%s, CheckpointEvery %d: %s with Ctrl-C from its poll %d of %d", protocol, cp, cmd, k, polls)
					if p != nil {
						t.Fatalf("%s: panic %v", where, p)
					}
					if err == nil {
						if polls >= k {
							t.Fatalf("%s: not interrupted", where)
						}
						break // pressed after its last look: it ran to its end
					}
					if !errors.Is(err, ErrInterrupted) {
						t.Fatalf("%s: %v, want interrupted", where, err)
					}
					if got := sessionAndViews(t, s); got != before {
						t.Fatalf("%s: the session changed: %s", where, firstLineDiff(got, before))
					}
					saveLoadRoundTrip(t, s, where)
					if k > 10_000 {
						t.Fatalf("%s: still interrupted", where)
					}
				}
			}
		}
	}
}

// TestPanickingInputIsUndone: a world input that panics halfway (a bug)
// may leave its world half changed: the undo makes it again from the
// history, and Ctrl-C held down during that replay does not stop it.
func TestPanickingInputIsUndone(t *testing.T) {
	commands = append(commands, &command{name: "boom", mutates: true, run: func(s *Session, _ []string) (*Result, error) {
		if err := s.World().Join("C3", false, nil); err != nil {
			return nil, err
		}
		panic("boom")
	}})
	defer func() { commands = commands[:len(commands)-1] }()
	s := NewSession()
	s.Dir = t.TempDir()
	s.CheckpointEvery = 1_000_000
	runLines(t, s, "join C2\nrun until stable\nstep 5000")
	before := sessionAndViews(t, s)
	s.interrupt.onPoll = s.Interrupt
	s.interrupt.onUndo = s.Interrupt
	_, err, p := execCatching(s, "boom")
	s.interrupt.onPoll, s.interrupt.onUndo = nil, nil
	if p != nil || err == nil || !strings.Contains(err.Error(), "boom: internal error: boom") {
		t.Fatalf("a panicking input: error %v, panic %v", err, p)
	}
	if strings.Contains(err.Error(), "could not be made again") {
		t.Fatalf("the undo failed: %v", err)
	}
	if got := sessionAndViews(t, s); got != before {
		t.Fatalf("the panicking input changed the session: %s", firstLineDiff(got, before))
	}
	saveLoadRoundTrip(t, s, "after the panicking input")
}

// TestAOneTickStepFailingAfterItsTickIsUndone: a step of one tick steps
// the world itself (no copy: nothing can stop it after its tick); when a
// check fails after that tick, the undo makes the world again from the
// history, Ctrl-C held down during it or not.
func TestAOneTickStepFailingAfterItsTickIsUndone(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	s.CheckpointEvery = 50
	runLines(t, s, "join C2\nrun until stable\nstep 120")
	before := sessionAndViews(t, s)
	w := s.World()
	s.AfterTick = func(*sim.World) error { return errors.New("a check failed") }
	s.interrupt.onUndo = s.Interrupt
	_, err, p := execCatching(s, "step")
	s.AfterTick, s.interrupt.onUndo = nil, nil
	if p != nil || err == nil || err.Error() != "step: a check failed" {
		t.Fatalf("step with a check failing after its tick: %v (panic %v)", err, p)
	}
	if s.World() == w {
		t.Error("the world stepped in place was kept")
	}
	if got := sessionAndViews(t, s); got != before {
		t.Fatalf("the failed step changed the session: %s", firstLineDiff(got, before))
	}
	saveLoadRoundTrip(t, s, "after the failed one-tick step")
	// A step of one tick that succeeds takes no copy.
	w = s.World()
	runLines(t, s, "step")
	if s.World() != w {
		t.Error("step (one tick) copied the world")
	}
}
