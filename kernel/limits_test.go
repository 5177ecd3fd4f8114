package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrepl/kgrepl/sim"
)

// snapshot is what a user sees of the session: the views as JSON, and the branches.
func snapshot(t *testing.T, s *Session) string {
	t.Helper()
	out, err := s.Exec("describe group --json; metrics --json; trace --json; branches")
	if err != nil {
		t.Fatal(err)
	}
	return s.Branch() + "\n" + out
}

// TestEveryLongCommandPollsTheInterrupt sets the Ctrl-C flag and runs each
// long command: each stops with an "interrupted" error and leaves the
// session as it was. The flag is set before the command starts (Exec clears
// it, so the command is run below Exec), which makes the test exact: every
// long loop must poll it before doing any work.
func TestEveryLongCommandPollsTheInterrupt(t *testing.T) {
	dir := t.TempDir()
	s := NewSession()
	s.Dir = dir
	if _, err := s.Exec("join C2; step 30; save s.kg"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"step 100", "run until tick 200", "run until processed o1.9", "back 20", "load s.kg",
		"explore --ticks 30..40", "compare max.poll.records 1,2,3", "plot pause", "plot lag",
	} {
		before := snapshot(t, s)
		s.interrupt.Store(true)
		_, err := s.run(strings.Fields(line))
		s.interrupt.Store(false)
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("%s with Ctrl-C pressed: error %v, want interrupted", line, err)
		}
		if after := snapshot(t, s); after != before {
			t.Errorf("%s: an interrupted command changed the session", line)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pause.svg")); err == nil {
		t.Error("an interrupted plot wrote its file")
	}
}

// TestLimitsAreCheckedBeforeTheWork: errors name the bound and the value.
func TestLimitsAreCheckedBeforeTheWork(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"new --topics t:10 --members 65536", "new --members: 65,536 is over the limit (at most 65,535 members in a world (an output partition numbers the clients that wrote to it in 16 bits))"},
		{"step 1000001", "step: 1,000,001 is over the limit (at most 1,000,000 ticks in one step or run)"},
		// Past what an int holds: the digits as typed, not a clamped number.
		{"step 99999999999999999999999", "step: 99,999,999,999,999,999,999,999 is over the limit (at most 1,000,000 ticks in one step or run)"},
		{"produce orders-0 99999999999999999999", "produce: 99,999,999,999,999,999,999 is over the limit (at most 2,147,483,647 records in one partition (a log keeps offsets in 32 bits))"},
		{"produce orders-0 2147483640", "produce: orders-0 holds 10 + 2147483640 = 2,147,483,650 is over the limit (at most 2,147,483,647 records in one partition"},
		{"set records.per.partition 2147483648", "set records.per.partition: 2,147,483,648 is over the limit (at most 2,147,483,647 records in one partition"},
		{"set records.per.partition 99999999999999999999", "set records.per.partition: 99,999,999,999,999,999,999 is over the limit (at most 2,147,483,647 records in one partition"},
		{"run until tick 99999999999999999999", "run: 99,999,999,999,999,999,999 is over the limit (at most 10,000,000 ticks in a world's life)"},
		{"new --members 99999999999999999999", "new --members: 99,999,999,999,999,999,999 is over the limit (at most 65,535 members in a world"},
		{"compare max.poll.records 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17 session.timeout.ms 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "17 x 16 values = 272 is over the limit (at most 256 compare combinations)"},
		{"explore --ticks 0..1000", "ticks 0..1000 = 1,001 is over the limit (at most 1,000 ticks in an explore window)"},
		{"explore --parallel 65", "from 1 to 64"},
	} {
		s := NewSession()
		before := snapshot(t, s)
		_, err := s.Exec(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.line, err, c.want)
		}
		if snapshot(t, s) != before {
			t.Errorf("%s: a refused command changed the session", c.line)
		}
	}
}

// TestWorldCostIsCheckedBeforeTheWork: new, join, produce and set
// records.per.partition estimate the world they would make and refuse it
// past the budget (growThreshold, here set by hand), naming the estimate,
// its parts, the budget and the shape, and leave the session as it was;
// at the budget itself they run.
func TestWorldCostIsCheckedBeforeTheWork(t *testing.T) {
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	// The default world (1 member, 7 partitions, 60 records) with C2:
	// 1 MiB + 2 x 5,120 + 7 x 1,400 + 60 x 160 = 1,078,216 bytes.
	const withC2 = 1<<20 + 2*5120 + 7*1400 + 60*160
	worldBudget = func() uint64 { return withC2 }
	s := NewSession()
	if _, err := s.Exec("join C2"); err != nil {
		t.Fatalf("join C2 at the budget itself: %v", err)
	}
	for line, want := range map[string]string{
		"join C3":                         "join C3: a world of 3 members, 7 partitions and 60 input records is estimated at 1.1 MB of heap (3 members x 5 KiB + 7 partitions x 1,400 B + 60 input records x 160 B, processed, + 1 MiB), over the limit (at most 1.1 MB: three quarters of the heap limit, 1.4 MB, where a step is stopped; docs/reference.md#limits)",
		"produce o0 1":                    "produce: a world of 2 members, 7 partitions and 61 input records (1 more records) is estimated at 1.1 MB of heap (2 members x 5 KiB + 7 partitions x 1,400 B + 61 input records x 160 B, processed, + 1 MiB), over the limit",
		"new --members 3 --keep-settings": "new: a world of 3 members, 7 partitions and 60 input records (orders:3 + payments:3 + invoices:1; 6 input partitions x records.per.partition 10) is estimated at 1.1 MB",
		"set records.per.partition 1000":  "set records.per.partition: 1000 records in one input partition is estimated at 1.2 MB of heap (0 members x 5 KiB + 2 partitions x 1,400 B + 1,000 input records x 160 B, processed, + 1 MiB), over the limit",
	} {
		before := snapshot(t, s)
		_, err := s.Exec(line)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s...", line, err, want)
		}
		if snapshot(t, s) != before {
			t.Errorf("%s: a refused command changed the session", line)
		}
	}
	if _, err := s.Exec("join C2"); err == nil || strings.Contains(err.Error(), "over the limit") {
		t.Errorf("join of a running client is not a new member: %v", err)
	}
	// The machine's own budget (12 GiB on this project's machine, at
	// least 1.5 GB on any machine the tests run on) takes a real group's
	// shape: 10,000 members over 1,000,000 partitions is about 1.4 GB;
	// checked, not built.
	worldBudget = func() uint64 { return 1_500_000_000 }
	shape := func(members int, inputs ...int) sim.Topology {
		topo := sim.Topology{Group: "g", Output: sim.TopicSpec{Name: "out", Partitions: 1}, Members: members}
		for i, p := range inputs {
			topo.Inputs = append(topo.Inputs, sim.TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: p})
		}
		return topo
	}
	for _, topo := range []sim.Topology{shape(10_000, 1_000_000), shape(10_000, 999_999)} {
		if err := checkTopology("new", topo, 0); err != nil {
			t.Errorf("%d members over %d partitions: %v", topo.Members, topo.Inputs[0].Partitions+1, err)
		}
	}
	if err := checkTopology("new", shape(10_000, 1_000_000, 1_000_000), 0); err == nil || !strings.Contains(err.Error(), "2,000,001 partitions") {
		t.Errorf("2,000,001 partitions under a 1.5 GB budget: %v", err)
	}
}

func TestHelpStatesTheLimits(t *testing.T) {
	s := NewSession()
	for name, ls := range commandLimits {
		out, err := s.Exec("help " + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if !strings.Contains(out, l.helpLine()) {
				t.Errorf("help %s does not state %q", name, l.helpLine())
			}
		}
	}
}

// TestCtrlCDuringALongStepRollsBack presses Ctrl-C (Session.Interrupt, from
// another goroutine as the REPL does) while a long step runs: the step fails
// with "interrupted" and the session is as it was before it.
func TestCtrlCDuringALongStepRollsBack(t *testing.T) {
	s := NewSession()
	if _, err := s.Exec("set records.per.partition 200; new --topics t:100 --members 100 --keep-settings; step 3"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	done := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.Interrupt()
		close(done)
	}()
	start := time.Now()
	_, err := s.Exec("step 100000")
	<-done
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("step 100000 with Ctrl-C after 0.3 s: %v (after %v), want interrupted", err, time.Since(start))
	}
	if after := snapshot(t, s); after != before {
		t.Errorf("an interrupted step changed the session:\n%s", firstLineDiff(before, after))
	}
}

// firstLineDiff shows the first line where a and b differ, under the
// nearest "== view" heading above it (as everyView writes them), each side
// cut to a few hundred bytes around the first byte that differs (a JSON
// view is one long line).
func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			heading := ""
			for j := i; j >= 0; j-- {
				if strings.HasPrefix(al[j], "== ") {
					heading = " under " + al[j]
					break
				}
			}
			x, y := al[i], bl[i]
			k := 0
			for k < len(x) && k < len(y) && x[k] == y[k] {
				k++
			}
			cut := func(s string) string {
				lo, hi := max(0, k-150), min(len(s), k+150)
				return s[lo:hi]
			}
			return fmt.Sprintf("line %d%s, byte %d:\n  %s\n  %s", i, heading, k, cut(x), cut(y))
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(al), len(bl))
}

// TestTraceViewBound: a trace view counts the messages it would list,
// after its filters and N, before it builds any; past the bound it says
// how to narrow it, and a narrower view of the same trace still works.
func TestTraceViewBound(t *testing.T) {
	defer func(l limit) { limitTraceRows = l }(limitTraceRows)
	limitTraceRows.max = 50
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable\nstep 30")
	n := s.World().Packets.Len()
	if n <= 50 {
		t.Fatalf("only %d packets: the test needs more than the bound", n)
	}
	for line, want := range map[string]string{
		"trace --json":     fmt.Sprintf("trace: %d messages (trace N shows the last N, --from TICK those sent from a tick on; --type and --member narrow it) = %s is over the limit (at most 50 messages or events in one trace view)", n, group(n)),
		"trace 5 --events": fmt.Sprintf("trace --events: %d events = %s is over the limit (at most 50 messages or events in one trace view)", s.World().Events.Len(), group(s.World().Events.Len())),
	} {
		if _, err := s.Exec(line); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
	}
	out, err := s.Exec("trace 50 --json")
	if err != nil || strings.Count(out, `"sent"`) != 50 {
		t.Errorf("trace 50 --json: %v, %d packets", err, strings.Count(out, `"sent"`))
	}
	// A filter counts what it keeps: the JoinGroups are few.
	if out, err := s.Exec("trace --type JoinGroup --json"); err != nil || !strings.Contains(out, "JoinGroup") {
		t.Errorf("trace --type JoinGroup: %v", err)
	}
	if _, err := s.Exec("trace --member C1 --json"); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("trace --member C1 of more than 50 messages: %v", err)
	}
	if out, err := s.Exec("trace 3 --member C1 --json"); err != nil || strings.Count(out, `"sent"`) != 3 {
		t.Errorf("trace 3 --member C1 --json: %v %s", err, out)
	}
}

// TestHeapGuardStopsACommand: a command whose world grows the heap past
// limitHeap is stopped like an interrupted one, says why, and leaves the
// session as it was; the next command runs as usual.
func TestHeapGuardStopsACommand(t *testing.T) {
	defer func(l limit) { limitHeap = l }(limitHeap)
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable")
	before := views(t, s)
	limitHeap.max = 1 // any heap at all: the first look stops the step
	_, err := s.Exec("step 1000000")
	if err == nil || !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "step: interrupted (the session is as it was before it); it was stopped at the heap limit (at most 1 bytes of heap while a command runs; a step, run or load stops at three quarters of it, 0 bytes, so that the world it leaves can still be viewed)") {
		t.Fatalf("step under a 1-byte heap limit: %v", err)
	}
	if views(t, s) != before {
		t.Error("the stopped step changed the session")
	}
	limitHeap.max = 1 << 40
	if _, err := s.Exec("step 10"); err != nil {
		t.Errorf("the next step: %v", err)
	}
}

// TestLongLines: Exec refuses a line past MaxLineBytes before parsing it
// (a notebook or -c string may hold one), and leaves the session as it
// was; an unknown long word costs no table of edits and is not echoed whole.
func TestLongLines(t *testing.T) {
	s := NewSession()
	before := snapshot(t, s)
	long := "step; " + strings.Repeat("x", 8<<20)
	_, err := s.Exec(long)
	if err == nil || err.Error() != "a line of 8,388,614 bytes is over the limit (at most 65,536 bytes in a line; the line was not run)" {
		t.Errorf("8 MiB line: %v", err)
	}
	if snapshot(t, s) != before {
		t.Error("a refused line changed the session")
	}
	word := strings.Repeat("é", (MaxLineBytes-2)/2)
	start := time.Now()
	_, err = s.Exec(word)
	if took := time.Since(start); took > time.Second {
		t.Errorf("an unknown word of %d bytes took %v", len(word), took)
	}
	want := strings.Repeat("é", 20) + "... (a word of 65,534 bytes): unknown command (commands: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || len(err.Error()) > 1000 {
		t.Errorf("long unknown word: error of %d bytes, want it to start %q", len(fmt.Sprint(err)), want)
	}
	// Typos of a command's length are still suggested.
	if _, err := s.Exec("jion C2"); err == nil || !strings.Contains(err.Error(), "did you mean join?") {
		t.Errorf("jion: %v", err)
	}
}

// TestPerClientSettingsBound: setting a key again for a client keeps one
// override, so a long script of repeated sets keeps the config small; the
// distinct per-client settings a world keeps are bounded, and a set past
// the bound fails and leaves the session as it was.
func TestPerClientSettingsBound(t *testing.T) {
	s := NewSession()
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "set C1.max.poll.records %d\n", 1+i%5)
	}
	runLines(t, s, b.String())
	if n := len(s.World().Cfg.Overrides); n != 1 {
		t.Errorf("2,000 sets of one key for C1 keep %d overrides, want 1", n)
	}
	defer func(l limit) { limitOverrides = l }(limitOverrides)
	limitOverrides.max = 3
	runLines(t, s, "set C2.max.poll.records 2\nset C3.max.poll.records 2")
	before := views(t, s) + runLines(t, s, "show config")
	_, err := s.Exec("set C4.max.poll.records 2")
	if want := "set C4.max.poll.records: 4 per-client settings = 4 is over the limit (at most 3 per-client settings in a world)"; err == nil || err.Error() != want {
		t.Errorf("a fourth per-client setting under a bound of 3:\n got %v\nwant %s", err, want)
	}
	if views(t, s)+runLines(t, s, "show config") != before {
		t.Error("a refused set changed the session")
	}
	if _, err := s.Exec("set C3.max.poll.records 4"); err != nil {
		t.Errorf("setting a kept key again at the bound: %v", err)
	}
}

// TestTraceEventsJSON: trace --events --json adds the events to the
// packets (it printed the packets alone); without --events the object has
// the contract's one key.
func TestTraceEventsJSON(t *testing.T) {
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable")
	var plain map[string]json.RawMessage
	out, err := s.Exec("trace --json")
	if err != nil || json.Unmarshal([]byte(out), &plain) != nil || len(plain) != 1 || plain["packets"] == nil {
		t.Fatalf("trace --json: %v %.200s", err, out)
	}
	var withEvents struct {
		Packets []map[string]any `json:"packets"`
		Events  []struct {
			Tick   int     `json:"tick"`
			Kind   string  `json:"kind"`
			Member *string `json:"member"`
			Text   string  `json:"text"`
		} `json:"events"`
	}
	out, err = s.Exec("trace --events --json")
	if err != nil || json.Unmarshal([]byte(out), &withEvents) != nil {
		t.Fatalf("trace --events --json: %v %.200s", err, out)
	}
	if len(withEvents.Events) != s.World().Events.Len() || len(withEvents.Packets) != s.World().Packets.Len() {
		t.Errorf("%d events and %d packets, want %d and %d", len(withEvents.Events), len(withEvents.Packets), s.World().Events.Len(), s.World().Packets.Len())
	}
	found := false
	for _, e := range withEvents.Events {
		if e.Member == nil && strings.HasPrefix(e.Text, "generation 2") {
			found = true
		}
	}
	if !found {
		t.Error("no coordinator event (member null) announcing generation 2")
	}
}
