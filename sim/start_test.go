package sim

import (
	"reflect"
	"strings"
	"testing"
)

// importTopology is a group's shape as an import gives it: its own topics,
// not the seed's.
func importTopology() Topology {
	return Topology{Inputs: []TopicSpec{{Name: "orders", Partitions: 4}, {Name: "refunds", Partitions: 2}},
		Output: TopicSpec{Name: "invoices", Partitions: 1}, Group: "orders-app"}
}

func tps(names ...string) []TopicPartition {
	var out []TopicPartition
	for _, n := range names {
		i := strings.LastIndexByte(n, '-')
		p := 0
		for _, c := range n[i+1:] {
			p = p*10 + int(c-'0')
		}
		out = append(out, TopicPartition{Topic: n[:i], Partition: p})
	}
	return out
}

// An assignment no assignor of kgrepl's would compute (range gives C1
// orders-0,1 and refunds-0): the members own exactly what they are given.
var givenAssignment = []StartMember{
	{Client: "C1", Owned: tps("refunds-1", "orders-3")},
	{Client: "C2", Owned: tps("orders-0", "orders-1", "orders-2")},
	{Client: "C3", Owned: tps("refunds-0")},
	{Client: "C4"}, // idle, as the file shows it
}

func ownedBy(w *World) map[string][]TopicPartition {
	out := map[string][]TopicPartition{}
	for _, gm := range w.Group.Members() {
		out[gm.ClientID] = gm.Assignment
	}
	return out
}

func checkStartedAsGiven(t *testing.T, w *World, given []StartMember) {
	t.Helper()
	if w.Group.State() != Stable || w.Group.Epoch() != 1 {
		t.Fatalf("group %s at epoch %d, want Stable at 1", w.Group.State(), w.Group.Epoch())
	}
	got := ownedBy(w)
	for _, sm := range given {
		want := SortedCopyForTest(sm.Owned)
		if !reflect.DeepEqual(nilIfEmpty(got[sm.Client]), nilIfEmpty(want)) {
			t.Errorf("coordinator: %s owns %v, want %v", sm.Client, got[sm.Client], want)
		}
		if m := w.Member(sm.Client); !reflect.DeepEqual(nilIfEmpty(m.Owned), nilIfEmpty(want)) {
			t.Errorf("client: %s owns %v, want %v", sm.Client, m.Owned, want)
		}
	}
	if w.Topo.Members != len(given) {
		t.Errorf("Topo.Members = %d, want %d", w.Topo.Members, len(given))
	}
}

func nilIfEmpty(x []TopicPartition) []TopicPartition {
	if len(x) == 0 {
		return nil
	}
	return x
}

// SortedCopyForTest is the order members keep their partitions in.
func SortedCopyForTest(x []TopicPartition) []TopicPartition {
	out := append([]TopicPartition(nil), x...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].Topic < out[j-1].Topic || out[j].Topic == out[j-1].Topic && out[j].Partition < out[j-1].Partition); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// A world started from a given assignment is Stable with each member
// owning what it was given, stays so while nothing happens (under both
// protocols: a consumer group's target is the given assignment, so nothing
// is reconciled), keeps every invariant, and rebalances from there when a
// member joins.
func TestNewStartedKeepsTheGivenAssignment(t *testing.T) {
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			cfg := DefaultConfig()
			if err := cfg.Set("", "group.protocol", protocol); err != nil {
				t.Fatal(err)
			}
			w, err := NewStarted(importTopology(), cfg, givenAssignment)
			if err != nil {
				t.Fatal(err)
			}
			if string(w.Group.Type()) != protocol {
				t.Fatalf("group type %s, want %s", w.Group.Type(), protocol)
			}
			checkStartedAsGiven(t, w, givenAssignment)
			if protocol == "consumer" {
				for _, gm := range w.Group.Members() {
					if !reflect.DeepEqual(nilIfEmpty(gm.Target), nilIfEmpty(gm.Assignment)) {
						t.Errorf("%s: target %v, current %v: a Stable group's target is its assignment", gm.ClientID, gm.Target, gm.Assignment)
					}
				}
			}
			c := NewChecker()
			for i := 0; i < 40; i++ {
				w.Step()
				if err := c.Check(w); err != nil {
					t.Fatalf("tick %d: %v", w.Tick, err)
				}
			}
			if w.Group.State() != Stable || w.Group.Epoch() != 1 {
				t.Fatalf("after 40 quiet ticks: %s at epoch %d, want Stable at 1 (nothing to move)", w.Group.State(), w.Group.Epoch())
			}
			for _, sm := range givenAssignment {
				if got := ownedBy(w)[sm.Client]; !reflect.DeepEqual(nilIfEmpty(got), nilIfEmpty(SortedCopyForTest(sm.Owned))) {
					t.Errorf("after 40 quiet ticks %s owns %v, want %v", sm.Client, got, sm.Owned)
				}
			}
			if w.Processed() == 0 {
				t.Errorf("nothing processed in 40 ticks: the members do not consume what they own")
			}
			if err := w.Join("C5", false, nil); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 200 && !w.GroupSettled(); i++ {
				w.Step()
				if err := c.Check(w); err != nil {
					t.Fatalf("tick %d: %v", w.Tick, err)
				}
			}
			if !w.GroupSettled() || w.Group.Epoch() < 2 {
				t.Fatalf("C5's join: group %s at epoch %d, want settled past epoch 1", w.Group.State(), w.Group.Epoch())
			}
			total := 0
			for _, a := range ownedBy(w) {
				total += len(a)
			}
			if total != 6 {
				t.Errorf("after C5 joined, %d partitions are owned, want all 6", total)
			}
		})
	}
}

// The start is a function of its inputs: two worlds started alike step
// alike, and a clone of one is the other.
func TestNewStartedIsDeterministic(t *testing.T) {
	a, err := NewStarted(importTopology(), DefaultConfig(), givenAssignment)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewStarted(importTopology(), DefaultConfig(), givenAssignment)
	_ = a.Join("C5", false, nil)
	_ = b.Join("C5", false, nil)
	for i := 0; i < 60; i++ {
		a.Step()
		b.Step()
	}
	if a.Packets.Len() != b.Packets.Len() || a.Events.Len() != b.Events.Len() || a.Processed() != b.Processed() {
		t.Fatalf("two worlds started alike differ: %d/%d packets, %d/%d events", a.Packets.Len(), b.Packets.Len(), a.Events.Len(), b.Events.Len())
	}
}

// A start Kafka could not be in is refused, naming what is wrong.
func TestNewStartedRefusesImpossibleStarts(t *testing.T) {
	for _, tc := range []struct {
		members []StartMember
		want    string
	}{
		{[]StartMember{{Client: "C1", Owned: tps("orders-0")}, {Client: "C2", Owned: tps("orders-0")}},
			"orders-0 is owned by C1 and by C2"},
		{[]StartMember{{Client: "C1", Owned: tps("orders-9")}}, "C1 owns orders-9, which is not an input partition"},
		{[]StartMember{{Client: "C1", Owned: tps("invoices-0")}}, "not an input partition"},
		{[]StartMember{{Client: "C1"}, {Client: "C1"}}, "C1 is given twice"},
		{[]StartMember{{Client: "orders-app-7"}}, "orders-app-7 is not a client id"},
	} {
		if _, err := NewStarted(importTopology(), DefaultConfig(), tc.members); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewStarted(%v): error %v, want one saying %q", tc.members, err, tc.want)
		}
	}
}

// No world starts with two members holding one group.instance.id or one
// transactional.id (Kafka fences one of them at once); per-member ids,
// derived from the client ids, start.
func TestNoStartWithOneIDTwice(t *testing.T) {
	topo := DefaultTopology()
	topo.Members = 3
	for _, tc := range []struct {
		sets [][3]string
		want string // "" = starts
	}{
		{[][3]string{{"", "group.instance.id", "static"}}, "C1 and C2 would start with one group.instance.id, static"},
		{[][3]string{{"", "transactional.id", "tx"}}, "C1 and C2 would start with one transactional.id, tx"},
		{[][3]string{{"", "group.instance.id", "static"}, {"C1", "group.instance.id", "a"}}, "C2 and C3 would start with one group.instance.id"},
		{[][3]string{{"C1", "group.instance.id", "x"}, {"C3", "group.instance.id", "x"}}, "C1 and C3 would start with one group.instance.id, x"},
		{[][3]string{{"", "group.instance.id", "C2"}, {"C1", "group.instance.id", "none"}, {"C3", "group.instance.id", "none"}}, ""},
		{[][3]string{{"", "group.instance.id", "per-member"}, {"", "transactional.id", "per-member"}}, ""},
		{[][3]string{{"", "group.instance.id", "pod-{client}"}}, ""},
		{[][3]string{{"", "group.instance.id", "per-member"}, {"C3", "group.instance.id", "C1"}}, "C1 and C3 would start with one group.instance.id, C1"},
	} {
		cfg := DefaultConfig()
		for _, s := range tc.sets {
			if err := cfg.Set(s[0], s[1], s[2]); err != nil {
				t.Fatal(err)
			}
		}
		_, err := New(topo, cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want a world", tc.sets, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one saying %q", tc.sets, err, tc.want)
		}
		if _, err2 := NewStarted(importTopology(), cfg, []StartMember{{Client: "C1"}, {Client: "C2"}, {Client: "C3"}}); (err2 == nil) != (err == nil) {
			t.Errorf("%v: New says %v, NewStarted %v: one rule for both", tc.sets, err, err2)
		}
	}
}

// per-member gives each member its own id, from its client id, as a
// deployment gives each pod its own: static members that restart come back
// without a rebalance, and no one is fenced.
func TestPerMemberIDs(t *testing.T) {
	cfg := DefaultConfig()
	for _, kv := range [][2]string{{"group.instance.id", "per-member"}, {"transactional.id", "per-member"}} {
		if err := cfg.Set("", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	topo := DefaultTopology()
	topo.Members = 3
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"C1", "C2", "C3"} {
		m := w.Member(c)
		if m.Cfg.InstanceID != c || m.Cfg.TransactionalID != "tx-"+c {
			t.Errorf("%s runs group.instance.id %q and transactional.id %q, want %s and tx-%s", c, m.Cfg.InstanceID, m.Cfg.TransactionalID, c, c)
		}
	}
	if v, _ := cfg.Get("", "group.instance.id"); v != ClientPlaceholder {
		t.Errorf("group.instance.id reads %q, want %q (the typed form)", v, ClientPlaceholder)
	}
	if err := w.Restart("C2"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		w.Step()
	}
	if w.Group.Epoch() != 1 || w.Group.State() != Stable {
		t.Errorf("a static restart within the session: group %s generation %d, want Stable 1", w.Group.State(), w.Group.Epoch())
	}
	w.Packets.ErrorsFrom(0, func(api API, _ bool, e ErrorCode) {
		if e == FencedInstanceID || e == ProducerFenced {
			t.Errorf("%s answered %v: per-member ids fence no one", api, e)
		}
	})
}

// TestJoinOfARunningClientNamesItsMemberOrSaysItIsJoining: joining a
// client that runs names its member id, or, before the coordinator gave
// it one, says it is still joining (it said "member -").
func TestJoinOfARunningClientNamesItsMemberOrSaysItIsJoining(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C7", false, nil); err != nil {
		t.Fatal(err)
	}
	err = w.Join("C7", false, nil)
	if err == nil || !strings.Contains(err.Error(), "C7 is already running (joining, no member id yet); use restart C7") {
		t.Fatalf("join of a joining client: %v", err)
	}
	for range 20 {
		w.Step()
	}
	err = w.Join("C7", false, nil)
	if m := w.Member("C7"); m == nil || m.MemberID == "" || err == nil || !strings.Contains(err.Error(), "(member "+m.MemberID+")") {
		t.Fatalf("join of a member: %v", err)
	}
}
