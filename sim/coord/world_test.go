package coord_test

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/coord"
	"github.com/kgrepl/kgrepl/sim/simtest"
)

// TestOffsetsLogHeadsShared: a member's commits of one generation share
// their head (member, generation, producer id, state): two members
// committing every few ticks for 2,000 ticks keep a few heads and a
// 16-byte run per commit, not 32 bytes.
func TestOffsetsLogHeadsShared(t *testing.T) {
	if got := coord.OffsetRunSizeForTest; got != 16 {
		t.Fatalf("offsetRun is %d bytes, want 16", got)
	}
	w := simtest.ConsumingWorld(1_000, 2_000)
	l := &w.Group.Offsets.Log
	if runs, heads := l.SizesForTest(); runs < 500 || heads > 8 {
		t.Fatalf("%d runs with %d heads: want hundreds of runs sharing a few heads", runs, heads)
	}
	// every record reads back as the commit's: its member and generation
	// are those of the committed events' member ids
	members := map[string]bool{}
	for _, r := range l.All() {
		members[r.MemberID] = true
		if r.State != "committed" || r.PID != -1 || r.Generation < 1 {
			t.Fatalf("record %+v", r)
		}
	}
	if len(members) != 2 {
		t.Fatalf("records of members %v, want C1's and C2's", members)
	}
}
