package sim

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// The property tests' random worlds come from one place: seedWorld turns a
// seed and a worldSpec (which knobs vary, and how) into a topology, a
// configuration, a world and a schedule of faults. Each test's spec says
// what it draws; the same seed and spec give the same world, draw for draw,
// so the digests kept in testdata (trace_digests.txt, cells.txt) pin them.

// choice is how one knob of a random world is chosen: cycled over the
// seeds (of[(seed/per) mod len(of)]) or drawn from the seed's rand
// (of[r.Intn(len(of))]). The zero choice leaves the knob at its default
// and draws nothing.
type choice[T any] struct {
	of   []T
	per  int
	draw bool
}

// cycle chooses of[(seed/per) mod len(of)]: per consecutive seeds share a
// value, so two knobs cycled with different per meet in every combination.
func cycle[T any](per int, of ...T) choice[T] { return choice[T]{of: of, per: per} }

// fixed is v for every seed.
func fixed[T any](v T) choice[T] { return cycle(1, v) }

// drawn draws one of of from the seed's rand.
func drawn[T any](of ...T) choice[T] { return choice[T]{of: of, draw: true} }

// seedsAt is true on the seeds whose remainder mod mod is one of rems:
// seedsAt(7, 3) is seed%7 == 3.
func seedsAt(mod int, rems ...int) choice[bool] {
	of := make([]bool, mod)
	for _, x := range rems {
		of[x] = true
	}
	return cycle(1, of...)
}

// oneIn is true when the seed's rand draws r.Intn(n) == 0.
func oneIn(n int) choice[bool] {
	of := make([]bool, n)
	of[0] = true
	return drawn(of...)
}

func (c choice[T]) pick(r *rand.Rand, seed int, def T) T {
	n := len(c.of)
	switch {
	case n == 0:
		return def
	case c.draw:
		return c.of[r.Intn(n)]
	}
	i := (seed / max(c.per, 1)) % n
	return c.of[(i+n)%n] // a fuzzed seed may be negative
}

// span is a number drawn from the seed's rand: from + r.Intn(n); n 0
// draws nothing and leaves the default.
type span struct{ from, n int }

// worldSpec is what a property test varies in its random worlds. The
// seed's rand (rand.NewSource(source+seed)) is drawn from in this order,
// each only if its knob draws: the topology, assignor, commit mode, sticky
// rules, transactions, records per partition, group protocol, static
// joins, processing time, max.poll.records, then the schedule; the test's
// own draws go on from there.
type worldSpec struct {
	source   int64
	topology func(r *rand.Rand, seed int) Topology // nil: the default topology

	assignor      choice[string]
	commit        choice[CommitMode]
	kafkaRules    choice[bool] // the sticky assignors under Kafka's rules
	transactional choice[bool] // transactional.id tx-<client>
	records       span         // records per input partition
	protocol      choice[GroupType]
	idempotent    choice[bool]
	// txnCommitsAfter makes a transactional world commit after processing
	// whatever its commit choice (the consume-process-produce loop).
	txnCommitsAfter bool
	readCommitted   choice[bool] // isolation.level read_committed
	remoteRange     choice[bool] // group.remote.assignor range
	mixed           choice[bool] // C2 speaks the other group protocol (online migration)
	// processing is processing.ticks as N ticks for K records ({N, K});
	// maxPoll is max.poll.records.
	processing choice[[2]int]
	maxPoll    choice[int]

	// The schedule (randomSchedule): ticks ticks of faults by clients C1 to
	// C<clients>; static lets a join be a static member's. ticks 0: none.
	ticks, clients int
	static         choice[bool]
}

// seedCase is one random world of a property test, not yet stepped.
type seedCase struct {
	topo  Topology
	cfg   Config
	w     *World
	sched []action
	r     *rand.Rand // the seed's rand after the spec's draws
}

// seedWorld makes seed's world as spec says.
func seedWorld(t testing.TB, seed int, spec worldSpec) seedCase {
	t.Helper()
	r := rand.New(rand.NewSource(spec.source + int64(seed)))
	topo := DefaultTopology()
	if spec.topology != nil {
		topo = spec.topology(r, seed)
	}
	cfg := DefaultConfig()
	c := &cfg.Client
	c.Assignor = spec.assignor.pick(r, seed, c.Assignor)
	c.Commit = spec.commit.pick(r, seed, c.Commit)
	if spec.kafkaRules.pick(r, seed, false) {
		c.StickyRules = assign.KafkaRules
	}
	txn := spec.transactional.pick(r, seed, false)
	if txn {
		c.TransactionalID = "tx-" + ClientPlaceholder
		if spec.txnCommitsAfter {
			c.Commit = CommitAfter
		}
	}
	if spec.records.n > 0 {
		cfg.RecordsPerPartition = spec.records.from + r.Intn(spec.records.n)
	}
	c.GroupProtocol = string(spec.protocol.pick(r, seed, GroupType(c.GroupProtocol)))
	c.Idempotence = spec.idempotent.pick(r, seed, c.Idempotence)
	if spec.readCommitted.pick(r, seed, false) {
		cfg.Isolation = "read_committed"
	}
	if spec.remoteRange.pick(r, seed, false) {
		c.RemoteAssignor = "range"
	}
	if spec.mixed.pick(r, seed, false) {
		other := ConsumerGroup
		if GroupType(c.GroupProtocol) == ConsumerGroup {
			other = ClassicGroup
		}
		cfg.Overrides = append(cfg.Overrides, Override{Client: "C2", Key: "group.protocol", Value: string(other)})
	}
	pr := spec.processing.pick(r, seed, [2]int{c.ProcessTicks, c.ProcessRecords})
	c.ProcessTicks, c.ProcessRecords = pr[0], pr[1]
	c.MaxPollRecords = spec.maxPoll.pick(r, seed, c.MaxPollRecords)
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	static := spec.static.pick(r, seed, false)
	var sched []action
	if spec.ticks > 0 {
		sched = randomSchedule(r, spec.ticks, spec.clients, static)
	}
	return seedCase{topo: topo, cfg: cfg, w: w, sched: sched, r: r}
}

// randomTopology is a group g reading 1 to 3 input topics t0, t1, t2 of 1
// to 5 partitions each into an output topic out of 1 to 3, with 0 to 2
// members to start with.
func randomTopology(r *rand.Rand, _ int) Topology {
	topo := Topology{Group: "g", Output: TopicSpec{Name: "out", Partitions: 1 + r.Intn(3)}, Members: r.Intn(3)}
	for i := 0; i < 1+r.Intn(3); i++ {
		topo.Inputs = append(topo.Inputs, TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: 1 + r.Intn(5)})
	}
	return topo
}

// longNamesOnOddSeeds is the default topology (short record names) on even
// seeds, and on odd ones long topic names with dots, dashes and an
// underscore, of drawn sizes.
func longNamesOnOddSeeds(r *rand.Rand, seed int) Topology {
	if seed%2 == 0 {
		return DefaultTopology()
	}
	return Topology{Group: "g", Output: TopicSpec{Name: "the-invoices.topic", Partitions: 1 + r.Intn(3)}, Members: 1 + r.Intn(2),
		Inputs: []TopicSpec{{Name: "orders.from-the-web_shop", Partitions: 1 + r.Intn(4)}, {Name: "p", Partitions: 1 + r.Intn(3)}}}
}

// dottedOnOddSeeds is the default topology on even seeds, and on odd ones
// two input topics whose names hold a dash and a dot (in-a:2, in.b:3 into
// out:2, two members); it draws nothing.
func dottedOnOddSeeds(_ *rand.Rand, seed int) Topology {
	if seed%2 == 0 {
		return DefaultTopology()
	}
	return Topology{Group: "g", Inputs: []TopicSpec{{Name: "in-a", Partitions: 2}, {Name: "in.b", Partitions: 3}}, Output: TopicSpec{Name: "out", Partitions: 2}, Members: 2}
}

// allAssignors are the client-side assignors.
var allAssignors = []string{"range", "roundrobin", "sticky", "cooperative-sticky"}

// propertyCase is the world of TestPropertyRandomSchedules and traceCase
// under group protocol proto: every assignor (cycled by seed), every commit
// mode (changing every 4 seeds, so each meets each assignor), Kafka's
// sticky rules on seed%5 == 4, transactions on seed%7 == 3, the range
// server-side assignor on seed%3 == 1, C2 on the other protocol on
// seed%4 == 2; a random topology and 0 to 11 records per partition.
func propertyCase(proto GroupType) worldSpec {
	return worldSpec{
		topology:      randomTopology,
		assignor:      cycle(1, allAssignors...),
		commit:        cycle(4, CommitAuto, CommitAfter, CommitBefore),
		kafkaRules:    seedsAt(5, 4),
		transactional: seedsAt(7, 3),
		records:       span{0, 12},
		protocol:      fixed(proto),
		remoteRange:   seedsAt(3, 1),
		mixed:         seedsAt(4, 2),
	}
}
