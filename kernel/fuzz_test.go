package kernel

import (
	"strings"
	"testing"
)

// FuzzExec feeds arbitrary command lines to a session: no input may panic
// (run recovers panics into errors, so a recovered panic counts as a
// failure here), and the world's invariants hold after every accepted
// command. Run longer with: go test ./kernel -fuzz FuzzExec
func FuzzExec(f *testing.F) {
	seeds := []string{
		"join C2; run until stable; describe group --json",
		"set commit before; join C2; step 30; crash C2 now; run until stable",
		"set producer transactional; join C2; step 40; restart C2; step 20; txn",
		"set partition.assignment.strategy cooperative-sticky; join C2; join C3; run until stable",
		"slow C1; step 5; back 3; fork x; switch main; branches",
		"drop Produce response C1; step 12; consume invoices --isolation read_committed",
		"new --topics a:2,b:1 --members 2; join C3 --static; run until stable; close C3; step 9",
		"crash C1 after 2; run until processed o0.5; run until tick 40",
		"set C2.max.poll.interval.ms 3; join C2; slow C2; step 25; metrics --json",
		"trace 5 --type Fetch; log invoices-0; offsets; members; show config; help run",
		"demo 1", "frobnicate", "step -3; back x; set ; ;; # comment",
		"crash C1 after 1; step 10; step 10; save m.kg; load m.kg; back 3; save m.kg; new; load m.kg",
		"join C2; fork x; save a.kg; switch main; load a.kg; load nope.kg; save .; load .",
		// Real time, steady production, rolls, graceful restarts, a
		// migration to the consumer protocol, compare and explore.
		"new --kafka-defaults --members 3; produce --rate 100/s orders; step 30 --quiet; roll C1,C2 --every 5; step 40; run until stable; metrics --json",
		"set time ms; set C2.group.protocol consumer; join C2; produce --rate 1/2ticks orders-0 payments-1; step 20; restart C2 --graceful; step 15; show traffic; members",
		"join C2; step 10; compare group.protocol classic,consumer; explore --ticks 11..13 --members C2 --faults crash-now,close-now",
		"set time ms; produce --rate 2/ms o0; roll C1 --kill; run until stable; produce --stop o0; back 2; fork y; set C1.group.protocol consumer; step 20; roll C1 --wait-stable",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	// A step or run here advances at most 20,000 ticks, where a user's
	// may advance 1,000,000: the session checks the invariants on every
	// tick, so "st 00710000" took 8 s, and the fuzzing engine, minimizing
	// it among its other inputs on a busy machine, took the worker for
	// hung. The limits' own refusals are exercised the same way.
	defer func(step, until limit) { limitStep, limitRunUntil = step, until }(limitStep, limitRunUntil)
	limitStep.max, limitRunUntil.max = 20_000, 20_000
	f.Fuzz(func(t *testing.T, script string) {
		if len(script) > 2000 {
			return
		}
		s := checkedSession(t)
		s.Dir = t.TempDir()
		for _, line := range strings.Split(script, "\n") {
			// save and load run in the test's temporary folder; a path
			// that could leave it is skipped.
			if strings.Contains(line, "/") || strings.Contains(line, "..") {
				continue
			}
			_, err := s.Exec(line)
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%q: %v", line, err)
			}
			if s.tickErr != nil {
				t.Fatalf("%q: an invariant broke: %v", line, s.tickErr)
			}
		}
	})
}
