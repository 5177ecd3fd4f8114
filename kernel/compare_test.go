package kernel

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/wallclock"
)

// oneLine joins a view's wrapped lines back into one text, for phrases
// the wrapping may have split.
func oneLine(text string) string { return strings.Join(strings.Fields(text), " ") }

// TestCompareVerdictEagerVsCooperative is the fixture whose answer is
// known: the seed's joins (C2, C3, C4) under range, eager, and
// cooperative-sticky. Eager pauses all six partitions three times (108),
// cooperative only the partitions that move (67): the verdict names
// cooperative-sticky best on unavailability (every partition-tick of it a
// pause here), by 41, 38%; and range best on duplicates.
func TestCompareVerdictEagerVsCooperative(t *testing.T) {
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable\njoin C3\nrun until stable\njoin C4\nrun until stable")
	out, err := s.Exec("compare partition.assignment.strategy range,cooperative-sticky")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"strategy           UNAVAILABLE PAUSE DUPLICATES REBALANCES PAUSED/REBALANCE PROCESSED IDLE TICK GEN\n" +
			"range              108         108   0          3          6 6 6            18        C4   40   4\n" +
			"cooperative-sticky 67          67    3          6          3 3 2 2 1 1      60        -    74   7\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no row %q in:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"verdict: unavailability: cooperative-sticky best with 67 partition x ticks, 41 (38%) fewer than range (108);",
		"duplicates: range best with 0, 3 fewer than cooperative-sticky (3); lost: 0 in every row; every row ended healthy.",
		"same in all: LOST 0, HEALTH ok, OWNER-DOWN 0, UNASSIGNED 0, STOPPED 0, MAX-LAG 10",
	} {
		if !strings.Contains(oneLine(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestCompareDeadGroupAtTwelveMembers is issue 27's group: 12 static
// members over 48 partitions, each restarted in turn (a kill and a
// start). Compared under both protocols and two assignors: every line fits
// 100 columns, members are listed C1, C2, ..., C10 (natural order), the
// consumer rows name what broke them in words and are not ranked, and
// the verdict ranks the classic rows.
func TestCompareDeadGroupAtTwelveMembers(t *testing.T) {
	s := NewSession()
	lines := []string{"new --topics t:48 --members 0"}
	for c := 1; c <= 12; c++ {
		lines = append(lines, fmt.Sprintf("join C%d --static", c))
	}
	lines = append(lines, "run until stable")
	for c := 1; c <= 12; c++ {
		lines = append(lines, fmt.Sprintf("restart C%d", c), "run until stable")
	}
	runLines(t, s, strings.Join(lines, "\n"))
	out, err := s.Exec("compare group.protocol classic,consumer partition.assignment.strategy range,cooperative-sticky")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 100 {
			t.Errorf("a line of %d columns: %q", len([]rune(l)), l)
		}
	}
	flat := oneLine(out)
	for _, want := range []string{
		"consumer/range ended dead: C1..C12 stopped: UNRELEASED_INSTANCE_ID; 48 partitions unowned",
		"consumer/cooperative-sticky ended dead: C1..C12 stopped: UNRELEASED_INSTANCE_ID; 48 partitions unowned",
		"consumer/range and consumer/cooperative-sticky ended unhealthy and are not ranked.",
		"dead: 12 stopped, 48 unowned",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	at := strings.Index(out, "each member at the end")
	if at < 0 {
		t.Fatalf("no member table:\n%s", out)
	}
	var members []string
	for _, l := range strings.Split(out[at:], "\n")[2:] {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "C") {
			members = append(members, f[0])
			if f[len(f)-1] != "stopped" {
				t.Errorf("%s under consumer: %q, want stopped", f[0], l)
			}
		}
	}
	if got := strings.Join(members, " "); got != "C1 C2 C3 C4 C5 C6 C7 C8 C9 C10 C11 C12" {
		t.Errorf("members in the member table: %s", got)
	}
}

// TestCompareCSVAndJSON: --csv writes a header and one line per
// combination with every metric and each member's end, the same numbers
// --json gives, which also carries the columns equal in every row and
// the verdict.
func TestCompareCSVAndJSON(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "join C2\nrun until stable\ncrash C2 now\nrun until stable")
	out, err := s.Exec("compare partition.assignment.strategy range,cooperative-sticky session.timeout.ms 6,10 --csv cmp.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "compare: wrote cmp.csv") {
		t.Errorf("compare does not say it wrote the file:\n%s", out)
	}
	recs, data := readCSV(t, filepath.Join(s.Dir, "cmp.csv"))
	if len(recs) != 5 {
		t.Fatalf("%d lines, want a header and 4 combinations:\n%s", len(recs), data)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"partition.assignment.strategy", "session.timeout.ms", "unavailable_partition_ticks", "unavailable_rebalance",
		"unavailable_owner_down", "unavailable_unassigned", "unavailable_stopped", "pause_partition_ticks", "max_lag_records",
		"duplicates", "lost", "healthy", "health", "end C1", "end C2"} {
		if _, ok := col[h]; !ok {
			t.Errorf("no column %q in %v", h, recs[0])
		}
	}
	line, err := s.Exec("compare partition.assignment.strategy range,cooperative-sticky session.timeout.ms 6,10 --json")
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Rows []struct {
			Values      map[string]string `json:"values"`
			Unavailable int               `json:"unavailable_partition_ticks"`
			ByCause     map[string]int    `json:"unavailable_by_cause"`
			Pause       int               `json:"pause_partition_ticks"`
			Duplicates  int               `json:"duplicates"`
			Health      struct {
				OK    bool   `json:"ok"`
				Words string `json:"words"`
			} `json:"health"`
		} `json:"rows"`
		Same    []sameColumn `json:"same_in_all"`
		Verdict string       `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Rows) != 4 || j.Verdict == "" || len(j.Same) == 0 {
		t.Fatalf("--json: %d rows, verdict %q, same in all %v", len(j.Rows), j.Verdict, j.Same)
	}
	downs := 0
	for i, r := range j.Rows {
		rec := recs[i+1]
		sum := 0
		for _, n := range r.ByCause {
			sum += n
		}
		if sum != r.Unavailable || r.ByCause["rebalance"] != r.Pause {
			t.Errorf("row %d: unavailability %d by cause %v, pause %d: want the sum, and rebalance = pause", i, r.Unavailable, r.ByCause, r.Pause)
		}
		downs += r.ByCause["owner_down"]
		for name, want := range map[string]string{
			"partition.assignment.strategy": r.Values["partition.assignment.strategy"], "session.timeout.ms": r.Values["session.timeout.ms"],
			"unavailable_partition_ticks": strconv.Itoa(r.Unavailable), "unavailable_owner_down": strconv.Itoa(r.ByCause["owner_down"]),
			"pause_partition_ticks": strconv.Itoa(r.Pause), "duplicates": strconv.Itoa(r.Duplicates),
			"healthy": strconv.FormatBool(r.Health.OK), "health": r.Health.Words,
		} {
			if rec[col[name]] != want {
				t.Errorf("row %d: %s is %q in the CSV, %q in the JSON", i, name, rec[col[name]], want)
			}
		}
	}
	if downs == 0 {
		t.Errorf("no row counts C2's crash as owner down: %+v", j.Rows)
	}
}

// TestTableWrap: a table wider than the width is shown in blocks of
// columns, each repeating the first columns and within the width, the
// columns spread evenly; one that fits is as Text shows it.
func TestTableWrap(t *testing.T) {
	tb := &Table{Header: []string{"NAME", "A", "B", "C", "D"}}
	tb.Add("one", strings.Repeat("a", 20), strings.Repeat("b", 20), strings.Repeat("c", 20), "d")
	tb.Add("two", "1", "2", "3", "4")
	if got := tb.Wrap(100, 1); got != tb.Text() {
		t.Errorf("a table that fits:\n%s", got)
	}
	got := tb.Wrap(50, 1)
	want := "NAME A                    B\n" +
		"one  aaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbb\n" +
		"two  1                    2\n" +
		"NAME C                    D\n" +
		"one  cccccccccccccccccccc d\n" +
		"two  3                    4\n"
	if got != want {
		t.Errorf("wrapped at 50:\n%s\nwant\n%s", got, want)
	}
}

// TestCompareFitsAtAnySize: a long history (20 members each restarted: a
// rebalance list of 20 and more) and a member holding 100 partitions
// still print within 100 columns; the cut lists say how many items they
// left out, and --json keeps them whole.
func TestCompareFitsAtAnySize(t *testing.T) {
	roll := []string{"new --topics t:40 --members 20", "run until stable"}
	for c := 1; c <= 20; c++ {
		roll = append(roll, fmt.Sprintf("restart C%d", c), "run until stable")
	}
	for _, c := range []struct {
		name, script, cut string
	}{
		{"a rolling restart of 20", strings.Join(roll, "\n"), "… +"},
		{"one member left with 100 partitions", "new --topics t:100 --members 2\nrun until stable\ncrash C2 now\nrun until stable", "… +"},
	} {
		s := NewSession()
		runLines(t, s, c.script)
		out, err := s.Exec("compare partition.assignment.strategy range,cooperative-sticky")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > 100 {
				t.Errorf("%s: a line of %d columns: %q", c.name, n, l)
			}
		}
		if !strings.Contains(out, c.cut) {
			t.Errorf("%s: no list was cut:\n%s", c.name, out)
		}
		line, err := s.Exec("compare partition.assignment.strategy range,cooperative-sticky --json")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "…") {
			t.Errorf("%s: --json has a cut list", c.name)
		}
	}
}

func TestClipList(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"4 4 2", 40, "4 4 2"},
		{"60 60 60 60 60 60", 12, "60 60 … +4"},
		{"{t-0 t-1 t-2 t-3 t-4}", 16, "{t-0 t-1 … +3}"},
		{"{t-100}", 3, "{t-100}"}, // one item is kept whole
	} {
		if got := clipList(c.in, c.max); got != c.want {
			t.Errorf("clipList(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// TestCompareGolden keeps compare's views of two histories, the text, the
// CSV and the chart, in testdata/compare/, and explore's sweep of the
// dead group's static restarts: the seed's joins under the four
// strategies, and issue 27's twelve static members each restarted,
// compared under both protocols and two strategies. Run `go test ./kernel
// -run CompareGolden -rewrite` and read the diff (and look at the SVGs).
func TestCompareGolden(t *testing.T) {
	dead := []string{"new --topics t:48 --members 0", "set group.protocol consumer"}
	for c := 1; c <= 12; c++ {
		dead = append(dead, fmt.Sprintf("join C%d --static", c))
	}
	dead = append(dead, "run until stable")
	for c := 1; c <= 12; c++ {
		dead = append(dead, fmt.Sprintf("restart C%d", c), "run until stable")
	}
	for _, c := range []struct{ name, script, cmd string }{
		{"seed-strategies", "join C2\nrun until stable\njoin C3\nrun until stable\njoin C4\nrun until stable",
			"compare partition.assignment.strategy range,roundrobin,sticky,cooperative-sticky"},
		{"dead-group", strings.Join(dead, "\n"), "compare group.protocol consumer,classic partition.assignment.strategy range,cooperative-sticky"},
	} {
		s := NewSession()
		s.Dir = t.TempDir()
		runLines(t, s, c.script)
		rs, err := s.ExecResults(c.cmd + " --csv out.csv")
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, "out.csv"))
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, c.name+".txt", []byte(c.cmd+"\n"+rs[0].Text))
		compareGolden(t, c.name+".csv", data)
		compareGolden(t, c.name+".svg", []byte(rs[0].SVG))
	}
	s := NewSession()
	runLines(t, s, "set group.protocol consumer\nnew --members 0 --keep-settings\njoin C1 --static\njoin C2 --static\nrun until stable")
	const sweep = "explore --ticks 20..24 --faults restart,crash-now"
	out, err := s.Exec(sweep)
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "explore-static-restart.txt", []byte(sweep+"\n"+out+"\n"))
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "compare", name)
	if rewriting() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./kernel -run CompareGolden -rewrite to make it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("testdata/compare/%s differs from what compare prints now (%d bytes, want %d); if the change is meant, run go test ./kernel -run CompareGolden -rewrite and read the diff",
			name, len(got), len(want))
	}
}

// TestCompareSameInAllKeepsPairs: the "same in all" line wraps between
// its items, never between a column and its value (it split "STOPPED" and
// "0" across lines at 100 columns).
func TestCompareSameInAllKeepsPairs(t *testing.T) {
	v := &compareView{keys: []string{"k"}, table: &Table{Header: []string{"k"}}}
	for i := 0; i < 30; i++ {
		v.same = append(v.same, sameColumn{Column: fmt.Sprintf("COLUMN-%d", i), Value: fmt.Sprintf("value %d", i)})
	}
	text := v.text()
	if !strings.Contains(text, "\n  ") {
		t.Fatalf("the line did not wrap:\n%s", text)
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if len(line) > textWidth {
			t.Errorf("%d columns: %q", len(line), line)
		}
	}
	for i := 0; i < 30; i++ {
		if want := fmt.Sprintf("COLUMN-%d value %d", i, i); !strings.Contains(text, want) {
			t.Errorf("%q is not on one line:\n%s", want, text)
		}
	}
}

// TestCompareVerdictUnderOnePercent: a difference that rounds to 0% is
// said as under 1%, not as 0%.
func TestCompareVerdictUnderOnePercent(t *testing.T) {
	a := compareRow{values: []string{"a"}}
	b := compareRow{values: []string{"b"}}
	a.Unavailable, b.Unavailable = 18014, 18038
	got, _ := verdictMetrics[0].rank([]*compareRow{&a, &b}, "every row")
	want := "unavailability: a best with 18014 partition x ticks, 24 (under 1%) fewer than b (18038)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A compared setting is in force from the world's start: a member keeps
// the session timeout it joined with, so a timeout set after `new` would
// leave every row as the history ran. With C3 crashed at once, its
// partitions are down until the coordinator's session timeout removes it,
// so a longer timeout must cost more owner-down time, in either clock.
func TestCompareSettingsInForceFromTheStart(t *testing.T) {
	for _, c := range []struct{ setup, values string }{
		{"new --members 3\ncrash C3 now\nrun until tick 100", "6,20"},
		{"new --kafka-defaults --members 3\ncrash C3 now\nrun until time 1m", "10000,45000"},
	} {
		s := NewSession()
		s.Dir = t.TempDir()
		runLines(t, s, c.setup)
		if _, err := s.Exec("compare session.timeout.ms " + c.values + " --csv cmp.csv"); err != nil {
			t.Fatal(err)
		}
		recs, data := readCSV(t, filepath.Join(s.Dir, "cmp.csv"))
		if len(recs) != 3 {
			t.Fatalf("want a header and 2 rows:\n%s", data)
		}
		col := -1
		for i, h := range recs[0] {
			if h == "unavailable_owner_down" {
				col = i
			}
		}
		if col < 0 {
			t.Fatalf("no unavailable_owner_down column: %v", recs[0])
		}
		short, _ := strconv.Atoi(recs[1][col])
		long, _ := strconv.Atoi(recs[2][col])
		if !(short > 0 && long > short) {
			t.Errorf("%s: owner down %d with the shorter timeout, %d with the longer: want more with the longer\n%s", c.setup, short, long, data)
		}
	}
}

// In real time the verdict weighs time, not ticks: with tick.ms compared,
// the coarser clock counts half the ticks for about the same time, so a
// verdict on partition x ticks named it best when it was slightly worse.
// Every number the verdict, --json and --csv give must be the table's
// partition x seconds.
func TestCompareVerdictWeighsTimeInRealTime(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "new --kafka-defaults --members 3\ncrash C3 now\nrun until time 1m")
	out, err := s.Exec("compare tick.ms 5,10 --json --csv cmp.csv")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct {
			Values      map[string]string `json:"values"`
			Unavailable int               `json:"unavailable_partition_ticks"`
			UnavailSecs *float64          `json:"unavailable_partition_seconds"`
			TickMS      *int              `json:"tick_ms"`
			TimeMS      *int64            `json:"time_ms"`
		} `json:"rows"`
		Verdict string `json:"verdict"`
	}
	line, _, _ := strings.Cut(out, "\n") // then "compare: wrote cmp.csv"
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(got.Rows) != 2 {
		t.Fatalf("want 2 rows:\n%s", out)
	}
	secs := map[string]float64{}
	for _, r := range got.Rows {
		tick := r.Values["tick.ms"]
		if r.UnavailSecs == nil || r.TickMS == nil || r.TimeMS == nil {
			t.Fatalf("row %s: no seconds in real time:\n%s", tick, out)
		}
		if want := float64(r.Unavailable**r.TickMS) / 1000; *r.UnavailSecs != want {
			t.Errorf("row %s: %v partition x seconds, want %d ticks x %d ms = %v", tick, *r.UnavailSecs, r.Unavailable, *r.TickMS, want)
		}
		if *r.TimeMS != 60_000 {
			t.Errorf("row %s: ends at %d ms, want 60000", tick, *r.TimeMS)
		}
		secs[tick] = *r.UnavailSecs
	}
	best, worse := "5", "10"
	if secs["10"] < secs["5"] {
		best, worse = "10", "5"
	}
	if secs[best] == secs[worse] {
		t.Fatalf("both rows unavailable %v s: the scenario no longer tells them apart", secs[best])
	}
	if want := fmt.Sprintf("unavailability: %s best with %s (partition x seconds)", best, wallclock.SecondsText(int64(secs[best]*1000+0.5))); !strings.HasPrefix(got.Verdict, want) {
		t.Errorf("verdict %q\nwant it to begin %q", got.Verdict, want)
	}
	recs, data := readCSV(t, filepath.Join(s.Dir, "cmp.csv"))
	if len(recs) != 3 {
		t.Fatalf("want a header and 2 rows:\n%s", data)
	}
	col := slices.Index(recs[0], "unavailable_partition_seconds")
	if col < 0 {
		t.Fatalf("no unavailable_partition_seconds column in real time: %v", recs[0])
	}
	for i, r := range recs[1:] {
		if v, _ := strconv.ParseFloat(r[col], 64); v != secs[r[0]] {
			t.Errorf("csv row %d (%s): %s s, want %v", i+1, r[0], r[col], secs[r[0]])
		}
	}
	// On the page's scale no seconds appear anywhere.
	p := NewSession()
	p.Dir = t.TempDir()
	runLines(t, p, "new --members 3\ncrash C3 now\nrun until tick 100")
	out, err = p.Exec("compare session.timeout.ms 6,20 --json --csv page.csv")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "_seconds") || strings.Contains(out, "time_ms") || strings.Contains(out, "partition x seconds") {
		t.Errorf("page's scale: seconds in compare --json:\n%s", out)
	}
	data, _ = os.ReadFile(filepath.Join(p.Dir, "page.csv"))
	if bytes.Contains(data, []byte("_seconds")) || bytes.Contains(data, []byte("time_ms")) {
		t.Errorf("page's scale: seconds in compare --csv:\n%s", data)
	}
}

// readCSV reads a CSV file compare wrote: its records, and its bytes for
// a failure's message. A file that is not there or not CSV fails the test.
func readCSV(t *testing.T, path string) ([][]string, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	return recs, data
}
