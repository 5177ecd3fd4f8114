package assign

import (
	"testing"
	"time"
)

func TestAdhocLargeNonEqual(t *testing.T) {
	for _, a := range []Assignor{kafkaEager, seedEager} {
		in := benchGroup(benchMembers)
		in.Members[benchMembers-1].Topics = in.Members[0].Topics[:1]
		start := time.Now()
		got := a.Assign(in)
		t.Logf("%v fresh: %v", a, time.Since(start))
		checkComplete(t, in, got)
		next := nextRound(in, got, 1)
		start = time.Now()
		got = a.Assign(next)
		t.Logf("%v second: %v", a, time.Since(start))
		lo, hi := counts(got)
		t.Logf("counts %d..%d", lo, hi)
	}
}
