package sim

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The default world in steady traffic takes its Produce, Fetch and
// OffsetCommit round trips from the free lists: a tick allocates no packet
// or body of those (what is left: the produce request's value string, the
// logs' and the trace's chunks), and the lists stay small (everything that
// goes back comes out again).
func TestFreeListsRecycleTheRoundTrips(t *testing.T) {
	w := consumingWorld(100_000, 200)
	p0 := w.Packets.Len()
	allocs := testing.AllocsPerRun(2000, func() { w.Step() })
	if got := w.Packets.Len() - p0; got < 2000 {
		t.Fatalf("only %d packets in 2000 ticks: not steady traffic", got)
	}
	t.Logf("%.2f allocations a tick", allocs)
	// Without the free lists: 12 allocations a tick here (10 in BenchmarkTickDefaultWorld).
	if allocs > 4 {
		t.Errorf("%.1f allocations a tick, want at most 4", allocs)
	}
	f := w.env.FreeListsForTest() // packets, fetch reqs and resps, produce resps and reqs, commit reqs and resps
	if n := f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6]; n > 64 {
		t.Errorf("the free lists hold %d objects after 2000 ticks: something goes back that never comes out", n)
	}
	if f[2] == 0 && f[3] == 0 && f[4] == 0 {
		t.Error("no body ever went back to the free lists")
	}
	if f[5] == 0 || f[6] == 0 {
		t.Error("no OffsetCommit body ever went back to the free lists")
	}
}

// A world with packets kept (tests) recycles nothing: the kept packets and
// their bodies stay as they were sent.
func TestFreeListsIdleWhenPacketsKept(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	kept := w.env.KeepForTest()
	w.Join("C2", false, nil)
	for i := 0; i < 100; i++ {
		w.Step()
	}
	if w.env.FreeListsForTest() != [7]int{} {
		t.Fatal("a world that keeps its packets recycled some")
	}
	for id, p := range kept {
		if p.ID != id {
			t.Fatalf("kept packet %d now says it is %d: it was reused", id, p.ID)
		}
	}
}

// logOf finds every partition's own log (the log of that partition, one
// per partition, a clone's distinct from the original's), for random
// topologies, and nil for a partition the world has not.
func TestLogOfAsLogsMap(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		sc := seedWorld(t, int(seed), worldSpec{topology: randomTopology}) // a random topology, no schedule
		topo, w := sc.topo, sc.w
		c := w.Clone()
		for _, x := range []*World{w, c} {
			tps := append(append([]TopicPartition{}, x.Layout().Inputs()...), x.Layout().Outputs()...)
			seen := map[*PartitionLog]bool{}
			for _, tp := range tps {
				l := x.broker.Log(tp)
				if l == nil || l.TP != tp || seen[l] {
					t.Fatalf("seed %d: logOf(%s) is not the partition's own log", seed, tp)
				}
				seen[l] = true
				if x == c && l == w.broker.Log(tp) {
					t.Fatalf("seed %d: the clone shares the log of %s", seed, tp)
				}
			}
			for _, tp := range []TopicPartition{{Topic: "nope", Partition: 0}, {Topic: topo.Output.Name, Partition: topo.Output.Partitions}, {Topic: topo.Inputs[0].Name, Partition: -1}} {
				if got := x.broker.Log(tp); got != nil {
					t.Fatalf("seed %d: logOf(%s) found a log", seed, tp)
				}
			}
			if len(x.broker.Logs()) != len(tps) {
				t.Fatalf("seed %d: %d logs by index, %d partitions", seed, len(x.broker.Logs()), len(tps))
			}
		}
	}
}

// TestPollTimersAsEager: the max.poll.interval checks kept on the member,
// one timer standing in the queue for each (armPollTimer), give the very
// trace that a timer per check gives, with max.poll.interval.ms raised
// and lowered while members poll (low enough that checks act: members
// leave, rejoin, are fenced), and the queue stays short.
func TestPollTimersAsEager(t *testing.T) {
	run := func(proto GroupType, seed int, eager bool) (string, int) {
		defer client.SetEagerPollTimers(eager)()
		most := 0
		r := rand.New(rand.NewSource(int64(seed) * 7919))
		w := traceCaseWith(t, proto, seed, func(w *World) *World {
			if r.Intn(15) == 0 {
				client := ""
				if r.Intn(2) == 0 {
					client = fmt.Sprintf("C%d", 1+r.Intn(3))
				}
				w.Set(client, "max.poll.interval.ms", strconv.Itoa(3+r.Intn(60)))
			}
			most = max(most, w.env.Timers().Len())
			return w
		})
		return traceDump(w), most
	}
	acted := 0
	for _, proto := range protocols {
		for seed := 0; seed < 16; seed++ {
			want, eagerMost := run(proto, seed, true)
			got, lazyMost := run(proto, seed, false)
			if got != want {
				t.Fatalf("%s seed %d: the trace differs from a timer per check at %s", proto, seed, firstDiff(got, want))
			}
			if lazyMost > eagerMost {
				t.Errorf("%s seed %d: up to %d timers queued, more than the %d of a timer per check", proto, seed, lazyMost, eagerMost)
			}
			acted += strings.Count(want, "max.poll.interval")
		}
	}
	if acted == 0 {
		t.Error("no check acted in any world: the test shows nothing")
	}
}

// TestPollTimerSameStretchTwice: two checks of one stretch (a JoinGroup
// answer read in commitSync and poll() returning in the same tick) both
// fire under the keys they were given, as a timer per check does: the
// first, the one that may act, as the member's latest check (fired by the
// standing timer), the second by a timer of its own.
func TestPollTimerSameStretchTwice(t *testing.T) {
	w := consumingWorld(10, 20)
	m := w.current["C1"]
	m.Hooks().SetLeftPollAt(w.Tick)
	_, first := w.env.TimersForTest()
	m.Hooks().ArmPollTimer()
	m.Hooks().ArmPollTimer()
	var own []int
	timers, _ := w.env.TimersForTest()
	for _, tm := range timers {
		if tm.Owner == wire.OwnerClient && tm.Kind == client.TimerPollTimeoutForTest && tm.Client == "C1" && tm.Arg == 0 {
			own = append(own, tm.Seq)
		}
	}
	pollSeq, pollSince, pollQueued := m.Hooks().PollCheck()
	if pollSeq != first || pollSince != w.Tick || !pollQueued || len(own) != 1 || own[0] != first+1 {
		t.Errorf("C1's latest check has sequence number %d (stretch from %d, standing timer %v), timers of their own %v; want %d (from %d, standing) and [%d]",
			pollSeq, pollSince, pollQueued, own, first, w.Tick, first+1)
	}
}

// TestActOrderAsSortedByClient: actOrder puts any list of processes in
// (client, incarnation) order, as sorting by the strings does, in worlds
// whose processes join, restart and are cloned while they run.
func TestActOrderAsSortedByClient(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	checked := 0
	for _, proto := range protocols {
		for seed := 0; seed < 8; seed++ {
			traceCaseWith(t, proto, seed, func(w *World) *World {
				if r.Intn(40) == 0 {
					w = w.Clone()
				}
				if r.Intn(4) != 0 || len(w.procs) < 2 {
					return w
				}
				ms := slices.Clone(w.procs)
				r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
				ms = ms[:1+r.Intn(len(ms))]
				want := slices.Clone(ms)
				slices.SortFunc(want, func(a, b *Member) int {
					if a.Client != b.Client {
						return strings.Compare(a.Client, b.Client)
					}
					return a.Inc - b.Inc
				})
				w.actOrder(ms)
				for i := range ms {
					if ms[i] != want[i] {
						t.Fatalf("%s seed %d tick %d: act order %s-%d at %d, want %s-%d", proto, seed, w.Tick, ms[i].Client, ms[i].Inc, i, want[i].Client, want[i].Inc)
					}
				}
				checked++
				return w
			})
		}
	}
	if checked < 500 {
		t.Errorf("only %d lists checked", checked)
	}
}

// TestHasLiveMemberAsList: HasLiveMember, a walk of the processes, says
// what LiveMembers' list does, on every tick of worlds whose members
// join, crash, restart and turn zombie.
func TestHasLiveMemberAsList(t *testing.T) {
	seen := map[bool]int{}
	for _, proto := range protocols {
		for seed := 0; seed < 12; seed++ {
			traceCaseWith(t, proto, seed, func(w *World) *World {
				if got, want := w.HasLiveMember(), len(w.LiveMembers()) > 0; got != want {
					t.Fatalf("%s seed %d tick %d: HasLiveMember %v, LiveMembers %v", proto, seed, w.Tick, got, w.LiveMembers())
				}
				seen[w.HasLiveMember()]++
				return w
			})
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Errorf("worlds with and without a live member: %v; the test needs both", seen)
	}
}

// TestCaughtUpAsLag: inputsCommitted (CaughtUp's first condition), which
// reads each input partition's log and commit by slot, says what every
// partition's Lag says, on every tick of random worlds.
func TestCaughtUpAsLag(t *testing.T) {
	seen := map[bool]int{}
	for _, proto := range protocols {
		for seed := 0; seed < 12; seed++ {
			traceCaseWith(t, proto, seed, func(w *World) *World {
				lagless := true
				for _, tp := range w.Layout().Inputs() {
					lagless = lagless && w.Lag(tp) == 0
				}
				if got := w.inputsCommitted(); got != lagless {
					t.Fatalf("%s seed %d tick %d: inputsCommitted %v, every Lag 0 %v", proto, seed, w.Tick, got, lagless)
				}
				seen[lagless]++
				return w
			})
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Errorf("worlds lagging and not: %v; the test needs both", seen)
	}
}
