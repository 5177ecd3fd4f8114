package main

import (
	"strings"
	"testing"
)

// After demo 15 (whose rollback leaves every member's own
// group.protocol classic and its group.instance.id billing-0..3),
// `new --members 4 --keep-settings` builds a classic group of static
// members, and a restart settles: the static member returns without a
// rebalance. (The repro this test began with: a new world after a demo
// that left per-member protocols set must follow them and settle.)
func TestNewAfterDemo15Settles(t *testing.T) {
	out, errs, code := kgrepl(t, "", "-c", "demo 15; new --members 4 --keep-settings; restart C1; run until stable; describe group --state")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	tail := out[strings.LastIndex(out, "new world:"):]
	for _, want := range []string{"static member billing-0 returns as C1-2", "group Stable, generation 1", "cooperative-sticky  Stable"} {
		if !strings.Contains(tail, want) {
			t.Errorf("no %q after the new world:\n%s", want, tail)
		}
	}
	if strings.Contains(tail, "not stable") || strings.Contains(tail, "consumer group") {
		t.Errorf("after the new world:\n%s", tail)
	}
}
