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
	if g.Type != want {
		t.Fatalf("tick %d: group type %s, want %s", w.Tick, g.Type, want)
	}
	var classic []string
	for _, gm := range g.Members() {
		m := w.process(gm.ClientID, gm.Inc)
		if m == nil {
			t.Fatalf("tick %d: member %s has no process", w.Tick, gm.MemberID)
		}
		speaks := m.GroupProtocol()
		if g.Type == ClassicGroup && speaks != ClassicGroup {
			t.Errorf("tick %d: %s in a classic group speaks %s", w.Tick, gm.MemberID, speaks)
		}
		if g.Type == ConsumerGroup && gm.ClassicMember != (speaks == ClassicGroup) {
			t.Errorf("tick %d: %s: classic member %v, its process speaks %s", w.Tick, gm.MemberID, gm.ClassicMember, speaks)
		}
		if g.Type == ConsumerGroup && gm.ClassicMember || g.Type == ClassicGroup {
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
				t.Fatalf("the new world is not a settled group of four: %s %s", w.Group.State, memberIDs(w.Group.Members()))
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
					return m.Inc == 2 && m.MemberID != "" && w.Group.members[m.MemberID] != nil &&
						w.Group.members[cl+"-1"] == nil && w.GroupSettled()
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
	if w.Group.Assignor != "uniform" {
		t.Errorf("assignor %s with one uniform consumer member and three range classic members, want uniform", w.Group.Assignor)
	}
}
