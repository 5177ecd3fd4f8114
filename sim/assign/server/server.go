// Package server holds the partition assignors that run on the group
// coordinator under the consumer group protocol (KIP-848), as Kafka's
// group-coordinator module keeps them in org.apache.kafka.coordinator.group.assignor:
// UniformAssignor (the default group.consumer.assignors entry "uniform", with
// its UniformHomogeneousAssignmentBuilder and UniformHeterogeneousAssignmentBuilder)
// and RangeAssignor ("range"). The classic protocol's client-side assignors
// live in package assign.
//
// The assignors are pure functions of their Input. Where Kafka iterates a
// HashMap or HashSet, these follow Java's iteration order (see Order) with
// topic ids derived from topic names (TopicID), so that their answers equal
// what Kafka's own assignor computes for those ids. The algorithms are those
// of the Kafka sources mirrored for this project (4.0.0-SNAPSHOT of October
// 2024, after KAFKA-17710 reworked the heterogeneous builder and
// KAFKA-16944 rewrote the range assignor).
package server

import (
	"fmt"
	"sort"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// Topic is one topic of the metadata the assignor sees
// (SubscribedTopicDescriber): its name, id and partition count.
type Topic struct {
	Name       string
	Partitions int
	// ID is the topic id; the zero Uuid means TopicID(Name).
	ID Uuid
}

// Member is one member of the group as the coordinator hands it to the
// assignor (MemberSubscriptionAndAssignmentImpl).
type Member struct {
	MemberID   string
	InstanceID string // group.instance.id; "" for a dynamic member
	// Topics are the subscribed topic names in the order the member's
	// heartbeat listed them. Names of topics that do not exist are allowed
	// and ignored, as Kafka's TopicIds ignores them.
	Topics []string
	// Assigned is the member's current target assignment (not what it owns):
	// stickiness is relative to it.
	Assigned []assign.TopicPartition
}

// Input is everything a server-side assignor sees.
type Input struct {
	// Members in the order the coordinator put them into its member map
	// (TargetAssignmentBuilder.build): the group's members, then the members
	// the current heartbeat adds. Only the order of members whose member ids
	// fall into one Java hash bucket depends on it.
	Members []Member
	Topics  []Topic
}

// Assignor is one server-side assignor (ConsumerGroupPartitionAssignor).
type Assignor interface {
	Name() string // group.consumer.assignors name: uniform, range
	// Assign computes the target assignment: every member of the input gets
	// an entry, possibly empty, sorted by (topic, partition).
	Assign(in Input) (assign.Assignment, error)
}

// Names lists the assignor names New accepts; the first is Kafka's default.
var Names = []string{"uniform", "range"}

// New returns the server-side assignor called name.
func New(name string) (Assignor, error) {
	switch name {
	case "uniform":
		return Uniform{}, nil
	case "range":
		return Range{}, nil
	}
	return nil, fmt.Errorf("unknown server-side assignor %q: allowed are uniform, range", name)
}

// tp is one partition inside the assignors: topic index into groupSpec.topics
// and partition number.
type tp struct{ t, p int32 }

// memberSpec is one member as the assignors read it.
type memberSpec struct {
	id, instanceID string
	// names is the number of distinct subscribed names, known or not
	// (TopicIds.size).
	names int
	// subscribed lists the indices of the member's existing subscribed
	// topics in Java's iteration order of TopicIds over the member's
	// HashSet of topic names.
	subscribed []int
	subSet     map[int]bool
	// topicOrder lists the topics of the current assignment in Java's
	// iteration order of its HashMap; partitions[t] gives each topic's
	// partitions in Java's iteration order of its HashSet.
	topicOrder []int
	partitions map[int][]int
}

// groupSpec is GroupSpecImpl plus the topic metadata.
type groupSpec struct {
	members     []*memberSpec // in Java's iteration order of the member map
	topics      []Topic
	ids         []Uuid
	homogeneous bool
	// owner[t][p] is the index in members of the member whose current
	// target assignment holds partition p of topic t, or -1.
	owner     [][]int32
	treeified bool // a Java collection would have been a tree bin
}

// specOptions bend newGroupSpec to reproduce Kafka's unit tests, which build
// the assignor's input by hand; the coordinator never passes them.
type specOptions struct {
	// givenOrder keeps each member's assigned topics in the order of
	// Member.Assigned, as a test's LinkedHashMap (mkOrderedAssignment) does,
	// instead of the HashMap order of a replayed record.
	givenOrder bool
	// subscriptionType, when not "", is the SubscriptionType the test passes
	// ("homogeneous" or "heterogeneous") instead of the one computed from the
	// subscriptions.
	subscriptionType string
}

// newGroupSpec validates the input and lays it out as Kafka's coordinator
// would hand it to the assignor.
func newGroupSpec(in Input) (*groupSpec, error) { return buildGroupSpec(in, specOptions{}) }

// buildGroupSpec is newGroupSpec with options.
func buildGroupSpec(in Input, opt specOptions) (*groupSpec, error) {
	g := &groupSpec{topics: in.Topics}
	byName := map[string]int{}
	byID := map[Uuid]int{}
	for i, t := range in.Topics {
		if t.Name == "" {
			return nil, fmt.Errorf("topic %d has no name", i)
		}
		if t.Partitions < 1 {
			return nil, fmt.Errorf("topic %s has %d partitions: at least 1 is needed", t.Name, t.Partitions)
		}
		if _, dup := byName[t.Name]; dup {
			return nil, fmt.Errorf("topic %s is listed twice", t.Name)
		}
		id := t.ID
		if id == (Uuid{}) {
			id = TopicID(t.Name)
		}
		if j, dup := byID[id]; dup {
			return nil, fmt.Errorf("topics %s and %s have the same id %s", in.Topics[j].Name, t.Name, id)
		}
		byName[t.Name], byID[id] = i, i
		g.ids = append(g.ids, id)
		owners := make([]int32, t.Partitions)
		for p := range owners {
			owners[p] = -1
		}
		g.owner = append(g.owner, owners)
	}
	idHash := func(i int) int32 { return g.ids[i].HashCode() }

	// TargetAssignmentBuilder.build: memberSpecs = new HashMap<>(), members put in order.
	ids := make([]string, len(in.Members))
	byMember := map[string]*Member{}
	for i := range in.Members {
		m := &in.Members[i]
		if m.MemberID == "" {
			return nil, fmt.Errorf("member %d has no member id", i)
		}
		if _, dup := byMember[m.MemberID]; dup {
			return nil, fmt.Errorf("member %s is listed twice", m.MemberID)
		}
		byMember[m.MemberID] = m
		ids[i] = m.MemberID
	}
	order, ok := Order(ids, StringHash, defaultCapacity)
	g.treeified = g.treeified || !ok

	// ModernGroup.subscriptionType counts subscribers per topic name.
	subscribers := map[string]int{}
	for _, m := range in.Members {
		seen := map[string]bool{}
		for _, name := range m.Topics {
			if !seen[name] {
				seen[name] = true
				subscribers[name]++
			}
		}
	}
	g.homogeneous = true
	for _, n := range subscribers {
		if n != len(in.Members) {
			g.homogeneous = false
		}
	}
	if opt.subscriptionType != "" {
		g.homogeneous = opt.subscriptionType == "homogeneous"
	}

	for mi, id := range order {
		m := byMember[id]
		ms := &memberSpec{id: m.MemberID, instanceID: m.InstanceID, subSet: map[int]bool{}, partitions: map[int][]int{}}
		// ConsumerGroupMember keeps new HashSet<>(subscribedTopicNames);
		// TopicIds iterates it, resolving names and skipping unknown ones.
		names, ok := Order(m.Topics, StringHash, collectionCapacity(len(m.Topics)))
		g.treeified = g.treeified || !ok
		ms.names = len(names)
		for _, name := range names {
			if t, known := byName[name]; known {
				ms.subscribed = append(ms.subscribed, t)
				ms.subSet[t] = true
			}
		}
		// The current target assignment as the coordinator holds it after
		// replaying its record (Assignment.fromRecord): a HashMap of topic
		// id → new HashSet<>(partitions). kgrepl puts topics in order of
		// their ids and partitions in ascending order; Kafka puts them in
		// the order of the record, which only matters for keys sharing a
		// bucket (partition numbers below the set's table size never do).
		var topics []int
		for _, a := range m.Assigned {
			t, known := byName[a.Topic]
			if !known {
				return nil, fmt.Errorf("member %s is assigned %s of unknown topic %s", m.MemberID, a, a.Topic)
			}
			if a.Partition < 0 || a.Partition >= in.Topics[t].Partitions {
				return nil, fmt.Errorf("member %s is assigned %s: topic %s has partitions 0 to %d",
					m.MemberID, a, a.Topic, in.Topics[t].Partitions-1)
			}
			if holder := g.owner[t][a.Partition]; holder >= 0 {
				if int(holder) == mi {
					return nil, fmt.Errorf("member %s lists %s twice", m.MemberID, a)
				}
				return nil, fmt.Errorf("partition %s is assigned to both %s and %s", a, g.members[holder].id, m.MemberID)
			}
			g.owner[t][a.Partition] = int32(mi)
			if _, seen := ms.partitions[t]; !seen {
				topics = append(topics, t)
			}
			ms.partitions[t] = append(ms.partitions[t], a.Partition)
		}
		if opt.givenOrder {
			ms.topicOrder = topics
		} else {
			sort.Slice(topics, func(i, j int) bool { return g.ids[topics[i]].Compare(g.ids[topics[j]]) < 0 })
			ms.topicOrder, ok = Order(topics, idHash, defaultCapacity)
			g.treeified = g.treeified || !ok
		}
		for t, ps := range ms.partitions {
			sort.Ints(ps)
			ms.partitions[t], ok = Order(ps, IntegerHash, collectionCapacity(len(ps)))
			g.treeified = g.treeified || !ok
		}
		g.members = append(g.members, ms)
	}
	return g, nil
}

// result reads a target assignment off owner arrays, one per topic (nil
// for a topic nobody is assigned).
func (g *groupSpec) result(owner [][]int32) assign.Assignment {
	lists := make([][]assign.TopicPartition, len(g.members))
	for t, owners := range owner {
		for p, m := range owners {
			if m >= 0 {
				lists[m] = append(lists[m], assign.TopicPartition{Topic: g.topics[t].Name, Partition: p})
			}
		}
	}
	out := assign.Assignment{}
	for i, m := range g.members {
		assign.SortPartitions(lists[i])
		out[m.id] = lists[i]
	}
	return out
}

// newOwners gives an owner array per topic with every partition unassigned.
func (g *groupSpec) newOwners() [][]int32 {
	owner := make([][]int32, len(g.topics))
	for t := range owner {
		owner[t] = make([]int32, g.topics[t].Partitions)
		for p := range owner[t] {
			owner[t][p] = -1
		}
	}
	return owner
}
