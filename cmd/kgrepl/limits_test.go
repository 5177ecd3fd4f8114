package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgrepl/kgrepl/kernel/explore"
)

// group writes 1000000 as 1,000,000, as the limit errors do.
func group(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestHostileInputsRefusedQuickly runs each hostile input of issue 9 through
// the binary: each is refused before any work starts, with an error naming
// the bound and the value given, in well under a second of work (the
// deadline is generous for a loaded machine; before the limits, several of
// these ran until memory ran out).
func TestHostileInputsRefusedQuickly(t *testing.T) {
	kinds := len(explore.FaultKinds)
	seven := "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20"
	cases := []struct {
		script string
		want   []string
	}{
		{"set records.per.partition 1000000; new --topics t:1000 --keep-settings", []string{"new: a world of 1 members, 1,001 partitions and 1,000,000,000 input records", "is estimated at 160.0 GB of heap", "three quarters of the heap limit"}},
		{"set records.per.partition 2000000000", []string{"set records.per.partition: 2000000000 records in one input partition is estimated at 320.0 GB of heap", "over the limit"}},
		{"set records.per.partition 2147483648", []string{"set records.per.partition: 2,147,483,648 is over the limit", "at most 2,147,483,647 records in one partition"}},
		{"new --topics a:1000000,b:1000000,c:1000000,d:1000000,e:1000000,f:1000000,g:1000000,h:1000000,i:1000000,j:1000000,k:1000000,l:1000000", []string{"12,000,001 partitions", "is estimated at", "over the limit"}},
		{"produce o0 2000000000", []string{"produce: a world of 1 members, 7 partitions and 2,000,000,060 input records (2,000,000,000 more records) is estimated at 320.0 GB", "over the limit"}},
		{"produce o0 2147483647", []string{"produce: orders-0 holds 10 + 2147483647 = 2,147,483,657 is over the limit", "at most 2,147,483,647 records in one partition"}},
		{"new --members 100000", []string{"new --members: 100,000 is over the limit", "at most 65,535 members"}},
		{"step 99999999999", []string{"step: 99,999,999,999 is over the limit", "at most 1,000,000 ticks in one step or run"}},
		{"run until tick 9223372036854775807", []string{"9,223,372,036,854,775,807 is over the limit", "ticks in one step or run"}},
		{"explore --ticks 9223372036854775800..9223372036854775807", []string{"window start 9223372036854775800 - now 0 = 9,223,372,036,854,775,800", "at most 1,000,000 ticks in one step or run"}},
		{"explore --ticks 0..9223372036854775807", []string{"ticks 0..9223372036854775807 = 9,223,372,036,854,775,808", "at most 1,000 ticks in an explore window"}},
		{"new --members 1000; explore", []string{fmt.Sprintf("21 ticks x 1000 members x %d fault kinds = %s", kinds, group(21*1000*kinds)), "at most 10,000 explore branches"}},
		{"explore --ticks 0..999 --members C1 --bound 1000000", []string{fmt.Sprintf("%d branches x --bound 1000000 = %s", 1000*kinds, group(1000*kinds*1000000)), "ticks of explore work"}},
		{"compare max.poll.records " + seven + " session.timeout.ms " + seven + " max.poll.interval.ms " + seven + " auto.commit.interval.ms " + seven +
			" retry.backoff.ms " + seven + " processing.ticks " + seven + " transaction.timeout.ms " + seven, []string{"20 x 20 values = 400", "at most 256 compare combinations"}},
	}
	for _, c := range cases {
		start := time.Now()
		_, errs, code := kgrepl(t, "", "-c", c.script)
		took := time.Since(start)
		if code != 1 {
			t.Errorf("%s: exit %d (%s), want 1", c.script, code, errs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: error %q does not say %q", c.script, strings.TrimSpace(errs), w)
			}
		}
		if took > 10*time.Second {
			t.Errorf("%s: refused after %v; a limit is checked before the work starts", c.script, took)
		}
	}
}

// TestREPLCtrlCInterruptsExplore starts a long explore in the REPL (pty, the
// real binary), presses Ctrl-C, and checks that the prompt comes back with
// an "interrupted" error and the session as it was before the command.
func TestREPLCtrlCInterruptsExplore(t *testing.T) {
	cmd, ptmx, out := startREPL(t, t.TempDir(), "--no-history")
	expect := func(what string, after int) int {
		t.Helper()
		return out.waitFor(t, what, after, 30*time.Second)
	}
	at := expect("billing t=0 Stable> ", 0)
	// 1000 records per partition: each branch runs until the group has
	// caught up on all of them, so the sweep below takes about 10 s here.
	// With 100 it took 1.5 s once the engine got faster, no longer than
	// the wait below, and the test failed as often as not.
	ptmx.Write([]byte("set records.per.partition 1000; new --keep-settings; join C2; step 5; metrics --json\r"))
	at = expect(`"tick":5`, at)
	before := jsonLine(t, out, at-len(`"tick":5`)-1)
	at = expect("billing t=5 PreparingRebalance> ", at)
	// 1000 ticks x 2 members x every fault kind is past the limit; 1 member is 8,000 branches.
	ptmx.Write([]byte("explore --ticks 5..1004 --members C1\r"))
	waitSignals(t, ptmx, true) // the command runs
	time.Sleep(1500 * time.Millisecond)
	if strings.Contains(out.get()[at:], "violations") {
		t.Fatal("the explore finished before Ctrl-C; make it longer")
	}
	start := time.Now()
	ptmx.Write([]byte{3}) // Ctrl-C
	at = expect("explore: interrupted", at)
	at = expect("billing t=5 PreparingRebalance> ", at)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the prompt came back %v after Ctrl-C", took)
	}
	ptmx.Write([]byte("metrics --json\r"))
	at = expect(`"tick":5`, at)
	after := jsonLine(t, out, at-len(`"tick":5`)-1)
	if before != after {
		t.Errorf("metrics changed across an interrupted explore:\nbefore %s\nafter  %s", before, after)
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

// jsonAfter is the JSON object s starts with, up to its line's end.
func jsonAfter(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// jsonLine is the line of the transcript that starts at start, once it has
// all come (a JSON answer can reach the pty in several reads, and the
// part read first is not the answer).
func jsonLine(t *testing.T, out *transcript, start int) string {
	t.Helper()
	out.waitFor(t, "\n", start, 60*time.Second)
	return jsonAfter(out.get()[start:])
}
