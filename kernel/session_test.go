package kernel

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A damaged or foreign session file gives a clear error and leaves the
// session as it was; a saved session loads back to the same state.
func TestLoadRefusesBadFilesAndKeepsTheSession(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "join C2\nrun until stable\nstep 7")
	before := views(t, s)
	cases := map[string]string{
		"foreign.kg":  "hello world\n",
		"future.kg":   "# kgrepl session v9\nnew\n",
		"damaged.kg":  "# kgrepl session v1\nnew\njoin C2\nstep 3\nfrobnicate\n",
		"badvalue.kg": "# kgrepl session v1\nset session.timeout.ms never\nnew\n",
	}
	wants := map[string]string{
		"foreign.kg":  "not a kgrepl session file",
		"future.kg":   "a session format this kgrepl does not read",
		"damaged.kg":  `line 5: "frobnicate" is not a world input`,
		"badvalue.kg": "line 2: set: session.timeout.ms",
	}
	for name, body := range cases {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := s.Exec("load " + name)
		if err == nil || !strings.Contains(err.Error(), wants[name]) {
			t.Errorf("load %s: %v, want an error with %q", name, err, wants[name])
		}
		if views(t, s) != before {
			t.Errorf("load %s changed the session", name)
		}
	}
	if _, err := s.Exec("save good.kg"); err != nil {
		t.Fatal(err)
	}
	fresh := NewSession()
	fresh.Dir = s.Dir
	if _, err := fresh.Exec("load good.kg"); err != nil {
		t.Fatal(err)
	}
	if views(t, fresh) != before {
		t.Error("a saved session loads back to a different state")
	}
	// The file is written through a rename: no temporary file is left behind.
	left, _ := filepath.Glob(filepath.Join(s.Dir, ".kgrepl-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// compare reruns what was typed, so `run until stable` keeps its meaning
// under a protocol that needs two rebalances per join.
func TestCompareRerunsTheTypedHistory(t *testing.T) {
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable\njoin C3\nrun until stable")
	rows, err := s.Compare([]string{"partition.assignment.strategy"}, [][]string{{"range", "cooperative-sticky"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Error != "" || rows[1].Error != "" {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Generation != 3 || rows[1].Generation != 5 {
		t.Errorf("generations range %d, cooperative-sticky %d: want 3 and 5 (one and two rebalances per join)", rows[0].Generation, rows[1].Generation)
	}
	if rows[1].Pause >= rows[0].Pause {
		t.Errorf("pause meter cooperative %d, range %d: want cooperative lower", rows[1].Pause, rows[0].Pause)
	}
	out, err := s.Exec("compare commit after,before producer idempotent,transactional --json")
	if err != nil || !strings.Contains(out, `"settings":"commit=before producer=transactional"`) {
		t.Errorf("compare of two keys: %v %s", err, out)
	}
	if _, err := s.Exec("compare commit sometimes"); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("a bad value: %v", err)
	}
	for line, want := range map[string]string{
		"compare session.timeout.ms 1,,2":  `compare: session.timeout.ms: an empty value in "1,,2"`,
		"compare session.timeout.ms 10,":   `compare: session.timeout.ms: an empty value in "10,"`,
		"compare session.timeout.ms 10,10": `compare: session.timeout.ms: 10 is listed twice in "10,10"`,
		"compare session.timeout.ms 10,x":  `compare: session.timeout.ms: "x" is not a whole number from 1 to 1000000`,
	} {
		if _, err := s.Exec(line); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want it to start %q", line, err, want)
		}
	}
}

// TestTableHTMLAlignment: text columns (ASSIGNMENT) left, number columns right.
func TestTableHTMLAlignment(t *testing.T) {
	s := NewSession()
	rs, err := s.ExecResults("describe group --members --verbose")
	if err != nil {
		t.Fatal(err)
	}
	h := rs[0].HTML
	for _, want := range []string{
		`<th style="text-align:left">ASSIGNMENT</th>`,
		`<td style="text-align:left">orders(0,1,2),payments(0,1,2)</td>`,
		`<th style="text-align:right">#PARTITIONS</th>`,
		`<td style="text-align:right">6</td>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("describe --members --verbose HTML lacks %s:\n%s", want, h)
		}
	}
}

// TestCompareShowsAssignments: after four joins, range, roundrobin and
// sticky pause alike, and what tells them apart is where the partitions
// end up: compare shows each one's final assignment, its idle members and
// the partitions each rebalance paused.
func TestCompareShowsAssignments(t *testing.T) {
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable\njoin C3\nrun until stable\njoin C4\nrun until stable")
	rows, err := s.Compare([]string{"partition.assignment.strategy"}, [][]string{{"range", "roundrobin", "cooperative-sticky"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows[0].Idle, rows[1].Idle); got != "[C4] []" {
		t.Errorf("idle members range, roundrobin: %s, want [C4] []", got)
	}
	if rows[0].Assignment["C4"] != "{}" || rows[1].Assignment["C4"] != "{p0}" || rows[2].Assignment["C4"] != "{o1}" {
		t.Errorf("C4's partitions: range %s, roundrobin %s, cooperative-sticky %s", rows[0].Assignment["C4"], rows[1].Assignment["C4"], rows[2].Assignment["C4"])
	}
	if got := fmt.Sprint(rows[0].PausedPerRebalance, rows[2].PausedPerRebalance); got != "[6 6 6] [3 3 2 2 1 1]" {
		t.Errorf("paused per rebalance: %s", got)
	}
	out, err := s.Exec("compare partition.assignment.strategy range,roundrobin,sticky")
	if err != nil {
		t.Fatal(err)
	}
	// Only IDLE differs: every other column is said once, under the table.
	for _, want := range []string{
		"strategy   IDLE\nrange      C4\nroundrobin -\nsticky     -\n",
		"same in all: UNAVAILABLE 108, PAUSE 108, DUPLICATES 0, LOST 0, HEALTH ok, REBALANCES 3,",
		"PAUSED/REBALANCE 6 6 6,",
		"TICK 40,",
		"verdict: unavailability: 108 partition x ticks in every row; duplicates: 0 in every row; lost: 0",
		"MEMBER range   roundrobin sticky",
		"C4     {}      {p0}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 {
			t.Errorf("a line over 100 columns: %q", l)
		}
	}
	rs, err := s.ExecResults("compare partition.assignment.strategy range,roundrobin,sticky")
	if err != nil {
		t.Fatal(err)
	}
	// The picture has the members' chart under the metrics'.
	for _, want := range []string{"Partitions each member holds at the end", "unavailable (partition x ticks)", ">C4<",
		"partition.assignment.strategy compared after join C2..C4 (tick 40)"} {
		if !strings.Contains(rs[0].SVG, want) {
			t.Errorf("the compare chart lacks %q", want)
		}
	}
}

// TestLoadAfterLineEndConversion: a saved file whose line ends became CRLF
// or that gained a UTF-8 byte-order mark on the way (git's core.autocrlf,
// an editor on Windows) loads to the saved state; one changed in any other
// way is still refused by its checksum, and its error names the line ends
// no more than a plain file's would.
func TestLoadAfterLineEndConversion(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "set commit after\njoin C2\nrun until stable\ncrash C2 after 1\nstep 9")
	want := views(t, s)
	if _, err := s.Exec("save saved.kg"); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(s.Dir, "saved.kg"))
	if err != nil {
		t.Fatal(err)
	}
	crlf := strings.ReplaceAll(string(saved), "\n", "\r\n")
	for name, body := range map[string]string{
		"crlf.kg":     crlf,
		"bom.kg":      "\ufeff" + string(saved),
		"bom-crlf.kg": "\ufeff" + crlf,
	} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		r := NewSession()
		r.Dir = s.Dir
		if _, err := r.Exec("load " + name); err != nil {
			t.Errorf("load %s: %v", name, err)
			continue
		}
		if got := views(t, r); got != want {
			t.Errorf("load %s gives another state than the saved session", name)
		}
	}
	// Converted and changed: the checksum still catches the change.
	changed := strings.Replace(crlf, "join C2", "join C3", 1)
	if changed == crlf {
		t.Fatal("the saved file has no join C2 line to change")
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "changed.kg"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewSession()
	r.Dir = s.Dir
	before := views(t, r)
	if _, err := r.Exec("load changed.kg"); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a converted and changed file: %v, want the checksum refusal", err)
	}
	if views(t, r) != before {
		t.Error("a refused load changed the session")
	}
}

// TestLoadCountsTheFileStepsAgainstTheClock: a session file whose steps,
// each within one step's limit, add up past a world's life is refused
// before anything is replayed (typing them is refused at the step that
// passes it), and the session is left as it was.
func TestLoadCountsTheFileStepsAgainstTheClock(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, steps int) {
		lines := []string{"new"}
		for range steps {
			lines = append(lines, "step 1000000")
		}
		body := sessionHeader + "\n" + strings.Join(lines, "\n") + "\n"
		sum := sha256.Sum256([]byte(body))
		body += fmt.Sprintf("# end: %d lines, tick %d, sha256 %s\n", len(lines), steps*1_000_000, hex.EncodeToString(sum[:]))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file("long.kg", 11)
	s := NewSession()
	s.Dir = dir
	runLines(t, s, "join C2\nstep 3")
	before := views(t, s)
	_, err := s.Exec("load long.kg")
	want := "load long.kg: the file's 11 steps = 11,000,000 is over the limit (at most 10,000,000 ticks in a world's life)"
	if err == nil || err.Error() != want {
		t.Errorf("load of 11 steps of 1,000,000: %v, want %q", err, want)
	}
	if views(t, s) != before {
		t.Error("a refused load changed the session")
	}
}

// TestSaveLoadKeepsSettingsOfAnotherShape: a branch made by `new
// --keep-settings` in a shape of its own saves and loads back, and compare
// reruns it, even when a setting before its `new` (records.per.partition)
// would be past a limit in the default world, where load and compare set
// the branch's settings again before its `new`.
func TestSaveLoadKeepsSettingsOfAnotherShape(t *testing.T) {
	// A budget of 100 MB takes one partition of 200,000 records (about
	// 33 MB estimated) and refuses six (about 193 MB), on any machine.
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	worldBudget = func() uint64 { return 100_000_000 }
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "new --topics a:1\nset records.per.partition 200000\nnew --topics a:1 --keep-settings\nstep 5")
	want := views(t, s)
	if _, err := s.Exec("save shape.kg"); err != nil {
		t.Fatal(err)
	}
	r := NewSession()
	r.Dir = s.Dir
	if _, err := r.Exec("load shape.kg"); err != nil {
		t.Fatalf("load: %v", err)
	}
	if views(t, r) != want {
		t.Error("the loaded branch differs from the saved one")
	}
	rows, err := s.Compare([]string{"commit"}, [][]string{{"after", "before"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Error != "" {
			t.Errorf("compare %s: %s", row.Settings, row.Error)
		}
	}
	// In the default world the value is still refused where it is used.
	if _, err := s.Exec("new --keep-settings"); err == nil || !strings.Contains(err.Error(), "1,200,000 input records") || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("new --keep-settings with 6 partitions x 200000 records: %v", err)
	}
}

// TestSaveRefusesWhatLoadWouldRefuse: a branch whose session file would be
// past the size load reads is not saved (it said saved, then load refused
// the file), and nothing is written.
func TestSaveRefusesWhatLoadWouldRefuse(t *testing.T) {
	defer func(n int) { maxSessionFile = n }(maxSessionFile)
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "join C2\nstep 3")
	if _, err := s.Exec("save small.kg"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(s.Dir, "small.kg"))
	maxSessionFile = len(data) + 10
	runLines(t, s, "join C3\nstep 1")
	_, err := s.Exec("save big.kg")
	if err == nil || !strings.Contains(err.Error(), "over the limit of a session file") {
		t.Errorf("save past the limit: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(s.Dir, "big.kg")); serr == nil {
		t.Error("a refused save wrote its file")
	}
}

// TestCheckpointsArePerBranch: each branch keeps a checkpoint every K ticks
// of its own, however the ticks of the session are spread over branches
// (a session-wide count let another branch's steps take this one's turn,
// and back here replayed from the branch's start).
func TestCheckpointsArePerBranch(t *testing.T) {
	const k = 100
	s := NewSession()
	s.CheckpointEvery = k
	// main's steps leave a session-wide count one short of K, and other's
	// one tick then reaches it: every checkpoint went to other.
	runLines(t, s, "join C2\nstep 10\nfork other\nswitch main\nstep 89\nswitch other\nstep 1\nswitch main")
	for range 20 {
		runLines(t, s, "step 99\nswitch other\nstep 1\nswitch main")
	}
	for _, name := range []string{"main", "other"} {
		b := s.branches[name]
		last := 0
		for _, cp := range b.hist.cps {
			if cp.tick-last > k {
				t.Errorf("branch %s: checkpoints at ticks %d and %d, more than %d apart", name, last, cp.tick, k)
			}
			last = cp.tick
		}
		if b.world.Tick-last > k {
			t.Errorf("branch %s at tick %d: its last checkpoint is at tick %d", name, b.world.Tick, last)
		}
	}
}

// A run until polled|processed RECORD by Cn that times out says by whom.
func TestRunUntilPolledByTimeoutNamesTheMember(t *testing.T) {
	s := NewSession()
	if _, err := s.Exec("new --members 0; join C1; join C2; run until stable; crash C1 now"); err != nil {
		t.Fatal(err)
	}
	tick := s.World().Tick
	_, err := s.Exec("run until polled p2.9 by C1")
	if want := "run until polled p2.9 by C1: not polled by C1 within 100000 ticks (at most 100,000 ticks a run until stable, polled or processed waits)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if s.World().Tick != tick {
		t.Errorf("a failed run moved the clock from %d to %d", tick, s.World().Tick)
	}
}

// TestSaveThroughLinksAndModes: save writes through a symbolic link to the
// file it names, refuses a link to nothing (the rename would replace the
// link with a file), and a file it replaces keeps its permissions.
func TestSaveThroughLinksAndModes(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	target := filepath.Join(s.Dir, "target.kg")
	if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.kg", filepath.Join(s.Dir, "link.kg")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec("save link.kg"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(s.Dir, "link.kg")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("save through a link replaced the link: %v %v", st.Mode(), err)
	}
	st, err := os.Stat(target)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode: %v %v, want 0600 kept", st.Mode(), err)
	}
	if data, _ := os.ReadFile(target); !strings.HasPrefix(string(data), sessionHeader) {
		t.Errorf("the link's file holds %q", data)
	}
	if err := os.Symlink("missing.kg", filepath.Join(s.Dir, "dangling.kg")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec("save dangling.kg"); err == nil || !strings.Contains(err.Error(), "save dangling.kg: it is a symbolic link to a file that is not there") {
		t.Errorf("save onto a link to nothing: %v", err)
	}
	if st, err := os.Lstat(filepath.Join(s.Dir, "dangling.kg")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link to nothing was replaced")
	}
}
