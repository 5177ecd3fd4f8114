package kernel

import (
	"strconv"
	"strings"
	"testing"
)

const detScript = `set commit after
join C2
join C3 --static
run until stable
slow C2
step 20
crash C3 after 2
run until stable
set producer transactional
step 40
restart C2
run until stable
step 15`

func runLines(t *testing.T, s *Session, script string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(script, "\n") {
		out, err := s.Exec(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		b.WriteString(out + "\n")
	}
	return b.String()
}

func views(t *testing.T, s *Session) string {
	return runLines(t, s, "describe group --json\nmetrics --json\ntrace --json\nconsume invoices --json\noffsets\nmembers\ntxn\nlog invoices-0")
}

func TestSameScriptSameBytes(t *testing.T) {
	a, b := NewSession(), NewSession()
	outA := runLines(t, a, detScript) + views(t, a)
	outB := runLines(t, b, detScript) + views(t, b)
	if outA != outB {
		t.Fatal("the same script printed different output twice")
	}
	demoA, _ := NewSession().Exec("demo 11")
	demoB, _ := NewSession().Exec("demo 11")
	if demoA != demoB {
		t.Fatal("demo 11 printed different output twice")
	}
}

func TestBackEqualsFewerTicks(t *testing.T) {
	for _, n := range []int{1, 7, 30, 60} {
		a := NewSession()
		runLines(t, a, detScript+"\nstep 60")
		if _, err := a.Exec("back " + itoa(n)); err != nil {
			t.Fatal(err)
		}
		b := NewSession()
		runLines(t, b, detScript+"\nstep "+itoa(60-n+1))
		if _, err := b.Exec("back 1"); err != nil {
			t.Fatal(err)
		}
		c := NewSession()
		runLines(t, c, detScript)
		if 60-n > 0 {
			runLines(t, c, "step "+itoa(60-n))
		}
		va, vb, vc := views(t, a), views(t, b), views(t, c)
		if va != vc || vb != vc {
			t.Errorf("back %d differs from running %d fewer ticks", n, n)
		}
	}
}

func TestForkAndSwitchKeepTheBranch(t *testing.T) {
	s := NewSession()
	runLines(t, s, detScript)
	before := views(t, s)
	runLines(t, s, "fork what-if\ncrash C2 now\nset partition.assignment.strategy roundrobin\nrun until stable\nstep 30")
	if views(t, s) == before {
		t.Fatal("the fork did not change anything: the test proves nothing")
	}
	runLines(t, s, "switch main")
	if views(t, s) != before {
		t.Error("switch main after a fork did not give back the state before it")
	}
	// The fork goes on from where it forked, exactly as main would.
	runLines(t, s, "fork same\nstep 25")
	forked := views(t, s)
	runLines(t, s, "switch main\nstep 25")
	if views(t, s) != forked {
		t.Error("a fork stepped like main ended differently from main")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestBranchNames: a branch name is one word that `plot --branches` can
// list and a table can print; anything else is refused, naming what is
// allowed, and leaves the session on the branch it was on.
func TestBranchNames(t *testing.T) {
	s := NewSession()
	for _, bad := range []string{`""`, "a,b", "x\x1b[31m", "bell\a", strings.Repeat("b", maxBranchName+1), "-x", "--json"} {
		_, err := s.Exec("fork " + bad)
		if err == nil || !strings.Contains(err.Error(), "is not a branch name (1 to 64 letters, digits, '-', '_' or '.', not starting with '-')") {
			t.Errorf("fork %q: error %v", bad, err)
		}
	}
	for _, good := range []string{"what-if.2_b", "été", strings.Repeat("b", maxBranchName)} {
		if _, err := s.Exec("switch main; fork " + good); err != nil {
			t.Errorf("fork %q: %v", good, err)
		}
	}
	if got := len(s.branchNames()); got != 4 {
		t.Errorf("%d branches, want main and the three good ones", got)
	}
}
