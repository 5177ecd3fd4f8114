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
