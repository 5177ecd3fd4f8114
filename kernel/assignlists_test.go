package kernel

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// compare takes a list value of partition.assignment.strategy with + for
// its commas: cooperative-sticky+range is the list cooperative-sticky,range,
// whose members vote cooperative-sticky but rebalance eagerly (range is
// eager-only), so the row costs what range costs and differs from
// cooperative-sticky's.
func TestCompareListValue(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "join C2", "run until stable", "join C3", "run until stable")
	rows := compareRows(t, s, "partition.assignment.strategy range,cooperative-sticky,cooperative-sticky+range", 3)
	rng, coop, list := rows[0], rows[1], rows[2]
	if list.Settings != "partition.assignment.strategy=cooperative-sticky+range" {
		t.Errorf("the list row is named %q", list.Settings)
	}
	if list.Pause != rng.Pause || !slices.Equal(list.PausedPerRebalance, rng.PausedPerRebalance) || list.Pause == coop.Pause {
		t.Errorf("pause: range %d %v, cooperative-sticky %d, cooperative-sticky,range %d %v; want the list eager, as range",
			rng.Pause, rng.PausedPerRebalance, coop.Pause, list.Pause, list.PausedPerRebalance)
	}
	// The list's group ran cooperative-sticky (the vote), eagerly.
	execAll(t, s, "fork list", "new", "set partition.assignment.strategy cooperative-sticky,range",
		"join C2", "run until stable", "join C3", "run until stable")
	if a := s.World().Group.Describe().Assignor; a != "cooperative-sticky" {
		t.Errorf("members listing cooperative-sticky,range run %s, want cooperative-sticky", a)
	}
	if n := countEvents(s.World(), sim.EvRevoked); n == 0 {
		t.Errorf("no revocation: members listing range too must revoke everything (eager)")
	}
}

// set Cn.partition.assignment.strategy waits for Cn's next process, as a
// Kafka consumer reads its assignors when it is created: the running C1
// keeps sending range; its next process sends cooperative-sticky, which
// the group (C1-1's and C2's range) refuses. Set for every member, the
// strategy switches the running members at once (the seed's shortcut).
func TestSetAssignorsForOneMemberWaitsForItsNextProcess(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set C1.partition.assignment.strategy cooperative-sticky", "join C2", "run until stable")
	w := s.World()
	if got := w.Member("C1").Cfg.Assignor; got != "range" {
		t.Errorf("the running C1 lists %s after set C1...; want range until it restarts", got)
	}
	for _, gm := range w.Group.Describe().Members {
		// what each member's last JoinGroup listed, as the coordinator keeps it
		if gm.ClientID == "C1" && !slices.Equal(gm.Protocols, []string{"range"}) {
			t.Errorf("the coordinator has C1 (%s) listing %v, want [range]", gm.MemberID, gm.Protocols)
		}
	}
	execAll(t, s, "restart C1", "run until tick 40")
	w = s.World()
	refused := false
	for _, p := range packets(w, sim.JoinGroup, true) {
		refused = refused || p.To == "C1" && p.Error == sim.InconsistentGroupProtocol
	}
	if !refused || w.Member("C1").Alive {
		t.Errorf("C1's new process (cooperative-sticky) against range members: refused %v, alive %v; want refused and stopped", refused, w.Member("C1").Alive)
	}

	s = checkedSession(t)
	execAll(t, s, "join C2", "run until stable", "set partition.assignment.strategy cooperative-sticky,range")
	for _, c := range []string{"C1", "C2"} {
		if got := s.World().Member(c).Cfg.Assignor; got != "cooperative-sticky,range" {
			t.Errorf("running %s lists %s after a set for every member, want cooperative-sticky,range", c, got)
		}
	}
	execAll(t, s, "join C3", "run until stable")
	if a := s.World().Group.Describe().Assignor; a != "cooperative-sticky" {
		t.Errorf("after the switch of every member and a join, the group runs %s, want cooperative-sticky", a)
	}
}

// A session holding list values saves and loads to the same branch.
func TestAssignorListsSaveAndLoad(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set C2.partition.assignment.strategy cooperative-sticky,range", "join C2", "run until stable",
		"set C1.partition.assignment.strategy cooperative-sticky,range", "restart C1", "run until stable")
	path := t.TempDir() + "/lists.kgs"
	execAll(t, s, "save "+path)
	views := func(s *Session) string {
		var b strings.Builder
		for _, v := range []string{"describe group --json", "metrics --json", "trace --json"} {
			out, err := s.Exec(v)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(out)
		}
		return b.String()
	}
	want := views(s)
	l := NewSession()
	if _, err := l.Exec("load " + path); err != nil {
		t.Fatal(err)
	}
	if got := views(l); got != want {
		t.Errorf("loaded branch's views differ from the saved one's")
	}
	if a := l.World().Group.Describe().Assignor; a != "cooperative-sticky" {
		t.Errorf("loaded group runs %s, want cooperative-sticky (both members list it first)", a)
	}
}

// set --from applies a .properties list of assignors as the list, in its
// order: a file listing CooperativeStickyAssignor before RangeAssignor,
// for every member, makes the group vote cooperative-sticky at its next
// rebalance, which is eager (range is eager-only); for one member
// (--client C2), its next process sends the list, admitted since it shares
// range with the others, and the group keeps range (three votes to one).
func TestSetFromAppliesAnAssignorList(t *testing.T) {
	s := importSession(t)
	mustExec(t, s, "new --from-describe kafka37-static-pods.txt")
	mustExec(t, s, "set --from cooperative-first.properties")
	for _, c := range []string{"C1", "C4"} {
		if got := s.World().Member(c).Cfg.Assignor; got != "cooperative-sticky,range" {
			t.Errorf("running %s lists %s after set --from for every member, want cooperative-sticky,range", c, got)
		}
	}
	mustExec(t, s, "join C5")
	mustExec(t, s, "run until stable")
	if a := s.World().Group.Describe().Assignor; a != "cooperative-sticky" {
		t.Errorf("members listing cooperative-sticky,range run %s, want cooperative-sticky", a)
	}
	if n := countEvents(s.World(), sim.EvRevoked); n == 0 {
		t.Errorf("no revocation: members listing range too must revoke everything (eager)")
	}

	s = importSession(t)
	mustExec(t, s, "new --from-describe kafka37-static-pods.txt")
	mustExec(t, s, "set --from cooperative-first.properties --client C2")
	if got := s.World().Member("C2").Cfg.Assignor; got != "range" {
		t.Errorf("the running C2 lists %s after set --from --client C2, want range until it restarts", got)
	}
	mustExec(t, s, "restart C2")
	mustExec(t, s, "run until stable")
	w := s.World()
	if !w.Member("C2").Alive {
		t.Fatalf("C2's new process (cooperative-sticky,range) was stopped; it shares range with the group")
	}
	found := false
	for _, gm := range w.Group.Describe().Members {
		if gm.ClientID == "C2" {
			found = true
			if !slices.Equal(gm.Protocols, []string{"cooperative-sticky", "range"}) {
				t.Errorf("the coordinator has C2 listing %v, want [cooperative-sticky range]", gm.Protocols)
			}
		}
	}
	if !found {
		t.Errorf("C2 is not a member after its restart")
	}
	if a := w.Group.Describe().Assignor; a != "range" {
		t.Errorf("three members listing range and C2 cooperative-sticky,range run %s, want range (three votes to one)", a)
	}
}
