package kernel

import (
	"strconv"
	"strings"
	"testing"
)

// rollScript makes a world of three static members under protocol and
// begins a roll of all of them, graceful, 3 ticks apart and each once the
// group is stable again.
func rollScript(protocol string) string {
	return strings.Join([]string{
		"set C1.group.instance.id C1", "set C2.group.instance.id C2", "set C3.group.instance.id C3",
		"set group.protocol " + protocol, "new --members 3 --keep-settings",
		"roll all --every 3 --wait-stable",
	}, "\n")
}

// A roll is one input that acts over many ticks: back into its middle,
// a fork taken there, a file saved there or at its end and loaded, and a
// fresh session typing the same lines all agree, view for view, at every
// point, and the roll goes on from each exactly as it went the first time.
func TestRollBackForkSaveLoadAgree(t *testing.T) {
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			s := checkedSession(t)
			s.Dir = t.TempDir()
			runLines(t, s, rollScript(protocol)+"\nstep 9\nsave mid.kg\nfork mid\nswitch main\nrun until stable\nsave end.kg")
			end := everyView(s)
			if !strings.Contains(end, `"rolls":[{"members":["C1","C2","C3"],"mode":"graceful"`) || strings.Contains(end, `"ended":null`) {
				t.Fatalf("metrics --json after the roll has no finished roll:\n%s", end)
			}
			if strings.Contains(end, "UNRELEASED_INSTANCE_ID") || strings.Contains(end, "FENCED") {
				t.Fatalf("a graceful roll of static members fenced one:\n%s", end)
			}
			// A fresh session typing the lines.
			fresh := checkedSession(t)
			fresh.Dir = t.TempDir()
			runLines(t, fresh, rollScript(protocol)+"\nstep 9")
			mid := everyView(fresh)
			if !strings.Contains(mid, "a roll is under way") && !strings.Contains(mid, `"ended":null`) {
				t.Fatalf("at tick 9 the roll should be under way:\n%s", mid)
			}
			runLines(t, fresh, "run until stable")
			if got := everyView(fresh); got != end {
				t.Errorf("a fresh session typing the lines differs:\n%s", firstDiffLine(got, end))
			}
			// back into the middle of the roll, then on again.
			ticks := s.World().Tick - 9
			runLines(t, s, "back "+strconv.Itoa(ticks))
			if got := everyView(s); got != mid {
				t.Errorf("back %d differs from the session that stopped at tick 9:\n%s", ticks, firstDiffLine(got, mid))
			}
			runLines(t, s, "run until stable")
			if got := everyView(s); got != end {
				t.Errorf("back, then run until stable, differs:\n%s", firstDiffLine(got, end))
			}
			// The fork taken mid-roll.
			runLines(t, s, "switch mid")
			if got := everyView(s); got != mid {
				t.Errorf("the fork taken at tick 9 differs:\n%s", firstDiffLine(got, mid))
			}
			runLines(t, s, "run until stable")
			if got := everyView(s); got != end {
				t.Errorf("the fork, run until stable, differs:\n%s", firstDiffLine(got, end))
			}
			// The files, loaded in a fresh session.
			for _, f := range []struct{ file, want string }{{"mid.kg", mid}, {"end.kg", end}} {
				l := checkedSession(t)
				l.Dir = s.Dir
				runLines(t, l, "load "+f.file)
				if got := everyView(l); got != f.want {
					t.Errorf("load %s differs:\n%s", f.file, firstDiffLine(got, f.want))
				}
				runLines(t, l, "run until stable")
				if got := everyView(l); got != end {
					t.Errorf("load %s, run until stable, differs:\n%s", f.file, firstDiffLine(got, end))
				}
			}
		})
	}
}

func firstDiffLine(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return "got:  " + la[i] + "\nwant: " + lb[i]
		}
	}
	return "lengths differ"
}

// new --members 3; close C1; run until stable ran zero ticks: the group
// was Stable while C1 finished its batch. It waits for the close, the
// LeaveGroup and the rebalance now, and a scripted graceful deploy does
// what it says.
func TestRunUntilStableWaitsForAClose(t *testing.T) {
	s := checkedSession(t)
	runLines(t, s, "new --members 3\nstep 4")
	out := runLines(t, s, "close C1\nrun until stable")
	for _, want := range []string{"C1 closed", "coordinator removes C1-1: LeaveGroup", "generation 2: leader C2-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("close C1; run until stable printed no %q:\n%s", want, out)
		}
	}
	if m := s.World().Member("C1"); m.Alive || !s.World().Settled() {
		t.Errorf("after run until stable: C1 alive %v, settled %v", m.Alive, s.World().Settled())
	}
}
