package assign

import (
	"slices"
	"sort"
)

// kafkaGeneral is Kafka's GeneralAssignmentBuilder, for unequal
// subscriptions:
//
//   - Members keep their valid claims on topics they still subscribe to (a
//     claim on a topic no longer subscribed is dropped and marks that a
//     revocation is required).
//   - Claims of members whose generation is below the highest in the input
//     are remembered per partition as the "previous owner" (the highest such
//     generation wins, ties to the first in the HashMap order). (Kafka's
//     assignor object keeps the highest generation it has ever seen; a pure
//     function cannot.)
//   - Partitions are ordered by topic, topics by how many members subscribe
//     (fewest first) then name. Each unowned partition goes to the member with
//     the fewest partitions (ties: lower id) among its topic's subscribers.
//   - Topics with a single subscriber, and members that already have every
//     partition they could get from such topics only, are left out of
//     balancing.
//   - Balancing walks the partitions (first only the just-assigned ones,
//     unless a revocation is required; then all) while the assignment is not
//     balanced: a partition moves back to its previous owner if its holder has
//     at least two more than that owner (only if that owner still takes part
//     in balancing and subscribes to the topic: Kafka does not check either,
//     and so can hand a partition to a member not subscribed to its topic,
//     an invalid answer, or fail with a NullPointerException; we stay valid
//     and go on to the next rule), or else to the least loaded
//     subscriber when some subscriber has at least two fewer than its holder;
//     Kafka's partition-movement bookkeeping may swap in another partition of
//     the same topic to avoid moving partitions back and forth. The walk
//     repeats until a pass moves nothing.
//   - If the group was not empty-handed to begin with and balancing moved
//     something without lowering the balance score (sum of count differences
//     over all pairs), the pre-balancing assignment is restored.
func kafkaGeneral(tp *topology, ms []Member, order []int32, holder []int32) []int32 {
	k := newKafkaGeneral(tp.withTopicOf(), ms)
	P, T := tp.total(), len(tp.names)

	maxGen := -1
	for _, m := range ms {
		maxGen = max(maxGen, m.Generation)
	}
	prevGen := make([]int, P)
	for _, m := range order {
		gm := ms[m].Generation
		if gm >= maxGen {
			continue
		}
		for _, p := range ms[m].Owned {
			if g := tp.id(p); g >= 0 && (k.prev[g] < 0 || gm > prevGen[g]) {
				k.prev[g], prevGen[g] = m, gm
			}
		}
	}

	revocationRequired := false
	for g, h := range holder {
		if h < 0 {
			continue
		}
		if !k.can.has(int(h)*T + int(tp.topicOf[g])) {
			revocationRequired = true
			continue
		}
		k.add(int32(g), h)
	}
	initializing := true
	for _, l := range k.lists {
		if len(l) > 0 {
			initializing = false
		}
	}

	topics := make([]int32, T)
	for t := range topics {
		topics[t] = int32(t)
	}
	sort.SliceStable(topics, func(i, j int) bool {
		return len(k.potential[topics[i]]) < len(k.potential[topics[j]])
	})
	var all, unassigned []int32
	for _, t := range topics {
		for g := tp.base[t]; g < tp.base[t+1]; g++ {
			all = append(all, g)
			if k.cur[g] < 0 {
				unassigned = append(unassigned, g)
			}
		}
	}

	k.startBalancing()
	for _, g := range unassigned {
		if c := k.leastLoaded(tp.topicOf[g]); c >= 0 {
			k.add(g, c)
		}
	}

	movable := func(g int32) bool { return len(k.potential[tp.topicOf[g]]) >= 2 }
	all = slices.DeleteFunc(all, func(g int32) bool { return !movable(g) })
	unassigned = slices.DeleteFunc(unassigned, func(g int32) bool { return !movable(g) })
	for m := range ms {
		if !k.canParticipate(int32(m)) {
			k.retire(int32(m))
		}
	}
	k.recountEnds()

	before := slices.Clone(k.cur)
	beforeScore := k.score()
	if !revocationRequired {
		k.reassign(unassigned)
	}
	moved := k.reassign(all)
	if !initializing && moved && k.score() >= beforeScore {
		k.cur = before
	}

	return k.cur
}

// kafkaGeneralState is the working state of kafkaGeneral, all indexed by
// dense member and partition ids, in the parts GeneralAssignmentBuilder
// keeps it in (its field names in each part's comment), and one of
// kgrepl's own (balanceTrack).
type kafkaGeneralState struct {
	tp *topology
	T  int
	potentials
	prev []int32 // partition -> previous-generation owner, -1 (prevAssignment)
	currentAssignment
	balancing
	balanceTrack
	mov movements // partitionMovements
}

// potentials is who may take what: consumer2AllPotentialTopics and
// topic2AllPotentialConsumers.
type potentials struct {
	subs      [][]int32 // member -> subscribed topics
	can       bitset    // can.has(m*T+t)
	potential [][]int32 // topic -> subscribers, id order
	maxSize   []int     // member -> partitions of its topics
}

// currentAssignment is the assignment being built: currentAssignment
// (member -> partitions) and currentPartitionConsumer (partition ->
// member).
type currentAssignment struct {
	cur   []int32   // partition -> member, -1
	lists [][]int32 // member -> its partitions, any order
	at    []int32   // partition -> index in its member's list
}

// balancing is sortedCurrentSubscriptions, the members taking part in
// balancing ordered by (count, id): grouped by identical subscription,
// each group a heap ordered by (count, id), so "the least loaded
// subscriber of topic t" is the best top among the groups taking t.
type balancing struct {
	in          []bool
	group       []int32
	heaps       []idxHeap
	topicGroups [][]int32
	hist        []int32 // count -> members in balancing with that count
	lo, hi      int     // smallest and largest count in balancing
	members     int     // members in balancing
}

// balanceTrack is what isBalanced keeps move by move once balancing starts
// (tracking), so the balance check needs no scan over partitions, and its
// last answer (balanced, valid while balancedKnow: until the next move).
// For each subscription group G and balancing member o, overlap(o, G) is
// how many partitions of G's topics o holds; per group, how many balancing
// members with a non-zero overlap have each total count, and the largest
// such count (-1: none). Dense arrays where small, maps otherwise.
type balanceTrack struct {
	balanced     bool
	balancedKnow bool
	tracking     bool
	ng           int32
	overDense    []int32           // o*ng+G
	overSparse   map[int64]int32   // used when overDense would be too large
	histDense    []int32           // G*(P+2)+count
	histSparse   []map[int32]int32 // G -> count -> members
	maxHeld      []int32           // G -> largest count of an overlapping member
}

func newKafkaGeneral(tp *topology, ms []Member) *kafkaGeneralState {
	n, T, P := len(ms), len(tp.names), tp.total()
	k := &kafkaGeneralState{
		tp: tp, T: T,
		potentials:        potentials{subs: make([][]int32, n), can: newBitset(n * T), potential: make([][]int32, T), maxSize: make([]int, n)},
		prev:              make([]int32, P),
		currentAssignment: currentAssignment{cur: make([]int32, P), lists: make([][]int32, n), at: make([]int32, P)},
		balancing:         balancing{in: make([]bool, n), group: make([]int32, n), topicGroups: make([][]int32, T), hist: make([]int32, P+2)},
		mov:               newMovements(tp, n),
	}
	for g := range k.cur {
		k.cur[g], k.prev[g] = -1, -1
	}
	for m := range ms {
		k.subs[m] = tp.subs(ms[m])
		for _, t := range k.subs[m] {
			k.can.set(m*T + int(t))
			k.potential[t] = append(k.potential[t], int32(m))
			k.maxSize[m] += int(tp.count(t))
		}
	}
	return k
}

func (k *kafkaGeneralState) fewer(a, b int32) bool {
	if la, lb := len(k.lists[a]), len(k.lists[b]); la != lb {
		return la < lb
	}
	return a < b
}

// startBalancing puts every member into its subscription group's heap.
func (k *kafkaGeneralState) startBalancing() {
	n := len(k.lists)
	pos := newPos(n)
	byKey := map[string]int32{}
	for m := range n {
		key := string(topicKey(k.subs[m]))
		gi, ok := byKey[key]
		if !ok {
			gi = int32(len(k.heaps))
			byKey[key] = gi
			k.heaps = append(k.heaps, idxHeap{pos: pos, less: k.fewer})
			for _, t := range k.subs[m] {
				k.topicGroups[t] = append(k.topicGroups[t], gi)
			}
		}
		k.group[m] = gi
		k.in[m] = true
		k.members++
		k.hist[len(k.lists[m])]++
		k.heaps[gi].push(int32(m))
	}
	k.recountEnds()
}

// leastLoaded is the balancing member with the fewest partitions (ties:
// lower id) among the subscribers of topic t, or -1.
func (k *kafkaGeneralState) leastLoaded(t int32) int32 {
	best := int32(-1)
	for _, gi := range k.topicGroups[t] {
		if m := k.heaps[gi].top(); m >= 0 && (best < 0 || k.fewer(m, best)) {
			best = m
		}
	}
	return best
}

func (k *kafkaGeneralState) add(g, c int32) {
	k.cur[g] = c
	k.at[g] = int32(len(k.lists[c]))
	k.lists[c] = append(k.lists[c], g)
	k.counted(c, +1)
}

func (k *kafkaGeneralState) remove(g int32) {
	c := k.cur[g]
	l := k.lists[c]
	i, last := k.at[g], l[len(l)-1]
	l[i], k.at[last] = last, i
	k.lists[c] = l[:len(l)-1]
	k.cur[g] = -1
	k.counted(c, -1)
}

// counted keeps the heaps and the count histogram in step with a member's
// count changing by delta (±1).
func (k *kafkaGeneralState) counted(c int32, delta int) {
	k.balancedKnow = false
	if len(k.heaps) == 0 || !k.in[c] {
		return
	}
	k.heaps[k.group[c]].fix(c)
	now := len(k.lists[c])
	k.hist[now-delta]--
	k.hist[now]++
	k.lo, k.hi = min(k.lo, now), max(k.hi, now)
	if k.hist[k.lo] == 0 {
		k.lo++
	}
	if k.hist[k.hi] == 0 {
		k.hi--
	}
}

func (k *kafkaGeneralState) recountEnds() {
	k.lo, k.hi = len(k.hist), -1
	for m, in := range k.in {
		if in {
			k.lo, k.hi = min(k.lo, len(k.lists[m])), max(k.hi, len(k.lists[m]))
		}
	}
}

// canParticipate: a member takes part in balancing if it could get more, or
// holds a partition some other member could take.
func (k *kafkaGeneralState) canParticipate(m int32) bool {
	if len(k.lists[m]) < k.maxSize[m] {
		return true
	}
	for _, g := range k.lists[m] {
		if len(k.potential[k.tp.topicOf[g]]) >= 2 {
			return true
		}
	}
	return false
}

func (k *kafkaGeneralState) retire(m int32) {
	k.heaps[k.group[m]].remove(m)
	k.hist[len(k.lists[m])]--
	k.in[m] = false
	k.members--
}

// score is the sum of count differences over all pairs of balancing members.
func (k *kafkaGeneralState) score() int64 {
	var counts []int
	for m, in := range k.in {
		if in {
			counts = append(counts, len(k.lists[m]))
		}
	}
	slices.Sort(counts)
	var s int64
	for i, c := range counts {
		s += int64(c) * int64(2*i-len(counts)+1)
	}
	return s
}

// reassign is one performReassignments run over the given partitions.
func (k *kafkaGeneralState) reassign(partitions []int32) bool {
	moved := false
	for {
		modified := false
		for _, g := range partitions {
			if k.isBalanced() {
				break
			}
			c := k.cur[g]
			if c < 0 {
				continue
			}
			t := k.tp.topicOf[g]
			lc := len(k.lists[c])
			// Kafka (performReassignments) moves a partition back to its
			// previous owner without checking that the owner still subscribes
			// to the topic: its answer is then invalid. We stay valid and
			// require it (and that the owner takes part in balancing, without
			// which Kafka throws a NullPointerException).
			if p := k.prev[g]; p >= 0 && p != c && k.in[p] && k.can.has(int(p)*k.T+int(t)) && lc > len(k.lists[p])+1 {
				k.move(g, p)
				moved, modified = true, true
				continue
			}
			// Kafka: some subscriber of t has fewer than lc-1, i.e. the least
			// loaded one has; it is the one Kafka then moves the partition to.
			if o := k.leastLoaded(t); o >= 0 && lc > len(k.lists[o])+1 {
				k.move(g, o)
				moved, modified = true, true
			}
		}
		if !modified {
			return moved
		}
	}
}

// move hands g (or the partition the movement bookkeeping picks instead) to
// member to.
func (k *kafkaGeneralState) move(g, to int32) {
	t := k.tp.topicOf[g]
	g = k.mov.pick(g, k.cur[g], to, t)
	k.mov.record(g, k.cur[g], to, t)
	if k.tracking {
		k.trackMove(t, k.cur[g], to)
	}
	k.remove(g)
	k.add(g, to)
}
