package broker

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestSortWakesAsSlicesSort checks the radix sort of woken pairs against
// slices.Sort: few and many pairs, partition numbers and places of every
// width the digits split (ties included), and the scratch reused from a
// longer sort.
func TestSortWakesAsSlicesSort(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var b Broker
	for round := range 200 {
		n := rng.Intn(5000)
		if round%10 == 0 {
			n = 100_000
		}
		maxNum := 1 << uint(rng.Intn(31)+1)
		maxAt := 1 << uint(rng.Intn(31)+1)
		wakes := make([]wakePair, n)
		for i := range wakes {
			wakes[i] = newWakePair(rng.Intn(maxNum), rng.Intn(maxAt)-1)
			if i > 0 && rng.Intn(8) == 0 {
				wakes[i] = wakes[rng.Intn(i)] // a tie
			}
		}
		want := slices.Clone(wakes)
		slices.Sort(want)
		b.sortWakes(wakes)
		if !slices.Equal(wakes, want) {
			t.Fatalf("round %d: %d pairs (numbers < %d, places < %d) sorted differently from slices.Sort", round, n, maxNum, maxAt)
		}
	}
}

// TestTopicRunNumbersAsLayout checks topicRun against topo.Layout.Number
// on partitions of input topics (more than eight: the layout hashes
// them), the output topic and names the world does not have, in runs and
// alone, in and out of range.
func TestTopicRunNumbersAsLayout(t *testing.T) {
	var topics []topo.TopicSpec
	for i := range 10 {
		topics = append(topics, topo.TopicSpec{Name: string(rune('a'+i)) + "in", Partitions: 3 + i})
	}
	layout := topo.New(topo.Topology{Inputs: topics, Output: topo.TopicSpec{Name: "out", Partitions: 4}})
	names := []string{"ain", "bin", "jin", "out", "nope", ""}
	rng := rand.New(rand.NewSource(3))
	var run topicRun
	for range 20_000 {
		tp := wire.TopicPartition{Topic: names[rng.Intn(len(names))], Partition: rng.Intn(16) - 2}
		if rng.Intn(4) == 0 {
			run = topicRun{}
		}
		gotN, gotOK := run.number(layout, tp)
		wantN, wantOK := layout.Number(tp)
		if gotN != wantN || gotOK != wantOK {
			t.Fatalf("%v: topicRun numbers it (%d, %v), Layout.Number (%d, %v)", tp, gotN, gotOK, wantN, wantOK)
		}
	}
}
