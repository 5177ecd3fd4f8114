package sim

import (
	"flag"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// fingerprint renders everything observable about a world, so two worlds
// can be compared byte for byte.
func fingerprint(w *World) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tick %d group %s gen %d leader %s protocol %s\n", w.Tick, w.Group.State(), w.Group.Describe().Generation, w.Group.Describe().Leader, w.Group.Describe().Assignor)
	for _, gm := range w.Group.Members() {
		fmt.Fprintf(&b, "member %s %s %v joined=%v topics %v owned %v protocols %v target %v revoking %v epoch %d\n", gm.MemberID, gm.InstanceID,
			gm.Assignment, gm.Joined, gm.Topics, gm.Owned, gm.Protocols, gm.Target, gm.Revoking, gm.MemberEpoch)
	}
	for _, p := range w.Packets.All() {
		fmt.Fprintf(&b, "p%d %d>%d %s>%s %s %v %s %s lost=%v\n", p.ID, p.Sent, p.Delivered, p.From, p.To, p.Type, p.Response, p.Error, p.Summary, p.Lost)
	}
	for _, e := range w.Events.All() {
		fmt.Fprintf(&b, "e%d %s %s %s\n", e.Tick, e.Kind, e.Member, e.Text)
	}
	for _, tp := range append(append([]TopicPartition{}, w.layout.Inputs()...), w.layout.Outputs()...) {
		l := w.broker.Log(tp)
		fmt.Fprintf(&b, "log %s hw %d lso %d %v aborted %v\n", tp, l.HW(), l.LSO(), l.Cells.Slice(0, l.HW()), l.Aborted)
	}
	for _, r := range w.Group.Offsets.Log.All() {
		fmt.Fprintf(&b, "off %+v\n", r)
	}
	for _, e := range w.Txn.Entries() {
		fmt.Fprintf(&b, "txn %+v\n", *e)
	}
	for _, m := range w.procs {
		recs, done := m.Batch()
		fmt.Fprintf(&b, "proc %s/%d %s %s %v %v %v %d\n", m.Client, m.Inc, m.Phase, m.Hooks().Loop(), m.Owned, m.Hooks().Positions(), recs, done)
	}
	fmt.Fprintf(&b, "meter %d %v %v\n", w.Meter.Total, w.Meter.Entries, w.Meter.Series.Slice(0, w.Meter.Series.Len()))
	fmt.Fprintf(&b, "group transitions %v\n", w.Group.Transitions.Slice(0, w.Group.Transitions.Len()))
	fmt.Fprintf(&b, "txn log %+v\ntxn transitions %v\n", w.Txn.Log.Slice(0, w.Txn.Log.Len()), w.Txn.Transitions.Slice(0, w.Txn.Transitions.Len()))
	fmt.Fprintf(&b, "sink %v\n", sinkText(w))
	fmt.Fprintf(&b, "steady %v\n", w.SteadyProducers())
	return b.String()
}

// sinkText lists the sink's counts as name=count, sorted by name.
func sinkText(w *World) []string {
	var sink []string
	for k, n := range w.Sink.All() {
		sink = append(sink, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(sink)
	return sink
}

// action is one input to a world at a tick.
type action struct {
	tick int
	do   func(w *World) error
	name string
}

// randomSchedule makes a deterministic schedule of joins, leaves, crashes,
// restarts, slow records, new input and lost produce answers.
func randomSchedule(r *rand.Rand, ticks, maxClients int, static bool) []action {
	var out []action
	for t := 0; t < ticks; t++ {
		if r.Intn(6) != 0 {
			continue
		}
		a := randomFault(r, maxClients, static)
		a.tick = t
		out = append(out, a)
	}
	return out
}

// randomFault is one of randomSchedule's actions, by one of C1 to
// C<maxClients>: a join (a static member's on half of them when static),
// close, crash, restart, slow record, new input or lost produce answer.
func randomFault(r *rand.Rand, maxClients int, static bool) action {
	c := fmt.Sprintf("C%d", 1+r.Intn(maxClients))
	var a action
	switch r.Intn(9) {
	case 0, 1:
		st := static && r.Intn(2) == 0
		a = action{do: func(w *World) error { return w.Join(c, st, nil) }, name: "join " + c}
	case 2:
		a = action{do: func(w *World) error { return w.Close(c) }, name: "close " + c}
	case 3:
		a = action{do: func(w *World) error { return w.CrashNow(c) }, name: "crash now " + c}
	case 4:
		n := 1 + r.Intn(4)
		a = action{do: func(w *World) error { return w.CrashAfter(c, n) }, name: fmt.Sprintf("crash %s after %d", c, n)}
	case 5:
		a = action{do: func(w *World) error { return w.Restart(c) }, name: "restart " + c}
	case 6:
		a = action{do: func(w *World) error { return w.Slow(c) }, name: "slow " + c}
	case 7:
		n := 1 + r.Intn(5)
		a = action{do: func(w *World) error {
			tps := w.Layout().Inputs()
			return w.ProduceInput(tps[n%len(tps)], n)
		}, name: fmt.Sprintf("produce %d", n)}
	case 8:
		a = action{do: func(w *World) error {
			w.Drop(DropRule{Type: Produce, Response: true, To: c, Count: 1})
			return nil
		}, name: "drop produce response to " + c}
	}
	return a
}

// runSchedule applies the schedule, checking invariants after every tick.
// Actions that the world refuses (crash a member that is not running) are
// part of the test: they must leave the world unchanged.
func runSchedule(t *testing.T, w *World, sched []action, ticks int) {
	t.Helper()
	runScheduleWatching(t, w, sched, ticks, nil)
}

// runScheduleWatching is runSchedule, calling watch (if any) after every
// tick's check.
func runScheduleWatching(t *testing.T, w *World, sched []action, ticks int, watch func()) {
	t.Helper()
	c := NewChecker()
	i := 0
	for w.Tick < ticks {
		for i < len(sched) && sched[i].tick <= w.Tick {
			before := fingerprint(w)
			if err := sched[i].do(w); err != nil && fingerprint(w) != before {
				t.Fatalf("tick %d: %s failed (%v) but changed the world", w.Tick, sched[i].name, err)
			}
			i++
		}
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatalf("%v (schedule so far: %s)", err, names(sched[:i]))
		}
		if watch != nil {
			watch()
		}
	}
}

func names(s []action) string {
	var out []string
	for _, a := range s {
		out = append(out, fmt.Sprintf("t%d %s", a.tick, a.name))
	}
	return strings.Join(out, "; ")
}

// settle runs until the group is settled, every live member has caught up
// and no transaction is open, or the bound.
//
// A commit that failed on a partition the member kept (during its own
// rebalance, say) is made good only by its next commit, as in Kafka; so
// after 100 ticks in which no record was processed the traffic goes on:
// one more record on each lagging partition. Only then: a member still
// working through a backlog would otherwise be fed as fast as it reads
// (FuzzWideSchedules seed 522: one transactional member, a record a poll
// and 9 ticks a transaction, eleven partitions nudged every 100 ticks,
// its lag of 266 never falling). Every 100 ticks too, C1 is started
// again if no member is running (ensureRunning): a process may stop after
// the faults did, of one of them (FuzzWideSchedules seed 174: a static
// member killed and restarted at once is refused UNRELEASED_INSTANCE_ID,
// fatal to Kafka's consumer, after ensureMember saw it running).
func settle(t *testing.T, w *World, bound int) bool {
	t.Helper()
	c := NewChecker()
	processed := w.Processed()
	for i := 0; i < bound; i++ {
		if w.GroupSettled() && caughtUp(w) {
			return true
		}
		if i%100 == 99 {
			ensureRunning(t, w)
			if w.Processed() == processed {
				for _, tp := range w.layout.Inputs() {
					if w.Lag(tp) > 0 {
						w.ProduceInput(tp, 1)
					}
				}
			}
			processed = w.Processed()
		}
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatal(err)
		}
	}
	return false
}

func caughtUp(w *World) bool { return w.CaughtUp() }

// settleOrChurn is settle after random faults: it reports whether the
// group settled and caught up within bound ticks. A world that did not
// fails the test (what names the case), unless kafkaChurn tells Kafka's
// own churn apart: classic members removed, one after another, while busy
// with their batches, as their settings make Kafka's too; settle no
// longer feeds a working group records, which had broken such a churn by
// chance (long property seed 522, TestPropertyDeliveryGuarantees
// classic-after-31).
func settleOrChurn(t *testing.T, w *World, bound int, what string) bool {
	t.Helper()
	if settle(t, w, bound) {
		return true
	}
	n, ok := kafkaChurn(w, w.Tick-churnWindow)
	if !ok {
		t.Fatalf("%snot settled and caught up %d ticks after the faults (group %s, lag %d, pending %v)", what, bound, w.Group.State(), totalLag(w), w.Pending())
	}
	t.Logf("%snot settled, as in Kafka: each of the %d members removed in the last %d ticks was a running classic member removed while busy with its batch (kafkaChurn)", what, n, churnWindow)
	return false
}

func TestCloneIsIndependentAndExact(t *testing.T) {
	// Seed 7's default world committing after processing, twice: the
	// reference and the one cloned.
	spec := worldSpec{commit: fixed(CommitAfter), ticks: 200, clients: 4, static: fixed(true)}
	sc := seedWorld(t, 7, spec)
	ref, sched := sc.w, sc.sched
	runSchedule(t, ref, sched, 200)

	w := seedWorld(t, 7, spec).w
	var first, rest []action
	for _, a := range sched {
		if a.tick < 80 {
			first = append(first, a)
		} else {
			rest = append(rest, a)
		}
	}
	runSchedule(t, w, first, 80)
	snap := w.Clone()
	// The copy taken at 80, driven differently, must not disturb the original...
	other := snap.Clone()
	runSchedule(t, other, randomSchedule(rand.New(rand.NewSource(99)), 200, 4, false), 200)
	runSchedule(t, w, rest, 200)
	if fingerprint(w) != fingerprint(ref) {
		t.Fatal("a world with a clone taken and driven elsewhere ended differently from one never cloned")
	}
	// ...and the snapshot, driven the same way, ends exactly as the original.
	runSchedule(t, snap, rest, 200)
	if a, b := fingerprint(snap), fingerprint(ref); a != b {
		t.Fatalf("the clone ended differently:\n%s", firstDiff(a, b))
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(al), len(bl))
}

func TestSameInputsSameTrace(t *testing.T) {
	// A random topology with the default settings, and static joins.
	spec := worldSpec{topology: randomTopology, ticks: 150, clients: 5, static: fixed(true)}
	for seed := 1; seed <= 5; seed++ {
		sa, sb := seedWorld(t, seed, spec), seedWorld(t, seed, spec)
		if names(sa.sched) != names(sb.sched) {
			t.Fatalf("seed %d: the same seed gave two schedules", seed)
		}
		a, b := sa.w, sb.w
		runSchedule(t, a, sa.sched, 150)
		runSchedule(t, b, sb.sched, 150)
		if fingerprint(a) != fingerprint(b) {
			t.Fatalf("seed %d: the same schedule gave two different worlds", seed)
		}
	}
}

// TestPropertyRandomSchedules: random topologies and fault schedules under
// every assignor and commit mode, invariants checked on every tick; when
// the group settles with equal subscriptions, the sticky assignors leave it
// balanced.
func TestPropertyRandomSchedules(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	for _, proto := range protocols {
		for seed := 0; seed < seeds; seed++ {
			randomScheduleCase(t, proto, seed)
		}
	}
}

// protocols are the group protocols the property tests run under.
var protocols = []GroupType{ClassicGroup, ConsumerGroup}

// randomScheduleCase runs seed's propertyCase world through 250 ticks of
// faults by C1 to C6, static joins among them.
func randomScheduleCase(t *testing.T, proto GroupType, seed int) {
	{
		spec := propertyCase(proto)
		spec.ticks, spec.clients, spec.static = 250, 6, fixed(true)
		sc := seedWorld(t, seed, spec)
		w, cfg := sc.w, sc.cfg
		t.Run(fmt.Sprintf("%s-seed%d-%s-%s", proto, seed, cfg.Client.Assignor, cfg.Client.Commit), func(t *testing.T) {
			runSchedule(t, w, sc.sched, 250)
			ensureMember(t, w)
			if !settleOrChurn(t, w, 5000, "") {
				return
			}
			// The sticky assignors and the uniform one balance equal
			// subscriptions within one partition.
			if w.Group.Type() == ClassicGroup && strings.Contains(w.Group.Describe().Assignor, "sticky") || w.Group.Type() == ConsumerGroup && w.Group.Describe().Assignor == "uniform" {
				counts := []int{}
				for _, gm := range w.Group.Members() {
					counts = append(counts, len(gm.Assignment))
				}
				sort.Ints(counts)
				if len(counts) > 0 && counts[len(counts)-1]-counts[0] > 1 {
					t.Errorf("%s left the group unbalanced: %v partitions per member", cfg.Client.Assignor, counts)
				}
			}
		})
	}
}

// TestPropertyDeliveryGuarantees: random crashes, restarts, slow records
// and lost produce answers. Commit after processing never loses a record,
// commit before never duplicates one, and transactions read with
// read_committed do neither.
func TestPropertyDeliveryGuarantees(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	type mode struct {
		name   string
		commit CommitMode
		txn    bool
		idem   bool
	}
	for _, md := range []mode{{"after", CommitAfter, false, false}, {"before", CommitBefore, false, true}, {"transactions", CommitAfter, true, true}} {
		for i := 0; i < 2*seeds; i++ {
			seed, proto := i%seeds, protocols[i/seeds]
			// Each seed is a world of its own (its own rand source, config and
			// world, made in the subtest): the seeds run side by side.
			t.Run(fmt.Sprintf("%s-%s-%d", proto, md.name, seed), func(t *testing.T) {
				t.Parallel()
				// The default topology under the mode's commit and producer
				// (a lost produce answer with a plain producer duplicates by
				// design, demo 8: at-most-once here uses the idempotent one),
				// range and cooperative-sticky by turns, C2 on the other
				// protocol on seed%4 == 2, static joins on seed%3 == 0.
				sc := seedWorld(t, seed, worldSpec{
					source:        1000,
					commit:        fixed(md.commit),
					idempotent:    fixed(md.idem),
					transactional: fixed(md.txn),
					assignor:      cycle(1, "range", "cooperative-sticky"),
					protocol:      fixed(proto),
					mixed:         seedsAt(4, 2),
					ticks:         200, clients: 4, static: seedsAt(3, 0),
				})
				w := sc.w
				runSchedule(t, w, sc.sched, 200)
				ensureMember(t, w)
				// A churning world is checked as it is: neither guarantee
				// waits for the group to settle.
				settled := settleOrChurn(t, w, 6000, "")
				iso := "read_uncommitted"
				if md.txn {
					iso = "read_committed"
				}
				c := w.Delivery(iso)
				switch md.name {
				case "after":
					if c.Lost > 0 {
						t.Errorf("commit after processing lost %v", c.LostNames)
					}
				case "before":
					if c.Duplicates > 0 {
						t.Errorf("commit before processing duplicated %v", c.DuplicateNames)
					}
				case "transactions":
					if c.Lost > 0 || c.Duplicates > 0 {
						t.Errorf("transactions with read_committed: lost %v, duplicates %v", c.LostNames, c.DuplicateNames)
					}
					// Every input record has exactly one visible invoice,
					// once the group has consumed them all.
					if !settled {
						return
					}
					seen := map[string]int{}
					for _, rec := range w.ReadTopic("invoices", "read_committed") {
						seen[rec.Source]++
					}
					for _, tp := range w.layout.Inputs() {
						for off := 0; off < w.broker.Log(tp).HW(); off++ {
							if n := seen[w.Layout().Name(tp, off)]; n != 1 {
								t.Errorf("%s has %d visible invoices, want exactly 1", w.Layout().Name(tp, off), n)
							}
						}
					}
				}
			})
		}
	}
}

// ensureMember closes the fault window (pending crashes are called off),
// starts C1 again if no member is running, and lets traffic go on (one more
// record per input partition): a commit that failed on a partition the
// member kept is only made good by its next commit, as in Kafka.
func ensureMember(t *testing.T, w *World) {
	for _, m := range w.procs {
		m.CrashAfter(-1)
	}
	for _, tp := range w.layout.Inputs() {
		if err := w.ProduceInput(tp, 1); err != nil {
			t.Fatal(err)
		}
	}
	ensureRunning(t, w)
}

// ensureRunning starts C1 again (or for the first time) if no member
// process is running and staying.
func ensureRunning(t *testing.T, w *World) {
	t.Helper()
	for _, m := range w.current {
		if m.Alive && !m.Zombie && !m.Hooks().Closing() {
			return
		}
	}
	if err := w.Join("C1", false, nil); err != nil {
		if err := w.Restart("C1"); err != nil {
			t.Fatal(err)
		}
	}
}

func totalLag(w *World) int {
	n := 0
	for _, tp := range w.layout.Inputs() {
		n += w.Lag(tp)
	}
	return n
}

var long = flag.Bool("long", false, "run the property tests over thousands of seeds")

// FuzzSchedules: a seed picks a topology, settings and a fault schedule;
// the invariants must hold on every tick and the group must settle and
// catch up once the faults stop. go test ./sim -fuzz FuzzSchedules
func FuzzSchedules(f *testing.F) {
	for _, s := range []int64{1, 2, 3, 42, 1000} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		// Every knob drawn from the seed's rand: topology, assignor, commit
		// mode, sticky rules, transactions (one in 3), 0 to 9 records per
		// partition, group protocol, static joins (one in 2).
		sc := seedWorld(t, int(seed), scheduleFuzzSpec())
		w := sc.w
		runSchedule(t, w, sc.sched, 200)
		ensureMember(t, w)
		settleOrChurn(t, w, 8000, fmt.Sprintf("seed %d: ", seed))
	})
}

// scheduleFuzzSpec is FuzzSchedules' world: topology, assignor, commit
// mode, sticky rules, transactions (one in 3), 0 to 9 records per
// partition and group protocol drawn, with 200 ticks of faults by C1 to C6
// (static joins on one seed in 2).
func scheduleFuzzSpec() worldSpec {
	return worldSpec{
		topology:      randomTopology,
		assignor:      drawn(allAssignors...),
		commit:        drawn(CommitAuto, CommitAfter, CommitBefore),
		kafkaRules:    drawn(false, true),
		transactional: oneIn(3),
		records:       span{0, 10},
		protocol:      drawn(protocols...),
		ticks:         200, clients: 6, static: oneIn(2),
	}
}

// TestLongProperty is the flag-gated long run: go test ./sim -run LongProperty -long
func TestLongProperty(t *testing.T) {
	if !*long {
		t.Skip("run with -long for thousands of seeds")
	}
	// Topology, assignor, commit mode, transactions (one in 3) and static
	// joins (one in 2) drawn; the protocols by turns.
	spec := worldSpec{
		topology:      randomTopology,
		assignor:      drawn(allAssignors...),
		commit:        drawn(CommitAuto, CommitAfter, CommitBefore),
		transactional: oneIn(3),
		protocol:      cycle(1, protocols...),
		ticks:         300, clients: 6, static: oneIn(2),
	}
	for seed := 0; seed < 3000; seed++ {
		sc := seedWorld(t, seed, spec)
		w := sc.w
		runSchedule(t, w, sc.sched, 300)
		ensureMember(t, w)
		settleOrChurn(t, w, 8000, fmt.Sprintf("seed %d: ", seed))
	}
}
