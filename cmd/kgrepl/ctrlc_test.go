package main

import (
	"strings"
	"testing"
	"time"
)

// TestREPLTwoCtrlCsDuringALongStep presses Ctrl-C twice, 50 ms apart,
// during a long step in the REPL (pty, the real binary): the first stops
// the step, the second lands in its undo (or at the prompt after it). The
// step fails as interrupted, the prompt comes back at the tick before it,
// and save and load agree. The undo replayed the history and polled the
// same flag: the second Ctrl-C made it panic, leaving the world at the
// tick the step reached and the history behind it, so the file save wrote
// was one load refused.
func TestREPLTwoCtrlCsDuringALongStep(t *testing.T) {
	cmd, ptmx, out := startREPL(t, t.TempDir(), "--no-history")
	expect := func(what string, after int) int {
		t.Helper()
		return out.waitFor(t, what, after, 60*time.Second)
	}
	at := expect("billing t=0 Stable> ", 0)
	// 300 members over 999 partitions: a tick costs about a millisecond,
	// and 400 ticks with no checkpoint were what an undo replayed.
	ptmx.Write([]byte("new --topics t:999 --members 300; step 400 --quiet; metrics --json\r"))
	at = expect(`{"tick":400`, at)
	before := jsonLine(t, out, at-len(`{"tick":400`))
	at = expect("billing t=400 Stable> ", at)
	waitSignals(t, ptmx, false) // readline reads the next line
	ptmx.Write([]byte("step 1000000 --quiet\r"))
	waitSignals(t, ptmx, true) // the command runs
	time.Sleep(1500 * time.Millisecond)
	ptmx.Write([]byte{3}) // Ctrl-C
	time.Sleep(50 * time.Millisecond)
	ptmx.Write([]byte{3}) // and again
	at = expect("step: interrupted (the session is as it was before it)", at)
	at = expect("billing t=400 Stable> ", at)
	if screen := out.get(); strings.Contains(screen, "internal error") || strings.Contains(screen, "panic") {
		t.Fatalf("the undo failed:\n%s", screen)
	}
	ptmx.Write([]byte("save two.kg\r"))
	at = expect("saved branch main at tick 400 to two.kg", at)
	ptmx.Write([]byte("load two.kg\r"))
	at = expect("loaded two.kg into branch main: tick 400", at)
	ptmx.Write([]byte("metrics --json\r"))
	at = expect(`{"tick":400`, at)
	if after := jsonLine(t, out, at-len(`{"tick":400`)); after != before {
		t.Errorf("metrics after two Ctrl-Cs, save and load:\n%s\nbefore:\n%s", after, before)
	}
	ptmx.Write([]byte("exit\r"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("kgrepl did not exit")
	}
}
