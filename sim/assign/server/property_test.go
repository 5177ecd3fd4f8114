package server

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// genGroup makes a random group: topics with 1 to maxParts partitions,
// members with member ids shaped as kgrepl's or as Kafka 4.x's random ones,
// subscriptions drawn from classes (members of one class subscribe to the
// same topics; with one class the group is homogeneous).
func genGroup(r *rand.Rand, maxTopics, maxParts, maxMembers, classes int) Input {
	var in Input
	nt := 1 + r.Intn(maxTopics)
	for i := 0; i < nt; i++ {
		in.Topics = append(in.Topics, Topic{Name: fmt.Sprintf("t%d", i), Partitions: 1 + r.Intn(maxParts)})
	}
	subs := make([][]string, classes)
	for c := range subs {
		for _, t := range in.Topics {
			if r.Intn(2) == 0 {
				subs[c] = append(subs[c], t.Name)
			}
		}
		if len(subs[c]) == 0 {
			subs[c] = []string{in.Topics[r.Intn(nt)].Name}
		}
	}
	nm := 1 + r.Intn(maxMembers)
	for i := 0; i < nm; i++ {
		id := fmt.Sprintf("C%d-1", i+1)
		if r.Intn(2) == 0 {
			id = fmt.Sprintf("%08x-%04x", r.Uint32(), r.Intn(1<<16))
		}
		in.Members = append(in.Members, Member{MemberID: id, Topics: subs[r.Intn(classes)]})
	}
	return in
}

// withAssignment returns in with every member's current assignment set to out.
func withAssignment(in Input, out assign.Assignment) Input {
	next := in
	next.Members = append([]Member(nil), in.Members...)
	for i := range next.Members {
		next.Members[i].Assigned = out[next.Members[i].MemberID]
	}
	return next
}

func sizes(in Input, out assign.Assignment) (lo, hi int) {
	lo = -1
	for _, m := range in.Members {
		n := len(out[m.MemberID])
		if lo == -1 || n < lo {
			lo = n
		}
		if n > hi {
			hi = n
		}
	}
	return lo, hi
}

// TestPropertiesValid: both assignors, any group, fresh or from a random
// earlier assignment: every subscribed partition exactly once, only to a
// subscriber.
func TestPropertiesValid(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		in := genGroup(r, 5, 20, 12, 1+r.Intn(3))
		for _, as := range []Assignor{Uniform{}, Range{}} {
			out := mustAssign(t, as, in)
			checkValid(t, in, out)
			// Again from that answer, after a member left and one joined.
			next := withAssignment(in, out)
			next.Members = append(next.Members[1:], Member{MemberID: "late", Topics: in.Members[0].Topics})
			checkValid(t, next, mustAssign(t, as, next))
		}
	}
}

// TestPropertiesBalanced: with equal subscriptions the uniform assignor's
// counts differ by at most one, from scratch or from any earlier assignment;
// with classes of members on disjoint topics, within one inside each class.
// The range assignor balances each topic within one among its subscribers.
func TestPropertiesBalanced(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 400; i++ {
		in := genGroup(r, 5, 30, 12, 1)
		out := mustAssign(t, Uniform{}, in)
		if lo, hi := sizes(in, out); hi-lo > 1 {
			t.Fatalf("fresh homogeneous group unbalanced (%d..%d): %v", lo, hi, out)
		}
		// From a skewed start: the first member holds everything.
		skew := withAssignment(in, assign.Assignment{})
		for _, tp := range in.Topics {
			for p := 0; p < tp.Partitions; p++ {
				skew.Members[0].Assigned = append(skew.Members[0].Assigned, assign.TopicPartition{Topic: tp.Name, Partition: p})
			}
		}
		out = mustAssign(t, Uniform{}, skew)
		if lo, hi := sizes(in, out); hi-lo > 1 {
			t.Fatalf("homogeneous group from a skewed start unbalanced (%d..%d)", lo, hi)
		}

		// Two classes on disjoint topics: heterogeneous, balanced per class.
		het := genGroup(r, 6, 30, 12, 1)
		var a, b []string
		for j, tp := range het.Topics {
			if j%2 == 0 {
				a = append(a, tp.Name)
			} else {
				b = append(b, tp.Name)
			}
		}
		if len(b) == 0 {
			continue
		}
		for j := range het.Members {
			het.Members[j].Topics = a
			if j%2 == 1 {
				het.Members[j].Topics = b
			}
		}
		out = mustAssign(t, Uniform{}, het)
		checkValid(t, het, out)
		for _, class := range [][]string{a, b} {
			var members Input
			for _, m := range het.Members {
				if &m.Topics[0] == &class[0] {
					members.Members = append(members.Members, m)
				}
			}
			if lo, hi := sizes(members, out); len(members.Members) > 0 && hi-lo > 1 {
				t.Fatalf("class %v unbalanced (%d..%d): %v", class, lo, hi, out)
			}
		}

		// Range: per topic, within one among its subscribers.
		rin := genGroup(r, 5, 30, 12, 3)
		rout := mustAssign(t, Range{}, rin)
		for _, tp := range rin.Topics {
			lo, hi := -1, 0
			for _, m := range rin.Members {
				if !contains(m.Topics, tp.Name) {
					continue
				}
				n := 0
				for _, p := range rout[m.MemberID] {
					if p.Topic == tp.Name {
						n++
					}
				}
				if lo == -1 || n < lo {
					lo = n
				}
				hi = max(hi, n)
			}
			if hi-lo > 1 {
				t.Fatalf("range: topic %s unbalanced (%d..%d): %v", tp.Name, lo, hi, rout)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestPropertiesSticky: from a balanced assignment, nothing moves when
// nothing changed. When a member joins a group with equal subscriptions, the
// newcomer gets its fair share and every old member keeps as many of its
// partitions as its new size allows (it loses only what balance takes).
// Kafka's homogeneous builder does not promise the fewest moves: it hands the
// quota's extra partitions to the first members in its member map, so an old
// member can gain one partition while another gives one up (the last case in
// testdata/kafka_answers.txt, confirmed with Kafka's own classes). The test
// asserts that bound, no more. When a member leaves, the others keep all they
// had.
func TestPropertiesSticky(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	extraMoves := 0
	for i := 0; i < 400; i++ {
		classes := 1
		if i%2 == 1 {
			classes = 3
		}
		in := genGroup(r, 5, 30, 12, classes)
		out := mustAssign(t, Uniform{}, in)
		prev := withAssignment(in, out)
		if again := mustAssign(t, Uniform{}, prev); render(again) != render(out) {
			t.Fatalf("uniform moved partitions with nothing changed:\n%s->\n%s", render(out), render(again))
		}
		if classes != 1 {
			continue
		}
		joined := prev
		joined.Members = append(append([]Member(nil), prev.Members...), Member{MemberID: "zz-new", Topics: in.Members[0].Topics})
		next := mustAssign(t, Uniform{}, joined)
		moved := 0
		for _, m := range prev.Members {
			kept := 0
			for _, p := range next[m.MemberID] {
				if containsTP(m.Assigned, p) {
					kept++
				}
			}
			if want := min(len(m.Assigned), len(next[m.MemberID])); kept != want {
				t.Fatalf("%s kept %d of its %d partitions, has %d now: it could keep %d", m.MemberID, kept, len(m.Assigned), len(next[m.MemberID]), want)
			}
			if len(next[m.MemberID]) > len(m.Assigned)+1 {
				t.Fatalf("%s grew from %d to %d when zz-new joined", m.MemberID, len(m.Assigned), len(next[m.MemberID]))
			}
			moved += len(m.Assigned) - kept
		}
		total := 0
		for _, tp := range in.Topics {
			if contains(in.Members[0].Topics, tp.Name) {
				total += tp.Partitions
			}
		}
		got := len(next["zz-new"])
		if got < total/len(joined.Members) || got > (total+len(joined.Members)-1)/len(joined.Members) {
			t.Fatalf("newcomer got %d of %d over %d members", got, total, len(joined.Members))
		}
		if moved > got {
			extraMoves++
		}

		// The first member leaves: the others keep all they had.
		left := prev
		left.Members = prev.Members[1:]
		if len(left.Members) == 0 {
			continue
		}
		after := mustAssign(t, Uniform{}, left)
		for _, m := range left.Members {
			for _, p := range m.Assigned {
				if !containsTP(after[m.MemberID], p) {
					t.Fatalf("%s lost %s when %s left", m.MemberID, p, prev.Members[0].MemberID)
				}
			}
		}
	}
	t.Logf("joins that moved more than the newcomer got: %d of 200", extraMoves)
}

func containsTP(ps []assign.TopicPartition, p assign.TopicPartition) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// TestPropertiesListOrder: the answer does not depend on how the members
// list their current assignment (sorted, as answers come, which a kept
// member may get back as it is, or in any order), and every list of it is
// sorted.
func TestPropertiesListOrder(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 300; i++ {
		in := genGroup(r, 5, 30, 12, 1+r.Intn(2))
		in = withAssignment(in, mustAssign(t, Uniform{}, in))
		in.Members = append(in.Members, Member{MemberID: "late", Topics: in.Members[0].Topics})
		// Shuffled, or grouped by topic with the topics in reverse order.
		shuffled := withAssignment(in, assign.Assignment{})
		for j, m := range in.Members {
			a := append([]assign.TopicPartition(nil), m.Assigned...)
			if i%2 == 0 {
				r.Shuffle(len(a), func(x, y int) { a[x], a[y] = a[y], a[x] })
			} else {
				slices.SortStableFunc(a, func(x, y assign.TopicPartition) int { return strings.Compare(y.Topic, x.Topic) })
			}
			shuffled.Members[j].Assigned = a
		}
		for _, as := range []Assignor{Uniform{}, Range{}} {
			want, got := mustAssign(t, as, in), mustAssign(t, as, shuffled)
			for id, ps := range want {
				if fmt.Sprint(ps) != fmt.Sprint(got[id]) {
					t.Fatalf("%s, %s: %v from sorted lists, %v from shuffled ones", as.Name(), id, ps, got[id])
				}
				if !slices.IsSortedFunc(ps, comparePartitions) {
					t.Fatalf("%s, %s: %v is not sorted", as.Name(), id, ps)
				}
			}
		}
	}
}
