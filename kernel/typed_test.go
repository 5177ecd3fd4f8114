package kernel

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestExtraWordsAreRefused: help and exit take what their usage says and
// nothing more (help set extra showed set's help, exit now left).
func TestExtraWordsAreRefused(t *testing.T) {
	s := NewSession()
	for line, want := range map[string]string{
		"help set extra": `help: unexpected "extra" (usage: help [CMD])`,
		"exit now":       `exit: unexpected "now" (usage: exit)`,
	} {
		if _, err := s.Exec(line); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", line, err, want)
		}
	}
	if s.Done() {
		t.Error("exit now ended the session")
	}
}

// TestErrorsSpellOutBinaryBytes: an error that repeats what was typed
// spells out the bytes a terminal would act on (a binary byte in an
// unknown command was echoed as it was: an escape sequence typed or
// pasted recoloured the terminal), and keeps printable text as it is.
func TestErrorsSpellOutBinaryBytes(t *testing.T) {
	s := NewSession()
	for line, want := range map[string]string{
		"fro\x01b\x1b[31m":   `fro\x01b\x1b[31m: unknown command`,
		"he\xffp":            `he\xffp: unknown command; did you mean help?`,
		"help \x07":          `help \a: unknown command`,
		"set C1.x\x00y 1":    `\x00`,
		"join C2 --topics ü": `join C2 --topics: no input topic "ü"`,
	} {
		_, err := s.Exec(line)
		if err == nil {
			t.Fatalf("%q was not refused", line)
		}
		msg := err.Error()
		if !strings.Contains(msg, want) {
			t.Errorf("%q: %q, want it to hold %q", line, msg, want)
		}
		for _, r := range msg {
			if r == utf8.RuneError || !unicode.IsPrint(r) && r != '\n' {
				t.Errorf("%q: the error holds %U: %q", line, r, msg)
			}
		}
	}
}

// TestDropRulesAreBounded: every packet sent is checked against each drop
// rule pending, so their number is bounded; a rule used up no longer
// counts.
func TestDropRulesAreBounded(t *testing.T) {
	s := NewSession()
	var b strings.Builder
	for i := 0; i < limitDropRules.max; i++ {
		fmt.Fprintf(&b, "drop JoinGroup request C%d\n", 1+i%2)
	}
	runLines(t, s, "join C2\n"+strings.TrimSuffix(b.String(), "\n"))
	before := snapshot(t, s)
	want := fmt.Sprintf("drop: %d rules pending + 1 = %s is over the limit (at most %d drop rules pending in a world)", limitDropRules.max, group(limitDropRules.max+1), limitDropRules.max)
	if _, err := s.Exec("drop Fetch request"); err == nil || err.Error() != want {
		t.Fatalf("a drop past the bound: %v, want %s", err, want)
	}
	if snapshot(t, s) != before {
		t.Error("the refused drop changed the session")
	}
	// C1's and C2's JoinGroup rules are used up as the group rebalances.
	runLines(t, s, "step 3\nrestart C1\nrestart C2\nstep 30")
	if n := len(s.World().PendingDrops()); n >= limitDropRules.max {
		t.Fatalf("%d rules still pending", n)
	}
	runLines(t, s, "drop Fetch request")
}

// TestRunUntilStableIsBoundedAndInterruptible: on a group that never
// settles (members that miss max.poll.interval.ms at every batch), run
// until stable fails at its stated bound, and Ctrl-C stops it at once,
// the world put back as it was.
func TestRunUntilStableIsBoundedAndInterruptible(t *testing.T) {
	s := NewSession()
	runLines(t, s, "set max.poll.interval.ms 2\nset processing.ticks 3\njoin C2\nstep 10")
	w, before := s.World(), snapshot(t, s)
	defer func(l limit) { limitRunUntil = l }(limitRunUntil)
	limitRunUntil.max = 500
	want := "run until stable: the group is not stable after 500 ticks (at most 500 ticks a run until stable, polled or processed waits)"
	if _, err := s.Exec("run until stable"); err == nil || err.Error() != want {
		t.Fatalf("run until stable of a group that never settles: %v, want %s", err, want)
	}
	limitRunUntil.max = 100_000
	polls := 0
	s.interrupt.onPoll = func() {
		if polls++; polls == 200 {
			s.Interrupt()
		}
	}
	_, err := s.Exec("run until stable")
	s.interrupt.onPoll = nil
	if !errors.Is(err, ErrInterrupted) || polls != 200 {
		t.Fatalf("run until stable with Ctrl-C at its 200th tick: %v after %d looks", err, polls)
	}
	if s.World() != w || snapshot(t, s) != before {
		t.Error("the failed runs changed the session")
	}
}
