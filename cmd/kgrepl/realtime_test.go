package main

import (
	"encoding/json"
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
		// C1 learns of C2's join at its next heartbeat (3 s: tick 603).
		"t=00:00:03.050 (610) C2 crashes",
		"step 30 s = 6000 tick(s) of 5 ms",
		// C2 crashed before its first heartbeat: last heard was its
		// SyncGroup at tick 607, 45 s before.
		"t=00:00:48.035 (9607) coordinator removes C2-1: session timeout (9000 ticks = 45 s of silence)",
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

// Steady production in real time through the binary: 100 records a second
// on each of orders' three partitions (300 a second) for 10 s appends
// 1,000 records a partition. With Kafka's defaults (processing.ms 5, a
// record a tick of 5 ms) the one member processes at most 200 a second,
// so it falls behind by at least 1,000 records; processing.ms 1 (1,000 a
// second) then drains the lag to what 100 ms of production holds.
func TestSteadyRateInRealTimeThroughTheBinary(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "new --kafka-defaults; set commit after; produce --rate 100/s orders; step 10s --quiet; show traffic; metrics --json; set processing.ms 1; step 10s --quiet; metrics --json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"steady production of 1 record every 2 ticks = 10 ms on orders-0..2 from tick 1",
		"orders-2  100/s = 1/2ticks t=00:00:00.000 (0) 1000     1010",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	var ms []map[string]any
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
	}
	if len(ms) != 2 {
		t.Fatalf("want two metrics, got %d in:\n%s", len(ms), out)
	}
	held := 60 + 3*1000 // the backlog of 10 a partition, and 10 s of 300 a second
	if p, lag := ms[0]["processed"].(float64), ms[0]["lag"].(float64); p > 2000 || p < 1900 || lag < float64(held-2000) || ms[0]["time_ms"].(float64) != 10_000 {
		t.Errorf("after 10 s at processing.ms 5: processed %v (at most 200 a second, 2,000), lag %v (at least %d unprocessed); want both", p, lag, held-2000)
	}
	held += 3 * 1000
	if p, lag := ms[1]["processed"].(float64), ms[1]["lag"].(float64); p < float64(held-30) || lag > 30 {
		t.Errorf("after 10 s more at processing.ms 1: processed %v of %d, lag %v; want the lag drained to 100 ms of production (30)", p, held, lag)
	}
}
