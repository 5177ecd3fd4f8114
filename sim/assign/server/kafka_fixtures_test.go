package server

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// The fixtures in this file are Kafka's own published assignor tests
// (group-coordinator/src/test/java/org/apache/kafka/coordinator/group/assignor
// in the mirrored Kafka sources): their inputs and expected outputs, with the
// test each comes from. Members are named A, B, C as there; in a Java HashMap
// they iterate in that order, as the tests' TreeMap and sorted member lists do.

// kafkaTestTopicIDs are the fixed topic ids of Kafka's uniform assignor tests
// (Uuid.fromString in OptimizedUniformAssignmentBuilderTest and
// UniformHeterogeneousAssignmentBuilderTest). The uniform assignor's answers
// depend on them.
var kafkaTestTopicIDs = map[string]string{
	"topic1": "T1-A4s3VTwiI5CTbEp6POw",
	"topic2": "T2-B4s3VTwiI5YHbPp6YUe",
	"topic3": "T3-CU8fVTLCz5YMkLoDQsa",
	"topic4": "T4-Tw9fVTLCz5HbPp6YQsa",
}

// withKafkaTestIDs gives topics the ids Kafka's tests use.
func withKafkaTestIDs(t *testing.T, ts []Topic) []Topic {
	for i := range ts {
		id, err := ParseUuid(kafkaTestTopicIDs[ts[i].Name])
		if err != nil {
			t.Fatal(err)
		}
		ts[i].ID = id
	}
	return ts
}

// orderedAssignment names the uniform tests whose members' current
// assignments are built with mkOrderedAssignment (a LinkedHashMap: topics in
// the order listed) rather than a HashMap. The homogeneous builder keeps a
// member's partitions topic by topic in that order, so these answers hold for
// that order only; the coordinator itself hands the assignor HashMaps
// (Assignment.fromRecord), which Uniform.Assign follows.
var orderedAssignment = map[string]bool{
	"testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment":             true,
	"testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics":                    true,
	"testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": true,
}

type fixture struct {
	name    string // the Kafka test method
	topics  string
	members []Member
	want    map[string]string
}

// runFixtures runs the cases; builder is the SubscriptionType the Kafka test
// class passes ("" for the range tests, whose answers do not depend on it).
func runFixtures(t *testing.T, as Assignor, builder string, cases []fixture) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := topics(c.topics)
			in := Input{Members: c.members, Topics: ts}
			var out assign.Assignment
			if builder == "" {
				out = mustAssign(t, as, in)
			} else {
				in.Topics = withKafkaTestIDs(t, ts)
				var err error
				opt := specOptions{givenOrder: orderedAssignment[c.name], subscriptionType: builder}
				if out, err = (Uniform{}).assign(in, opt); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := render(out), want(c.want); got != want {
				t.Errorf("got\n%swant (Kafka's %s)\n%s", got, c.name, want)
			}
			checkValid(t, in, out)
		})
	}
}

// From OptimizedUniformAssignmentBuilderTest (the homogeneous builder; the
// class is named so in the mirrored sources).
func TestUniformHomogeneousKafkaFixtures(t *testing.T) {
	runFixtures(t, Uniform{}, "homogeneous", []fixture{
		{"testOneMemberNoTopicSubscription", "topic1:3",
			[]Member{member("A", "", "", "")},
			map[string]string{"A": ""}},
		{"testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks", "topic1:3 topic3:2",
			[]Member{member("A", "", "topic1 topic3", ""), member("B", "", "topic1 topic3", "")},
			map[string]string{"A": "topic1-0 topic3-0 topic3-1", "B": "topic1-1 topic1-2"}},
		{"testFirstAssignmentNumMembersGreaterThanTotalNumPartitions", "topic3:2",
			[]Member{member("A", "", "topic3", ""), member("B", "", "topic3", ""), member("C", "", "topic3", "")},
			map[string]string{"A": "topic3-0", "B": "topic3-1", "C": ""}},
		{"testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment", "topic1:3 topic2:3",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic1-1 topic2-0 topic2-1"),
				member("B", "", "topic1 topic2", "topic1-2 topic2-2")},
			map[string]string{"A": "topic1-0 topic1-1 topic2-0", "B": "topic1-2 topic2-1 topic2-2"}},
		{"testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics", "topic1:6 topic2:5",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic1-2 topic2-0"),
				member("B", "", "topic1 topic2", "topic1-1 topic2-1 topic2-2")},
			map[string]string{"A": "topic1-0 topic1-2 topic1-3 topic2-0 topic2-3 topic2-4",
				"B": "topic1-1 topic1-4 topic1-5 topic2-1 topic2-2"}},
		{"testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics", "topic1:3 topic2:3",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic1-2 topic2-0"),
				member("B", "", "topic1 topic2", "topic1-1 topic2-1 topic2-2"),
				member("C", "", "topic1 topic2", "")},
			map[string]string{"A": "topic1-0 topic1-2", "B": "topic1-1 topic2-1", "C": "topic2-0 topic2-2"}},
		{"testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics", "topic1:3 topic2:3",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic2-0"),
				member("B", "", "topic1 topic2", "topic1-1 topic2-1")},
			map[string]string{"A": "topic1-0 topic2-0 topic2-2", "B": "topic1-1 topic1-2 topic2-1"}},
		{"testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", "topic1:2 topic2:2",
			[]Member{
				member("A", "", "topic2", "topic1-0 topic2-0"),
				member("B", "", "topic2", "topic1-1 topic2-1")},
			map[string]string{"A": "topic2-0", "B": "topic2-1"}},
	})
}

// From UniformHeterogeneousAssignmentBuilderTest.
func TestUniformHeterogeneousKafkaFixtures(t *testing.T) {
	runFixtures(t, Uniform{}, "heterogeneous", []fixture{
		{"testTwoMembersNoTopicSubscription", "topic1:3",
			[]Member{member("A", "", "", ""), member("B", "", "", "")},
			map[string]string{"A": "", "B": ""}},
		{"testFirstAssignmentTwoMembersTwoTopics", "topic1:3 topic3:6",
			[]Member{member("A", "", "topic1 topic3", ""), member("B", "", "topic3", "")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2 topic3-4", "B": "topic3-0 topic3-1 topic3-2 topic3-3 topic3-5"}},
		{"testFirstAssignmentNumMembersGreaterThanTotalNumPartitions", "topic3:1 topic1:2",
			[]Member{member("A", "", "topic3", ""), member("B", "", "topic3", ""), member("C", "", "topic1", "")},
			map[string]string{"A": "topic3-0", "B": "", "C": "topic1-0 topic1-1"}},
		{"testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment", "topic1:6 topic2:4 topic3:4",
			[]Member{
				member("A", "", "topic1", "topic1-0 topic1-1 topic1-2"),
				member("B", "", "topic1 topic2", "topic1-3 topic2-0"),
				member("C", "", "topic1 topic2 topic3", "topic1-4 topic1-5 topic2-1 topic2-2 topic2-3 topic3-0 topic3-1 topic3-2 topic3-3")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2 topic1-5",
				"B": "topic1-3 topic2-0 topic2-1 topic2-2 topic2-3",
				"C": "topic1-4 topic3-0 topic3-1 topic3-2 topic3-3"}},
		{"testReassignmentWhenPartitionsAreAddedForTwoMembers", "topic1:6 topic2:5 topic3:3 topic4:3",
			[]Member{
				member("A", "", "topic1 topic3", "topic1-0 topic1-1 topic1-2 topic1-3 topic3-0 topic3-1"),
				member("B", "", "topic1 topic2 topic3 topic4", "topic2-0 topic2-1 topic2-2 topic4-0 topic4-1 topic4-2")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2 topic1-3 topic1-4 topic1-5 topic3-0 topic3-1 topic3-2",
				"B": "topic2-0 topic2-1 topic2-2 topic2-3 topic2-4 topic4-0 topic4-1 topic4-2"}},
		{"testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics", "topic1:6 topic2:7",
			[]Member{
				member("A", "", "topic1", "topic1-0 topic1-2 topic2-0"),
				member("B", "", "topic1 topic2", "topic1-1 topic2-1 topic2-2"),
				member("C", "", "topic1 topic2", "")},
			map[string]string{"A": "topic1-0 topic1-2 topic1-3 topic1-4 topic1-5",
				"B": "topic1-1 topic2-1 topic2-2 topic2-6",
				"C": "topic2-0 topic2-3 topic2-4 topic2-5"}},
		{"testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics", "topic1:3 topic2:8 topic3:3",
			[]Member{
				member("A", "", "topic1 topic3", "topic1-0 topic1-1 topic1-2 topic3-0 topic3-1"),
				member("B", "", "topic2", "topic2-3 topic2-4 topic2-5 topic2-6")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2 topic3-0 topic3-1 topic3-2",
				"B": "topic2-0 topic2-1 topic2-2 topic2-3 topic2-4 topic2-5 topic2-6 topic2-7"}},
		{"testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", "topic1:3 topic2:5",
			[]Member{
				member("A", "", "topic1", "topic1-0 topic1-2 topic2-1 topic2-3"),
				member("B", "", "topic1 topic2", "topic1-1 topic2-0 topic2-2 topic2-4")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2", "B": "topic2-0 topic2-1 topic2-2 topic2-3 topic2-4"}},
		{"testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions", "topic1:2 topic2:2 topic3:2",
			[]Member{
				member("A", "", "topic1 topic2 topic3", "topic1-0 topic1-1 topic2-0 topic2-1 topic3-0 topic3-1"),
				member("B", "", "topic1 topic2 topic3", "")},
			map[string]string{"A": "topic2-0 topic3-0 topic3-1", "B": "topic1-0 topic1-1 topic2-1"}},
		{"testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions", "topic1:3",
			[]Member{member("A", "", "topic1", ""), member("B", "", "", "")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2", "B": ""}},
	})
}

// From RangeAssignorTest (the server-side one). Its topic ids are random, and
// the range assignor's answer does not depend on them.
func TestRangeKafkaFixtures(t *testing.T) {
	runFixtures(t, Range{}, "", []fixture{
		{"testOneMemberNoTopic", "topic1:3",
			[]Member{member("A", "", "", "")},
			map[string]string{"A": ""}},
		{"testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions", "topic1:3 topic3:2",
			[]Member{member("A", "", "topic1 topic3", ""), member("B", "", "topic1 topic3", "")},
			map[string]string{"A": "topic1-0 topic1-1 topic3-0", "B": "topic1-2 topic3-1"}},
		{"testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions", "topic1:3 topic2:3 topic3:2",
			[]Member{member("A", "", "topic1 topic2", ""), member("B", "", "topic3", ""), member("C", "", "topic2 topic3", "")},
			map[string]string{"A": "topic1-0 topic1-1 topic1-2 topic2-0 topic2-1", "B": "topic3-0", "C": "topic2-2 topic3-1"}},
		{"testFirstAssignmentNumMembersGreaterThanNumPartitions", "topic1:3 topic3:2",
			[]Member{member("A", "", "topic1 topic3", ""), member("B", "", "topic1 topic3", ""), member("C", "", "topic1 topic3", "")},
			map[string]string{"A": "topic1-0 topic3-0", "B": "topic1-1 topic3-1", "C": "topic1-2"}},
		{"testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded", "topic1:2 topic2:2",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic2-0"),
				member("B", "", "topic1 topic2", "topic1-1 topic2-1"),
				member("C", "", "topic1 topic2", "")},
			map[string]string{"A": "topic1-0 topic2-0", "B": "topic1-1 topic2-1", "C": ""}},
		{"testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics", "topic1:4 topic2:4",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic1-1 topic2-0 topic2-1"),
				member("B", "", "topic1 topic2", "topic1-2 topic2-2")},
			map[string]string{"A": "topic1-0 topic1-1 topic2-0 topic2-1", "B": "topic1-2 topic1-3 topic2-2 topic2-3"}},
		{"testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics", "topic1:3 topic2:3",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic1-1 topic2-0 topic2-1"),
				member("B", "", "topic1 topic2", "topic1-2 topic2-2"),
				member("C", "", "topic1 topic2", "")},
			map[string]string{"A": "topic1-0 topic2-0", "B": "topic1-1 topic2-1", "C": "topic1-2 topic2-2"}},
		{"testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics", "topic1:4 topic2:3",
			[]Member{
				member("A", "", "topic1 topic2", "topic1-0 topic1-1 topic2-0 topic2-1"),
				member("B", "", "topic1 topic2", "topic1-2 topic2-2"),
				member("C", "", "topic1", "")},
			map[string]string{"A": "topic1-0 topic1-1 topic2-0 topic2-1", "B": "topic1-2 topic2-2", "C": "topic1-3"}},
		{"testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", "topic1:3 topic2:3",
			[]Member{member("B", "", "topic1 topic2", "topic1-2 topic2-2")},
			map[string]string{"B": "topic1-0 topic1-1 topic1-2 topic2-0 topic2-1 topic2-2"}},
		{"testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics", "topic1:3 topic2:3 topic3:2",
			[]Member{
				member("A", "", "topic1", "topic1-0 topic1-1 topic1-2 topic2-0"),
				member("B", "", "topic1 topic2 topic3", "topic2-1"),
				member("C", "", "topic2", "topic2-2 topic3-0 topic3-1")},
			map[string]string{"A": "topic1-0 topic1-1", "B": "topic1-2 topic2-0 topic2-1 topic3-0 topic3-1", "C": "topic2-2"}},
	})
}

// RangeAssignorTest.testStaticMembership and testMixedStaticMembership: a
// static member that comes back under a new member id with its instance id
// gets the same partitions, and so does everybody else.
func TestRangeStaticMembershipKafka(t *testing.T) {
	for _, c := range []struct {
		name       string
		partitions string
		before     []Member
	}{
		{"testStaticMembership", "topic1:3", []Member{
			member("A", "instanceA", "topic1", ""), member("B", "instanceB", "topic1", "")}},
		{"testMixedStaticMembership", "topic1:5", []Member{
			member("A", "instanceA", "topic1", ""), member("C", "instanceC", "topic1", ""), member("B", "", "topic1", "")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := topics(c.partitions)
			first := mustAssign(t, Range{}, Input{Members: c.before, Topics: ts})
			var after []Member
			for _, m := range c.before {
				if m.MemberID == "A" {
					m.MemberID = "memberA1"
				}
				after = append(after, m)
			}
			second := mustAssign(t, Range{}, Input{Members: after, Topics: ts})
			for _, m := range c.before {
				id := m.MemberID
				if id == "A" {
					id = "memberA1"
				}
				if render(assign.Assignment{"x": first[m.MemberID]}) != render(assign.Assignment{"x": second[id]}) {
					t.Errorf("%s had %v, then %s got %v", m.MemberID, first[m.MemberID], id, second[id])
				}
			}
		})
	}
}
