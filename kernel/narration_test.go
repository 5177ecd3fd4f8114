package kernel

import (
	"fmt"
	"strings"
	"testing"
)

// TestNarrationIsBounded: a command prints at most limitNarration lines
// of narration and then says how many it left out and from which tick, so
// a step of a million ticks of a busy world does not build hundreds of
// megabytes of text; the world runs on the same, and trace --events lists
// what was not printed.
func TestNarrationIsBounded(t *testing.T) {
	full := NewSession()
	whole := runLines(t, full, "join C2\nrun until stable")
	defer func(l limit) { limitNarration = l }(limitNarration)
	limitNarration.max = 10
	s := NewSession()
	out := runLines(t, s, "join C2\nrun until stable")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	wholeLines := strings.Split(strings.TrimRight(whole, "\n"), "\n")
	// join narrates one line (C2 started), run until stable the rest.
	runOut := lines[1:]
	if len(runOut) != 12 || strings.Join(runOut[:10], "\n") != strings.Join(wholeLines[1:11], "\n") {
		t.Fatalf("run until stable under a bound of 10 lines printed:\n%s\nwant the first 10 of:\n%s", strings.Join(runOut, "\n"), whole)
	}
	left := len(wholeLines) - 1 - 1 - 10 // less join's line, the closing tick line and the 10 printed
	cut := strings.TrimPrefix(strings.Fields(wholeLines[11])[0], "t=")
	want := fmt.Sprintf("... %d more line(s) from tick %s on not printed (at most 10 lines of narration a command prints; trace --events --from %s lists the events)", left, cut, cut)
	if runOut[10] != want {
		t.Errorf("the cut says\n%s\nwant\n%s", runOut[10], want)
	}
	if runOut[11] != wholeLines[len(wholeLines)-1] {
		t.Errorf("the last line %q, want %q", runOut[11], wholeLines[len(wholeLines)-1])
	}
	if got, want := views(t, s), views(t, full); got != want {
		t.Errorf("the world differs with its narration cut: %s", firstLineDiff(got, want))
	}
}

// TestQuietNarrationIsBounded: at the quiet level a member's summary line
// holds its place from its first event on, and that place counts against
// the bound as a line: past it a summary gets none, so the lines printed
// are the first of the whole quiet output, then the cut.
func TestQuietNarrationIsBounded(t *testing.T) {
	setup := "join C2\njoin C3\nrun until stable --quiet\ncrash C2 now"
	full := NewSession()
	runLines(t, full, setup)
	whole, err := full.Exec("step 80 --quiet")
	if err != nil {
		t.Fatal(err)
	}
	wholeLines := strings.Split(strings.TrimRight(whole, "\n"), "\n")
	if !strings.Contains(whole, " processed ") || len(wholeLines) < 8 {
		t.Fatalf("step 80 --quiet printed %d lines with no summary: the test needs more:\n%s", len(wholeLines), whole)
	}
	defer func(l limit) { limitNarration = l }(limitNarration)
	limitNarration.max = 4
	s := NewSession()
	runLines(t, s, setup)
	out, err := s.Exec("step 80 --quiet")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// The first 4 lines of the whole, the cut, and step's closing line.
	if len(lines) != 6 || strings.Join(lines[:4], "\n") != strings.Join(wholeLines[:4], "\n") {
		t.Fatalf("step 80 --quiet under a bound of 4 lines printed:\n%s\nwant the first 4 of:\n%s", out, whole)
	}
	if !strings.HasPrefix(lines[4], "... ") || !strings.Contains(lines[4], "not printed (at most 4 lines of narration") {
		t.Errorf("the cut says %q", lines[4])
	}
	if lines[5] != wholeLines[len(wholeLines)-1] {
		t.Errorf("the last line %q, want %q", lines[5], wholeLines[len(wholeLines)-1])
	}
}

// TestNarrationLineIsBounded: an event longer than limitNarrationLine is
// narrated cut at a space, saying how many bytes it left out and where the
// whole event is; trace --events prints it whole, and the world runs on
// the same.
func TestNarrationLineIsBounded(t *testing.T) {
	script := "new --topics t:2000 --members 2\njoin C3\nrun until stable"
	defer func(l limit) { limitNarrationLine = l }(limitNarrationLine)
	limitNarrationLine.max = 1 << 30
	full := NewSession()
	whole := runLines(t, full, script)
	limitNarrationLine.max = 200
	s := NewSession()
	out := runLines(t, s, script)
	wholeLines := strings.Split(strings.TrimRight(whole, "\n"), "\n")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(wholeLines) {
		t.Fatalf("%d lines cut, %d whole", len(lines), len(wholeLines))
	}
	cuts := 0
	for i, l := range lines {
		w := wholeLines[i]
		if len(w) <= 200 {
			if l != w {
				t.Errorf("line %d, short, changed:\n%s\nwant\n%s", i, l, w)
			}
			continue
		}
		cuts++
		head, tail, ok := strings.Cut(l, " … (")
		if !ok || !strings.HasPrefix(w, head) || len(head) > 200 || w[len(head)] != ' ' {
			t.Fatalf("line %d cut as\n%s\nnot at a space within 200 bytes of\n%.300s", i, l, w)
		}
		tick := strings.TrimPrefix(strings.Fields(w)[0], "t=")
		want := fmt.Sprintf("%s more bytes not printed: at most 200 bytes of one line of narration; trace --events --from %s prints the event whole)", group(len(w)-len(head)), tick)
		if tail != want {
			t.Errorf("line %d ends\n%s\nwant\n%s", i, tail, want)
		}
		ev, err := s.Exec("trace --events --from " + tick)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ev, strings.TrimSpace(strings.SplitN(w, " ", 2)[1])) {
			t.Errorf("trace --events --from %s does not print line %d whole", tick, i)
		}
	}
	if cuts == 0 {
		t.Fatal("no line was longer than 200 bytes: the test needs a bigger world")
	}
	if got, want := views(t, s), views(t, full); got != want {
		t.Errorf("the world differs with its narration cut: %s", firstLineDiff(got, want))
	}
}
