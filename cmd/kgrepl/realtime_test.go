package main

import (
	"strings"
	"testing"
)

// Real time through the binary: Kafka's defaults, a crash removed by the
// 45 s session timeout, durations typed with units, and a refused
// duration that names the rule and stops the script at its line.
func TestRealTimeThroughTheBinary(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "new --kafka-defaults; join C2; run until stable --quiet; crash C2 now; step 30s; run until time 1m --quiet; metrics")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"real time: time ms, a tick is 5 ms",
		"t=00:00:00.355 (71) C2 crashes",
		"step 30 s = 6000 tick(s) of 5 ms",
		"t=00:00:45.355 (9071) coordinator removes C2-1: session timeout (9000 ticks = 45 s of silence)",
		"tick 12000 (t=00:01:00.000): group Stable, generation 3",
		"pause meter (partition x seconds)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	script := "new\nstep 3\nstep 30s\nstep 1\n"
	out, errs, code = kgrepl(t, script)
	if code == 0 || !strings.Contains(errs, "line 3: step: 30s is a time, and this world counts ticks") {
		t.Errorf("a duration on the page's scale: exit %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "tick 4:") {
		t.Errorf("the script went on past the refused line:\n%s", out)
	}
}
