package server

import (
	"fmt"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// The size of Kafka's testLargeAssignmentAndGroupWithUniformSubscription (and
// of package assign's benchmarks): 2,000 members, 500 topics of 2,000
// partitions (1,000,000 partitions). Benchmarks run only under -bench, so the
// normal test command stays fast.
const (
	benchMembers = 2000
	benchTopics  = 500
	benchParts   = 2000
)

// benchGroup is members of which every one subscribes to every topic, or, with
// split, even members to the first half of the topics and odd ones to all.
func benchGroup(members int, split bool) Input {
	in := Input{Topics: make([]Topic, benchTopics), Members: make([]Member, members)}
	all := make([]string, benchTopics)
	for i := range in.Topics {
		in.Topics[i] = Topic{Name: fmt.Sprintf("t%03d", i), Partitions: benchParts}
		all[i] = in.Topics[i].Name
	}
	for i := range in.Members {
		subs := all
		if split && i%2 == 0 {
			subs = all[:benchTopics/2]
		}
		in.Members[i] = Member{MemberID: fmt.Sprintf("C%d-1", i+1), Topics: subs}
	}
	return in
}

// benchJoin is a group of 1,999 members holding what the assignor gave them,
// which member 2,000 joins.
func benchJoin(b *testing.B, as Assignor, split bool) Input {
	in := benchGroup(benchMembers-1, split)
	out, err := as.Assign(in)
	if err != nil {
		b.Fatal(err)
	}
	in = withAssignment(in, out)
	in.Members = append(in.Members, benchGroup(benchMembers, split).Members[benchMembers-1])
	return in
}

func runBench(b *testing.B, as Assignor, in Input) assign.Assignment {
	b.ReportAllocs()
	var got assign.Assignment
	c0 := processCPU()
	for b.Loop() {
		var err error
		if got, err = as.Assign(in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The process's CPU time (garbage collection included) per op: on a
	// shared machine compare it rather than ns/op.
	b.ReportMetric(float64(processCPU()-c0)/1e6/float64(b.N), "cpu-ms/op")
	if len(got) != len(in.Members) {
		b.Fatalf("%d entries for %d members", len(got), len(in.Members))
	}
	return got
}

// BenchmarkUniform: homogeneous (every member on every topic), fresh and one
// join; the newcomer must get its 500 partitions and nobody else moves.
func BenchmarkUniform(b *testing.B) {
	b.Run("fresh", func(b *testing.B) {
		in := benchGroup(benchMembers, false)
		if lo, hi := sizes(in, runBench(b, Uniform{}, in)); hi-lo > 1 {
			b.Fatalf("unbalanced: %d..%d", lo, hi)
		}
	})
	b.Run("join", func(b *testing.B) {
		in := benchJoin(b, Uniform{}, false)
		got := runBench(b, Uniform{}, in)
		if n := len(got[fmt.Sprintf("C%d-1", benchMembers)]); n != benchTopics*benchParts/benchMembers {
			b.Fatalf("joiner got %d partitions", n)
		}
	})
}

// BenchmarkUniformHeterogeneous: half the members on half the topics.
func BenchmarkUniformHeterogeneous(b *testing.B) {
	b.Run("fresh", func(b *testing.B) { runBench(b, Uniform{}, benchGroup(benchMembers, true)) })
	b.Run("join", func(b *testing.B) { runBench(b, Uniform{}, benchJoin(b, Uniform{}, true)) })
}

// BenchmarkRange: the server-side range assignor at the same size.
func BenchmarkRange(b *testing.B) { runBench(b, Range{}, benchGroup(benchMembers, false)) }
