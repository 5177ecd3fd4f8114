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
	"strings"

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
	// an entry, possibly empty, sorted by (topic, partition). A member whose
	// target is its current one, listed sorted, may get its very Assigned
	// slice back (as Kafka's assignors hand back a kept member's assignment
	// map): neither is to be changed in place.
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
	// assigned is the current assignment by topic, each topic once with its
	// partitions ascending, topics in no set order until javaOrder puts the
	// whole in Java's iteration order (only the homogeneous uniform builder
	// depends on that order, and only for a member that must give some up).
	assigned []assignedTopic
	// sorted is the member's Assigned list when it is sorted by (topic,
	// partition), as an answer gives it: a target equal to it can share it.
	sorted      []assign.TopicPartition
	javaOrdered bool
	givenTopics []int // specOptions.givenOrder: topics in the order listed
}

// assignedTopic is one topic of a member's current assignment.
type assignedTopic struct {
	t  int
	ps []int32
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
	// same, when a builder sets it, marks the members whose target equals
	// their current assignment.
	same []bool
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
	names := newTopicNames(in.Topics, byName)
	for mi, id := range order {
		m := byMember[id]
		if err := g.addMember(m, int32(mi), subs[keyOf(m.Topics)], names, opt); err != nil {
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

// topicNames finds the topic of each partition of a member's list: the
// lists mostly are in name order (result writes them so), and then each
// partition's topic is the one before it or the next name, found without
// hashing the name.
type topicNames struct {
	topics   []Topic
	byName   map[string]int
	nextName []int   // nextName[t+1]: the topic after t by name; nextName[0] the first
	rank     []int   // place in name order
	seen     []int32 // seen[t] == mi+1: member mi lists t
}

func newTopicNames(topics []Topic, byName map[string]int) *topicNames {
	byNameOrder := make([]int, len(topics))
	for i := range byNameOrder {
		byNameOrder[i] = i
	}
	slices.SortFunc(byNameOrder, func(a, b int) int { return strings.Compare(topics[a].Name, topics[b].Name) })
	n := &topicNames{topics: topics, byName: byName, nextName: make([]int, len(topics)+1), rank: make([]int, len(topics)),
		seen: make([]int32, len(topics))}
	for i := range n.nextName {
		n.nextName[i] = -1
	}
	prev := -1
	for i, t := range byNameOrder {
		n.nextName[prev+1] = t
		n.rank[t] = i
		prev = t
	}
	return n
}

// of is the topic named name, the one after t by name checked first; false
// for a name the group has not.
func (n *topicNames) of(name string, t int) (int, bool) {
	if next := n.nextName[t+1]; next >= 0 && name == n.topics[next].Name {
		return next, true
	}
	t, known := n.byName[name]
	return t, known
}

// addMember adds member m, the mi-th of the member map, with its
// subscription and its current target assignment, checked; javaOrder
// orders it as Java iterates it when an assignor needs that. A list
// grouped by topic with partitions ascending is taken as it is; another
// is sorted.
func (g *groupSpec) addMember(m *Member, mi int32, sub *subscription, names *topicNames, opt specOptions) error {
	ms := &memberSpec{id: m.MemberID, instanceID: m.InstanceID, names: len(sub.names),
		subscribed: sub.topics, subSet: sub.set}
	stamp := mi + 1
	all := make([]int32, len(m.Assigned)) // one backing array for the member's partitions
	var givenTopics []int                 // first appearance order, for specOptions.givenOrder
	grouped, sorted := true, true
	t, start := -1, 0
	for i, a := range m.Assigned {
		if t < 0 || a.Topic != g.topics[t].Name {
			if t >= 0 {
				ms.assigned = append(ms.assigned, assignedTopic{t, all[start:i:i]})
			}
			var known bool
			if t, known = names.of(a.Topic, t); !known {
				return fmt.Errorf("member %s is assigned %s of unknown topic %s", m.MemberID, a, a.Topic)
			}
			if names.seen[t] == stamp {
				grouped = false // the topic again, after another
			}
			if start < i && names.rank[t] < names.rank[ms.assigned[len(ms.assigned)-1].t] {
				sorted = false
			}
			names.seen[t], start = stamp, i
			if opt.givenOrder && !slices.Contains(givenTopics, t) {
				givenTopics = append(givenTopics, t)
			}
		} else if int64(a.Partition) <= int64(all[i-1]) {
			grouped = false
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
		all[i] = int32(a.Partition)
	}
	if t >= 0 {
		ms.assigned = append(ms.assigned, assignedTopic{t, all[start:len(all):len(all)]})
	}
	if !grouped {
		ms.assigned = regroup(ms.assigned, len(all))
	} else if sorted && len(m.Assigned) > 0 {
		ms.sorted = m.Assigned
	}
	if opt.givenOrder {
		ms.givenTopics = givenTopics
	}
	g.members = append(g.members, ms)
	return nil
}

// regroup gives runs of partitions (a topic may have several, partitions
// in any order) as one run per topic, topics and partitions ascending.
func regroup(runs []assignedTopic, n int) []assignedTopic {
	own := make([]tp, 0, n)
	for _, r := range runs {
		for _, p := range r.ps {
			own = append(own, tp{int32(r.t), p})
		}
	}
	slices.SortFunc(own, func(a, b tp) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return int(a.p - b.p)
	})
	all := make([]int32, len(own))
	var out []assignedTopic
	for i := 0; i < len(own); {
		j := i
		for ; j < len(own) && own[j].t == own[i].t; j++ {
			all[j] = own[j].p
		}
		out = append(out, assignedTopic{int(own[i].t), all[i:j:j]})
		i = j
	}
	return out
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
	topics := make([]int, len(ms.assigned))
	for i, a := range ms.assigned {
		topics[i] = a.t
	}
	ok := true
	if ms.givenTopics != nil {
		topics = ms.givenTopics
	} else {
		slices.SortFunc(topics, g.idCompare)
		topics, ok = javaorder.Order(topics, g.idHash, g.idCompare, javaorder.DefaultCapacity)
		g.inexact = g.inexact || !ok
	}
	// Put the runs in that order of topics.
	at := make(map[int]int, len(ms.assigned)) // topic -> its run
	for i, a := range ms.assigned {
		at[a.t] = i
	}
	runs := make([]assignedTopic, 0, len(topics))
	for _, t := range topics {
		ps := ms.assigned[at[t]].ps
		ps, ok = intSetOrder(ps)
		g.inexact = g.inexact || !ok
		runs = append(runs, assignedTopic{t, ps})
	}
	ms.assigned = runs
}

// intSetOrder is the order Java iterates `new HashSet<>(ps)` of Integers,
// ps distinct and ascending. An Integer hashes to itself, so below the
// table's size every key has its own bucket and the order is ascending; up
// to eight times the table's size (and below 1<<16, where HashMap's spread
// leaves a hash as it is) no bucket holds more than eight keys, none becomes
// a tree, and the order is by bucket, keys of one bucket in the order they
// were put: a merge of the runs ps falls into at each multiple of the size.
// Otherwise javaorder.Order replays the map.
func intSetOrder(ps []int32) ([]int32, bool) {
	n := int32(javaorder.TableSizeFor(javaorder.CollectionCapacity(len(ps))))
	last := ps[len(ps)-1]
	switch {
	case last < min(n, 1<<16):
		return ps, true
	case last < 1<<16 && last < 8*n:
		var from [9]int // run r: ps[from[r]:from[r+1]], the keys in [r*n, (r+1)*n)
		runs := int(last/n) + 1
		for r, i := 1, 0; r <= runs; r++ {
			for i < len(ps) && ps[i] < int32(r)*n {
				i++
			}
			from[r] = i
		}
		next := from // each run's next key
		out := make([]int32, 0, len(ps))
		for len(out) < len(ps) {
			best := -1
			for r := 0; r < runs; r++ {
				if next[r] < from[r+1] && (best < 0 || ps[next[r]]&(n-1) < ps[next[best]]&(n-1)) {
					best = r
				}
			}
			out = append(out, ps[next[best]])
			next[best]++
		}
		return out, true
	}
	keys := make([]int, len(ps))
	for i, p := range ps {
		keys[i] = int(p)
	}
	keys, ok := javaorder.Order(keys, javaorder.IntegerHash, cmp.Compare[int], javaorder.CollectionCapacity(len(ps)))
	out := make([]int32, len(keys))
	for i, k := range keys {
		out[i] = int32(k)
	}
	return out, ok
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
	// Walking topics by name and partitions upwards fills each list sorted.
	byName := make([]int, len(g.topics))
	for t := range byName {
		byName[t] = t
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(g.topics[a].Name, g.topics[b].Name) })
	// A member whose target is the sorted list it came with gets that very
	// list (as Kafka's assignors hand back a kept member's assignment map);
	// the others' lists are built.
	shared := make([]bool, len(g.members))
	for i, m := range g.members {
		shared[i] = g.same != nil && g.same[i] && m.sorted != nil
	}
	count := make([]int, len(g.members))
	for _, owners := range owner {
		for _, m := range owners {
			if m >= 0 {
				count[m]++
			}
		}
	}
	for i := range count {
		if shared[i] {
			count[i] = 0
		}
	}
	// One buffer for every list; at[m] is where member m's next partition goes.
	at := make([]int, len(g.members))
	total := 0
	for m, n := range count {
		at[m] = total
		total += n
	}
	buf := make([]assign.TopicPartition, total)
	for _, t := range byName {
		name := g.topics[t].Name
		for p, m := range owner[t] {
			if m >= 0 && !shared[m] {
				buf[at[m]] = assign.TopicPartition{Topic: name, Partition: p}
				at[m]++
			}
		}
	}
	out := make(assign.Assignment, len(g.members))
	for i, m := range g.members {
		if shared[i] {
			out[m.id] = m.sorted[:len(m.sorted):len(m.sorted)]
		} else {
			out[m.id] = buf[at[i]-count[i] : at[i] : at[i]]
		}
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
