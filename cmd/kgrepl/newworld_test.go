package main

import (
	"strings"
	"testing"
)

// The demo 15 author's repro: after demo 15 every member's own
// group.protocol is consumer, so `new --members 4 --keep-settings` builds a
// consumer group, and a restart settles (it used to build a classic group
// of consumer-protocol processes that never settled).
func TestNewAfterDemo15Settles(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "demo 15; new --members 4 --keep-settings; restart C1; run until stable; describe group --state")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	tail := out[strings.LastIndex(out, "new world:"):]
	for _, want := range []string{"C1-2 joins consumer group billing", "group Stable, group epoch 3", "TARGET-ASSIGNMENT-EPOCH"} {
		if !strings.Contains(tail, want) {
			t.Errorf("no %q after the new world:\n%s", want, tail)
		}
	}
	if strings.Contains(tail, "not stable") || strings.Contains(tail, "classic") {
		t.Errorf("after the new world:\n%s", tail)
	}
}
