package server

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/javaorder"
)

func TestTargetAssignmentStaticMemberInheritsItsTarget(t *testing.T) {
	// RangeAssignorTest.testStaticMembership's situation through the
	// builder: A (instance i-a) comes back as A1 and gets A's partitions;
	// only A1's target is new (it had none), B's is unchanged.
	ts := topics("t:4")
	first, err := TargetAssignment(Uniform{}, TargetInput{
		Members: []GroupMember{{MemberID: "A", InstanceID: "i-a", Topics: []string{"t"}}},
		Updated: GroupMember{MemberID: "B", InstanceID: "i-b", Topics: []string{"t"}},
		Target:  map[string][]assign.TopicPartition{"A": tps("t-0 t-1 t-2 t-3")},
		Topics:  ts,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(first.Target); got != "A: t-0 t-1\nB: t-2 t-3\n" || !slices.Equal(first.Changed, []string{"A", "B"}) || first.Replaced != "" {
		t.Fatalf("B joining: %s changed %v replaced %q", got, first.Changed, first.Replaced)
	}
	second, err := TargetAssignment(Uniform{}, TargetInput{
		Members: []GroupMember{{MemberID: "A", InstanceID: "i-a", Topics: []string{"t"}}, {MemberID: "B", InstanceID: "i-b", Topics: []string{"t"}}},
		Updated: GroupMember{MemberID: "A1", InstanceID: "i-a", Topics: []string{"t"}},
		Target:  first.Target,
		Topics:  ts,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(second.Target); got != "A1: t-0 t-1\nB: t-2 t-3\n" || !slices.Equal(second.Changed, []string{"A1"}) || second.Replaced != "A" {
		t.Fatalf("A back as A1: %s changed %v replaced %q", got, second.Changed, second.Replaced)
	}
}

func TestTargetAssignmentMemberOrderCountsTheReplacedMember(t *testing.T) {
	// Twelve members, consumer-1-1 static; it comes back as consumer-1-2.
	// Kafka's builder puts 13 ids into its HashMap (32 buckets) and then
	// removes consumer-1-1, so it iterates consumer-9-1 first (Java 17
	// printed that order); a map of the 12 remaining ids (16 buckets)
	// would start with consumer-10-1. The homogeneous builder gives the
	// extra partition of 13 to the first member in that order.
	var members []GroupMember
	for i := 1; i <= 12; i++ {
		gm := GroupMember{MemberID: fmt.Sprintf("consumer-%d-1", i), Topics: []string{"t"}}
		if i == 1 {
			gm.InstanceID = "i1"
		}
		members = append(members, gm)
	}
	res, err := TargetAssignment(Uniform{}, TargetInput{
		Members: members,
		Updated: GroupMember{MemberID: "consumer-1-2", InstanceID: "i1", Topics: []string{"t"}},
		Topics:  topics("t:13"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Target["consumer-9-1"]); n != 2 || res.Replaced != "consumer-1-1" {
		t.Fatalf("consumer-9-1 got %d partitions (want 2), replaced %q:\n%s", n, res.Replaced, render(res.Target))
	}
	if _, ok := res.Target["consumer-1-1"]; ok {
		t.Fatalf("the replaced member still has a target")
	}
	m := javaorder.NewMap[string](javaorder.DefaultCapacity, javaorder.StringCompare)
	for _, gm := range members {
		m.Put(gm.MemberID, javaorder.StringHash(gm.MemberID))
	}
	m.Put("consumer-1-2", javaorder.StringHash("consumer-1-2"))
	m.Remove("consumer-1-1", javaorder.StringHash("consumer-1-1"))
	want := "consumer-9-1 consumer-7-1 consumer-8-1 consumer-5-1 consumer-6-1 consumer-3-1 consumer-4-1 consumer-10-1 consumer-2-1 consumer-11-1 consumer-1-2 consumer-12-1"
	if got := fmt.Sprint(m.Keys()); got != "["+want+"]" {
		t.Fatalf("member map order %s\nJava: %s", got, want)
	}
}

func TestTargetAssignmentJoinEqualsAssign(t *testing.T) {
	// Without a replacement the builder is the assignor over the group's
	// members plus the updated one.
	in := genGroupForTarget()
	res, err := TargetAssignment(Uniform{}, in)
	if err != nil {
		t.Fatal(err)
	}
	var members []Member
	for _, gm := range append(in.Members, in.Updated) {
		members = append(members, Member{MemberID: gm.MemberID, Topics: gm.Topics, Assigned: in.Target[gm.MemberID]})
	}
	direct := mustAssign(t, Uniform{}, Input{Members: members, Topics: in.Topics})
	if render(direct) != render(res.Target) {
		t.Fatalf("builder\n%s\nassignor\n%s", render(res.Target), render(direct))
	}
	for _, id := range res.Changed {
		if slices.Equal(in.Target[id], res.Target[id]) && id != in.Updated.MemberID {
			t.Errorf("%s listed as changed but kept %v", id, res.Target[id])
		}
	}
	if !slices.Contains(res.Changed, in.Updated.MemberID) {
		t.Errorf("the new member's target is not listed as changed")
	}
}

func genGroupForTarget() TargetInput {
	in := TargetInput{Topics: topics("orders:3 payments:3"), Target: map[string][]assign.TopicPartition{}}
	subs := []string{"orders", "payments"}
	in.Members = []GroupMember{{MemberID: "C1-1", Topics: subs}, {MemberID: "C2-1", Topics: subs}}
	in.Target["C1-1"] = tps("payments-0 payments-1 payments-2")
	in.Target["C2-1"] = tps("orders-0 orders-1 orders-2")
	in.Updated = GroupMember{MemberID: "C3-1", Topics: subs}
	return in
}

func TestUniformFollowsTreeBins(t *testing.T) {
	// A holds 48 partitions of t (1,200 partitions): 0..38 and 128·k for k
	// up to 9. Ten of them share bucket 0 of its HashSet's 128 buckets, a
	// tree bin in Java. 399 members join; A's quota is 3, and Kafka's own
	// classes (run with Java 17) keep t-0 t-128 t-384: the tree's order, not
	// the insertion order (which would keep t-256).
	var held []assign.TopicPartition
	for p := 0; p < 39; p++ {
		held = append(held, assign.TopicPartition{Topic: "t", Partition: p})
	}
	for k := 1; k <= 9; k++ {
		held = append(held, assign.TopicPartition{Topic: "t", Partition: 128 * k})
	}
	in := Input{Topics: topics("t:1200"), Members: []Member{{MemberID: "A", Topics: []string{"t"}, Assigned: held}}}
	for i := 2; i <= 400; i++ {
		in.Members = append(in.Members, Member{MemberID: fmt.Sprintf("M%d", i), Topics: []string{"t"}})
	}
	var inexact bool
	out, err := Uniform{}.assign(in, specOptions{inexact: &inexact})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out["A"]); got != "[t-0 t-128 t-384]" || inexact {
		t.Errorf("A keeps %s (inexact %v); Kafka: [t-0 t-128 t-384]", got, inexact)
	}
	checkValid(t, in, out)
}
