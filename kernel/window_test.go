package kernel

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// TestCheckpointsThinOut: a branch keeps at most checkpointCap
// checkpoints however long it runs, the newest recentCheckpoints as they
// were taken and the older spread over the run; back to any tick still
// gives the world a replay from scratch gives.
func TestCheckpointsThinOut(t *testing.T) {
	defer func(f func(*sim.World) int) { checkpointCap = f }(checkpointCap)
	checkpointCap = func(*sim.World) int { return minCheckpoints }
	s := NewSession()
	s.CheckpointEvery = 5
	for _, cmd := range []string{"join C2", "produce --rate 1/2ticks orders-0 payments-1", "step 100", "step 100", "crash C1", "step 100", "step 100", "step 100", "join C3", "step 100", "step 100"} {
		if _, err := s.Exec(cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if n := len(s.cur.hist.cps) + len(s.pendingCPs); n > minCheckpoints {
			t.Fatalf("after %s: %d checkpoints, over the cap of %d", cmd, n, minCheckpoints)
		}
	}
	cps := s.cur.hist.cps
	if len(cps) != minCheckpoints {
		t.Fatalf("%d checkpoints kept after 450 ticks at one every 5, want the cap, %d", len(cps), minCheckpoints)
	}
	// The newest stay 5 ticks apart; the older spread over the run.
	for i := len(cps) - recentCheckpoints + 1; i < len(cps); i++ {
		if d := cps[i].tick - cps[i-1].tick; d != 5 {
			t.Errorf("recent checkpoints at ticks %d and %d: want 5 apart", cps[i-1].tick, cps[i].tick)
		}
	}
	end := s.World().Tick
	if end < 300 {
		t.Fatalf("the run stopped at tick %d: the test wants a long one", end)
	}
	if cps[0].tick > end/3 {
		t.Errorf("the oldest checkpoint is at tick %d: the older ones should spread back over the run", cps[0].tick)
	}
	for _, to := range []int{end - 3, end - 40, end / 2, end / 3, 1} {
		if _, err := s.Exec(fmt.Sprintf("back %d", s.World().Tick-to)); err != nil {
			t.Fatal(err)
		}
		h := s.cur.hist
		h.cps = nil
		w, _, err := s.replay(h, -1, true)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := threeViews(t, s), worldViews(t, w); got != want {
			t.Errorf("back to tick %d from thinned checkpoints differs from a replay from scratch", s.World().Tick)
		}
	}
}

// TestSessionPropertyWindowed is TestSessionProperty on worlds that keep a
// window of their past (history.ms), some from the start, some from a set
// while they run, and with history.ms set again as they run (narrower, or
// wider and refused): after every command the branch's
// views (describe, metrics, trace) equal a replay from scratch, a
// save/load round trip and `step 1; back 1` (checkBranch), so that
// checkpoints without history, back's replay from a window before, and
// the views' window agree whichever way the world was made.
func TestSessionPropertyWindowed(t *testing.T) {
	seeds, cmds := 6, 60
	if *long {
		seeds, cmds = 30, 300
	}
	narrowed, refused := 0, 0
	for seed := 0; seed < seeds; seed++ {
		s, rng := randomSession(t, int64(1000+seed), 3+seed%5)
		// Odd seeds start keeping everything and take a window as they run.
		start := fmt.Sprintf("set history.ms %d", 3+seed*3)
		if seed%2 == 1 {
			start = "set history.ms 0"
		}
		typed := []string{start + "; new --members 3 --keep-settings; produce --rate 1/2ticks o0 p1"}
		if _, err := s.Exec(typed[0]); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < cmds; i++ {
			cmd := randomCommand(rng, s)
			if strings.HasPrefix(cmd, "new") || strings.HasPrefix(cmd, "demo") || strings.HasPrefix(cmd, "load") {
				cmd = fmt.Sprintf("step %d", 1+rng.Intn(15)) // keep the windowed world
			}
			if rng.Intn(8) == 0 {
				// history.ms while the world runs: narrower, or wider
				// (refused past tick 0).
				h := s.World().HistoryWindow()
				switch {
				case h == 0:
					cmd = fmt.Sprintf("set history.ms %d", 3+rng.Intn(30))
				case rng.Intn(3) == 0:
					cmd = fmt.Sprintf("set history.ms %d", h+1+rng.Intn(10))
				default:
					cmd = fmt.Sprintf("set history.ms %d", max(1, h-rng.Intn(h)))
				}
			}
			typed = append(typed, cmd)
			was := s.World().HistoryWindow()
			_, err := s.Exec(cmd)
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("seed %d: %s: %v", seed, strings.Join(typed, "; "), err)
			}
			switch {
			case err != nil && strings.Contains(err.Error(), "can only narrow"):
				refused++
			case err == nil && s.World().HistoryWindow() != was:
				narrowed++
			}
			if s.World().HistoryWindow() == 0 && seed%2 == 0 {
				t.Fatalf("seed %d: %s: the world keeps everything", seed, strings.Join(typed, "; "))
			}
			checkBranch(t, s, fmt.Sprintf("seed %d after %s", seed, strings.Join(typed, "; ")))
		}
		if w := s.World(); w.HistoryWindow() > 0 && w.Tick > w.HistoryWindow() && w.DetailFrom() == 0 {
			t.Errorf("seed %d: at tick %d with a window of %d ticks the views show every tick", seed, w.Tick, w.HistoryWindow())
		}
	}
	if narrowed == 0 || refused == 0 {
		t.Errorf("history.ms set while the worlds ran: %d narrowed a window, %d were refused: the test no longer covers both", narrowed, refused)
	}
	t.Logf("history.ms set while the worlds ran: %d narrowed, %d refused", narrowed, refused)
}

// TestTraceFromBeforeTheWindow: a windowed world's trace shows its window
// and says so; trace --from a tick before it makes that stretch again by
// replaying, and lists what the same world keeping everything lists.
func TestTraceFromBeforeTheWindow(t *testing.T) {
	script := "new --members 3 --keep-settings\njoin C4\nproduce --rate 1/2ticks o0 p1\nstep 40\ncrash C2\nstep 60\nrestart C2\nstep 80"
	full, win := fullAndWindowed(t, script)
	w := win.World()
	if w.DetailFrom() != w.Tick-30 {
		t.Fatalf("at tick %d with history.ms 30 the views start at %d", w.Tick, w.DetailFrom())
	}
	out, err := win.Exec("trace")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, fmt.Sprintf("(detail before tick %d was let go", w.Tick-30)) {
		t.Errorf("trace of a windowed world does not say where its window starts:\n...%s", out[max(0, len(out)-300):])
	}
	for _, cmd := range []string{"trace --from 20", "trace --from 55 --events", "trace --from 5 --type Produce --member C2"} {
		if got, want := madeAgain(t, full, win, cmd); got != want {
			t.Errorf("%s: the stretch made again differs from the world keeping everything", cmd)
		}
	}
	// The world in use is untouched: still windowed, at the same tick.
	if win.World() != w || win.World().DetailFrom() != w.Tick-30 {
		t.Error("trace --from changed the branch's world")
	}
}

// TestOffsetsOfAWindowedWorld: a windowed world lets go of its
// __consumer_offsets records older than the window; offsets shows the
// window's records, as the same world keeping everything shows them from
// the window's first tick, and says so; offsets --from a tick before it
// makes that stretch again by replaying, as trace --from does.
func TestOffsetsOfAWindowedWorld(t *testing.T) {
	script := "new --members 3 --keep-settings\njoin C4\nproduce --rate 1/2ticks o0 p1\nstep 200\ncrash C2\nstep 60\nrestart C2\nstep 400"
	full, win := fullAndWindowed(t, script)
	w := win.World()
	if l := &w.Group.Offsets.Log; l.First() == 0 {
		t.Fatalf("at tick %d with history.ms 30 the offsets log let go of none of its %d records", w.Tick, l.Len())
	}
	from := w.DetailFrom()
	got, err := win.Exec("offsets")
	if err != nil {
		t.Fatal(err)
	}
	want, err := full.Exec(fmt.Sprintf("offsets --from %d", from))
	if err != nil {
		t.Fatal(err)
	}
	note := fmt.Sprintf("\n(detail before tick %d was let go", from)
	i := strings.LastIndex(got, note)
	if i < 0 {
		t.Fatalf("offsets of a windowed world does not say where its window starts:\n...%s", got[max(0, len(got)-300):])
	}
	if strings.TrimRight(got[:i], "\n") != strings.TrimRight(want, "\n") {
		t.Errorf("offsets shows other records than the world keeping everything from tick %d:\n%s\nwant\n%s", from, got, want)
	}
	for _, cmd := range []string{"offsets --from 20", "offsets --from 250 --last 5"} {
		if got, want := madeAgain(t, full, win, cmd); got != strings.TrimRight(want, "\n") {
			t.Errorf("%s: the stretch made again differs from the world keeping everything", cmd)
		}
	}
	if win.World() != w {
		t.Error("offsets --from changed the branch's world")
	}
}

// TestRunsReachStopsAStep: a step of a world keeping everything stops,
// and leaves the session as it was, before an output log's runs of
// invoice batches pass their arena's 32-bit places (here a reach of 1 KB
// stands for 4 GB). A world with history.ms set counts only the runs it
// keeps, its places going round (sim's TestWindowedRunsGoPastTheirPlaces).
func TestRunsReachStopsAStep(t *testing.T) {
	defer func(l limit) { limitRunsReach = l }(limitRunsReach)
	limitRunsReach.max = 1 << 10
	s := NewSession()
	runLines(t, s, "new --kafka-defaults --members 4 --topics t:20\nset records.per.partition 0\nset processing.ms 0.05\nnew --members 4 --topics t:20 --keep-settings\nproduce --rate 1000/s t")
	before := snapshot(t, s)
	_, err := s.Exec("run until time 10s --quiet")
	if err == nil || !strings.Contains(err.Error(), "an output log's runs of invoice batches reach") {
		t.Fatalf("run until time 10s: %v, want it stopped at the runs' reach", err)
	}
	if snapshot(t, s) != before {
		t.Error("the stopped run changed the session")
	}
	if s.World().OutputRunsReach() > limitRunsReach.max {
		t.Errorf("the world kept is past the reach: %d bytes", s.World().OutputRunsReach())
	}
}

// TestDiagramOfAWindowedWorldSaysHowAProcessEnded: a process's end is kept
// on the process (sim.Member.Ended), not read from its event, which a
// window of history lets go: after back, from a checkpoint that kept no
// history, the diagram still says C2 crashed.
func TestDiagramOfAWindowedWorldSaysHowAProcessEnded(t *testing.T) {
	s := NewSession()
	s.CheckpointEvery = 20
	runLines(t, s, "set history.ms 10\nnew --members 3 --keep-settings\nstep 5\ncrash C2 now\nstep 100\nback 3")
	if s.World().DetailFrom() <= 10 {
		t.Fatalf("the window starts at tick %d: the crash at tick 5 is still in it", s.World().DetailFrom())
	}
	if svg := one(t, s, "diagram").SVG; !strings.Contains(svg, "crashed") {
		t.Errorf("the diagram does not say C2 crashed")
	}
}

// TestCheckpointsOfAWindowedWorldAWindowApart: a world keeping a window
// of its past keeps a checkpoint at most every window (back replays from
// one a window before anyway), each letting go of a window's detail in
// its copy; one keeping everything keeps them closer.
func TestCheckpointsOfAWindowedWorldAWindowApart(t *testing.T) {
	spacing := func(window int) (least, n int) {
		s := NewSession()
		runLines(t, s, fmt.Sprintf("set history.ms %d\nnew --members 3 --keep-settings\nproduce --rate 1/2ticks o0 p1\nstep 16000 --quiet", window))
		least, prev := -1, 0
		for _, cp := range s.cur.hist.cps {
			if gap := cp.tick - prev; least < 0 || gap < least {
				least = gap
			}
			prev = cp.tick
		}
		return least, len(s.cur.hist.cps)
	}
	if least, n := spacing(4000); n < 2 || least < 4000 {
		t.Errorf("a window of 4000 ticks: %d checkpoints, the closest %d ticks apart (want at least 2, 4000 apart)", n, least)
	}
	if least, n := spacing(0); n < 2 || least >= 2000 {
		t.Errorf("keeping everything: %d checkpoints, the closest %d ticks apart (want them closer than 2000)", n, least)
	}
}

// TestCheckpointsKeepNoOutputRuns: a checkpoint of a windowed world keeps
// none of its history, the runs of its output batches included (a
// checkpoint's copy kept its window's runs, and a long run's checkpoints
// together every run it wrote: 7.9 GB of RSS for T1's hour through the
// REPL, 1.5 GB for the engine's).
func TestCheckpointsKeepNoOutputRuns(t *testing.T) {
	s := NewSession()
	if _, err := s.Exec("new --kafka-defaults --members 4 --topics t0:8 --output out:2; set processing.ms 0.05; " +
		"set history.ms 2000; produce --rate 1000/s t0; run until time 20s --quiet"); err != nil {
		t.Fatal(err)
	}
	chunk := 2048 // a store.Bytes chunk
	if live := s.World().OutputRunsReach(); live < 4*chunk {
		t.Fatalf("the world's output runs reach %d bytes: too few to test", live)
	}
	stripped := 0
	for _, cp := range s.cur.hist.cps {
		if cp.window == 0 {
			continue
		}
		stripped++
		if got := cp.world.OutputRunsReach(); got > chunk {
			t.Errorf("the checkpoint at tick %d keeps %d bytes of output runs (at most an open chunk, %d)", cp.tick, got, chunk)
		}
	}
	if stripped < 2 {
		t.Fatalf("%d checkpoints without history: too few to test", stripped)
	}
}

// fullAndWindowed runs script in two sessions checkpointed every 25
// ticks: one keeping everything, one with history.ms 30.
func fullAndWindowed(t *testing.T, script string) (full, win *Session) {
	t.Helper()
	full, win = NewSession(), NewSession()
	win.CheckpointEvery, full.CheckpointEvery = 25, 25
	runLines(t, full, script)
	runLines(t, win, "set history.ms 30\n"+script)
	return full, win
}

// madeAgain runs cmd, a view --from a tick before win's window, in both
// sessions: what win shows before its note that it made the stretch again
// (trailing newlines cut), and what full shows. A view without the note
// fails the test.
func madeAgain(t *testing.T, full, win *Session, cmd string) (got, want string) {
	t.Helper()
	want, err := full.Exec(cmd)
	if err != nil {
		t.Fatal(err)
	}
	got, err = win.Exec(cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	i := strings.LastIndex(got, "\n(ticks before tick")
	if i < 0 {
		t.Fatalf("%s: no note that the stretch was made again:\n%s", cmd, got[max(0, len(got)-300):])
	}
	return strings.TrimRight(got[:i], "\n"), want
}

// TestCheckpointFoldHintsChangeNoFold: a world given its checkpoints'
// folds of their output logs (sim.World.HintFoldsOf) folds on from them,
// and it, its checkpoints and a world made again by back hold the same
// output logs as without: each log's start and Forgotten, run for run.
func TestCheckpointFoldHintsChangeNoFold(t *testing.T) {
	cmds := []string{
		"new --kafka-defaults --members 4 --topics t0:8 --output out:2; set processing.ms 0.05; set history.ms 2000; produce --rate 1000/s t0",
		"run until time 9s --quiet", "roll C1..C4 --graceful --wait-stable", "run until time 40s --quiet",
		"back 2000", "run until time 50s --quiet",
	}
	same := func(what string, a, b *sim.World) int {
		t.Helper()
		folded := 0
		for _, tp := range a.Layout().Outputs() {
			la, lb := a.Log(tp), b.Log(tp)
			if la.Start() != lb.Start() || !reflect.DeepEqual(la.Forgotten(), lb.Forgotten()) {
				t.Fatalf("%s, %v: starts at %d, forgot %+v; without hints %d, %+v", what, tp, la.Start(), la.Forgotten(), lb.Start(), lb.Forgotten())
			}
			if la.Forgotten() != nil {
				folded++
			}
		}
		return folded
	}
	hinted, plain := NewSession(), NewSession()
	// Checkpoints at fixed ticks: chosen by measured time, the two
	// sessions' could differ, and back replay from different ones, whose
	// worlds let go of their output at other ticks.
	hinted.CheckpointEvery, plain.CheckpointEvery = 1500, 1500
	folded := 0
	for _, cmd := range cmds {
		if _, err := hinted.Exec(cmd); err != nil {
			t.Fatal(err)
		}
		noFoldHints = true
		_, err := plain.Exec(cmd)
		noFoldHints = false
		if err != nil {
			t.Fatal(err)
		}
		folded += same("after "+cmd, hinted.World(), plain.World())
	}
	a, b := hinted.cur.hist.cps, plain.cur.hist.cps
	if len(a) != len(b) || len(a) < 4 {
		t.Fatalf("%d checkpoints, %d without hints: want the same, at least 4", len(a), len(b))
	}
	for i := range a {
		if a[i].tick != b[i].tick {
			t.Fatalf("checkpoint %d at tick %d, without hints %d", i, a[i].tick, b[i].tick)
		}
		folded += same(fmt.Sprintf("checkpoint at tick %d", a[i].tick), a[i].world, b[i].world)
	}
	if folded < 8 {
		t.Fatalf("%d output logs folded anything: too few to test", folded)
	}
}
