package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// listed is a view's table rows: the lines after its header line.
func listed(t *testing.T, s *Session, line string) []string {
	t.Helper()
	rs, err := s.ExecResults(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	tb := rs[len(rs)-1].Table
	if tb == nil {
		t.Fatalf("%s: no table", line)
	}
	var out []string
	for _, r := range tb.Rows {
		out = append(out, strings.Join(r, "|"))
	}
	return out
}

// tickOf is a row's first cell as a number (TICK, SENT, OFFSET).
func tickOf(t *testing.T, row string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.SplitN(row, "|", 2)[0])
	if err != nil {
		t.Fatalf("row %q: %v", row, err)
	}
	return n
}

// TestListingViewsAreBounded: every listing view counts its rows before it
// makes any and refuses more than its bound, naming the bound, the count
// and how to narrow the view; narrowed, the same view works. `offsets`
// after three `step 1000000` of the default world built 3,600,000 rows
// (their text and HTML) and ran out of memory.
func TestListingViewsAreBounded(t *testing.T) {
	defer func(l limit) { limitViewRows = l }(limitViewRows)
	limitViewRows.max = 40
	s := NewSession()
	runLines(t, s, "set producer transactional\nset isolation.level read_committed\njoin C2\nrun until stable\nstep 60\ncrash C2 now\nrun until stable\nstep 30")
	w := s.World()
	nOffsets := w.Group.Offsets.Log.Len()
	nCells := w.Log(w.Layout().Outputs()[0]).HW()
	if nOffsets <= 40 || nCells <= 40 {
		t.Fatalf("%d offset records and %d invoice cells: the test needs more than the bound", nOffsets, nCells)
	}
	nRecords := len(w.ReadTopic("invoices", "read_uncommitted"))
	refused := map[string]string{
		"offsets": fmt.Sprintf("offsets: %d records of __consumer_offsets (offsets --last N shows the last N, --from TICK those from a tick on) = %d is over the limit (at most 40 rows in one listing view)", nOffsets, nOffsets),
		"log invoices-0": fmt.Sprintf("log: %d cells and aborted transactions of invoices-0 (log invoices-0 --from OFFSET starts at an offset, --around OFFSET shows a few) = %d is over the limit (at most 40 rows in one listing view)",
			nCells+len(w.Log(w.Layout().Outputs()[0]).Aborted), nCells+len(w.Log(w.Layout().Outputs()[0]).Aborted)),
		"consume invoices --isolation read_uncommitted --json": fmt.Sprintf("consume: %d records of invoices (consume invoices --last N shows the last N, --from OFFSET each partition from an offset on) = %d is over the limit (at most 40 rows in one listing view)", nRecords, nRecords),
	}
	for line, want := range refused {
		if _, err := s.Exec(line); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
	}
	for _, line := range []string{"offsets --last 40", "offsets --from " + strconv.Itoa(w.Tick-10), "log invoices-0 --from " + strconv.Itoa(nCells-30),
		"log invoices-0 --around " + strconv.Itoa(nCells/2),
		"consume invoices --last 40 --json", "consume invoices --from " + strconv.Itoa(nCells-30)} {
		if _, err := s.Exec(line); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	// metrics' rows per rebalance, txn's transactional ids and describe's
	// partitions and members, under a bound they pass.
	limitViewRows.max = 1
	for line, want := range map[string]string{
		"metrics":               "metrics: 2 rebalances with pauses (metrics --last N shows the last N, --from TICK those begun from a tick on) = 2 is over the limit (at most 1 rows in one listing view)",
		"txn":                   "txn: 2 transactional ids (txn ID shows one) = 2 is over the limit (at most 1 rows in one listing view)",
		"describe group --json": "describe: 7 partitions and members (describe group --state shows the group alone) = 7 is over the limit (at most 1 rows in one listing view)",
	} {
		if _, err := s.Exec(line); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
	}
	for _, line := range []string{"metrics --last 1", "metrics --json --last 1", "txn tx-C1", "describe group --state"} {
		if _, err := s.Exec(line); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// TestListingWindows: --from and --last show exactly a part of the whole
// view: --from the rows at or past a tick (offsets, trace, metrics) or an
// offset (log, consume), --last the last N of them.
func TestListingWindows(t *testing.T) {
	s := NewSession()
	runLines(t, s, "set producer transactional\njoin C2\nrun until stable\nstep 40\ncrash C1 now\nrun until stable\njoin C3\nrun until stable\nstep 20")
	tail := func(rows []string, n int) []string { return rows[max(0, len(rows)-n):] }
	from := func(rows []string, v int, key func(string) int) []string {
		var out []string
		for _, r := range rows {
			if key(r) >= v {
				out = append(out, r)
			}
		}
		return out
	}
	key := func(r string) int { return tickOf(t, r) }
	offsetOf := func(r string) int {
		n, _ := strconv.Atoi(strings.Split(r, "|")[1])
		return n
	}
	check := func(line string, got, want []string) {
		t.Helper()
		if len(want) == 0 {
			t.Fatalf("%s: the test picks a window with no row", line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d rows\n%s\nwant %d\n%s", line, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
		}
	}
	T := s.World().Tick - 25
	for _, v := range []struct {
		view, from string
		key        func(string) int
		last       bool
	}{
		{"offsets", "--from", key, true}, {"trace", "--from", key, false}, {"log invoices-0", "--from", key, false},
		{"log orders-0", "--from", key, false}, {"consume invoices", "--from", offsetOf, true}, {"consume orders", "--from", offsetOf, true},
	} {
		all := listed(t, s, v.view)
		at := T
		if strings.HasPrefix(v.view, "log") || strings.HasPrefix(v.view, "consume") {
			at = 4
		}
		check(fmt.Sprintf("%s --from %d", v.view, at), listed(t, s, fmt.Sprintf("%s --from %d", v.view, at)), from(all, at, v.key))
		if v.last {
			check(v.view+" --last 7", listed(t, s, v.view+" --last 7"), tail(all, 7))
			check(fmt.Sprintf("%s --from %d --last 3", v.view, at), listed(t, s, fmt.Sprintf("%s --from %d --last 3", v.view, at)), tail(from(all, at, v.key), 3))
		}
	}
	check("trace 9 --from T", listed(t, s, fmt.Sprintf("trace 9 --from %d", T)), tail(from(listed(t, s, "trace"), T, key), 9))
	check("trace --member C2 --from T", listed(t, s, fmt.Sprintf("trace --member C2 --from %d", T)), from(listed(t, s, "trace --member C2"), T, key))
	// consume numbers duplicates as the reader meets them from offset 0,
	// whatever part it lists.
	var whole, part struct {
		Records []map[string]any `json:"records"`
	}
	out, _ := s.Exec("consume invoices --json")
	json.Unmarshal([]byte(out), &whole)
	out, _ = s.Exec("consume invoices --last 5 --json")
	json.Unmarshal([]byte(out), &part)
	if !reflect.DeepEqual(part.Records, whole.Records[len(whole.Records)-5:]) {
		t.Errorf("consume --last 5 --json: %v, want the last 5 of %v", part.Records, whole.Records)
	}
	// metrics: the rows per rebalance begun at T or later, in text and JSON.
	var m, mLast struct {
		Pauses []map[string]any `json:"pauses"`
	}
	out, _ = s.Exec("metrics --json")
	json.Unmarshal([]byte(out), &m)
	out, _ = s.Exec("metrics --json --last 2")
	json.Unmarshal([]byte(out), &mLast)
	if len(m.Pauses) < 3 || !reflect.DeepEqual(mLast.Pauses, m.Pauses[len(m.Pauses)-2:]) {
		t.Errorf("metrics --json --last 2: %v, want the last 2 of %v", mLast.Pauses, m.Pauses)
	}
	text := runLines(t, s, fmt.Sprintf("metrics --from %d", s.World().Tick+1))
	if strings.Contains(text, "pauses per rebalance") {
		t.Errorf("metrics --from a tick after every rebalance lists some:\n%s", text)
	}
}

// TestTopicReaderIsReadTopic: consume's reader (its runs, the records it
// lists and its count) reads the topic as sim.World.ReadTopic returns it,
// at both isolation levels, in every demo's world (transactions, aborts,
// open transactions, duplicates).
func TestTopicReaderIsReadTopic(t *testing.T) {
	for n := 1; n <= len(demoTitles); n++ {
		s := NewSession()
		s.Dir = t.TempDir()
		runLines(t, s, fmt.Sprintf("demo %d", n))
		w := s.World()
		for _, topic := range topicList(w) {
			for _, iso := range []string{"read_committed", "read_uncommitted"} {
				rd := topicReader{w: w, topic: topic, iso: iso}
				var want []any
				for _, r := range w.ReadTopic(topic, iso) {
					want = append(want, r)
				}
				c, _ := rd.count(s, 0)
				if c != len(want) {
					t.Errorf("demo %d, %s at %s: counted %d records, ReadTopic returns %d", n, topic, iso, c, len(want))
				}
				items, err := rd.listed(s, 0, 0, c)
				if err != nil {
					t.Fatal(err)
				}
				var got []any
				for _, it := range items {
					got = append(got, it.r)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("demo %d, %s at %s: the reader gives %d records, ReadTopic %d", n, topic, iso, len(got), len(want))
				}
			}
		}
	}
}

// TestViewsLookForCtrlC: every listing view looks for Ctrl-C (and the heap
// guard's stop) as it makes its rows, and fails as interrupted; they
// looked for nothing, so neither could stop a view of millions of rows.
func TestViewsLookForCtrlC(t *testing.T) {
	s := NewSession()
	runLines(t, s, "set producer transactional\njoin C2\nrun until stable\nstep 30")
	for _, line := range []string{"offsets", "log invoices-0", "consume invoices", "consume invoices --json", "trace", "trace --json",
		"trace --events", "trace --type JoinGroup", "txn", "metrics", "metrics --json", "describe group", "describe group --json"} {
		s.interrupt.onPoll = s.Interrupt
		_, err := s.Exec(line)
		s.interrupt.onPoll = nil
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("%s with Ctrl-C pressed: %v, want interrupted", line, err)
		}
	}
}

// TestStreamedViewsEqualTables: a view longer than tableRows is streamed
// (its rows made twice, measured then written, never kept) and prints
// byte for byte what the table prints; its text is bounded before it is
// written.
func TestStreamedViewsEqualTables(t *testing.T) {
	s := NewSession()
	runLines(t, s, "set producer transactional\njoin C2\nrun until stable\nstep 40\ncrash C1 now\nrun until stable\njoin C3\nrun until stable\nstep 20")
	T := s.World().Tick - 30
	lines := []string{"offsets", "offsets --last 17", fmt.Sprintf("offsets --from %d", T), "log invoices-0", "log orders-1 --from 3",
		"consume invoices", "consume orders --last 9", "trace", "trace 25 --member C2", "trace --events", fmt.Sprintf("trace --from %d --events", T), "metrics"}
	defer func(n int) { tableRows = n }(tableRows)
	for _, line := range lines {
		tableRows = 1 << 30
		rs, err := s.ExecResults(line)
		if err != nil || rs[0].Table == nil {
			t.Fatalf("%s: %v", line, err)
		}
		want := rs[0].Text
		tableRows = 2
		rs, err = s.ExecResults(line)
		if err != nil {
			t.Fatalf("%s streamed: %v", line, err)
		}
		if got := rs[0].Text; got != want {
			t.Errorf("%s streamed differs from its table: %s", line, firstLineDiff(got, want))
		}
		if rs[0].Table != nil && !strings.HasPrefix(line, "metrics") {
			t.Errorf("%s streamed kept a table of %d rows", line, len(rs[0].Table.Rows))
		}
	}
	defer func(l limit) { limitViewBytes = l }(limitViewBytes)
	limitViewBytes.max = 1000
	for _, line := range []string{"offsets", "trace --json", "consume invoices --json", "trace --events"} {
		if _, err := s.Exec(line); err == nil || !strings.Contains(err.Error(), "at most 1,000 bytes of text in one listing view") {
			t.Errorf("%s past 1,000 bytes: %v", line, err)
		}
	}
}

// TestLogAbortedIndexFollowsRows: log lists the whole aborted transaction
// index, and a view of part of the log (--from, --around) the aborted
// transactions that reach its rows, so that narrowing the view narrows
// what the row bound counts.
func TestLogAbortedIndexFollowsRows(t *testing.T) {
	s := NewSession()
	runLines(t, s, "set producer transactional\nset isolation.level read_committed\njoin C2\nrun until stable\nstep 60\ncrash C2 now\nrun until stable\nstep 30\ncrash C1 now\nrun until stable\nstep 30")
	w := s.World()
	l := w.Log(w.Layout().Outputs()[0])
	if len(l.Aborted) < 2 {
		t.Fatalf("%d aborted transactions: the test needs two", len(l.Aborted))
	}
	index := func(line string) string {
		t.Helper()
		out, err := s.Exec(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		_, after, _ := strings.Cut(out, "aborted transaction index: ")
		return strings.SplitN(after, "\n", 2)[0]
	}
	want := func(from, to int) string {
		var ab []string
		for _, a := range l.Aborted {
			if a.Last >= from && a.First < to {
				ab = append(ab, fmt.Sprintf("pid %d offsets %d..%d", a.PID, a.First, a.Last))
			}
		}
		return strings.Join(ab, "; ")
	}
	if got, w := index("log invoices-0"), want(0, l.HW()); got != w {
		t.Errorf("log invoices-0: aborted index %q, want %q", got, w)
	}
	first, second := l.Aborted[0], l.Aborted[1]
	from := first.Last + 1
	if got, w := index(fmt.Sprintf("log invoices-0 --from %d", from)), want(from, l.HW()); got != w || strings.Contains(got, fmt.Sprintf("offsets %d..%d", first.First, first.Last)) {
		t.Errorf("log invoices-0 --from %d: aborted index %q, want %q (without the first)", from, got, w)
	}
	at := second.First
	lo, hi := max(0, at-aroundRows), min(l.HW(), at+aroundRows+1)
	if got, w := index(fmt.Sprintf("log invoices-0 --around %d", at)), want(lo, hi); got != w || w == "" {
		t.Errorf("log invoices-0 --around %d: aborted index %q, want %q", at, got, w)
	}
}

// TestExecWritesNoHTML: a table view run by Exec, whose results are read
// as text alone, writes no HTML (Session.htmlOf); run by ExecResults,
// before and after, it writes its table's, with the same text.
func TestExecWritesNoHTML(t *testing.T) {
	s := NewSession()
	runLines(t, s, "set producer transactional\njoin C2\nrun until stable\nstep 20")
	for _, line := range []string{"offsets", "metrics", "log orders-1", "trace 5", "describe group", "members"} {
		rs, err := s.ExecResults(line)
		if err != nil || rs[0].Table == nil || rs[0].HTML != rs[0].Table.HTML() {
			t.Fatalf("%s: %v, or no table's HTML", line, err)
		}
		text, err := s.Exec(line)
		if err != nil || text != strings.TrimRight(rs[0].Text, "\n") {
			t.Fatalf("%s by Exec: %v, or another text", line, err)
		}
		if s.textOnly {
			t.Fatalf("%s by Exec left the session reading text alone", line)
		}
		done := s.readAsText(true) // as Exec runs it
		asText, err := s.execResults(line)
		done()
		if err != nil || asText[0].HTML != "" || asText[0].Text != rs[0].Text {
			t.Errorf("%s read as text: %v, or HTML written, or another text", line, err)
		}
		if rs, err := s.ExecResults(line); err != nil || rs[0].HTML != rs[0].Table.HTML() {
			t.Errorf("%s by ExecResults after Exec: %v, or no HTML", line, err)
		}
	}
}
