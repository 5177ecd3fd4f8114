package assign

import (
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/javaorder"
)

// kafkaSticky is KafkaRules: the algorithm of Apache Kafka 4.x's
// AbstractStickyAssignor (used by both StickyAssignor and
// CooperativeStickyAssignor), without rack awareness. It aims for balance
// first (counts differ by at most one where subscriptions allow), then
// stickiness (members keep as much of what they own as balance permits).
//
// Order: Kafka walks several Java HashMaps of members (the leader's member
// id -> subscription map, and maps filled from it), and this order decides
// which member keeps a contested claim, which members re-keep maxQuota
// partitions, and which previous owner counts. We walk members in the
// iteration order of a java.util.HashMap filled in JoinGroup order (the order
// of in.Members), as ConsumerCoordinator.onLeaderElected fills it (see
// sim/javaorder). Where Kafka takes the first partition of a HashSet (the
// partition-movement bookkeeping of the general case) we take the same one.
// TreeSets and sorts use Kafka's comparators (member ids as strings; ties by
// id). Kafka keeps the highest generation it has seen in the assignor object
// across calls; a pure function uses the highest in its input.
//
// Steps:
//
//   - Claims. Members are walked in the HashMap order; each claimed partition that
//     exists (of a topic someone subscribes to) is checked against the last
//     member seen claiming it: a higher generation takes it over, a lower one
//     is ignored, an equal one voids it (neither keeps it; Kafka logs an
//     error). A later claim of a higher generation can still take a voided
//     partition, except in the constrained assignment, where a partition
//     claimed twice in one generation stays unowned. Generation -1 means
//     unknown.
//   - If every member has the same subscription (as a set of topic names,
//     known or not), the constrained assignment runs; otherwise the general
//     one.
//
// With cooperative set the answer is CooperativeAdjust of that target,
// computed on the way (claims.adjust) rather than over a second Assignment.
func kafkaSticky(in Input, cooperative bool) Assignment {
	byID := idOrder(in.Members)
	ms := permute(in.Members, byID)
	tp := newTopology(ms, in.Partitions)
	order := kafkaMemberWalk(in.Members, byID)
	c := kafkaClaims(tp, ms, order, cooperative)

	var owner []int32
	if kafkaSubscriptionsEqual(ms) {
		owner = kafkaConstrained(tp, order, c.state)
	} else {
		owner = kafkaGeneral(tp, ms, order, c.state.holders())
	}
	if cooperative {
		c.adjust(owner)
	}
	return tp.ownerAssignment(memberIDs(ms), owner)
}

// claimState is what the claims leave on one partition, packed in a word:
// the last member seen claiming it (index+1 in the low bits; 0: nobody),
// whether that claim was voided by an equal generation (then nobody keeps
// it), and whether any claim on it ever was (the constrained assignment
// then leaves it unowned).
type claimState []uint32

const (
	claimMember = 1<<30 - 1
	claimVoid   = 1 << 30
	claimMulti  = 1 << 31
)

// claims is what kafkaClaims learns from the members' claims.
type claims struct {
	state claimState
	// For the cooperative adjustment, per partition: a claimant of the
	// highest generation claiming it (index+1; 0: nobody), with claimMulti
	// when more than one member claims it in that generation.
	top      []uint32
	gen      []int   // by member index+1
	ids      []int32 // each member's claimed dense ids, ascending: ids[from[m]:to[m]]
	from, to []int
}

// kafkaClaims walks the members in the HashMap order and settles each
// claimed partition that exists (of a topic someone subscribes to) against
// the last member seen claiming it: a higher generation takes it over, a
// lower one is ignored, an equal one voids it. A member's repeated claim of
// one partition counts once (it is then the last claimant, or its claim was
// of a lower generation and is ignored again).
//
// Only the order of the claims on one partition matters, so they are
// settled a block of partitions at a time (each member's claims sorted,
// every member's claims on the block in walk order): the state being
// settled then stays in the processor's cache, where walking member by
// member would touch a partition of every topic in turn.
func kafkaClaims(tp *topology, ms []Member, order []int32, cooperative bool) *claims {
	P := tp.total()
	c := &claims{state: make(claimState, P), gen: make([]int, len(ms)+1),
		from: make([]int, len(ms)), to: make([]int, len(ms))}
	for m := range ms {
		c.gen[m+1] = ms[m].Generation
	}
	if cooperative {
		c.top = make([]uint32, P)
	}
	total := 0
	for _, m := range ms {
		total += len(m.Owned)
	}
	c.ids = make([]int32, 0, total)
	for _, m := range order {
		c.from[m] = len(c.ids)
		c.ids = tp.appendIDs(c.ids, ms[m].Owned)
		c.to[m] = len(c.ids)
		if mine := c.ids[c.from[m]:]; !slices.IsSorted(mine) {
			slices.Sort(mine)
		}
	}
	next := slices.Clone(c.from) // each member's next claim to settle
	state, top, gen := c.state, c.top, c.gen
	for end := claimBlock; end < P+claimBlock; end += claimBlock {
		for _, m := range order {
			me := uint32(m + 1)
			j := next[m]
			for ; j < c.to[m] && c.ids[j] < int32(end); j++ {
				g := c.ids[j]
				s := state[g]
				switch other := s & claimMember; {
				case other == me:
				case other == 0:
					state[g] = me
				case gen[me] == gen[other]:
					state[g] = me | claimVoid | claimMulti
				case gen[me] > gen[other]:
					state[g] = me | s&claimMulti
				}
				if top == nil {
					continue
				}
				switch t := top[g] & claimMember; {
				case t == 0 || gen[me] > gen[t]:
					top[g] = me
				case t != me && gen[me] == gen[t]:
					top[g] |= claimMulti
				}
			}
			next[m] = j
		}
	}
	return c
}

// adjust is CooperativeAdjust on a target given as an owner array: a
// partition stays with its new owner when nobody claims it, or when the
// owner claims it with the highest generation any claimant has.
func (c *claims) adjust(owner []int32) {
	for g, o := range owner {
		if o < 0 {
			continue
		}
		t := c.top[g]
		switch {
		case t == 0, t&claimMember == uint32(o+1):
		case t&claimMulti != 0 && c.gen[o+1] == c.gen[t&claimMember]:
			if _, mine := slices.BinarySearch(c.ids[c.from[o]:c.to[o]], int32(g)); !mine {
				owner[g] = -1
			}
		default:
			owner[g] = -1
		}
	}
}

// claimBlock is how many partitions' claims are settled at a time (128 KB
// of state); a variable so that tests can make blocks small.
var claimBlock = 1 << 15

// holders gives each partition's keeper after the claims (member index, -1
// none), for the general assignment.
func (c claimState) holders() []int32 {
	h := make([]int32, len(c))
	for g, s := range c {
		if s&claimVoid != 0 || s == 0 {
			h[g] = -1
		} else {
			h[g] = int32(s&claimMember) - 1
		}
	}
	return h
}

// kafkaMemberWalk is the iteration order of the leader's HashMap<String,
// Subscription> (ConsumerCoordinator.onLeaderElected: new HashMap<>(), filled
// in JoinGroup order) as indices into the members sorted by id (byID maps
// those to indices of members). Kafka's consumerToOwnedPartitions and
// currentAssignment are HashMaps of the same keys filled in this order, so
// they iterate the same way.
func kafkaMemberWalk(members []Member, byID []int) []int32 {
	dense := make([]int32, len(members))
	for d, i := range byID {
		dense[i] = int32(d)
	}
	order := make([]int32, 0, len(members))
	for _, i := range memberMapOrder(members) {
		order = append(order, dense[i])
	}
	return order
}

// memberMapOrder is the iteration order of a `new HashMap<>()` keyed by
// member id into which members were put in the given order, as indices
// into members. Member ids are distinct, so String.compareTo orders any
// tree bin fully and the order is always Java's.
func memberMapOrder(members []Member) []int {
	hashes := make([]int32, len(members))
	for i, m := range members {
		hashes[i] = javaorder.StringHash(m.MemberID)
	}
	order, _ := javaorder.Indices(hashes, func(i, j int) int {
		return javaorder.StringCompare(members[i].MemberID, members[j].MemberID)
	}, javaorder.DefaultCapacity)
	return order
}

// kafkaSubscriptionsEqual compares subscriptions as sets of topic names.
// (Kafka's own check lets a member with an empty subscription through when it
// comes first; we compare the sets exactly.)
func kafkaSubscriptionsEqual(ms []Member) bool {
	var first []string
	for i, m := range ms {
		if i > 0 && sameStrings(m.Topics, ms[0].Topics) {
			continue // the same list is the same set
		}
		s := slices.Clone(m.Topics)
		slices.Sort(s)
		s = slices.Compact(s)
		if i == 0 {
			first = s
		} else if !slices.Equal(s, first) {
			return false
		}
	}
	return true
}

// kafkaConstrained is Kafka's ConstrainedAssignmentBuilder, for equal
// subscriptions. With P partitions and N members, minQuota = P/N, maxQuota =
// ceil(P/N), and exactly P%N members end with maxQuota.
//
//   - Members, in the HashMap order, re-keep their valid claims sorted by partition
//     number, then topic (KAFKA-16277): all of them if fewer than minQuota
//     (the member is then "under"); maxQuota of them if they have that many
//     and fewer than P%N members have been granted maxQuota so far; else
//     minQuota of them (the member may still get one more while that count is
//     short: it is "at min"). What a member does not re-keep is revoked.
//   - The remaining partitions, in (topic, partition) order, go round-robin to
//     the "under" members (in id order, the walk restarting at the front when
//     it runs off the end); a member reaching minQuota leaves that list and
//     joins the back of the "at min" queue. Once no member is under, each
//     remaining partition goes to the member at the head of the "at min"
//     queue, which leaves it.
func kafkaConstrained(tp *topology, order []int32, state claimState) []int32 {
	P, n := tp.total(), len(order)
	owner := make([]int32, P)
	if n == 0 {
		for g := range owner {
			owner[g] = -1
		}
		return owner
	}
	// A member's valid claims: those it keeps, not claimed twice in one
	// generation.
	valid := func(s uint32) int32 {
		if s&(claimVoid|claimMulti) != 0 || s == 0 {
			return -1
		}
		return int32(s&claimMember) - 1
	}
	count := make([]int32, n) // valid claims, then the partitions held
	for _, s := range state {
		if h := valid(s); h >= 0 {
			count[h]++
		}
	}

	minQ, maxQ := int32(P/n), int32((P+n-1)/n)
	expOver, over := int32(P%n), int32(0)
	keep := make([]int32, n)
	var under, atMin []int32 // both end up in id order, as Kafka sorts them
	trimmed := 0             // claims of members that keep fewer than they claim
	for _, m := range order {
		c := count[m]
		keep[m] = c
		switch {
		case c < minQ:
			under = append(under, m)
		case c >= maxQ && over < expOver:
			over++
			if over == expOver {
				atMin = atMin[:0]
			}
			keep[m] = maxQ
		default:
			keep[m] = minQ
			if over < expOver {
				atMin = append(atMin, m)
			}
		}
		if keep[m] < c {
			trimmed += int(c)
		}
	}
	slices.Sort(under)
	slices.Sort(atMin)

	// Members that keep all their claims keep them where they are; the
	// others' claims are gathered as (partition, topic) keys.
	var cut []uint64
	var cutAt []int32 // member -> its claims' start in cut, then the next free slot
	if trimmed > 0 {
		cut = make([]uint64, trimmed)
		cutAt = make([]int32, n)
		next := int32(0)
		for m := range cutAt {
			cutAt[m] = next
			if keep[m] < count[m] {
				next += count[m]
			}
		}
	}
	for t := range tp.names {
		b := tp.base[t]
		for p := int32(0); p < tp.count(int32(t)); p++ {
			h := valid(state[b+p])
			switch {
			case h < 0:
				owner[b+p] = -1
			case keep[h] == count[h]:
				owner[b+p] = h
			default:
				owner[b+p] = -1
				cut[cutAt[h]] = uint64(p)<<32 | uint64(t)
				cutAt[h]++
			}
		}
	}
	// Each trimmed member re-keeps its first keep claims in order of
	// partition number, then topic (KAFKA-16277).
	for m := range keep {
		if keep[m] == count[m] {
			continue
		}
		keys := cut[cutAt[m]-count[m] : cutAt[m]]
		smallest(keys, int(keep[m]))
		for _, k := range keys[:keep[m]] {
			t := int32(uint32(k))
			owner[tp.base[t]+int32(k>>32)] = int32(m)
		}
		count[m] = keep[m]
	}

	next, head := 0, 0 // next: the walk over under; head: front of atMin
	for g := range owner {
		if owner[g] >= 0 {
			continue
		}
		var c int32
		fromUnder := true
		switch {
		case next < len(under):
			c = under[next]
			next++
		case len(under) > 0:
			c, next = under[0], 1
		case head < len(atMin):
			c, fromUnder = atMin[head], false
			head++
		default:
			panic("assign: kafka sticky: no member can take " + tp.withTopicOf().partition(int32(g)).String())
		}
		owner[g] = c
		if count[c]++; count[c] == minQ {
			if fromUnder {
				under = slices.Delete(under, next-1, next)
				next--
			}
			atMin = append(atMin, c)
		}
	}
	return owner
}

// smallest moves the k smallest of keys, in any order, to keys[:k].
func smallest(keys []uint64, k int) {
	if drop := len(keys) - k; drop > 8 {
		slices.Sort(keys)
		return
	}
	// Few to drop: move the largest to the end, one at a time.
	for end := len(keys); end > k; end-- {
		top := 0
		for i, x := range keys[:end] {
			if x > keys[top] {
				top = i
			}
		}
		keys[top], keys[end-1] = keys[end-1], keys[top]
	}
}

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
// dense member and partition ids.
type kafkaGeneralState struct {
	tp        *topology
	T         int
	subs      [][]int32 // member -> subscribed topics
	can       bitset    // can.has(m*T+t)
	potential [][]int32 // topic -> subscribers, id order
	maxSize   []int     // member -> partitions of its topics
	prev      []int32   // partition -> previous-generation owner, -1

	cur   []int32   // partition -> member, -1
	lists [][]int32 // member -> its partitions, any order
	at    []int32   // partition -> index in its member's list

	// Members taking part in balancing, grouped by identical subscription;
	// each group has a heap ordered by (count, id), so "the least loaded
	// subscriber of topic t" is the best top among the groups taking t.
	in           []bool
	group        []int32
	heaps        []idxHeap
	topicGroups  [][]int32
	hist         []int32 // count -> members in balancing with that count
	lo, hi       int     // smallest and largest count in balancing
	members      int     // members in balancing
	balanced     bool    // cached isBalanced answer...
	balancedKnow bool    // ...valid until the next move

	// Kept up to date move by move once balancing starts (tracking), so the
	// balance check needs no scan over partitions. For each subscription
	// group G and balancing member o, overlap(o, G) is how many partitions of
	// G's topics o holds; per group, how many balancing members with a
	// non-zero overlap have each total count, and the largest such count
	// (-1: none). Dense arrays where small, maps otherwise.
	tracking   bool
	ng         int32
	overDense  []int32           // o*ng+G
	overSparse map[int64]int32   // used when overDense would be too large
	histDense  []int32           // G*(P+2)+count
	histSparse []map[int32]int32 // G -> count -> members
	maxHeld    []int32           // G -> largest count of an overlapping member

	mov movements
}

func newKafkaGeneral(tp *topology, ms []Member) *kafkaGeneralState {
	n, T, P := len(ms), len(tp.names), tp.total()
	k := &kafkaGeneralState{
		tp: tp, T: T,
		subs: make([][]int32, n), can: newBitset(n * T), potential: make([][]int32, T),
		maxSize: make([]int, n), prev: make([]int32, P),
		cur: make([]int32, P), lists: make([][]int32, n), at: make([]int32, P),
		in: make([]bool, n), group: make([]int32, n), topicGroups: make([][]int32, T),
		hist: make([]int32, P+2),
		mov:  newMovements(tp, n),
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

// isBalanced: counts differ by at most one, or no member could take a
// partition from a member with at least two more.
//
// The answer only saves work: when it is false some partition can still
// move (to the least loaded subscriber of its topic), and when it is true
// none can, so the walk over the partitions would move nothing more.
func (k *kafkaGeneralState) isBalanced() bool {
	if !k.balancedKnow {
		k.balanced = k.computeBalanced()
		k.balancedKnow = true
		if balanceCheck != nil {
			balanceCheck(k, k.balanced)
		}
	}
	return k.balanced
}

// balanceCheck, set by tests only, sees every answer of computeBalanced.
var balanceCheck func(k *kafkaGeneralState, balanced bool)

// computeBalanced is GeneralAssignmentBuilder.isBalanced: false when some
// balancing member c that could hold more (fewer than its subscribed
// partitions) could take a partition of one of its topics from a balancing
// member with at least two more than c. Members with the same subscription
// share maxSize and topics, and the test is easiest for the one with the
// fewest, the top of the group's heap; "a member with at least lc+2 holding
// a partition of the group's topics" is maxHeld[G] > lc+1 (c itself never
// counts, having lc).
func (k *kafkaGeneralState) computeBalanced() bool {
	if k.members == 0 || k.lo >= k.hi-1 {
		return true
	}
	if !k.tracking {
		k.track()
	}
	for gi := range k.heaps {
		c := k.heaps[gi].top()
		if c < 0 {
			continue
		}
		lc := len(k.lists[c])
		// Only a member with at most hi-2 can find one with two more.
		if lc > k.hi-2 || lc >= k.maxSize[c] {
			continue
		}
		if k.maxHeld[gi] > int32(lc+1) {
			return false
		}
	}
	return true
}

// trackDenseLimit bounds the dense arrays of the balance bookkeeping (in
// int32 entries); past it they are maps.
var trackDenseLimit = 1 << 23

// track starts the move-by-move bookkeeping of computeBalanced, once the
// members taking part in balancing are known.
func (k *kafkaGeneralState) track() {
	n, ng, P := len(k.lists), len(k.heaps), k.tp.total()
	k.tracking, k.ng = true, int32(ng)
	if n*ng <= trackDenseLimit {
		k.overDense = make([]int32, n*ng)
	} else {
		k.overSparse = map[int64]int32{}
	}
	if ng*(P+2) <= trackDenseLimit {
		k.histDense = make([]int32, ng*(P+2))
	} else {
		k.histSparse = make([]map[int32]int32, ng)
		for gi := range k.histSparse {
			k.histSparse[gi] = map[int32]int32{}
		}
	}
	k.maxHeld = make([]int32, ng)
	for gi := range k.maxHeld {
		k.maxHeld[gi] = -1
	}
	for c := range n {
		if !k.in[c] {
			continue
		}
		for _, g := range k.lists[c] {
			for _, gi := range k.topicGroups[k.tp.topicOf[g]] {
				k.overAdd(int32(c), gi, 1)
			}
		}
		for gi := range ng {
			if k.over(int32(c), int32(gi)) > 0 {
				k.histAdd(int32(gi), int32(len(k.lists[c])), 1)
			}
		}
	}
}

func (k *kafkaGeneralState) over(o, gi int32) int32 {
	if k.overDense != nil {
		return k.overDense[o*k.ng+gi]
	}
	return k.overSparse[int64(o)*int64(k.ng)+int64(gi)]
}

func (k *kafkaGeneralState) overAdd(o, gi, d int32) {
	if k.overDense != nil {
		k.overDense[o*k.ng+gi] += d
		return
	}
	key := int64(o)*int64(k.ng) + int64(gi)
	if v := k.overSparse[key] + d; v != 0 {
		k.overSparse[key] = v
	} else {
		delete(k.overSparse, key)
	}
}

func (k *kafkaGeneralState) groupHist(gi, count int32) int32 {
	if k.histDense != nil {
		return k.histDense[int(gi)*(k.tp.total()+2)+int(count)]
	}
	return k.histSparse[gi][count]
}

// histAdd changes by d the number of members of count `count` overlapping
// group gi, and keeps maxHeld[gi].
func (k *kafkaGeneralState) histAdd(gi, count, d int32) {
	var now int32
	if k.histDense != nil {
		i := int(gi)*(k.tp.total()+2) + int(count)
		k.histDense[i] += d
		now = k.histDense[i]
	} else {
		h := k.histSparse[gi]
		now = h[count] + d
		if now != 0 {
			h[count] = now
		} else {
			delete(h, count)
		}
	}
	switch {
	case d > 0 && count > k.maxHeld[gi]:
		k.maxHeld[gi] = count
	case d < 0 && now == 0 && count == k.maxHeld[gi]:
		m := count - 1
		for m >= 0 && k.groupHist(gi, m) == 0 {
			m--
		}
		k.maxHeld[gi] = m
	}
}

// trackMove: partition g of topic t goes from balancing member a to
// balancing member b (both counts still the ones before the move).
func (k *kafkaGeneralState) trackMove(t, a, b int32) {
	ca, cb := int32(len(k.lists[a])), int32(len(k.lists[b]))
	// Take both members out of the histograms of the groups they overlap,
	// change the overlaps of t's groups, put them back with the new counts.
	for gi := range k.ng {
		if k.over(a, gi) > 0 {
			k.histAdd(gi, ca, -1)
		}
		if k.over(b, gi) > 0 {
			k.histAdd(gi, cb, -1)
		}
	}
	for _, gi := range k.topicGroups[t] {
		k.overAdd(a, gi, -1)
		k.overAdd(b, gi, 1)
	}
	for gi := range k.ng {
		if k.over(a, gi) > 0 {
			k.histAdd(gi, ca-1, 1)
		}
		if k.over(b, gi) > 0 {
			k.histAdd(gi, cb+1, 1)
		}
	}
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

// movements is Kafka's PartitionMovements: for each partition moved during
// this assignment, where it originally came from and where it is now; and
// per topic and (from, to) pair, the partitions so moved.
type movements struct {
	src, dst []int32                          // partition -> original holder / current holder; src -1: not moved
	sets     map[uint64]*javaorder.Map[int32] // by key(t, src, dst)
	n, T     uint64
	perTopic []int32
	hash     func(g int32) int32 // TopicPartition.hashCode of partition g
}

// key packs (topic, source member, destination member) into one integer.
func (mv *movements) key(t, src, dst int32) uint64 {
	return (uint64(src)*mv.n+uint64(dst))*mv.T + uint64(t)
}

func newMovements(tp *topology, n int) movements {
	P, T := tp.total(), len(tp.names)
	hash := func(g int32) int32 { p := tp.partition(g); return javaorder.TopicPartitionHash(p.Topic, p.Partition) }
	mv := movements{src: make([]int32, P), dst: make([]int32, P), sets: map[uint64]*javaorder.Map[int32]{}, perTopic: make([]int32, T), hash: hash,
		n: uint64(n), T: uint64(T)}
	for g := range mv.src {
		mv.src[g] = -1
	}
	return mv
}

// pick is getTheActualPartitionToBeMoved: moving g from `from` to `to`, if
// some partition of the same topic earlier moved from `to` to g's original
// holder, move that one back instead: the first of Kafka's HashSet of such
// partitions in Java's iteration order.
func (mv *movements) pick(g, from, to, t int32) int32 {
	if mv.perTopic[t] == 0 {
		return g
	}
	if s := mv.src[g]; s >= 0 {
		from = s
	}
	if set := mv.sets[mv.key(t, to, from)]; set != nil {
		if first, ok := set.First(); ok {
			return first
		}
	}
	return g
}

// record notes that g moves from `from` to `to`.
func (mv *movements) record(g, from, to, t int32) {
	if s := mv.src[g]; s >= 0 {
		mv.drop(g, t)
		if s != to {
			mv.add(g, s, to, t)
		}
		return
	}
	mv.add(g, from, to, t)
}

func (mv *movements) add(g, from, to, t int32) {
	mv.src[g], mv.dst[g] = from, to
	key := mv.key(t, from, to)
	set := mv.sets[key]
	if set == nil { // Kafka: new HashSet<>() for a pair with no moved partition
		// TopicPartition is not Comparable: a tree bin orders by hash code
		// alone (a topic's partitions never share one).
		set = javaorder.NewMap[int32](javaorder.DefaultCapacity, nil)
		mv.sets[key] = set
	}
	set.Put(g, mv.hash(g))
	mv.perTopic[t]++
}

func (mv *movements) drop(g, t int32) {
	key := mv.key(t, mv.src[g], mv.dst[g])
	set := mv.sets[key]
	set.Remove(g, mv.hash(g))
	if set.Len() == 0 { // Kafka drops the empty set from its map
		delete(mv.sets, key)
	}
	mv.src[g], mv.dst[g] = -1, -1
	mv.perTopic[t]--
}
