package sim

import (
	"strings"
	"testing"
)

// sessionRemovals lists the coordinator's session-timeout removals and
// fencings ("coordinator removes ID: session timeout ...") by member id.
func sessionRemovals(w *World) map[string]int {
	out := map[string]int{}
	for _, e := range w.Events.All() {
		if e.Kind == EvRemoved && strings.Contains(e.Text, ": session timeout") {
			id := strings.TrimPrefix(e.Text, "coordinator removes ")
			if i := strings.IndexByte(id, ':'); i > 0 {
				id = id[:i]
			}
			out[id] = e.Tick
		}
	}
	return out
}

// GroupMetadataManager.convertToConsumerGroup schedules a session timeout
// from the conversion for every member (scheduleConsumerGroupSessionTimeout
// with its classic session.timeout.ms), and each heartbeat of a classic
// member (classicGroupHeartbeatToConsumerGroup) restarts it. A classic
// member heartbeating through the upgrade is not fenced, whatever its
// session looked like in the classic group just before: here C2..C4 were
// joining a rebalance (their sessions rescheduled by
// completeClassicGroupJoin) when the consumer-protocol C6 arrived.
func TestUpgradeKeepsHeartbeatingClassicMembers(t *testing.T) {
	w := protocolWorld(t, string(ClassicGroup), "upgrade")
	// Every member at once (the seed's shortcut): C1..C4 are running, and
	// a member's own list would wait for its next process (SPEC §4a).
	if err := w.Set("", "partition.assignment.strategy", "cooperative-sticky"); err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	stepUntil(t, w, c, 300, func() bool { return w.GroupSettled() && len(w.Group.Members()) == 4 })
	if err := w.Slow("C1"); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 40, func() bool { return w.Member("C1").Hooks().SlowNow() })
	if err := w.Join("C5", false, nil); err != nil {
		t.Fatal(err)
	}
	// C1 exceeds max.poll.interval.ms and leaves: the join round completes
	// without it and C2..C4's sessions are rescheduled
	// (completeClassicGroupJoin) while they have not read their answers.
	stepUntil(t, w, c, 20, func() bool { return w.Member("C1").Phase == PhaseOut })
	if err := w.Set("C6", "group.protocol", string(ConsumerGroup)); err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C6", false, nil); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 20, func() bool { return w.Group.Type() == ConsumerGroup })
	converted := w.Tick
	if gm := w.Group.MemberByID(w.Member("C2").MemberID); gm == nil || w.Member("C2").Phase != PhaseSyncing {
		t.Fatalf("C2 is %s at the upgrade, want Syncing (heartbeating)", w.Member("C2").Phase)
	}
	ids, phases := map[string]string{}, map[string]Phase{}
	for _, cl := range []string{"C2", "C3", "C4", "C5"} {
		ids[cl], phases[cl] = w.Member(cl).MemberID, w.Member(cl).Phase
	}
	stepChecked(t, w, c, 3*w.Cfg.Client.SessionTimeout)
	gone := sessionRemovals(w)
	for _, cl := range []string{"C2", "C3", "C4", "C5"} {
		if at, ok := gone[ids[cl]]; ok {
			t.Errorf("%s (%s, %s at the upgrade) fenced for a session timeout at tick %d, after the upgrade at %d; it heartbeats", cl, ids[cl], phases[cl], at, converted)
		}
	}
}

// A classic member inside a consumer group is silent from its JoinGroup
// answer until its client takes the member id; from then its heartbeats
// restart the session (classicGroupHeartbeatToConsumerGroup:
// scheduleConsumerGroupSessionTimeout), so when its process later dies it
// is fenced a session timeout after its last heartbeat, not at once for
// the ticks it spent joining long before.
func TestClassicMemberSessionFromLastHeartbeat(t *testing.T) {
	c := NewChecker()
	w := classicMembersWorld(t, c)
	if err := w.Restart("C2"); err != nil {
		t.Fatal(err)
	}
	m := w.Member("C2")
	stepUntil(t, w, c, 40, func() bool { return m.MemberID != "" && m.Phase == PhaseStable })
	id := m.MemberID
	if gm := w.Group.MemberByID(id); gm == nil || !gm.ClassicMember {
		t.Fatalf("C2's new member %s is not a classic member of the consumer group", id)
	}
	stepChecked(t, w, c, 2*w.Cfg.Client.SessionTimeout)
	if err := w.CrashNow("C2"); err != nil {
		t.Fatal(err)
	}
	crashed := w.Tick
	stepChecked(t, w, c, 2*w.Cfg.Client.SessionTimeout)
	if got, want := sessionRemovals(w)[id], crashed+w.Cfg.Client.SessionTimeout; got != want {
		t.Errorf("%s, crashed at tick %d, fenced for a session timeout at tick %d, want %d", id, crashed, got, want)
	}
}

// GroupMetadataManager.convertToClassicGroup reschedules every member's
// heartbeat at the downgrade (rescheduleClassicGroupMemberHeartbeat). A
// classic member that sends no heartbeats then (here C2: reset by
// ILLEGAL_GENERATION while busy with a slow record, so UNJOINED and its
// HeartbeatThread disabled) is removed session.timeout.ms after the
// downgrade.
func TestDowngradeTimesSilentMembersFromThen(t *testing.T) {
	c := NewChecker()
	w := classicMembersWorld(t, c)
	m := w.Member("C2")
	id := m.MemberID
	if err := w.Slow("C2"); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 40, func() bool { return m.Hooks().SlowNow() })
	m.Hooks().OnCommitRefused(IllegalGeneration, true)
	if m.Heartbeats() || m.MemberID != id {
		t.Fatalf("C2 after ILLEGAL_GENERATION: heartbeats %v, member id %q; want none, %s", m.Heartbeats(), m.MemberID, id)
	}
	if err := w.Close("C1"); err != nil { // the last consumer-protocol member leaves
		t.Fatal(err)
	}
	stepUntil(t, w, c, 10, func() bool { return w.Group.Type() == ClassicGroup })
	down := w.Tick
	stepChecked(t, w, c, w.Cfg.Client.SessionTimeout+1)
	if got, want := removedAt(w, id), down+w.Cfg.Client.SessionTimeout; got != want {
		t.Errorf("%s, silent at the downgrade at %d, removed for a session timeout at %d, want %d", id, down, got, want)
	}
}

// A static classic member inside a consumer group that exceeds
// max.poll.interval.ms sends no LeaveGroup (KIP-345) but its heartbeat
// thread stops: the coordinator fences it session.timeout.ms later
// (scheduleConsumerGroupSessionTimeout, no heartbeat restarting it).
func TestStaticClassicMemberPollTimeoutInConsumerGroup(t *testing.T) {
	c := NewChecker()
	w := classicMembersWorld(t, c)
	if err := w.Set("C2", "group.instance.id", "i2"); err != nil {
		t.Fatal(err)
	}
	// A short max.poll.interval.ms: the poll timeout comes early in the
	// slow record, which outlasts the session after it.
	if err := w.Set("C2", "max.poll.interval.ms", "4"); err != nil {
		t.Fatal(err)
	}
	if err := w.Restart("C2"); err != nil {
		t.Fatal(err)
	}
	m := w.Member("C2")
	stepUntil(t, w, c, 60, func() bool { return m.Phase == PhaseStable && m.MemberID != "" && m.Hooks().Loop() == LoopFetching })
	id := m.MemberID
	if err := w.Slow("C2"); err != nil {
		t.Fatal(err)
	}
	timedOut := -1
	stepUntil(t, w, c, 60, func() bool {
		for _, e := range w.Events.All() {
			if e.Kind == EvPollTimeout && e.Member == "C2" {
				timedOut = e.Tick
				return true
			}
		}
		return false
	})
	stepChecked(t, w, c, w.Cfg.Client.SessionTimeout+1)
	if got, want := sessionRemovals(w)[id], timedOut+w.Cfg.Client.SessionTimeout; got != want {
		t.Errorf("static %s, poll timeout at %d: fenced for a session timeout at %d, want %d", id, timedOut, got, want)
	}
}
