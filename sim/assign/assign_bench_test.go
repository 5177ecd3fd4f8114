package assign

import (
	"fmt"
	"testing"
)

// The size of Kafka's testLargeAssignmentAndGroupWithUniformSubscription:
// 2,000 members, 500 topics of 2,000 partitions (1,000,000 partitions), every
// member subscribed to every topic.
const (
	benchMembers = 2000
	benchTopics  = 500
	benchParts   = 2000
)

func benchGroup(members int) Input {
	topics := make([]string, benchTopics)
	partitions := make(map[string]int, benchTopics)
	for i := range topics {
		topics[i] = fmt.Sprintf("t%03d", i)
		partitions[topics[i]] = benchParts
	}
	in := Input{Partitions: partitions, Members: make([]Member, members)}
	for i := range in.Members {
		in.Members[i] = Member{MemberID: fmt.Sprintf("C%d-1", i+1), Topics: topics, Generation: -1}
	}
	return in
}

// benchJoin is a balanced group of 1,999 members (as the assignor built it) that member
// 2,000 joins with nothing owned.
func benchJoin(a Assignor) Input {
	in := benchGroup(benchMembers - 1)
	in = nextRound(in, a.Assign(in), 1)
	joiner := benchGroup(benchMembers).Members[benchMembers-1]
	in.Members = append(in.Members, joiner)
	return in
}

func runBench(b *testing.B, a Assignor, in Input, joiner string) {
	b.ReportAllocs()
	var got Assignment
	for b.Loop() {
		got = a.Assign(in)
	}
	b.StopTimer()
	if len(got) != len(in.Members) {
		b.Fatalf("%d entries for %d members", len(got), len(in.Members))
	}
	if lo, hi := counts(got); a.Name() != "range" && hi-lo > 1 {
		b.Fatalf("unbalanced: %d..%d", lo, hi)
	}
	if joiner != "" && len(got[joiner]) != benchTopics*benchParts/benchMembers {
		b.Fatalf("joiner got %d partitions", len(got[joiner]))
	}
}

func benchSticky(b *testing.B, a Assignor) {
	b.Run("fresh", func(b *testing.B) { runBench(b, a, benchGroup(benchMembers), "") })
	b.Run("join", func(b *testing.B) {
		runBench(b, a, benchJoin(a), fmt.Sprintf("C%d-1", benchMembers))
	})
}

func BenchmarkStickySeed(b *testing.B)  { benchSticky(b, seedEager) }
func BenchmarkStickyKafka(b *testing.B) { benchSticky(b, kafkaEager) }

func BenchmarkRange(b *testing.B) { runBench(b, rangeAssignor{}, benchGroup(benchMembers), "") }

func BenchmarkRoundRobin(b *testing.B) {
	runBench(b, roundRobinAssignor{}, benchGroup(benchMembers), "")
}
