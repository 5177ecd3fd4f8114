package sim

import (
	"fmt"
	"testing"
)

func TestDbgSeed40(t *testing.T) {
	seed := int64(40)
	sc := seedWorld(t, int(seed), worldSpec{
		topology:      randomTopology,
		assignor:      drawn(allAssignors...),
		commit:        drawn(CommitAuto, CommitAfter, CommitBefore),
		kafkaRules:    drawn(false, true),
		transactional: oneIn(3),
		records:       span{0, 10},
		protocol:      drawn(protocols...),
		ticks:         200, clients: 6, static: oneIn(2),
	})
	w := sc.w
	runSchedule(t, w, sc.sched, 200)
	ensureMember(t, w)
	ok := settle(t, w, 8000)
	fmt.Println("settled", ok, "tick", w.Tick, "proto", w.Cfg.Client.GroupProtocol, "assignor", w.Cfg.Client.Assignor, "commit", w.Cfg.Client.Commit, "txn", w.Cfg.Client.TransactionalID, "iso", w.Cfg.Isolation)
	fmt.Println("sched:", names(sc.sched))
	for _, tp := range w.Layout().Inputs() {
		if l := w.Lag(tp); l > 0 {
			fmt.Println("lag", tp, l)
		}
	}
	for _, m := range w.Processes() {
		if m.Alive {
			fmt.Printf("%s-%d alive phase=%v owned=%v zombie=%v\n", m.Client, m.Inc, m.Phase, m.Owned, m.Zombie)
		}
	}
}

func TestDbgSeed40b(t *testing.T) {
	seed := int64(40)
	sc := seedWorld(t, int(seed), worldSpec{
		topology:      randomTopology,
		assignor:      drawn(allAssignors...),
		commit:        drawn(CommitAuto, CommitAfter, CommitBefore),
		kafkaRules:    drawn(false, true),
		transactional: oneIn(3),
		records:       span{0, 10},
		protocol:      drawn(protocols...),
		ticks:         200, clients: 6, static: oneIn(2),
	})
	w := sc.w
	runSchedule(t, w, sc.sched, 200)
	ensureMember(t, w)
	settle(t, w, 600)
	n := 0
	all := []Event{}
	for _, e := range w.Events.All() {
		all = append(all, e)
	}
	for _, e := range all {
		if e.Tick >= 0 && e.Tick < 420 {
			fmt.Printf("%d %s %s\n", e.Tick, e.Kind, e.Text)
			n++
		}
	}
	_ = n
}
