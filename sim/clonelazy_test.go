package sim

import (
	"strings"
	"testing"
)

// The group's maps made at their first write (PutMap) are copied as nil
// while empty (CopyLazy), and a write to one in a clone, made there, or in
// the original after a clone, never shows in the other world (the
// transaction coordinator's: sim/txncoord).
func TestCloneLazyMapsStayApart(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	if static, fenced := w.Group.Hooks().Lazy(); static || fenced {
		t.Fatal("a new world made a lazy map")
	}
	c := w.Clone()
	if static, fenced := c.Group.Hooks().Lazy(); static || fenced {
		t.Fatal("a clone of a world without static members made a map")
	}
	c.Group.Hooks().PutStatic("i1", "m1")
	c.Group.Hooks().Fence("m0")
	if static, fenced := w.Group.Hooks().Lazy(); static || fenced {
		t.Fatal("a clone's write shows in the original")
	}
	if c.Group.Hooks().Static("i1") != "m1" || !c.Group.Hooks().Fenced("m0") {
		t.Fatal("the clone lost its writes")
	}
	d := c.Clone()
	c.Group.Hooks().PutStatic("i2", "m2")
	if d.Group.Hooks().Static("i2") != "" {
		t.Fatal("the original's write after a clone shows in the clone")
	}
	if d.Group.Hooks().Static("i1") != "m1" || !d.Group.Hooks().Fenced("m0") {
		t.Fatal("a clone of a world with the maps did not copy them")
	}
}

// A group's member list is kept as the members change (coord's memberSet
// makes it anew): through joins, static rejoins, crashes, closes and a
// rolling upgrade to group.protocol=consumer and back, it is at every tick
// the members map's values in member-id order, in the world and in a clone
// made at that tick, whose group holds member records of its own.
func TestGroupMembersListFollowsTheMap(t *testing.T) {
	topo := DefaultTopology()
	topo.Members = 3
	w, err := New(topo, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	check := func(at string, w *World) {
		t.Helper()
		got, want := memberIDs(w.Group.Members()), "["+strings.Join(w.Group.Hooks().MemberIDsByMap(), " ")+"]"
		if got != want {
			t.Fatalf("%s: Members lists %s, the map %s", at, got, want)
		}
	}
	changes := 0
	step := func(n int) {
		t.Helper()
		for range n {
			ids := memberIDs(w.Group.Members())
			w.Step()
			if memberIDs(w.Group.Members()) != ids {
				changes++
			}
			check("world at tick "+itoa(w.Tick), w)
			c := w.Clone()
			check("clone at tick "+itoa(w.Tick), c)
			if c.Group.Hooks().SharesMembersWith(w.Group) {
				t.Fatalf("tick %d: the clone's group holds the original's member records", w.Tick)
			}
		}
	}
	step(30)
	for _, cmd := range []func() error{
		func() error { return w.Join("C4", true, nil) },
		func() error { return w.CrashNow("C2") },
		func() error { return w.Restart("C2") },
		func() error { return w.Close("C1") },
		func() error { return w.Set("", "group.protocol", "consumer") },
		func() error { return w.Restart("C3") },
		func() error { return w.Restart("C4") },
		func() error { return w.CrashNow("C2") },
		func() error { return w.Restart("C2") },
		func() error { return w.Set("", "group.protocol", "classic") },
		func() error { return w.Restart("C3") },
	} {
		if err := cmd(); err != nil {
			t.Fatal(err)
		}
		step(60)
	}
	if changes < 8 {
		t.Errorf("the membership changed on %d ticks only: the test did not churn the group", changes)
	}
}

// memberIDs spells a member list as the coordinator's events do: [C1-1 C2-1].
func memberIDs(ms []GroupMember) string {
	s := "["
	for i, m := range ms {
		if i > 0 {
			s += " "
		}
		s += m.MemberID
	}
	return s + "]"
}
