package server

import (
	"fmt"
	"sort"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/javaorder"
)

// Uniform is Kafka's UniformAssignor ("uniform", the default of
// group.consumer.assignors): balanced first, sticky second. When every member
// subscribes to the same topic names it runs the homogeneous builder, else the
// heterogeneous one (UniformAssignor.assign, by ModernGroup.subscriptionType).
type Uniform struct{}

// Name is UniformAssignor.UNIFORM_ASSIGNOR_NAME.
func (Uniform) Name() string { return "uniform" }

// Assign computes the target assignment.
func (u Uniform) Assign(in Input) (assign.Assignment, error) { return u.assign(in, specOptions{}) }

func (Uniform) assign(in Input, opt specOptions) (assign.Assignment, error) {
	g, err := buildGroupSpec(in, opt)
	if err != nil {
		return nil, err
	}
	if len(g.members) == 0 {
		return assign.Assignment{}, nil
	}
	var owner [][]int32
	if g.homogeneous {
		owner, err = g.uniformHomogeneous()
	} else {
		owner = g.uniformHeterogeneous()
	}
	if err != nil {
		return nil, err
	}
	return g.result(owner, opt), nil
}

// uniformHomogeneous is UniformHomogeneousAssignmentBuilder.build (Kafka
// 4.0). Every member gets the minimum quota (partitions / members) and the
// first (partitions % members) members in the member map's order one more
// (so a member can gain a partition on a join while another gives one up;
// KAFKA-18688 in Kafka 4.1 lets any member keep the extra one); each
// member keeps its current partitions up to its quota, walking its assignment
// in Java's order, and the partitions nobody holds, then those taken away, go
// in that order to the members still below quota, in member order.
func (g *groupSpec) uniformHomogeneous() ([][]int32, error) {
	first := g.members[0]
	// new HashSet<>(TopicIds of the first member).
	subscribed, ok := javaorder.Order(first.subscribed, g.idHash, g.idCompare, javaorder.CollectionCapacity(first.names))
	g.inexact = g.inexact || !ok
	if len(subscribed) == 0 {
		return g.newOwners(), nil
	}
	// The target starts as the current assignment (g.owner, which this
	// builder alone uses from here on): what members keep stays where it is.
	owner := g.owner
	isSubscribed := make([]bool, len(g.topics))
	var unassigned []tp
	total := 0
	for _, t := range subscribed {
		isSubscribed[t] = true
		for p, o := range owner[t] {
			if o == -1 { // GroupSpec.isPartitionAssigned
				unassigned = append(unassigned, tp{int32(t), int32(p)})
			}
		}
		total += g.topics[t].Partitions
	}
	for t := range owner {
		if !isSubscribed[t] {
			owner[t] = nil // every member drops the whole topic
		}
	}
	n := len(g.members)
	minQuota, extra := total/n, total%n

	// maybeRevokePartitions
	type unfilled struct{ member, quota int }
	var unfilledMembers []unfilled
	g.same = make([]bool, n) // until a member loses or gains a partition
	for mi, m := range g.members {
		quota := minQuota
		if extra > 0 {
			quota++
			extra--
		}
		held := 0
		g.same[mi] = true
		for _, a := range m.assigned {
			if isSubscribed[a.t] {
				held += len(a.ps)
			} else {
				g.same[mi] = false
			}
		}
		if held <= quota {
			// The member keeps all it holds: the order it walks its
			// topics and partitions in cannot matter.
			quota -= held
		} else {
			g.javaOrder(m)
			for _, a := range m.assigned {
				t, ps := a.t, a.ps
				if !isSubscribed[t] {
					continue
				}
				if len(ps) <= quota {
					quota -= len(ps)
					continue
				}
				for _, p := range ps[quota:] {
					owner[t][p] = -1
					unassigned = append(unassigned, tp{int32(t), p})
				}
				quota = 0
				g.same[mi] = false
			}
		}
		if quota > 0 {
			unfilledMembers = append(unfilledMembers, unfilled{mi, quota})
		}
	}

	// assignRemainingPartitions
	next := 0
	for _, u := range unfilledMembers {
		for i := 0; i < u.quota && next < len(unassigned); i++ {
			owner[unassigned[next].t][unassigned[next].p] = int32(u.member)
			next++
			g.same[u.member] = false
		}
	}
	if next < len(unassigned) {
		// Kafka throws PartitionAssignorException("Partitions were left unassigned").
		return nil, fmt.Errorf("uniform assignor: %d partitions were left unassigned", len(unassigned)-next)
	}
	return owner, nil
}

// heterogeneous is the state of UniformHeterogeneousAssignmentBuilder.
type heterogeneous struct {
	g           *groupSpec
	subscribers [][]int   // per topic: subscribing member indices, ascending; nil if none
	sizes       []int     // per member: partitions in the target assignment
	owner       [][]int32 // per topic: target owner of each partition, -1 if none
	subscribed  []int     // topics somebody subscribes to, ascending index
}

// uniformHeterogeneous is UniformHeterogeneousAssignmentBuilder.build: drop
// what members no longer subscribe to, hand out the unassigned partitions
// topic by topic (most partitions per subscriber first) to the least loaded
// subscriber, then move partitions from the most to the least loaded
// subscribers of each topic until no move improves balance (at most 16 rounds).
func (g *groupSpec) uniformHeterogeneous() [][]int32 {
	h := &heterogeneous{
		g:           g,
		subscribers: make([][]int, len(g.topics)),
		sizes:       make([]int, len(g.members)),
		owner:       make([][]int32, len(g.topics)),
	}
	for mi, m := range g.members {
		for _, t := range m.subscribed {
			h.subscribers[t] = append(h.subscribers[t], mi)
		}
	}
	for t := range g.topics {
		if h.subscribers[t] == nil {
			continue
		}
		h.subscribed = append(h.subscribed, t)
		h.owner[t] = make([]int32, g.topics[t].Partitions)
		for p := range h.owner[t] {
			h.owner[t][p] = -1
		}
	}
	if len(h.subscribed) == 0 {
		return g.newOwners()
	}

	// maybeRevokePartitions: keep what each member still subscribes to.
	for mi, m := range g.members {
		for _, a := range m.assigned {
			if m.subSet[a.t] {
				h.sizes[mi] += len(a.ps)
				for _, p := range a.ps {
					h.owner[a.t][p] = int32(mi)
				}
			}
		}
	}

	// computeUnassignedPartitions + assignRemainingPartitions.
	unassigned := map[int][]int{}
	var withUnassigned []int
	for _, t := range h.subscribed {
		for p, o := range h.owner[t] {
			if o == -1 {
				unassigned[t] = append(unassigned[t], p)
			}
		}
		if len(unassigned[t]) > 0 {
			withUnassigned = append(withUnassigned, t)
		}
	}
	b := &balancer{sizes: h.sizes}
	for _, t := range h.sortTopics(withUnassigned) {
		b.initialize(h.subscribers[t])
		for _, p := range unassigned[t] {
			h.assignPartition(t, p, b.nextLeastLoaded())
		}
	}

	// balance: only topics with two or more subscribers can move.
	var movable []int
	for _, t := range h.subscribed {
		if len(h.subscribers[t]) >= 2 {
			movable = append(movable, t)
		}
	}
	if len(movable) > 0 {
		h.balanceTopics(movable)
	}

	for t := range h.owner {
		if h.owner[t] == nil {
			h.owner[t] = make([]int32, g.topics[t].Partitions)
			for p := range h.owner[t] {
				h.owner[t][p] = -1
			}
		}
	}
	return h.owner
}

// sortTopics is sortTopicIds: partitions per subscriber descending, then
// subscriber count ascending, then topic id ascending.
func (h *heterogeneous) sortTopics(topics []int) []int {
	out := append([]int(nil), topics...)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		na, nb := len(h.subscribers[a]), len(h.subscribers[b])
		ra := float64(h.g.topics[a].Partitions) / float64(na)
		rb := float64(h.g.topics[b].Partitions) / float64(nb)
		if ra != rb {
			return ra > rb
		}
		if na != nb {
			return na < nb
		}
		return h.g.ids[a].Compare(h.g.ids[b]) < 0
	})
	return out
}

// assignPartition moves partition p of topic t to member m.
func (h *heterogeneous) assignPartition(t, p, m int) {
	if old := h.owner[t][p]; old != -1 {
		h.sizes[old]--
	}
	h.owner[t][p] = int32(m)
	h.sizes[m]++
}

// maxIterationCount is MAX_ITERATION_COUNT.
const maxIterationCount = 16

// balanceTopics loops over the topics until a whole round moved nothing, or
// for at most maxIterationCount rounds.
func (h *heterogeneous) balanceTopics(topics []int) {
	sorted := h.sortTopics(topics)
	last := -1
	b := &balancer{sizes: h.sizes}
	for i := 0; i < maxIterationCount; i++ {
		for ti, t := range sorted {
			if ti == last {
				return
			}
			if h.balanceTopic(t, b) > 0 || last == -1 {
				last = ti
			}
		}
	}
}

// balanceTopic moves partitions of topic t from its most loaded subscribers
// to its least loaded ones while their counts differ by more than one; a
// member gives up the last of its partitions of t first. It returns how many
// partitions moved.
func (h *heterogeneous) balanceTopic(t int, b *balancer) int {
	if b.initialize(h.subscribers[t]) <= 1 {
		return 0
	}
	owners := h.owner[t]
	partitions := make([]int, len(owners))
	for p := range partitions {
		partitions[p] = p
	}
	sort.SliceStable(partitions, func(i, j int) bool { return owners[partitions[i]] < owners[partitions[j]] })
	start, end := map[int32]int{}, map[int32]int{}
	for i, p := range partitions {
		o := owners[p]
		if _, ok := start[o]; !ok {
			start[o] = i
		}
		end[o] = i + 1
	}
	moved := 0
	for !b.isBalanced() {
		most := -1
		for {
			most = b.nextMostLoaded()
			if most == -1 {
				break
			}
			e, ok := end[int32(most)]
			if !ok || e-start[int32(most)] <= 0 {
				b.excludeMostLoaded()
				continue
			}
			break
		}
		if most == -1 {
			break
		}
		p := partitions[end[int32(most)]-1]
		end[int32(most)]--
		least := b.nextLeastLoaded()
		if b.isBalanced() {
			break
		}
		h.assignPartition(t, p, least)
		moved++
	}
	return moved
}

// balancer is UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer:
// the subscribers of one topic sorted by load, with a least loaded range
// growing from the left and a most loaded range growing from the right.
type balancer struct {
	sizes  []int
	sorted []int

	leastEnd, leastCount, nextLeast int
	mostStart, mostEnd, mostCount   int
	nextMost                        int
}

// initialize resets the balancer for members and returns the difference
// between the most and least loaded of them.
func (b *balancer) initialize(members []int) int {
	b.sorted = append(b.sorted[:0], members...)
	sort.Slice(b.sorted, func(i, j int) bool {
		x, y := b.sorted[i], b.sorted[j]
		if b.sizes[x] != b.sizes[y] {
			return b.sizes[x] < b.sizes[y]
		}
		return x < y
	})
	n := len(b.sorted)
	b.leastEnd, b.leastCount, b.nextLeast = 0, b.sizes[b.sorted[0]]-1, 0
	b.mostStart, b.mostEnd, b.mostCount = n, n, b.sizes[b.sorted[n-1]]+1
	b.nextMost = n - 1
	return b.sizes[b.sorted[n-1]] - b.sizes[b.sorted[0]]
}

// nextLeastLoaded is nextLeastLoadedMember.
func (b *balancer) nextLeastLoaded() int {
	if b.nextLeast >= b.leastEnd {
		b.leastCount++
		for b.leastEnd < len(b.sorted) && b.sizes[b.sorted[b.leastEnd]] == b.leastCount {
			b.leastEnd++
		}
		b.nextLeast = 0
	}
	m := b.sorted[b.nextLeast]
	b.nextLeast++
	return m
}

// nextMostLoaded is nextMostLoadedMember; -1 when nobody is left to give.
func (b *balancer) nextMostLoaded() int {
	if b.nextMost < b.mostStart {
		if b.mostEnd <= b.mostStart && b.mostStart > 0 {
			b.mostCount = b.sizes[b.sorted[b.mostStart-1]]
		} else {
			b.mostCount--
		}
		for b.mostStart > 0 && b.sizes[b.sorted[b.mostStart-1]] == b.mostCount {
			b.mostStart--
		}
		b.nextMost = b.mostEnd - 1
	}
	if b.nextMost < 0 {
		return -1
	}
	m := b.sorted[b.nextMost]
	b.nextMost--
	return m
}

// excludeMostLoaded is excludeMostLoadedMember.
func (b *balancer) excludeMostLoaded() {
	i := b.nextMost + 1
	b.sorted[i], b.sorted[b.mostEnd-1] = b.sorted[b.mostEnd-1], b.sorted[i]
	b.mostEnd--
}

// isBalanced is isBalanced.
func (b *balancer) isBalanced() bool { return b.mostCount-b.leastCount <= 1 }
