package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 9's cases, through the binary as a user meets them. Scripts run
// with --keep-going, so a failing line is followed by lines that look at
// what it left behind.

func script(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "script.kg")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// jsonLines picks the lines of output that are JSON objects.
func jsonLines(out string) []map[string]any {
	var res []map[string]any
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil {
				res = append(res, m)
			}
		}
	}
	return res
}

func TestSaveLoadKeepsTheTicksAfterAStopEvent(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := kgrepl(t, "", "-c", "crash C1 after 1; step 10; step 10; save "+filepath.Join(dir, "m.kg")+"; load "+filepath.Join(dir, "m.kg")+"; metrics --json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if js := jsonLines(out); len(js) != 1 || js[0]["tick"] != float64(14) {
		t.Errorf("after save and load: %v, want tick 14", js)
	}
}

var long = flag.Bool("long", false, "also run the slow cases (a run that fails after its 100,000-tick bound)")

func TestAFailedCommandLeavesTheWorld(t *testing.T) {
	dir := t.TempDir()
	out, _, _ := kgrepl(t, "", "--keep-going", script(t, dir, "run until processed o0.0\nrun until processed o0.0\nmetrics --json\n"))
	if js := jsonLines(out); len(js) != 1 || js[0]["tick"] != float64(4) {
		t.Errorf("after a failed run until: %v, want tick 4 (where the first left it)\n%s", js, out)
	}
	if !*long {
		// The group below never settles: the run steps its whole bound
		// (100,000 ticks of rebalancing, about a minute) before it fails.
		t.Log("skipping run until stable that never settles; -long runs it")
		return
	}
	out, _, _ = kgrepl(t, "", "--keep-going", script(t, dir, "set max.poll.interval.ms 1\njoin C2\nrun until stable\ndescribe group --json\nmetrics --json\n"))
	js := jsonLines(out)
	if len(js) != 2 || js[0]["generation"] != float64(1) || js[1]["tick"] != float64(0) {
		t.Errorf("after a failed run until stable: %v, want generation 1 at tick 0", js)
	}
}

func TestDemosRunInAFreshSession(t *testing.T) {
	a, errs, code := kgrepl(t, "demo 8\n")
	if code != 0 {
		t.Fatalf("demo 8: %s", errs)
	}
	twice, errs, code := kgrepl(t, "demo 8\ndemo 8\n")
	if code != 0 || twice != a+a {
		t.Fatalf("demo 8 twice: exit %d %s; same output both times: %v", code, errs, twice == a+a)
	}
	var all strings.Builder
	for n := 1; n <= 16; n++ {
		all.WriteString("demo " + itoa(n) + "\n")
	}
	if _, errs, code := kgrepl(t, all.String()); code != 0 {
		t.Fatalf("demos 1 to 16 in order: %s", errs)
	}
	alone, _, _ := kgrepl(t, "demo 11\n")
	out, errs, code := kgrepl(t, "join C2\nfork mine\nstep 3\ndemo 11\n")
	if code != 0 || !strings.HasSuffix(out, alone) {
		t.Fatalf("demo 11 from a user branch: exit %d %s", code, errs)
	}
	out, _, _ = kgrepl(t, "fork mine\ndemo 11\nbranches\n")
	if strings.Contains(out[strings.LastIndex(out, "BRANCH"):], "mine") {
		t.Errorf("the demo kept the user's branch:\n%s", out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestLoadRefusesWhatIsNotAnInput(t *testing.T) {
	dir := t.TempDir()
	bad := map[string]string{
		"save.kg":    "save x.kg",
		"plot.kg":    "plot pause --out x.svg",
		"explore.kg": "explore --save out",
		"compare.kg": "compare commit after,before --out x.svg",
		"demo.kg":    "demo 1",
		"load.kg":    "load save.kg",
	}
	for name, line := range bad {
		body := "# kgrepl session v2\nnew\njoin C2\n" + line + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errs, code := kgrepl(t, "", "--keep-going", script(t, dir, "step 2\nload "+filepath.Join(dir, name)+"\nmetrics --json\n"))
		if code == 0 || !strings.Contains(errs, "line 4: \""+strings.Fields(line)[0]+"\" is not a world input") {
			t.Errorf("%s: exit %d, %s", name, code, errs)
		}
		if js := jsonLines(out); len(js) != 1 || js[0]["tick"] != float64(2) {
			t.Errorf("%s: a refused load changed the session: %v", name, js)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.kg")); err == nil {
		t.Error("a refused load wrote a file")
	}
	// A truncated or altered file.
	out, _, code := kgrepl(t, "", "-c", "join C2; run until stable; save "+filepath.Join(dir, "good.kg"))
	if code != 0 {
		t.Fatal(out)
	}
	good, _ := os.ReadFile(filepath.Join(dir, "good.kg"))
	lines := strings.SplitAfter(string(good), "\n")
	os.WriteFile(filepath.Join(dir, "cut.kg"), []byte(strings.Join(lines[:len(lines)-3], "")), 0o644)
	os.WriteFile(filepath.Join(dir, "changed.kg"), []byte(strings.Replace(string(good), "join C2", "join C3", 1)), 0o644)
	for name, want := range map[string]string{"cut.kg": "truncated", "changed.kg": "checksum"} {
		_, errs, code := kgrepl(t, "", "-c", "load "+filepath.Join(dir, name))
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("load %s: exit %d %s, want an error saying %s", name, code, errs, want)
		}
	}
	// Devices and FIFOs are refused at once, without reading.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo} {
		start := time.Now()
		_, errs, code := kgrepl(t, "", "-c", "load "+path)
		if code == 0 || !strings.Contains(errs, "load "+path+": it is a") || time.Since(start) > 5*time.Second {
			t.Errorf("load %s: exit %d after %v: %s", path, code, time.Since(start), errs)
		}
	}
}

func TestSaveWritesOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	for _, target := range []string{".", dir, "/dev/null"} {
		_, errs, code := kgrepl(t, "", "-c", "save "+target)
		if code == 0 || !strings.Contains(errs, "save "+target+": it is a") || strings.Contains(errs, ".kgrepl-") {
			t.Errorf("save %s: exit %d %s", target, code, errs)
		}
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Error("save replaced /dev/null")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".kgrepl-*"))
	here, _ := filepath.Glob(".kgrepl-*")
	if len(left)+len(here) != 0 {
		t.Errorf("temporary files left behind: %v %v", left, here)
	}
	// One file mode for everything kgrepl writes, whatever the umask.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	s, p := filepath.Join(dir, "s.kg"), filepath.Join(dir, "p.svg")
	if _, errs, code := kgrepl(t, "", "-c", "step 3; save "+s+"; plot pause --out "+p); code != 0 {
		t.Fatal(errs)
	}
	for _, f := range []string{s, p} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f, st.Mode().Perm())
		}
	}
}

func TestCompareAgreesWithTheBranchAfterBack(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "crash C1 after 1; step 10; step 10; back 1; compare commit auto --json")
	if code != 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(out, `"tick":13`) {
		t.Errorf("compare after back 1 at tick 13:\n%s", out)
	}
}
