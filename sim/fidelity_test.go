package sim

import (
	"strings"
	"testing"
)

// stepChecked advances the world n ticks, checking invariants every tick.
func stepChecked(t *testing.T, w *World, c *Checker, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatal(err)
		}
	}
}

// stepUntil advances until cond holds (at most bound ticks).
func stepUntil(t *testing.T, w *World, c *Checker, bound int, cond func() bool) {
	t.Helper()
	for i := 0; i < bound && !cond(); i++ {
		stepChecked(t, w, c, 1)
	}
	if !cond() {
		t.Fatalf("tick %d: condition not reached in %d ticks", w.Tick, bound)
	}
}

// A commit already on the wire when the coordinator removes the member is
// refused by the coordinator (GroupMetadataManager's classic offset commit
// validation: UNKNOWN_MEMBER_ID); only a commit made after the client knows
// its generation is gone fails without a request.
func TestCommitInFlightRefusedByCoordinator(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Set("", "commit.mode", "after"); err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	inFlight := func() bool {
		for _, p := range w.InFlight() {
			if p.Type == OffsetCommit && !p.Response {
				return true
			}
		}
		return false
	}
	stepUntil(t, w, c, 20, inFlight)
	w.Group.removeMember(w, "C1-1", "removed by the test")
	stepChecked(t, w, c, 3)
	var refused *Packet
	for _, p := range w.Packets {
		if p.Type == OffsetCommit && p.Response && p.To == "C1" {
			refused = p
		}
	}
	if refused == nil || refused.Error != UnknownMemberID {
		t.Fatalf("the commit in flight: %+v, want refused with UNKNOWN_MEMBER_ID", refused)
	}
	found := false
	for _, e := range w.Events {
		if e.Kind == EvCommitFailed && strings.Contains(e.Text, "refused with UNKNOWN_MEMBER_ID") {
			found = true
		}
	}
	if !found {
		t.Error("no CommitFailedException for the refused commit")
	}
}
