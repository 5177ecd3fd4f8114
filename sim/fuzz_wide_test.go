package sim

import (
	"fmt"
	"math/rand"
	"testing"
)

// FuzzWideSchedules is FuzzSchedules over every knob the property worlds
// know (idempotence, read_committed, the range server-side assignor, a
// member on the other protocol, processing time, max.poll.records) and a
// wider schedule: graceful restarts, rolls, a member moved to the other
// protocol (online migration, either way), steady traffic switched on and
// off, and lost packets of the group's and the fetch's APIs besides
// Produce. The invariants must hold on every tick, and once the faults,
// the rolls and the traffic stop the group must settle and catch up.
// go test ./sim -run XXX -fuzz FuzzWideSchedules
func FuzzWideSchedules(f *testing.F) {
	for _, s := range []int64{1, 2, 3, 42, 1000} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		sc := seedWorld(t, int(seed), wideSpec())
		w, r := sc.w, sc.r
		runSchedule(t, w, wideSchedule(r, 300, 6), 300)
		if tps := steadyInputs(w); len(tps) > 0 {
			if err := w.StopRate(tps); err != nil {
				t.Fatalf("seed %d: stopping the traffic: %v", seed, err)
			}
		}
		if !settleDeploys(t, w, 4000) {
			t.Fatalf("seed %d: deploys still pending after 4000 ticks: %v", seed, w.Pending())
		}
		ensureMember(t, w)
		settleOrChurn(t, w, 8000, fmt.Sprintf("seed %d: ", seed))
	})
}

// settleDeploys steps until no roll or graceful restart is pending, or the
// bound, checking the invariants on every tick.
func settleDeploys(t *testing.T, w *World, bound int) bool {
	t.Helper()
	c := NewChecker()
	for i := 0; i < bound; i++ {
		if len(w.Pending()) == 0 {
			return true
		}
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatal(err)
		}
	}
	return false
}

// wideSchedule is randomSchedule's faults (static joins by turns) with
// wideAction's besides, one action on about one tick in five.
func wideSchedule(r *rand.Rand, ticks, maxClients int) []action {
	var out []action
	for t := 0; t < ticks; t++ {
		if r.Intn(5) != 0 {
			continue
		}
		var a action
		if r.Intn(2) == 0 {
			a = randomFault(r, maxClients, true)
		} else {
			a = wideAction(r, fmt.Sprintf("C%d", 1+r.Intn(maxClients)))
		}
		a.tick = t
		out = append(out, a)
	}
	return out
}

// dropTypes are the requests and answers a wide schedule loses one of.
var dropTypes = []API{JoinGroup, SyncGroup, OffsetCommit, OffsetFetch, Fetch, ConsumerGroupHeartbeat, LeaveGroup, RebalanceNotification, TxnOffsetCommit, EndTxn}

func wideAction(r *rand.Rand, c string) action {
	switch r.Intn(7) {
	case 0:
		return action{do: func(w *World) error { return w.RestartGraceful(c) }, name: "restart --graceful " + c}
	case 1:
		graceful, wait, every := r.Intn(2) == 0, r.Intn(2) == 0, r.Intn(20)
		return action{do: func(w *World) error {
			var ms []string
			for _, cl := range w.clients {
				if m := w.current[cl]; m != nil && m.Alive {
					ms = append(ms, cl)
				}
			}
			if len(ms) == 0 {
				return fmt.Errorf("no member to roll")
			}
			return w.Roll(RollSpec{Members: ms, Every: every, Graceful: graceful, WaitStable: wait})
		}, name: fmt.Sprintf("roll graceful=%v wait=%v every=%d", graceful, wait, every)}
	case 2:
		// Online migration: the client moves to the other protocol, and a
		// restart puts the setting to work (a running consumer keeps the
		// protocol it was built with, as a KafkaConsumer does).
		return action{do: func(w *World) error {
			other := ConsumerGroup
			if GroupType(w.Cfg.ForClient(c).GroupProtocol) == ConsumerGroup {
				other = ClassicGroup
			}
			if err := w.Set(c, "group.protocol", string(other)); err != nil {
				return err
			}
			if err := w.Restart(c); err != nil {
				return nil // not running: it joins on the new protocol when it does
			}
			return nil
		}, name: "migrate " + c}
	case 3:
		n, per := 1+r.Intn(3), 1+r.Intn(10)
		return action{do: func(w *World) error {
			return w.ProduceRate(w.Layout().Inputs()[:1+n%len(w.Layout().Inputs())], Rate{Records: 1, Ticks: int64(per)})
		}, name: fmt.Sprintf("produce --rate 1/%dticks on %d", per, n)}
	case 4:
		// The steady production running stops: StopRate refuses a list
		// naming a partition with none, so stopping every input would
		// stop nothing unless all of them produced, and the traffic ran
		// on to the end of the schedule (seed -253: 205 ticks of a record
		// a tick on four partitions, more than one member of a record
		// per 8 ticks drains in the final check's 8000 ticks).
		return action{do: func(w *World) error {
			tps := steadyInputs(w)
			if len(tps) == 0 {
				return fmt.Errorf("no steady production to stop")
			}
			return w.StopRate(tps)
		}, name: "produce --stop"}
	case 5:
		typ, resp := dropTypes[r.Intn(len(dropTypes))], r.Intn(2) == 0
		return action{do: func(w *World) error {
			if resp {
				w.Drop(DropRule{Type: typ, Response: true, To: c, Count: 1})
			} else {
				w.Drop(DropRule{Type: typ, From: c, Count: 1})
			}
			return nil
		}, name: fmt.Sprintf("drop %v response=%v %s", typ, resp, c)}
	default:
		return action{do: func(w *World) error { return w.CloseNow(c) }, name: "close --now " + c}
	}
}

// steadyInputs is the input partitions with steady production running.
func steadyInputs(w *World) []TopicPartition {
	var tps []TopicPartition
	for _, p := range w.SteadyProducers() {
		tps = append(tps, p.TP)
	}
	return tps
}

// wideSpec is FuzzWideSchedules' world: scheduleFuzzSpec's knobs and
// every other one drawn, from a source of its own; its schedule is
// wideSchedule's, drawn after the world (so no ticks, and no static draw,
// here).
func wideSpec() worldSpec {
	s := scheduleFuzzSpec()
	s.ticks, s.clients, s.static = 0, 0, choice[bool]{}
	s.source = 7_000_000
	s.idempotent = drawn(false, true)
	s.readCommitted, s.remoteRange, s.mixed = oneIn(2), oneIn(3), oneIn(3)
	s.processing = drawn([2]int{1, 1}, [2]int{2, 1}, [2]int{1, 3}, [2]int{3, 2})
	// At most 5 records a poll of at most 2 ticks each: a batch's
	// processing ends within max.poll.interval.ms (12 ticks). Its
	// transaction's round trips are not bounded so (five records of 2
	// ticks and a transaction take 16): such a world may churn as Kafka's
	// would, and kafkaChurn tells it apart. A longer batch (the default
	// 500, with a backlog the traffic builds) keeps the group from
	// settling, in Kafka as here: each member is removed mid-batch,
	// rejoins, and reads the same records again.
	s.maxPoll = drawn(1, 2, 5)
	return s
}
