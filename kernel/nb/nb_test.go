package nb

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// session makes a session that keeps its history in a test folder and
// writes its text into a buffer, as it does outside a notebook.
func session(t *testing.T) (*Session, *bytes.Buffer) {
	t.Helper()
	StateDir = t.TempDir()
	s := New()
	var out bytes.Buffer
	s.Out = &out
	return s, &out
}

func TestOutsideANotebookPrintsText(t *testing.T) {
	if displays {
		t.Skip("running inside a notebook")
	}
	s, out := session(t)
	if err := s.Run("join C2; run until stable"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"billing t=0 Stable> join C2\n", "billing t=0 Stable> run until stable\n", "tick 14: group Stable, generation 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("Run printed no %q:\n%s", want, got)
		}
	}
	out.Reset()
	if err := s.Show("describe group --members --verbose"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "GROUP   CONSUMER-ID") || !strings.Contains(out.String(), "orders(2),payments(2)") {
		t.Errorf("Show printed:\n%s", out.String())
	}
	out.Reset()
	if err := s.Diagram(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "diagram: drawn, not written ") {
		t.Errorf("Diagram printed %q", out.String())
	}
	out.Reset()
	if err := s.Plot("pause"); err != nil || !strings.HasPrefix(out.String(), "plot pause: drawn, not written ") {
		t.Errorf("Plot printed %q (%v)", out.String(), err)
	}
	out.Reset()
	if err := s.Sequence("--ticks 0..3"); err != nil || !strings.HasPrefix(out.String(), "sequence: drawn, not written ") {
		t.Errorf("Sequence printed %q (%v)", out.String(), err)
	}
}

func TestErrorsAreShownAndReturned(t *testing.T) {
	s, out := session(t)
	err := s.Run("join C2; crash C9; join C3")
	if err == nil || !strings.Contains(err.Error(), "no member C9") {
		t.Fatalf("Run: %v", err)
	}
	if s.Err() != err {
		t.Error("Err() is not the error Run returned")
	}
	if !strings.Contains(out.String(), "error: crash C9: no member C9") {
		t.Errorf("the error is not shown:\n%s", out.String())
	}
	if s.Kernel().World().Member("C3") != nil {
		t.Error("the commands after the error ran")
	}
	if err := s.Plot("pie"); err == nil {
		t.Error("Plot(pie): no error")
	}
	if err := s.Show("describe group"); err != nil || s.Err() != nil {
		t.Errorf("a good call after a bad one: %v, Err %v", err, s.Err())
	}
}

// TestResume is what carries a session from cell to cell: each cell is a
// new program that resumes the history the cells before it left.
func TestResume(t *testing.T) {
	s, _ := session(t)
	if err := s.Quiet("join C2; run until stable"); err != nil {
		t.Fatal(err)
	}
	if err := s.Quiet("fork what-if; crash C2 now"); err != nil {
		t.Fatal(err)
	}
	s.Show("describe group") // views are not history
	if err := s.Step(3); err != nil {
		t.Fatal(err)
	}
	want := s.Kernel().World()

	next := Resume()
	got := next.Kernel().World()
	if got.Tick != want.Tick || next.Kernel().Branch() != "what-if" || got.Group.Describe().Generation != want.Group.Describe().Generation {
		t.Errorf("resumed at tick %d on %s gen %d, want tick %d on what-if gen %d",
			got.Tick, next.Kernel().Branch(), got.Group.Describe().Generation, want.Tick, want.Group.Describe().Generation)
	}
	a, _ := s.Text("trace --json")
	b, _ := next.Text("trace --json")
	if a != b {
		t.Error("the resumed session's trace differs")
	}
	if len(next.history) != 5 {
		t.Errorf("history %q, want the five lines that change the session (Step runs one step per tick)", next.history)
	}

	// New starts afresh and makes the fresh session the one to resume.
	New()
	if w := Resume().Kernel().World(); w.Tick != 0 || w.Member("C2") != nil {
		t.Errorf("after New, Resume is at tick %d", w.Tick)
	}
}

func TestResumeWithoutStateDir(t *testing.T) {
	StateDir = ""
	s := Resume()
	var out bytes.Buffer
	s.Out = &out
	s.Quiet("join C2")
	if Resume().Kernel().World().Member("C2") != nil {
		t.Error("with no state folder, a session was kept")
	}
}

func TestDemoAndReset(t *testing.T) {
	s, out := session(t)
	s.Quiet("join C2")
	if err := s.Demo(3); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "tick 0: group Stable, generation 1\n=== demo 3: Cooperative-sticky") {
		t.Errorf("Demo printed:\n%.200s", out.String())
	}
	if s.Out != out {
		t.Error("Demo lost where the output goes")
	}
	w := s.Kernel().World()
	if w.Group.Describe().Generation != 7 || len(w.Clients()) != 4 {
		t.Errorf("after demo 3: generation %d, clients %v", w.Group.Describe().Generation, w.Clients())
	}
	if Resume().Kernel().World().Tick != w.Tick {
		t.Error("the demo is not the session the next cell resumes")
	}
	out.Reset()
	s.Reset()
	if out.String() != "tick 0: group Stable, generation 1\n" || s.Kernel().World().Member("C2") != nil {
		t.Errorf("Reset: %q", out.String())
	}
}

func TestStep(t *testing.T) {
	s, out := session(t)
	s.Quiet("join C2")
	out.Reset()
	if err := s.Step(4); err != nil {
		t.Fatal(err)
	}
	if s.Kernel().World().Tick != 4 {
		t.Errorf("tick %d after Step(4)", s.Kernel().World().Tick)
	}
	if !strings.Contains(out.String(), "t=3    group billing: Stable -> PreparingRebalance") {
		t.Errorf("Step printed:\n%s", out.String())
	}
	// A stop event ends the steps early, as `step N` does.
	s.Quiet("crash C2 after 1")
	before := s.Kernel().World().Tick
	s.Step(1000)
	if got := s.Kernel().World().Tick; got-before >= 1000 {
		t.Errorf("Step ran through the crash's stop event (tick %d)", got)
	}
}

func TestFrameAndHTML(t *testing.T) {
	s, _ := session(t)
	h, err := s.frame("t=1 something")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h, "<svg") || !strings.Contains(h, "t=1 something") {
		t.Errorf("frame: %.200s", h)
	}
	rs, _ := s.Kernel().ExecResults("metrics")
	got := resultHTML(rs[0])
	if strings.Count(got, "<table") != 1 || !strings.Contains(got, `<td style="text-align:left">tick</td>`) {
		t.Errorf("metrics HTML: %.300s", got)
	}
	rs, _ = s.Kernel().ExecResults("consume invoices")
	got = resultHTML(rs[0])
	if !strings.HasPrefix(got, `<pre class="kgrepl-text"`) || !strings.Contains(got, "invoices at read_uncommitted: 0 record(s)") {
		t.Errorf("consume HTML: %.300s", got)
	}
	if e := errorHTML(errTest("a <b>")); !strings.Contains(e, "kgrepl-error") || !strings.Contains(e, "a &lt;b&gt;") {
		t.Errorf("errorHTML: %s", e)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// TestLongTextFolds checks that a long log is not put in a fixed-height box:
// the first lines show, the rest is folded behind a visible count.
func TestLongTextFolds(t *testing.T) {
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, fmt.Sprintf("t=%d line", i))
	}
	got := preHTML(strings.Join(lines, "\n"))
	if strings.Contains(got, "max-height") || strings.Contains(got, "overflow") {
		t.Errorf("a fixed-height box: %.200s", got)
	}
	if !strings.Contains(got, "<summary>60 more lines</summary>") || !strings.Contains(got, "t=39 line\n") && !strings.Contains(got, "t=39 line</pre>") {
		t.Errorf("want 40 lines shown and 60 folded: %.300s", got)
	}
	if !strings.Contains(got, "t=99 line") {
		t.Error("the folded lines are not in the page")
	}
	short := preHTML("a\nb")
	if strings.Contains(short, "details") {
		t.Errorf("a short text folded: %s", short)
	}
}

// TestLongTablesFold: a table of more than 45 rows shows its first 40 and
// folds the rest behind their count, as a long text does; a short one is
// shown whole.
func TestLongTablesFold(t *testing.T) {
	s, _ := session(t)
	if err := s.Quiet("join C2; run until stable; run until tick 120"); err != nil {
		t.Fatal(err)
	}
	rs, err := s.k.ExecResults("log invoices-0")
	if err != nil || len(rs) != 1 || rs[0].Table == nil {
		t.Fatalf("log invoices-0: %v", err)
	}
	rows := len(rs[0].Table.Rows)
	if rows <= 45 {
		t.Fatalf("log invoices-0 has %d rows at tick 120; the test needs more than 45", rows)
	}
	h := resultHTML(rs[0])
	if strings.Count(h, "<table") != 2 || !strings.Contains(h, fmt.Sprintf("<summary>%d more rows</summary>", rows-40)) {
		t.Errorf("a %d-row table is not folded after 40 rows:\n%.400s", rows, h)
	}
	if strings.Count(h, "<tr") != rows+2 {
		t.Errorf("%d rows (headers included) shown of %d", strings.Count(h, "<tr"), rows+2)
	}
	rs, _ = s.k.ExecResults("describe group")
	if h := resultHTML(rs[0]); strings.Contains(h, "more rows") || !strings.Contains(h, rs[0].HTML) {
		t.Error("a short table is folded or changed")
	}
}
