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
// KAFKA-16944 rewrote the range assignor), which is what Kafka 4.0 runs.
// Kafka 4.1 changed the homogeneous builder (KAFKA-18688: any member may keep
// the extra partition of an uneven split, so a balanced group no longer
// reshuffles on a join); kgrepl follows 4.0 and its tests pin that.
package server

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/javaorder"
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
	assign(in Input, opt specOptions) (assign.Assignment, error)
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
	subSet     []bool // by topic index; shared by members with the same subscription
	// assigned is the current assignment by topic, topics and partitions
	// ascending, until javaOrder puts it in Java's iteration order (only the
	// homogeneous uniform builder depends on that order).
	assigned    []assignedTopic
	javaOrdered bool
	givenTopics []int // specOptions.givenOrder: topics in the order listed
}

// assignedTopic is one topic of a member's current assignment.
type assignedTopic struct {
	t  int
	ps []int
}

// groupSpec is GroupSpecImpl plus the topic metadata.
type groupSpec struct {
	members     []*memberSpec // in Java's iteration order of the member map
	topics      []Topic
	ids         []Uuid
	homogeneous bool
	// owner[t][p] is the index in members of the member whose current
	// target assignment holds partition p of topic t, or -1.
	owner   [][]int32
	inexact bool // a hashed collection's order is one Order does not follow
}

// specOptions bend buildGroupSpec: givenOrder and subscriptionType reproduce
// Kafka's unit tests, which build the assignor's input by hand (the
// coordinator never does); javaOrder and inexact serve TargetAssignment.
type specOptions struct {
	// inexact, when not nil, is set to whether the order of a hashed
	// collection Kafka iterates is one Order does not follow, so that the
	// answer may differ from Kafka's.
	inexact *bool
	// givenOrder keeps each member's assigned topics in the order of
	// Member.Assigned, as a test's LinkedHashMap (mkOrderedAssignment) does,
	// instead of the HashMap order of a replayed record.
	givenOrder bool
	// javaOrder says in.Members already are in the member map's iteration
	// order (TargetAssignment computed it, removals included).
	javaOrder bool
	// subscriptionType, when not "", is the SubscriptionType the test passes
	// ("homogeneous" or "heterogeneous") instead of the one computed from the
	// subscriptions.
	subscriptionType string
}

// buildGroupSpec validates the input and lays it out as Kafka's coordinator
// would hand it to the assignor, bent by opt: its topics, its members in
// the member map's order (TargetAssignmentBuilder.build: memberSpecs = new
// HashMap<>(), members put in order), their subscriptions, and each
// member's current assignment.
func buildGroupSpec(in Input, opt specOptions) (*groupSpec, error) {
	g := &groupSpec{topics: in.Topics}
	byName, err := g.addTopics(in.Topics)
	if err != nil {
		return nil, err
	}
	byMember := map[string]*Member{}
	ids := make([]string, len(in.Members))
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
	order, ok := ids, true
	if !opt.javaOrder {
		order, ok = javaorder.Order(ids, javaorder.StringHash, javaorder.StringCompare, javaorder.DefaultCapacity)
	}
	g.inexact = g.inexact || !ok
	subs := g.subscriptions(in.Members, byName, opt)
	for mi, id := range order {
		m := byMember[id]
		if err := g.addMember(m, int32(mi), subs[keyOf(m.Topics)], byName, opt); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// addTopics checks the topics and numbers them by name, each partition
// without an owner yet.
func (g *groupSpec) addTopics(topics []Topic) (map[string]int, error) {
	byName := map[string]int{}
	byID := map[Uuid]int{}
	for i, t := range topics {
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
			return nil, fmt.Errorf("topics %s and %s have the same id %s", topics[j].Name, t.Name, id)
		}
		byName[t.Name], byID[id] = i, i
		g.ids = append(g.ids, id)
		owners := make([]int32, t.Partitions)
		for p := range owners {
			owners[p] = -1
		}
		g.owner = append(g.owner, owners)
	}
	return byName, nil
}

// subscriptions resolves each distinct subscription once (members usually
// share theirs) and sets g.homogeneous as ModernGroup.subscriptionType
// does, counting subscribers per topic name.
func (g *groupSpec) subscriptions(members []Member, byName map[string]int, opt specOptions) map[subKey]*subscription {
	subs := map[subKey]*subscription{}
	subscribers := map[string]int{}
	for i := range members {
		k := keyOf(members[i].Topics)
		sub, ok := subs[k]
		if !ok {
			sub = g.resolve(members[i].Topics, byName)
			subs[k] = sub
		}
		sub.members++
	}
	for _, sub := range subs {
		for _, name := range sub.names {
			subscribers[name] += sub.members
		}
	}
	g.homogeneous = true
	for _, n := range subscribers {
		if n != len(members) {
			g.homogeneous = false
		}
	}
	if opt.subscriptionType != "" {
		g.homogeneous = opt.subscriptionType == "homogeneous"
	}
	return subs
}

// addMember adds member m, the mi-th of the member map, with its
// subscription and its current target assignment, checked: by topic,
// partitions ascending (the record order kgrepl assumes); javaOrder
// orders it as Java iterates it when an assignor needs that.
func (g *groupSpec) addMember(m *Member, mi int32, sub *subscription, byName map[string]int, opt specOptions) error {
	ms := &memberSpec{id: m.MemberID, instanceID: m.InstanceID, names: len(sub.names),
		subscribed: sub.topics, subSet: sub.set}
	own := make([]tp, 0, len(m.Assigned))
	var givenTopics []int // first appearance order, for specOptions.givenOrder
	for _, a := range m.Assigned {
		t, known := byName[a.Topic]
		if !known {
			return fmt.Errorf("member %s is assigned %s of unknown topic %s", m.MemberID, a, a.Topic)
		}
		if a.Partition < 0 || a.Partition >= g.topics[t].Partitions {
			return fmt.Errorf("member %s is assigned %s: topic %s has partitions 0 to %d",
				m.MemberID, a, a.Topic, g.topics[t].Partitions-1)
		}
		if holder := g.owner[t][a.Partition]; holder >= 0 {
			if holder == mi {
				return fmt.Errorf("member %s lists %s twice", m.MemberID, a)
			}
			return fmt.Errorf("partition %s is assigned to both %s and %s", a, g.members[holder].id, m.MemberID)
		}
		g.owner[t][a.Partition] = mi
		if opt.givenOrder && !slices.Contains(givenTopics, t) {
			givenTopics = append(givenTopics, t)
		}
		own = append(own, tp{int32(t), int32(a.Partition)})
	}
	slices.SortFunc(own, func(a, b tp) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return int(a.p - b.p)
	})
	all := make([]int, len(own)) // one backing array for the member's partitions
	for i := 0; i < len(own); {
		j := i
		for ; j < len(own) && own[j].t == own[i].t; j++ {
			all[j] = int(own[j].p)
		}
		ms.assigned = append(ms.assigned, assignedTopic{int(own[i].t), all[i:j:j]})
		i = j
	}
	if opt.givenOrder {
		ms.givenTopics = givenTopics
	}
	g.members = append(g.members, ms)
	return nil
}

// javaOrder puts a member's current assignment in the order Java iterates
// it as the coordinator holds it after replaying its record
// (Assignment.fromRecord): a HashMap of topic id → new HashSet<>(partitions).
// kgrepl puts topics in order of their ids and partitions in ascending order;
// Kafka puts them in the order of the record, which only matters for keys
// sharing a bucket (partition numbers below the set's table size never do).
func (g *groupSpec) javaOrder(ms *memberSpec) {
	if ms.javaOrdered {
		return
	}
	ms.javaOrdered = true
	byTopic := make(map[int][]int, len(ms.assigned))
	topics := make([]int, len(ms.assigned))
	for i, a := range ms.assigned {
		byTopic[a.t] = a.ps
		topics[i] = a.t
	}
	ok := true
	if ms.givenTopics != nil {
		topics = ms.givenTopics
	} else {
		sort.Slice(topics, func(i, j int) bool { return g.ids[topics[i]].Compare(g.ids[topics[j]]) < 0 })
		topics, ok = javaorder.Order(topics, g.idHash, g.idCompare, javaorder.DefaultCapacity)
		g.inexact = g.inexact || !ok
	}
	ms.assigned = ms.assigned[:0]
	for _, t := range topics {
		ps := byTopic[t]
		// Partition numbers below the set's table size each have their own
		// bucket: Java's order is then ascending.
		if n := javaorder.TableSizeFor(javaorder.CollectionCapacity(len(ps))); ps[len(ps)-1] >= min(n, 1<<16) {
			ps, ok = javaorder.Order(ps, javaorder.IntegerHash, cmp.Compare[int], javaorder.CollectionCapacity(len(ps)))
			g.inexact = g.inexact || !ok
		}
		ms.assigned = append(ms.assigned, assignedTopic{t, ps})
	}
}

// subKey identifies a subscription list by its backing array and length, so
// that members sharing one slice are resolved once; equal lists in different
// arrays are merely resolved again.
type subKey struct {
	first *string
	n     int
}

func keyOf(topics []string) subKey {
	if len(topics) == 0 {
		return subKey{}
	}
	return subKey{&topics[0], len(topics)}
}

// subscription is one member subscription resolved against the metadata.
type subscription struct {
	names   []string // distinct names in Java's HashSet order
	topics  []int    // the known ones as topic indices, in that order (TopicIds)
	set     []bool   // by topic index
	members int      // how many members subscribe so
}

// resolve is ConsumerGroupMember's new HashSet<>(subscribedTopicNames)
// walked by TopicIds, which resolves names and skips unknown ones.
func (g *groupSpec) resolve(topics []string, byName map[string]int) *subscription {
	names, ok := javaorder.Order(topics, javaorder.StringHash, javaorder.StringCompare, javaorder.CollectionCapacity(len(topics)))
	g.inexact = g.inexact || !ok
	sub := &subscription{names: names, set: make([]bool, len(g.topics))}
	for _, name := range names {
		if t, known := byName[name]; known {
			sub.topics = append(sub.topics, t)
			sub.set[t] = true
		}
	}
	return sub
}

// result reads a target assignment off owner arrays, one per topic (nil
// for a topic nobody is assigned).
func (g *groupSpec) result(owner [][]int32, opt specOptions) assign.Assignment {
	if opt.inexact != nil {
		*opt.inexact = g.inexact
	}
	lists := make([][]assign.TopicPartition, len(g.members))
	// Walking topics by name and partitions upwards fills each list sorted.
	byName := make([]int, len(g.topics))
	for t := range byName {
		byName[t] = t
	}
	sort.Slice(byName, func(i, j int) bool { return g.topics[byName[i]].Name < g.topics[byName[j]].Name })
	count := make([]int, len(g.members))
	for _, owners := range owner {
		for _, m := range owners {
			if m >= 0 {
				count[m]++
			}
		}
	}
	for i, n := range count {
		lists[i] = make([]assign.TopicPartition, 0, n)
	}
	for _, t := range byName {
		owners := owner[t]
		for p, m := range owners {
			if m >= 0 {
				lists[m] = append(lists[m], assign.TopicPartition{Topic: g.topics[t].Name, Partition: p})
			}
		}
	}
	out := assign.Assignment{}
	for i, m := range g.members {
		out[m.id] = lists[i]
	}
	return out
}

// idHash and idCompare are Uuid.hashCode and Uuid.compareTo of topic indices.
func (g *groupSpec) idHash(t int) int32     { return g.ids[t].HashCode() }
func (g *groupSpec) idCompare(a, b int) int { return g.ids[a].Compare(g.ids[b]) }

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
