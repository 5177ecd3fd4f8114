package sim

import (
	"strings"
	"testing"
)

// protocolWorld is the default topology with four members whose own
// group.protocol is consumer for the clients in consumer, classic for the
// rest, over the given default protocol and migration policy.
func protocolWorld(t *testing.T, global, policy string, consumer ...string) *World {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Client.GroupProtocol = global
	cfg.MigrationPolicy = policy
	own := map[string]bool{}
	for _, c := range consumer {
		own[c] = true
	}
	for i := 1; i <= 4; i++ {
		cl := "C" + itoa(i)
		p := string(ClassicGroup)
		if own[cl] {
			p = string(ConsumerGroup)
		}
		if err := cfg.Set(cl, "group.protocol", p); err != nil {
			t.Fatal(err)
		}
	}
	topo := DefaultTopology()
	topo.Members = 4
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// protocolsAgree: the group's type and every member's protocol fit each
// other and the member's process: a classic group of classic processes,
// or a consumer group whose classic members are exactly the classic
// processes. It returns the classic members' clients.
func protocolsAgree(t *testing.T, w *World, want GroupType) []string {
	t.Helper()
	g := w.Group
	if g.Type() != want {
		t.Fatalf("tick %d: group type %s, want %s", w.Tick, g.Type(), want)
	}
	var classic []string
	for _, gm := range g.Members() {
		m := w.process(gm.ClientID, gm.Inc)
		if m == nil {
			t.Fatalf("tick %d: member %s has no process", w.Tick, gm.MemberID)
		}
		speaks := m.GroupProtocol()
		if g.Type() == ClassicGroup && speaks != ClassicGroup {
			t.Errorf("tick %d: %s in a classic group speaks %s", w.Tick, gm.MemberID, speaks)
		}
		if g.Type() == ConsumerGroup && gm.ClassicMember != (speaks == ClassicGroup) {
			t.Errorf("tick %d: %s: classic member %v, its process speaks %s", w.Tick, gm.MemberID, gm.ClassicMember, speaks)
		}
		if g.Type() == ConsumerGroup && gm.ClassicMember || g.Type() == ClassicGroup {
			classic = append(classic, gm.ClientID)
		}
	}
	return classic
}

// `new` builds the group its members' own protocols make, whatever the
// default group.protocol: all classic, a classic group; all consumer, a
// consumer group; mixed, a consumer group with classic members, under every
// migration policy. Each settles after a restart (a new process of the
// same protocol) with the invariant checker on every tick.
func TestNewWorldGroupFollowsMembersProtocols(t *testing.T) {
	cases := []struct {
		name, global, policy string
		consumer             []string
		want                 GroupType
		classic              string // the classic members' clients
		restart              []string
	}{
		{"all classic over consumer default", "consumer", "bidirectional", nil, ClassicGroup, "C1 C2 C3 C4", []string{"C1"}},
		{"all consumer over classic default", "classic", "bidirectional", []string{"C1", "C2", "C3", "C4"}, ConsumerGroup, "", []string{"C1"}},
		{"mixed bidirectional", "classic", "bidirectional", []string{"C1", "C3"}, ConsumerGroup, "C2 C4", []string{"C1", "C2"}},
		{"mixed upgrade", "consumer", "upgrade", []string{"C1", "C3"}, ConsumerGroup, "C2 C4", []string{"C2", "C1"}},
		{"mixed downgrade", "classic", "downgrade", []string{"C4"}, ConsumerGroup, "C1 C2 C3", []string{"C1", "C4"}},
		{"mixed disabled", "classic", "disabled", []string{"C1"}, ConsumerGroup, "C2 C3 C4", []string{"C1", "C3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := protocolWorld(t, tc.global, tc.policy, tc.consumer...)
			if got := strings.Join(protocolsAgree(t, w, tc.want), " "); got != tc.classic {
				t.Fatalf("classic members %q, want %q", got, tc.classic)
			}
			if !w.GroupSettled() || len(w.Group.Members()) != 4 {
				t.Fatalf("the new world is not a settled group of four: %s %s", w.Group.State(), memberIDs(w.Group.Members()))
			}
			c := NewChecker()
			stepChecked(t, w, c, 3)
			for _, cl := range tc.restart {
				if err := w.Restart(cl); err != nil {
					t.Fatal(err)
				}
				// Settled with the new process in the group (the old one
				// timed out: restart sends no LeaveGroup).
				stepUntil(t, w, c, 1000, func() bool {
					m := w.current[cl]
					return m.Inc == 2 && m.MemberID != "" && w.Group.MemberByID(m.MemberID) != nil &&
						w.Group.MemberByID(cl+"-1") == nil && w.GroupSettled()
				})
				if got := strings.Join(protocolsAgree(t, w, tc.want), " "); got != tc.classic {
					t.Fatalf("after restarting %s: classic members %q, want %q", cl, got, tc.classic)
				}
				if n := len(w.Group.Members()); n != 4 {
					t.Fatalf("after restarting %s: %d members %s, want 4", cl, n, memberIDs(w.Group.Members()))
				}
			}
			for _, e := range eventsOf(w, EvGroupState, "") {
				if strings.Contains(e.Text, "converted") || strings.Contains(e.Text, "is now a") {
					t.Errorf("the group changed type: %s", e.Text)
				}
			}
		})
	}
}

// A mixed group's target comes from the consumer members' server assignor:
// classic members (range here) do not vote (computePreferredServerAssignor
// counts serverAssignorName, which a classic member has not).
func TestNewMixedWorldServerAssignor(t *testing.T) {
	w := protocolWorld(t, "classic", "bidirectional", "C1")
	if w.Group.Describe().Assignor != "uniform" {
		t.Errorf("assignor %s with one uniform consumer member and three range classic members, want uniform", w.Group.Describe().Assignor)
	}
}

// An empty group whose next member speaks the other protocol is deleted and
// made anew (GroupMetadataManager.getOrMaybeCreateConsumerGroup with
// maybeDeleteEmptyClassicGroup; classicGroupJoinToClassicGroup with
// maybeDeleteEmptyConsumerGroup): the new ConsumerGroup starts at group
// epoch 0 and the new ClassicGroup at generation 0, so the first member's
// join makes them 1. Committed offsets are not part of the group's records
// and stay. The checker runs on every tick, so numbers only grow within one
// incarnation, and the pause meter keeps each incarnation's rebalances
// apart.
func TestEmptyGroupChangingTypeStartsAgain(t *testing.T) {
	topo := DefaultTopology()
	topo.Members = 0
	w, err := New(topo, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	join := func(client, protocol string) {
		t.Helper()
		if err := w.Set(client, "group.protocol", protocol); err != nil {
			t.Fatal(err)
		}
		if err := w.Join(client, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	join("C1", "classic")
	stepChecked(t, w, c, 20)
	empty := func() bool { return w.Group.State() == Empty && len(w.Group.Members()) == 0 && w.GroupSettled() }
	if err := w.Close("C1"); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 100, empty)
	classicGen := w.Group.Describe().Generation
	committed := map[TopicPartition]int{}
	for _, tp := range w.Layout().Inputs() {
		if rec, ok := w.Group.Offsets.Committed(tp); ok {
			committed[tp] = rec.Offset
		}
	}
	if classicGen < 2 || len(committed) == 0 {
		t.Fatalf("the classic group ends at generation %d with offsets %v; want a rebalance behind it and commits", classicGen, committed)
	}
	keptOffsets := func(when string) {
		for tp, o := range committed {
			if rec, ok := w.Group.Offsets.Committed(tp); !ok || rec.Offset < o {
				t.Errorf("%s: %s committed %v (%v), want at least %d (offsets stay)", when, tp, rec.Offset, ok, o)
			}
		}
	}

	join("C2", "consumer")
	stepUntil(t, w, c, 100, func() bool { return w.Group.Type() == ConsumerGroup && len(w.Group.Members()) == 1 && w.GroupSettled() })
	g := w.Group
	gm := g.Members()[0]
	if g.Describe().GroupEpoch != 1 || g.Describe().AssignmentEpoch != 1 || gm.MemberEpoch != 1 || g.Incarnation != 1 {
		t.Errorf("the new consumer group: group epoch %d, assignment epoch %d, %s epoch %d, incarnation %d; want 1, 1, 1, 1",
			g.Describe().GroupEpoch, g.Describe().AssignmentEpoch, gm.MemberID, gm.MemberEpoch, g.Incarnation)
	}
	keptOffsets("consumer group")

	if err := w.Close("C2"); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 100, empty)
	join("C3", "classic")
	stepUntil(t, w, c, 100, func() bool { return w.Group.Type() == ClassicGroup && w.Group.State() == Stable && w.GroupSettled() })
	if g := w.Group; g.Describe().Generation != 1 || g.Incarnation != 2 {
		t.Errorf("the new classic group: generation %d, incarnation %d; want 1, 2", g.Describe().Generation, g.Incarnation)
	}
	keptOffsets("classic group again")

	// One pause entry per rebalance: the third group's generation 1 is not
	// folded into the first group's.
	seen := map[[2]int]bool{}
	for _, e := range w.Meter.Entries {
		seen[[2]int{e.Incarnation, e.Generation}] = true
	}
	for _, want := range [][2]int{{0, 1}, {2, 1}} {
		if !seen[want] {
			t.Errorf("no pause entry for incarnation %d generation %d: %+v", want[0], want[1], w.Meter.Entries)
		}
	}
}

// classicMembersWorld is a consumer group holding classic members C2..C4
// beside the consumer-protocol member C1, settled.
func classicMembersWorld(t *testing.T, c *Checker) *World {
	t.Helper()
	w := protocolWorld(t, string(ClassicGroup), "bidirectional", "C1")
	stepUntil(t, w, c, 300, func() bool { return w.GroupSettled() && w.Group.Type() == ConsumerGroup && len(w.Group.Members()) == 4 })
	if n := len(protocolsAgree(t, w, ConsumerGroup)); n != 3 {
		t.Fatalf("%d classic members, want 3", n)
	}
	return w
}

// removals lists the coordinator's removals of client's members.
func removals(w *World, client string) []Event {
	var out []Event
	for _, e := range w.Events.All() {
		if e.Kind == EvRemoved && e.Member == client && strings.HasPrefix(e.Text, "coordinator removes") {
			out = append(out, e)
		}
	}
	return out
}

// A classic member inside a consumer group is fenced when it answers no
// call within its rebalance timeout (GroupMetadataManager): told to rejoin
// (a heartbeat answered REBALANCE_IN_PROGRESS,
// scheduleConsumerGroupJoinTimeoutIfAbsent) and no JoinGroup follows; or
// its JoinGroup answered (scheduleConsumerGroupSyncTimeout) and no
// SyncGroup follows. Each case loses the one message that would have
// prompted the member, so it stays alive and heard but silent in the
// protocol; the timer is the only thing that can remove it.
func TestClassicMemberJoinAndSyncTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose DropRule
		why  string
	}{
		{"no SyncGroup after its JoinGroup answer", DropRule{Type: JoinGroup, Response: true, To: "C2", Count: 1},
			"the classic member sent no SyncGroup within its rebalance timeout (12)"},
		{"no JoinGroup after told to rejoin", DropRule{Type: RebalanceNotification, Response: true, To: "C2", Count: 1},
			"the classic member did not rejoin within its rebalance timeout (12)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker()
			w := classicMembersWorld(t, c)
			keepBodies(w)
			w.Drop(tc.lose)
			from := w.Packets.Len()
			if err := w.Join("C5", false, nil); err != nil { // a new member: the group epoch moves, C2 must rejoin
				t.Fatal(err)
			}
			stepUntil(t, w, c, 100, func() bool { return len(removals(w, "C2")) > 0 })
			var lost *Packet
			for i, p := range w.Packets.All() {
				if i >= from && p.Lost && p.Type == tc.lose.Type && p.To == "C2" {
					lost = p
				}
			}
			if lost == nil {
				t.Fatalf("no %s to C2 was lost", tc.lose.Type)
			}
			gm := w.Group.MemberByID("C2-1")
			r := removals(w, "C2")
			if gm != nil || len(r) != 1 || r[0].Text != "coordinator removes C2-1: "+tc.why {
				t.Fatalf("C2-1 still a member: %v; removals %+v, want one: %s", gm != nil, r, tc.why)
			}
			// The timer starts when the coordinator sends what was lost and
			// runs the member's rebalance timeout (max.poll.interval.ms).
			if want := lost.Sent + w.Member("C2").Cfg.MaxPollInterval; r[0].Tick != want {
				t.Errorf("removed at tick %d, want %d (%s sent at %d + rebalance timeout)", r[0].Tick, want, tc.lose.Type, lost.Sent)
			}
		})
	}
}

// Classic members that answer every call in time are never fenced by the
// join and sync timers: members join, leave and restart for a while, each
// classic member rejoining and syncing through several group epochs.
func TestClassicMembersThatBehaveAreNotTimedOut(t *testing.T) {
	c := NewChecker()
	w := classicMembersWorld(t, c)
	from := w.Packets.Len()
	for _, step := range []func() error{
		func() error { return w.Join("C5", false, nil) },
		func() error { return w.Restart("C3") },
		func() error { return w.Close("C4") },
		func() error { return w.Restart("C2") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		stepChecked(t, w, c, 5)
		stepUntil(t, w, c, 300, w.GroupSettled)
	}
	for _, e := range w.Events.All() {
		if e.Kind == EvRemoved && strings.Contains(e.Text, "within its rebalance timeout") {
			t.Errorf("tick %d: %s", e.Tick, e.Text)
		}
	}
	if n := len(protocolsAgree(t, w, ConsumerGroup)); n != 3 {
		t.Errorf("%d classic members at the end, want 3 (C2, C3, C5)", n)
	}
	joins, syncs := 0, 0
	for i, p := range w.Packets.All() {
		if i >= from && !p.Response && p.Type == JoinGroup {
			joins++
		}
		if i >= from && !p.Response && p.Type == SyncGroup {
			syncs++
		}
	}
	if joins < 8 || syncs < 8 {
		t.Errorf("%d JoinGroups and %d SyncGroups: the classic members hardly rejoined", joins, syncs)
	}
}

// The group counts its classic members as ConsumerGroup does
// (numClassicProtocolMembers) through every way a member comes, goes or
// changes protocol: the conversion of a classic group, classic and
// consumer joins, a static member replaced, fencing and leaving, the
// downgrade back to classic, and a copy of the world. The checker compares
// the count with a walk on every tick, and catches a count that is off.
func TestClassicMemberCount(t *testing.T) {
	c := NewChecker()
	w := classicMembersWorld(t, c) // converted: C2..C4 classic
	if w.Group.Hooks().NumClassic() != 3 {
		t.Fatalf("after the conversion: %d classic members counted, want 3", w.Group.Hooks().NumClassic())
	}
	off := w.Clone()
	off.Group.Hooks().SetNumClassic(off.Group.Hooks().NumClassic() + 1)
	if err := NewChecker().Check(off); err == nil || !strings.Contains(err.Error(), "classic members counted") {
		t.Errorf("a count off by one: the checker says %v", err)
	}
	if err := w.Set("C3", "group.instance.id", "i3"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return w.Join("C5", false, nil) }, // a classic member joins
		func() error { return w.Restart("C3") },          // a new member id
		func() error { return w.Restart("C3") },          // static now: replaces itself
		func() error { return w.CrashNow("C4") },         // fenced at its session timeout
		func() error { return w.Close("C1") },            // the last consumer member: downgrade
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		stepChecked(t, w, c, 5)
		stepUntil(t, w, c, 300, w.GroupSettled)
		if cl := w.Clone(); cl.Group.Hooks().NumClassic() != w.Group.Hooks().NumClassic() {
			t.Fatalf("tick %d: the clone counts %d classic members, the world %d", w.Tick, cl.Group.Hooks().NumClassic(), w.Group.Hooks().NumClassic())
		}
	}
	if w.Group.Type() != ClassicGroup || w.Group.Hooks().NumClassic() != 0 {
		t.Fatalf("after the downgrade: %s group, %d classic members counted, want a classic group and 0", w.Group.Type(), w.Group.Hooks().NumClassic())
	}
}
