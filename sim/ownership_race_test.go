package sim

import (
	"slices"
	"strings"
	"testing"
)

// raceSeen is one tick at which a consumer-protocol client owned a
// partition its coordinator no longer gave it.
type raceSeen struct {
	tick                    int
	member, tp              string
	clientEpoch, coordEpoch int
	state                   string
}

// ownedBeyondCoordinator lists, for the current tick, every live
// consumer-protocol process owning a partition that the coordinator gives
// it neither as assigned nor as pending revocation.
func ownedBeyondCoordinator(w *World) []raceSeen {
	d := w.Group.Describe()
	var out []raceSeen
	for _, m := range w.current {
		if !m.Alive || m.Zombie || !m.Consumer() || !m.InGroup() || !current(d, m) {
			continue
		}
		gm := d.Member(m.MemberID)
		for _, tp := range m.Owned {
			if !slices.Contains(gm.Assignment, tp) && !slices.Contains(gm.Revoking, tp) {
				out = append(out, raceSeen{w.Tick, m.MemberID, tp.String(), m.Generation, gm.MemberEpoch, m.ConsumerState()})
			}
		}
	}
	return out
}

// TestClientOwnsWhatTheCoordinatorReleasedWhileReconciling: Kafka 4.0's
// consumer-protocol client sends its interval heartbeat while it reconciles
// a new assignment, with the new member epoch (AbstractMembershipManager.
// onHeartbeatSuccess takes it at once) and the partitions reconciled so far
// (ConsumerHeartbeatRequestManager.HeartbeatState). When the target has
// moved on meanwhile, CurrentAssignmentBuilder.computeNextAssignment finds
// none of the partitions it now revokes in that owned list
// (ownsRevokedPartitions), so it moves the member to the next epoch at once
// and the partitions go to another member, while the client goes on to own
// them until it reconciles the next answer. FuzzSchedules' seed 1649 meets
// this (the checker's rule was stricter than Kafka's and stopped it): the
// test finds the ticks where a client owns more than the coordinator gives
// it and checks that each is this race, never a caught-up, stable client,
// and that the group then settles with nothing owned twice.
func TestClientOwnsWhatTheCoordinatorReleasedWhileReconciling(t *testing.T) {
	sc := seedWorld(t, 1649, scheduleFuzzSpec())
	w := sc.w
	var seen []raceSeen
	runScheduleWatching(t, w, sc.sched, 200, func() { seen = append(seen, ownedBeyondCoordinator(w)...) })
	if len(seen) == 0 {
		t.Fatal("no client owned a partition its coordinator had released: seed 1649 no longer shows the race; find another seed")
	}
	for _, s := range seen {
		if s.clientEpoch == s.coordEpoch && s.state == "STABLE" {
			t.Errorf("tick %d: %s owns %s beyond the coordinator's view while stable at the coordinator's epoch %d", s.tick, s.member, s.tp, s.coordEpoch)
		}
		t.Logf("tick %d: %s (client epoch %d, %s; coordinator's epoch %d) owns %s", s.tick, s.member, s.clientEpoch, s.state, s.coordEpoch, s.tp)
	}
	ensureMember(t, w)
	if !settle(t, w, 8000) {
		t.Fatal("the group did not settle")
	}
	if late := ownedBeyondCoordinator(w); len(late) > 0 {
		t.Fatalf("settled, yet %+v", late)
	}
}

// TestCheckerStopsAStableClientOwningMoreThanItsAssignment: the rule the
// race relaxes still holds for a client that has caught up: stable at the
// coordinator's epoch, it owns only what the coordinator gives it.
func TestCheckerStopsAStableClientOwningMoreThanItsAssignment(t *testing.T) {
	w := consumerWorld(t, 2, nil)
	c := NewChecker()
	for range 60 {
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatal(err)
		}
	}
	if !w.GroupSettled() {
		t.Fatal("not settled after 60 ticks")
	}
	var a, b *Member
	for _, m := range w.current {
		if a == nil {
			a = m
		} else {
			b = m
		}
	}
	if len(b.Owned) == 0 {
		t.Fatalf("%s owns nothing", b.MemberID)
	}
	a.Owned = append(slices.Clone(a.Owned), b.Owned[0])
	err := c.Check(w)
	if err == nil || !strings.Contains(err.Error(), "neither as assigned nor as pending revocation") {
		t.Fatalf("%s owns %s, %s's: the checker says %v", a.MemberID, b.Owned[0], b.MemberID, err)
	}
}
