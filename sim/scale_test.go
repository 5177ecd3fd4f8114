package sim

import (
	"flag"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
)

// Worlds of real groups' size (issue 26): 10,000 members joining, and a
// group forming over 1,000,000 partitions, every tick checked by the
// Checker. The full sizes take minutes on this project's 2-core machine
// (most of it Kafka's own cost: a consumer group computes its target
// assignment at each of the 10,000 joins, as GroupMetadataManager does),
// so they run with -scale; the suite runs the same tests smaller
// (members a thirtieth, partitions a hundredth: seconds).
var scale = flag.Bool("scale", false, "run the scale tests at full size: 10,000 members, 1,000,000 partitions (minutes)")

// scaled is n, or n/div without -scale.
func scaled(n, div int) int {
	if *scale {
		return n
	}
	return n / div
}

// settleChecked steps w until its group is settled (at least 3 ticks), checking
// the invariants every tick, and returns the ticks it took.
func settleChecked(t testing.TB, w *World, bound int) int {
	t.Helper()
	c := NewChecker()
	k := 0
	for ; k < 3 || !w.GroupSettled(); k++ {
		if k == bound {
			t.Fatalf("not settled after %d ticks (state %s)", bound, w.Group.State())
		}
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatalf("tick %d: %v", w.Tick, err)
		}
	}
	return k
}

// scaleConfig is the default config, with no records (the shapes, not
// the traffic, are under test) and the protocol given.
func scaleConfig(t testing.TB, protocol string) Config {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	if err := cfg.Set("", "group.protocol", protocol); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// checkEveryPartitionOwnedOnce: every input partition has exactly one
// owner among the group's members, and every member holds some.
func checkEveryPartitionOwnedOnce(t *testing.T, w *World, members int) {
	t.Helper()
	owners := make([]int, len(w.Layout().Inputs()))
	holding := 0
	for _, m := range w.Group.Members() {
		if len(m.Assignment) > 0 {
			holding++
		}
		for _, tp := range m.Assignment {
			i, ok := w.Layout().Number(tp)
			if !ok {
				t.Fatalf("%s owns %s, which the world does not have", m.MemberID, tp)
			}
			owners[i]++
		}
	}
	for i, n := range owners {
		if n != 1 {
			t.Fatalf("%s has %d owners", w.Layout().Inputs()[i], n)
		}
	}
	if len(w.Group.Members()) != members || holding != min(members, len(owners)) {
		t.Fatalf("%d members, %d holding partitions; want %d", len(w.Group.Members()), holding, members)
	}
}

// TestTenThousandMembersJoin: 10,000 members (333 without -scale) join
// an empty group over twice as many partitions in one tick, under each
// protocol: one group, every partition owned once, invariants every tick.
func TestTenThousandMembersJoin(t *testing.T) {
	n := scaled(10_000, 30)
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			w, err := New(bigTopology(0, 1, 2*n), scaleConfig(t, protocol))
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= n; i++ {
				if err := w.Join("C"+strconv.Itoa(i), false, nil); err != nil {
					t.Fatal(err)
				}
			}
			settleChecked(t, w, 1000)
			checkEveryPartitionOwnedOnce(t, w, n)
			// one more joins a group of n: it gets its share
			if err := w.Join("C"+strconv.Itoa(n+1), false, nil); err != nil {
				t.Fatal(err)
			}
			settleChecked(t, w, 1000)
			checkEveryPartitionOwnedOnce(t, w, n+1)
		})
	}
}

// TestMillionPartitionsFormAGroup: 10 members form a group over 1,000,000
// partitions (10,000 without -scale) in ten topics, under each protocol.
func TestMillionPartitionsFormAGroup(t *testing.T) {
	p := scaled(1_000_000, 100)
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			w, err := New(bigTopology(0, 10, p/10), scaleConfig(t, protocol))
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 10; i++ {
				if err := w.Join("C"+strconv.Itoa(i), false, nil); err != nil {
					t.Fatal(err)
				}
			}
			settleChecked(t, w, 1000)
			checkEveryPartitionOwnedOnce(t, w, 10)
		})
	}
}

// heapObjects is the heap's objects now, live or not yet collected (read
// without stopping the world).
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// liveHeap is the heap a full collection leaves.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
