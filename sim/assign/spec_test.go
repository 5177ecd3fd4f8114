package assign

import "testing"

// SPEC §7: the fidelity anchors, facts from Apache Kafka's own assignor tests.

var (
	twoByThree = map[string]int{"t1": 3, "t2": 3}
	both       = []string{"t1", "t2"}
)

func TestSpecRangeTwoTopicsTwoMembers(t *testing.T) {
	in := Input{Partitions: twoByThree, Members: []Member{mem("c1", both...), mem("c2", both...)}}
	got := rangeAssignor{}.Assign(in)
	checkValid(t, in, got)
	expect(t, got, map[string]string{"c1": "t1-0 t1-1 t2-0 t2-1", "c2": "t1-2 t2-2"})
}

func TestSpecRoundRobinTwoTopicsTwoMembers(t *testing.T) {
	in := Input{Partitions: twoByThree, Members: []Member{mem("c1", both...), mem("c2", both...)}}
	got := roundRobinAssignor{}.Assign(in)
	checkValid(t, in, got)
	expect(t, got, map[string]string{"c1": "t1-0 t1-2 t2-1", "c2": "t1-1 t2-0 t2-2"})
}

func TestSpecRangeMixedSubscriptions(t *testing.T) {
	in := Input{Partitions: map[string]int{"t1": 3, "t2": 2}, Members: []Member{
		mem("c1", "t1"), mem("c2", "t1", "t2"), mem("c3", "t1")}}
	got := rangeAssignor{}.Assign(in)
	checkValid(t, in, got)
	expect(t, got, map[string]string{"c1": "t1-0", "c2": "t1-1 t2-0 t2-1", "c3": "t1-2"})
}

func TestSpecKafkaStickyJoin(t *testing.T) {
	in := Input{Partitions: map[string]int{"t1": 3}, Members: []Member{
		owning(mem("c1", "t1"), 1, "t1-0 t1-1 t1-2"), mem("c2", "t1")}}
	got := kafkaEager.Assign(in)
	checkValid(t, in, got)
	expect(t, got, map[string]string{"c1": "t1-0 t1-1", "c2": "t1-2"})
}

func TestSpecKafkaCooperativeTwoRounds(t *testing.T) {
	in := Input{Partitions: map[string]int{"t1": 3}, Members: []Member{
		owning(mem("c1", "t1"), 1, "t1-0 t1-1 t1-2"), mem("c2", "t1")}}
	first := kafkaCoop.Assign(in)
	checkValid(t, in, first)
	expect(t, first, map[string]string{"c1": "t1-0 t1-1", "c2": ""})

	second := kafkaCoop.Assign(nextRound(in, first, 2))
	expect(t, second, map[string]string{"c1": "t1-0 t1-1", "c2": "t1-2"})
}

// Kafka's RangeAssignorTest / RoundRobinAssignorTest
// testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions and
// testTwoStaticConsumersTwoTopicsSixPartitions: "consumer-b" sorts after
// "consumer-a" as a member id, but static members come first (and among
// themselves by instance id).
func TestSpecStaticBeforeDynamic(t *testing.T) {
	mixed := []Member{static("consumer-b", "instance1", both...), mem("consumer-a", both...)}
	twoStatic := []Member{static("consumer-b", "instance1", both...), static("consumer-a", "instance2", both...)}
	for _, members := range [][]Member{mixed, twoStatic} {
		in := Input{Partitions: twoByThree, Members: members}
		got := rangeAssignor{}.Assign(in)
		checkValid(t, in, got)
		expect(t, got, map[string]string{"consumer-b": "t1-0 t1-1 t2-0 t2-1", "consumer-a": "t1-2 t2-2"})

		got = roundRobinAssignor{}.Assign(in)
		checkValid(t, in, got)
		expect(t, got, map[string]string{"consumer-b": "t1-0 t1-2 t2-1", "consumer-a": "t1-1 t2-0 t2-2"})
	}
}

func TestSpecKafkaStickyFreshThreeAndFour(t *testing.T) {
	in := Input{Partitions: map[string]int{"t1": 3, "t2": 4}, Members: []Member{mem("c1", both...), mem("c2", both...)}}
	got := kafkaEager.Assign(in)
	checkValid(t, in, got)
	expect(t, got, map[string]string{"c1": "t1-0 t1-2 t2-1 t2-3", "c2": "t1-1 t2-0 t2-2"})
}

// SPEC §5: the seed's assignment table. C1 (generation 1) owns all six
// partitions; C2, C3, C4 join one after another.
var seedWorld = map[string]int{"orders": 3, "payments": 3}

func seedMember(id string) Member { return mem(id, "orders", "payments") }

const allSix = "orders-0 orders-1 orders-2 payments-0 payments-1 payments-2"

func TestSeedTableRange(t *testing.T) {
	in := Input{Partitions: seedWorld, Members: []Member{owning(seedMember("C1-1"), 1, allSix)}}
	steps := []map[string]string{
		{"C1-1": "orders-0 orders-1 payments-0 payments-1", "C2-1": "orders-2 payments-2"},
		{"C1-1": "orders-0 payments-0", "C2-1": "orders-1 payments-1", "C3-1": "orders-2 payments-2"},
		{"C1-1": "orders-0 payments-0", "C2-1": "orders-1 payments-1", "C3-1": "orders-2 payments-2", "C4-1": ""},
	}
	for i, want := range steps {
		in.Members = append(in.Members, seedMember([]string{"C2-1", "C3-1", "C4-1"}[i]))
		got := rangeAssignor{}.Assign(in)
		checkValid(t, in, got)
		expect(t, got, want)
		in = nextRound(in, got, i+2)
	}
}

// The cooperative-sticky column with the seed's rules: each join takes two
// rebalances; the first withholds what moves (CooperativeAdjust) and pauses
// 3, 2, 1 partitions; the second hands them over. The eager sticky target of
// the first round is already the table's row.
func TestSeedTableCooperativeSticky(t *testing.T) {
	in := Input{Partitions: seedWorld, Members: []Member{owning(seedMember("C1-1"), 1, allSix)}}
	type step struct {
		joiner        string
		first, second map[string]string
		paused        int
	}
	steps := []step{
		{"C2-1",
			map[string]string{"C1-1": "orders-0 orders-1 orders-2", "C2-1": ""},
			map[string]string{"C1-1": "orders-0 orders-1 orders-2", "C2-1": "payments-0 payments-1 payments-2"}, 3},
		{"C3-1",
			map[string]string{"C1-1": "orders-0 orders-1", "C2-1": "payments-0 payments-1", "C3-1": ""},
			map[string]string{"C1-1": "orders-0 orders-1", "C2-1": "payments-0 payments-1", "C3-1": "orders-2 payments-2"}, 2},
		{"C4-1",
			map[string]string{"C1-1": "orders-0", "C2-1": "payments-0 payments-1", "C3-1": "orders-2 payments-2", "C4-1": ""},
			map[string]string{"C1-1": "orders-0", "C2-1": "payments-0 payments-1", "C3-1": "orders-2 payments-2", "C4-1": "orders-1"}, 1},
	}
	gen := 2
	for _, s := range steps {
		in.Members = append(in.Members, seedMember(s.joiner))

		expect(t, seedEager.Assign(in), s.second)

		first := seedCoop.Assign(in)
		checkValid(t, in, first)
		expect(t, first, s.first)
		expect(t, CooperativeAdjust(in, seedEager.Assign(in)), s.first)
		if got := revoked(in, first); got != s.paused {
			t.Errorf("+%s: %d paused, want %d", s.joiner, got, s.paused)
		}
		in = nextRound(in, first, gen)
		gen++

		second := seedCoop.Assign(in)
		checkValid(t, in, second)
		expect(t, second, s.second)
		if got := revoked(in, second); got != 0 {
			t.Errorf("+%s: second round revokes %d", s.joiner, got)
		}
		in = nextRound(in, second, gen)
		gen++
	}
}
