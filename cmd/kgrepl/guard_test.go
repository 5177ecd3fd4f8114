package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHeapGuardUnderAnAddressSpaceLimit runs kgrepl under an address-space
// limit (prlimit --as) and a command that grows the heap without end (300
// members committing 999 partitions every tick, step 1000000): the heap
// guard, its threshold derived from the limit, stops the step before an
// allocation fails, and the session is as it was before the step: the
// same metrics, and save and load agree. With the guard fixed at 12 GiB,
// a process under a smaller limit died first.
func TestHeapGuardUnderAnAddressSpaceLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10 s of stepping: not with -short")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit on this machine")
	}
	threshold := func(as int64, script string) (string, string, int64) {
		t.Helper()
		cmd := exec.Command(prlimit, "--as="+strconv.FormatInt(as, 10), bin, "--keep-going", "-c", script)
		cmd.Dir = t.TempDir()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		m := regexp.MustCompile(`at most ([0-9,]+) bytes of heap while a command runs`).FindStringSubmatch(out.String() + errb.String())
		if m == nil {
			return out.String(), errb.String(), -1
		}
		n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		return out.String(), errb.String(), n
	}
	// The threshold is half of (the limit less what kgrepl maps when it
	// starts, and the runtime's reserve): read it under 3 GiB, then pick
	// the limit that gives about 160 MiB.
	const probe = 3 << 30
	_, errs, at3 := threshold(probe, "help step")
	if at3 <= 0 {
		t.Fatalf("help step under prlimit --as=%d names no heap limit: %s", int64(probe), errs)
	}
	as := probe - 2*at3 + 2*(160<<20)
	dir := t.TempDir()
	cmd := exec.Command(prlimit, "--as="+strconv.FormatInt(as, 10), bin, "--keep-going", "-c",
		"new --topics t:999 --members 300; set auto.commit.interval.ms 1; step 100 --quiet; metrics --json; "+
			"step 1000000 --quiet; metrics --json; save g.kg; load g.kg; metrics --json")
	cmd.Dir = dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	stderr := errb.String()
	if code != 1 || !strings.Contains(stderr, "step: interrupted (the session is as it was before it); it was stopped at the heap limit") {
		t.Fatalf("under prlimit --as=%d: exit %d, stderr:\n%.2000s", as, code, stderr)
	}
	if strings.Count(stderr, "line 1:") != 1 {
		t.Errorf("more than the step failed:\n%s", stderr)
	}
	var metrics []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, `{"tick":`) {
			metrics = append(metrics, l)
		}
	}
	if len(metrics) != 3 || metrics[0] != metrics[1] || metrics[1] != metrics[2] || !strings.HasPrefix(metrics[0], `{"tick":100,`) {
		t.Errorf("metrics before the step, after it and after save and load:\n%s", strings.Join(metrics, "\n"))
	}
	if !strings.Contains(out.String(), "loaded g.kg into branch main: tick 100") {
		t.Errorf("load after the stopped step: %.500s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "g.kg")); err != nil {
		t.Error(err)
	}
}
