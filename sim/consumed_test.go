package sim

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// TestMain runs the package's tests with checkConsumed on: every update
// of a world's consumed set (every tick of a rebalance, every question
// between ticks, every Checker.Check) recounts from scratch and panics on
// a difference, so each world the tests step proves that the processes
// the World marks touched are all those whose fetch set moved; and with
// broker.VerifyCoversForTest: every run of a batch's claimed input range
// (wire.SrcRun.From) is checked against the partitioner, so each world
// the tests step proves the producers' claims the folds trust; and with
// broker.VerifyFetchSlotsForTest: every number a member's Fetch gives a
// partition (wire.FetchRequest.Slots) is checked against the layout's as
// the leader answers. Benchmarks run without them (they would be their
// cost).
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		checkConsumed = true
		broker.VerifyCoversForTest()     // on until the process ends
		broker.VerifyFetchSlotsForTest() // so is this
	}
	os.Exit(m.Run())
}

// Random worlds under both protocols, each with joins, closes, crashes
// (at once and after N records), restarts, slow records past the poll
// interval, new input, lost answers, graceful restarts, rolls and
// migrations (a member restarted under the other group.protocol), some
// with steady traffic: at every tick the consumed set, brought up to date
// from the processes touched since its last look (Checker.Check under
// checkConsumed), equals a count from scratch. Most of those looks are
// incremental (a few processes touched), which is what this proves.
func TestConsumedSetFollowsRandomWorlds(t *testing.T) {
	if !checkConsumed {
		t.Skip("checkConsumed is off (benchmarks)")
	}
	incremental, full := 0, 0
	for _, proto := range []GroupType{ClassicGroup, ConsumerGroup} {
		for seed := 1; seed <= 8; seed++ {
			spec := propertyCase(proto)
			spec.source = 2600
			spec.ticks, spec.clients, spec.static = 300, 6, fixed(true)
			sc := seedWorld(t, seed, spec)
			sched := deploySchedule(sc.r, sc.sched, 300, 6)
			other := string(ConsumerGroup)
			if proto == ConsumerGroup {
				other = string(ClassicGroup)
			}
			for k := 0; k < 3; k++ {
				c, at := fmt.Sprintf("C%d", 1+sc.r.Intn(6)), sc.r.Intn(300)
				sched = append(sched, action{tick: at, name: "migrate " + c, do: func(w *World) error {
					if err := w.Set(c, "group.protocol", other); err != nil {
						return err
					}
					return w.Restart(c)
				}})
			}
			sort.SliceStable(sched, func(i, j int) bool { return sched[i].tick < sched[j].tick })
			w := sc.w
			if seed%3 == 0 {
				if err := w.ProduceRate(w.Layout().Inputs()[:2], Rate{Records: 1, Ticks: 3}); err != nil {
					t.Fatal(err)
				}
			}
			c, i := NewChecker(), 0
			for w.Tick < 400 {
				for i < len(sched) && sched[i].tick <= w.Tick {
					_ = sched[i].do(w) // a refused action is part of the schedule
					i++
				}
				w.Step()
				// What the Checker's look below will look at: the touched
				// processes, or every live one.
				if cs := &w.scratch.consumed; cs.valid && !cs.all && len(cs.touched) < len(cs.live) {
					incremental++
				} else {
					full++
				}
				if err := c.Check(w); err != nil {
					t.Fatalf("%s seed %d: %v", proto, seed, err)
				}
			}
		}
	}
	if incremental < 4*full {
		t.Errorf("%d incremental looks and %d full ones: the test did not exercise the touched processes", incremental, full)
	}
}

// A process changed behind the World's back (its client's method called
// directly, not through a World entry point that marks it touched) is
// not looked at again, and checkConsumed's recount says so: the check
// above can fail.
func TestConsumedSetCheckCatchesAnUnmarkedChange(t *testing.T) {
	if !checkConsumed {
		t.Skip("checkConsumed is off (benchmarks)")
	}
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		w.Step()
	}
	c := &w.scratch.consumed
	c.update(&w.processTable, w.layout) // valid, nothing touched
	if len(w.Member("C1").Fetchable()) == 0 {
		t.Fatal("C1 fetches nothing: the test needs a member that fetches")
	}
	w.Member("C1").Crash(false) // no touch
	defer func() {
		r := recover()
		if err, ok := r.(error); !ok || !strings.Contains(err.Error(), "consumedSet:") {
			t.Fatalf("an unmarked crash of C1: update recovered %v, want the recount's difference", r)
		}
	}()
	c.update(&w.processTable, w.layout)
	t.Fatal("an unmarked crash of C1 went unnoticed")
}

// pausedSeen.merge is mergePartitions, the entry's list itself when
// nothing is new: over random ticks of paused partitions, entries that
// change (a new rebalance, a list replaced behind its back as a copy of
// the world's meter would be), against mergePartitions by name.
func TestPausedSeenMergesAsMergePartitions(t *testing.T) {
	layout := topo.New(bigTopology(3, 3, 70))
	inputs := layout.Inputs()
	r := rand.New(rand.NewSource(26))
	var s pausedSeen
	full := false
	entries := []PauseEntry{{Incarnation: 1, Generation: 1, Partitions: []TopicPartition{}}}
	var paused []TopicPartition
	var idx []int32
	var gen uint64 // idx's name (scratch.pausedGen), 0 unknown
	for tick := 0; tick < 2000; tick++ {
		switch r.Intn(40) {
		case 0: // a new rebalance
			entries = append(entries, PauseEntry{Incarnation: 1, Generation: len(entries) + 1, Partitions: []TopicPartition{}})
		case 1: // the list copied (as World.clone copied it before it shared them)
			e := &entries[len(entries)-1]
			e.Partitions = slices.Clone(e.Partitions)
		case 2: // back to an earlier entry
			if len(entries) > 1 {
				entries[0], entries[len(entries)-1] = entries[len(entries)-1], entries[0]
			}
		}
		e := &entries[len(entries)-1]
		if r.Intn(3) > 0 || gen == 0 {
			// A new paused list; else the last one again, under its
			// name, as pausedIndexes gives it while nothing moved (after
			// any of the cases above too).
			paused, idx, gen = nil, nil, 0
			p := r.Float64() / 3
			if r.Intn(30) == 0 {
				p = 1 // every partition, as an eager rebalance pauses them
			}
			for i, tp := range inputs {
				if r.Float64() < p {
					paused, idx = append(paused, tp), append(idx, int32(i))
				}
			}
			if r.Intn(4) > 0 {
				gen = nextGen() // named; else unknown (0)
			}
		}
		want := mergePartitions(e.Partitions, paused)
		var buf []TopicPartition
		got := s.merge(layout, e, idx, gen, &buf)
		if !slices.Equal(got, want) {
			t.Fatalf("tick %d: merge gave %d partitions, mergePartitions %d", tick, len(got), len(want))
		}
		if (first(want) == first(e.Partitions)) != (first(got) == first(e.Partitions)) {
			t.Fatalf("tick %d: merge and mergePartitions disagree on whether anything was new", tick)
		}
		if len(got) == len(inputs) && first(got) != first(e.Partitions) && &got[0] != &inputs[0] {
			t.Fatalf("tick %d: an entry of every input partition is a list of its own, not the layout's", tick)
		}
		full = full || len(got) == len(inputs)
		e.Partitions = got
	}
	if !full {
		t.Fatal("no entry ever held every input partition")
	}
}
