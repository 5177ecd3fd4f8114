package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 27's "metrics that cannot lie" and "compare that decides", through
// the binary as a platform engineer meets them.

// deadGroup is the first example: 12 static members over 48
// partitions under group.protocol consumer, each restarted in turn (a
// kill and a start, without the close Kafka 4.x wants before a static
// member comes back).
func deadGroup() string {
	lines := []string{"new --topics t:48 --members 0", "set group.protocol consumer"}
	for c := 1; c <= 12; c++ {
		lines = append(lines, fmt.Sprintf("join C%d --static", c))
	}
	lines = append(lines, "run until stable")
	for c := 1; c <= 12; c++ {
		lines = append(lines, fmt.Sprintf("restart C%d", c), "run until stable")
	}
	return strings.Join(lines, "\n") + "\n"
}

// objectAfter is the first JSON object printed after prefix.
func objectAfter(t *testing.T, out, prefix string) map[string]any {
	t.Helper()
	at := strings.Index(out, prefix)
	if at < 0 {
		t.Fatalf("no %q in:\n%s", prefix, out)
	}
	objs := jsonLines(out[at:])
	if len(objs) == 0 {
		t.Fatalf("no JSON after %q:\n%s", prefix, out[at:])
	}
	return objs[0]
}

// TestDeadGroupSaysSo: the dead group's metrics, and compare's row for it,
// say in words that it is dead (every member stopped with
// UNRELEASED_INSTANCE_ID, every partition unowned) instead of a summary
// row that looks like a deploy's cost; the verdict does not rank it.
func TestDeadGroupSaysSo(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := kgrepl(t, "", script(t, dir, deadGroup()+
		"metrics\nmetrics --json\ncompare group.protocol consumer,classic\n"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const words = "dead: C1..C12 stopped: UNRELEASED_INSTANCE_ID; 48 partitions unowned"
	if !strings.Contains(out, "health                                              "+words) {
		t.Errorf("metrics does not say %q:\n%s", words, out)
	}
	if !strings.Contains(out, "members running                                     0 of 12") {
		t.Errorf("metrics does not count the members running:\n%s", out)
	}
	var m struct {
		Unavailable int            `json:"unavailable_partition_ticks"`
		ByCause     map[string]int `json:"unavailable_by_cause"`
		Health      struct {
			OK      bool     `json:"ok"`
			Running []string `json:"running"`
			Stopped []struct {
				Client string `json:"client_id"`
				Error  string `json:"error"`
			} `json:"stopped"`
			Unowned []string `json:"unowned_partitions"`
			Words   string   `json:"words"`
		} `json:"health"`
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, `{"tick"`) {
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := m.Health
	if h.OK || len(h.Running) != 0 || len(h.Stopped) != 12 || len(h.Unowned) != 48 || h.Words != words {
		t.Errorf("metrics --json's health: %+v", h)
	}
	for i, s := range h.Stopped {
		if s.Client != fmt.Sprintf("C%d", i+1) || s.Error != "UNRELEASED_INSTANCE_ID" {
			t.Errorf("stopped[%d] = %+v, want C%d by UNRELEASED_INSTANCE_ID (natural order)", i, s, i+1)
		}
	}
	if m.ByCause["stopped"] == 0 || m.ByCause["unassigned"] == 0 {
		t.Errorf("the dead group's partitions are not counted unavailable as stopped or unassigned: %v", m.ByCause)
	}

	cmp := out[strings.Index(out, "rerun under 2 combination(s)"):]
	for _, l := range strings.Split(cmp, "\n") {
		if len([]rune(l)) > 100 {
			t.Errorf("compare prints a line of %d columns: %q", len([]rune(l)), l)
		}
	}
	flat := strings.Join(strings.Fields(cmp), " ")
	for _, want := range []string{
		"consumer ended " + words,
		"dead: 12 stopped, 48 unowned",
		"verdict: classic, the one row that ended healthy (consumer ended unhealthy and is not ranked).",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("compare does not say %q:\n%s", want, cmp)
		}
	}
	var consumerRow string
	for _, l := range strings.Split(cmp, "\n") {
		if strings.HasPrefix(l, "consumer ") && strings.Contains(l, "dead:") {
			consumerRow = l
		}
	}
	if consumerRow == "" {
		t.Errorf("compare's consumer row does not say dead:\n%s", cmp)
	}
}

// TestStaticRestartIsNotFree: the pause meter scores a static member's
// restart 0, as the page defines it; the unavailability beside it counts
// the ticks its partitions waited while it was down, as owner down.
func TestStaticRestartIsNotFree(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "join C2 --static; run until stable; metrics --json; restart C2; run until stable; metrics --json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	objs := jsonLines(out)
	if len(objs) != 2 {
		t.Fatalf("%d JSON lines:\n%s", len(objs), out)
	}
	num := func(o map[string]any, k string) int { return int(o[k].(float64)) }
	cause := func(o map[string]any, c string) int {
		return int(o["unavailable_by_cause"].(map[string]any)[c].(float64))
	}
	before, after := objs[0], objs[1]
	if num(after, "pause_partition_ticks") != num(before, "pause_partition_ticks") || num(after, "rebalances") != num(before, "rebalances") {
		t.Errorf("the static restart moved the pause meter: %v -> %v", before["pause_partition_ticks"], after["pause_partition_ticks"])
	}
	if d := cause(after, "owner_down") - cause(before, "owner_down"); d <= 0 {
		t.Errorf("the static restart counted %d partition x ticks owner down", d)
	}
	sum := 0
	for _, n := range after["unavailable_by_cause"].(map[string]any) {
		sum += int(n.(float64))
	}
	if sum != num(after, "unavailable_partition_ticks") || num(after, "unavailable_partition_ticks") < num(after, "pause_partition_ticks") {
		t.Errorf("unavailability %v is not the sum of its causes %v, or below the pause meter", after["unavailable_partition_ticks"], after["unavailable_by_cause"])
	}
	if h := after["health"].(map[string]any); h["words"] != "ok" {
		t.Errorf("health after the restart: %v", h)
	}
}

// TestCompareDecidesThroughTheBinary: the seed's joins compared under
// range (eager) and cooperative-sticky: the verdict names cooperative-sticky
// best on unavailability, by how much; --csv writes a row per combination
// with the numbers --json gives; --out draws a panel per metric under a
// title that names the setting and the scenario.
func TestCompareDecidesThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	csvPath, svgPath := filepath.Join(dir, "cmp.csv"), filepath.Join(dir, "cmp.svg")
	const joins = "join C2; run until stable; join C3; run until stable; join C4; run until stable; "
	const cmp = "compare partition.assignment.strategy range,cooperative-sticky"
	out, errs, code := kgrepl(t, "", "-c", joins+cmp+" --csv "+csvPath+" --out "+svgPath+"; "+cmp+" --json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"verdict: unavailability: cooperative-sticky best with 67 partition x ticks, 41 (38%) fewer than range (108);",
		"same in all: LOST 0, HEALTH ok,",
		"compare: wrote " + csvPath, "compare: wrote " + svgPath,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("compare does not say %q:\n%s", want, out)
		}
	}
	j := objectAfter(t, out, "compare: wrote "+csvPath)
	if v, _ := j["verdict"].(string); !strings.HasPrefix(v, "unavailability: cooperative-sticky best with 67") {
		t.Errorf("--json's verdict: %q", v)
	}
	rows := j["rows"].([]any)
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(rows) || len(rows) != 2 {
		t.Fatalf("the CSV has %d lines, --json %d rows", len(recs), len(rows))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, r := range rows {
		row := r.(map[string]any)
		for _, k := range []string{"unavailable_partition_ticks", "pause_partition_ticks", "duplicates", "lost", "rebalances"} {
			if got, want := recs[i+1][col[k]], fmt.Sprint(row[k]); got != want {
				t.Errorf("row %d: %s is %s in the CSV, %s in --json", i, k, got, want)
			}
		}
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"partition.assignment.strategy compared after join C2..C4 (tick 40)",
		"unavailable (partition x ticks)", "pause meter (partition x ticks)", "duplicates", "lost", "most lag (records)"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}

// TestExploreShowsHealthAndUnavailability: explore's classes carry the
// unavailability and health columns, and the lines under them the whole
// sweep's.
func TestExploreShowsHealthAndUnavailability(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "join C2; run until stable; run until tick 16; explore --ticks 16..22 --faults restart,close-now")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"CLASS ", " UNAVAILABLE ", " HEALTH ", "unavailable from the fault on: ", "health at the end: every branch ended healthy"} {
		if !strings.Contains(out, want) {
			t.Errorf("explore does not print %q:\n%s", want, out)
		}
	}
}
