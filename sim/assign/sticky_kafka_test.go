package assign

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// claimInputs are random groups for the Kafka rules' claim handling: up to
// 60 members over up to 8 topics of up to 300 partitions, equal
// subscriptions or not, claims that overlap (one generation or several),
// repeat, name unknown topics or partitions, and come sorted, shuffled or
// grouped by topic.
func claimInputs(seed uint64, n int) []Input {
	r := rand.New(rand.NewPCG(seed, seed+1))
	var out []Input
	for range n {
		in := Input{Partitions: map[string]int{}}
		var topics []string
		for j := range 1 + r.IntN(8) {
			name := fmt.Sprintf("t%d", j)
			topics = append(topics, name)
			in.Partitions[name] = r.IntN(300)
		}
		shared := someTopics(r, append(slices.Clone(topics), "ghost"))
		equal := r.IntN(3) > 0
		for j := range 1 + r.IntN(60) {
			m := Member{MemberID: fmt.Sprintf("C%d-%d", j+1, 1+r.IntN(3)), Generation: -1, Topics: shared}
			if !equal {
				m.Topics = someTopics(r, topics)
			}
			if r.IntN(5) > 0 {
				m.Generation = 1 + r.IntN(3)
			}
			in.Members = append(in.Members, m)
		}
		for _, t := range topics {
			for p := range in.Partitions[t] {
				for range r.IntN(5) { // up to four claimants: with three, order matters
					k := r.IntN(len(in.Members))
					in.Members[k].Owned = append(in.Members[k].Owned, TopicPartition{Topic: t, Partition: p})
				}
			}
		}
		for i := range in.Members {
			o := in.Members[i].Owned
			switch r.IntN(4) {
			case 0:
				r.Shuffle(len(o), func(a, b int) { o[a], o[b] = o[b], o[a] })
			case 1:
				SortPartitions(o)
			case 2:
				if len(o) > 0 {
					o = append(o, o[r.IntN(len(o))], TopicPartition{Topic: "ghost", Partition: 1}, TopicPartition{Topic: "t0", Partition: -1}, TopicPartition{Topic: "t0", Partition: 1000})
				}
			}
			in.Members[i].Owned = o
		}
		out = append(out, in)
	}
	return out
}

// Settling the claims a block of partitions at a time gives the answer of
// settling them member by member in one block: blocks of 1, 7 and 64
// partitions against one block holding every partition.
func TestKafkaClaimBlocks(t *testing.T) {
	inputs := claimInputs(31, 300)
	defer func(b int) { claimBlock = b }(claimBlock)
	coop := cooperativeStickyAssignor{rules: KafkaRules}
	var want []string
	for _, in := range inputs {
		want = append(want, spellAll(kafkaEager.Assign(in))+spellAll(coop.Assign(in)))
	}
	for _, block := range []int{1, 7, 64} {
		claimBlock = block
		for i, in := range inputs {
			if got := spellAll(kafkaEager.Assign(in)) + spellAll(coop.Assign(in)); got != want[i] {
				t.Fatalf("blocks of %d, input %d: %s\nwant %s\n(%+v)", block, i, got, want[i], in)
			}
		}
	}
}

// The cooperative Kafka rules adjust the sticky target on the way; the
// answer is CooperativeAdjust of that target, which works from the
// Assignment and the claims alone.
func TestKafkaCooperativeIsAdjustedTarget(t *testing.T) {
	coop := cooperativeStickyAssignor{rules: KafkaRules}
	inputs := claimInputs(32, 400)
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		inputs = append(inputs, largerInput(r, r.IntN(2) == 0))
	}
	for i, in := range inputs {
		want := CooperativeAdjust(in, kafkaEager.Assign(in))
		if got := coop.Assign(in); spellAll(got) != spellAll(want) {
			t.Fatalf("input %d: %s\nwant %s\n(%+v)", i, spellAll(got), spellAll(want), in)
		}
	}
}
