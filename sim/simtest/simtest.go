// Package simtest makes the random worlds the engine's tests run: a seed
// gives a topology, a configuration, a schedule of faults and a world run
// through them, the same world for the same seed wherever it is asked for
// (sim's own tests, and the tests of the packages under sim that read a
// running world, which cannot reach sim's test files). It uses only sim's
// exported API.
//
// These are copies of sim's test helpers (randomTopology, randomSchedule,
// seedWorld with the propertyCase spec of sim/seedworld_test.go, traceCase,
// traceCaseWith, consumingWorld), which sim's own tests cannot import (this
// package imports sim); the same seed gives the same world, which
// TestWorldsMatchDigests checks against sim/testdata/trace_digests.txt.
package simtest

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
	"github.com/kgrepl/kgrepl/sim/assign"
)

// Protocols are the group protocols the property tests run under.
var Protocols = []sim.GroupType{sim.ClassicGroup, sim.ConsumerGroup}

// Action is one input to a world at a tick.
type Action struct {
	Tick int
	Do   func(w *sim.World) error
	Name string
}

// RandomSchedule makes a deterministic schedule of joins, leaves, crashes,
// restarts, slow records, new input and lost produce answers, over ticks
// ticks and clients C1 to C<maxClients>; static lets a join be a static
// member's.
func RandomSchedule(r *rand.Rand, ticks, maxClients int, static bool) []Action {
	var out []Action
	for t := 0; t < ticks; t++ {
		if r.Intn(6) != 0 {
			continue
		}
		c := fmt.Sprintf("C%d", 1+r.Intn(maxClients))
		var a Action
		switch r.Intn(9) {
		case 0, 1:
			st := static && r.Intn(2) == 0
			a = Action{Do: func(w *sim.World) error { return w.Join(c, st, nil) }, Name: "join " + c}
		case 2:
			a = Action{Do: func(w *sim.World) error { return w.Close(c) }, Name: "close " + c}
		case 3:
			a = Action{Do: func(w *sim.World) error { return w.CrashNow(c) }, Name: "crash now " + c}
		case 4:
			n := 1 + r.Intn(4)
			a = Action{Do: func(w *sim.World) error { return w.CrashAfter(c, n) }, Name: fmt.Sprintf("crash %s after %d", c, n)}
		case 5:
			a = Action{Do: func(w *sim.World) error { return w.Restart(c) }, Name: "restart " + c}
		case 6:
			a = Action{Do: func(w *sim.World) error { return w.Slow(c) }, Name: "slow " + c}
		case 7:
			n := 1 + r.Intn(5)
			a = Action{Do: func(w *sim.World) error {
				tps := w.Layout().Inputs()
				return w.ProduceInput(tps[n%len(tps)], n)
			}, Name: fmt.Sprintf("produce %d", n)}
		case 8:
			a = Action{Do: func(w *sim.World) error {
				w.Drop(sim.DropRule{Type: sim.Produce, Response: true, To: c, Count: 1})
				return nil
			}, Name: "drop produce response to " + c}
		}
		a.Tick = t
		out = append(out, a)
	}
	return out
}

// RandomTopology is a group g reading 1 to 3 input topics t0, t1, t2 of 1
// to 5 partitions each into an output topic out of 1 to 3, with 0 to 2
// members to start with.
func RandomTopology(r *rand.Rand) sim.Topology {
	topo := sim.Topology{Group: "g", Output: sim.TopicSpec{Name: "out", Partitions: 1 + r.Intn(3)}, Members: r.Intn(3)}
	for i := 0; i < 1+r.Intn(3); i++ {
		topo.Inputs = append(topo.Inputs, sim.TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: 1 + r.Intn(5)})
	}
	return topo
}

// RandomCaseConfig is the topology and configuration of random case seed:
// every assignor, commit mode and sticky rule set, transactions, the
// consumer protocol with a server-side assignor, and mixed protocols.
func RandomCaseConfig(r *rand.Rand, proto sim.GroupType, seed int, strategies []string, modes []sim.CommitMode) (sim.Topology, sim.Config) {
	topo := RandomTopology(r)
	cfg := sim.DefaultConfig()
	cfg.Client.Assignor = strategies[seed%len(strategies)]
	cfg.Client.Commit = modes[(seed/4)%len(modes)]
	if seed%5 == 4 {
		cfg.Client.StickyRules = assign.KafkaRules
	}
	if seed%7 == 3 {
		cfg.Client.TransactionalID = "tx-" + sim.ClientPlaceholder
	}
	cfg.RecordsPerPartition = r.Intn(12)
	cfg.Client.GroupProtocol = string(proto)
	if seed%3 == 1 {
		cfg.Client.RemoteAssignor = "range"
	}
	if seed%4 == 2 {
		// Mixed protocols: C2 speaks the other one, so groups convert
		// back and forth (online migration) under the faults.
		other := sim.ConsumerGroup
		if proto == sim.ConsumerGroup {
			other = sim.ClassicGroup
		}
		cfg.Overrides = append(cfg.Overrides, sim.Override{Client: "C2", Key: "group.protocol", Value: string(other)})
	}
	return topo, cfg
}

// TraceCase runs one random world of the property tests' kind
// (RandomCaseConfig, and idempotence) with lost packets of every steady
// type for 400 ticks, and returns it.
func TraceCase(t testing.TB, proto sim.GroupType, seed int) *sim.World {
	return TraceCaseWith(t, proto, seed, func(w *sim.World) *sim.World { return w })
}

// TraceCaseWith is TraceCase, with each called before every tick: the
// world it returns goes on.
func TraceCaseWith(t testing.TB, proto sim.GroupType, seed int, each func(*sim.World) *sim.World) *sim.World {
	r := rand.New(rand.NewSource(int64(seed)))
	topo, cfg := RandomCaseConfig(r, proto, seed, []string{"range", "roundrobin", "sticky", "cooperative-sticky"},
		[]sim.CommitMode{sim.CommitAuto, sim.CommitAfter, sim.CommitBefore})
	if seed%5 == 1 {
		cfg.Client.Idempotence = true
	}
	w, err := sim.New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sched := RandomSchedule(r, 300, 5, true)
	types := []sim.API{sim.Fetch, sim.OffsetCommit, sim.Produce, sim.JoinGroup, sim.SyncGroup, sim.ConsumerGroupHeartbeat,
		sim.OffsetFetch, sim.EndTxn, sim.TxnOffsetCommit}
	i := 0
	for w.Tick < 400 {
		for i < len(sched) && sched[i].Tick <= w.Tick {
			sched[i].Do(w)
			i++
		}
		if r.Intn(25) == 0 {
			w.Drop(sim.DropRule{Type: types[r.Intn(len(types))], Response: r.Intn(2) == 0, Count: 1})
		}
		if w.Tick%17 == 0 {
			tps := w.Layout().Inputs()
			w.ProduceInput(tps[r.Intn(len(tps))], 1+r.Intn(3))
		}
		w = each(w)
		w.Step()
	}
	return w
}

// ConsumingWorld is the default world with C2 joined and records records
// per input partition, after ticks ticks: C1 and C2 consume every tick.
func ConsumingWorld(records, ticks int) *sim.World {
	cfg := sim.DefaultConfig()
	cfg.RecordsPerPartition = records
	w, _ := sim.New(sim.DefaultTopology(), cfg)
	w.Join("C2", false, nil)
	for i := 0; i < ticks; i++ {
		w.Step()
	}
	return w
}
