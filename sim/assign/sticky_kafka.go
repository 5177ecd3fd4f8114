package assign

import (
	"slices"

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
	count := make([]int32, n) // valid claims, then the partitions held
	for _, s := range state {
		if h := validClaim(s); h >= 0 {
			count[h]++
		}
	}
	q := constrainedQuotas(order, count, P)
	q.reKeep(tp, state, count, owner)
	q.fill(tp, count, owner)
	return owner
}

// validClaim is the member a claim belongs to, or -1 for a claim no member
// keeps (void, or claimed twice in one generation).
func validClaim(s uint32) int32 {
	if s&(claimVoid|claimMulti) != 0 || s == 0 {
		return -1
	}
	return int32(s&claimMember) - 1
}

// constrained is what ConstrainedAssignmentBuilder decides before it moves
// a partition: the quotas, how many claims each member re-keeps, and the
// members still short of minQuota (under) or allowed one more (atMin).
type constrained struct {
	minQ    int32
	keep    []int32
	under   []int32 // both in id order, as Kafka sorts them
	atMin   []int32
	trimmed int // claims of members that keep fewer than they claim
}

// constrainedQuotas walks the members in the HashMap order, deciding what
// each re-keeps (the first bullet of kafkaConstrained's comment).
func constrainedQuotas(order, count []int32, P int) constrained {
	n := len(order)
	minQ, maxQ := int32(P/n), int32((P+n-1)/n)
	expOver, over := int32(P%n), int32(0)
	q := constrained{minQ: minQ, keep: make([]int32, n)}
	for _, m := range order {
		c := count[m]
		q.keep[m] = c
		switch {
		case c < minQ:
			q.under = append(q.under, m)
		case c >= maxQ && over < expOver:
			over++
			if over == expOver {
				q.atMin = q.atMin[:0]
			}
			q.keep[m] = maxQ
		default:
			q.keep[m] = minQ
			if over < expOver {
				q.atMin = append(q.atMin, m)
			}
		}
		if q.keep[m] < c {
			q.trimmed += int(c)
		}
	}
	slices.Sort(q.under)
	slices.Sort(q.atMin)
	return q
}

// reKeep gives each member the claims it re-keeps in owner (-1 elsewhere)
// and sets count to what each then holds.
func (q constrained) reKeep(tp *topology, state claimState, count, owner []int32) {
	keep := q.keep
	// Members that keep all their claims keep them where they are; the
	// others' claims are gathered as (partition, topic) keys.
	var cut []uint64
	var cutAt []int32 // member -> its claims' start in cut, then the next free slot
	if q.trimmed > 0 {
		cut = make([]uint64, q.trimmed)
		cutAt = make([]int32, len(keep))
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
			h := validClaim(state[b+p])
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
}

// fill gives the partitions nobody re-kept, in (topic, partition) order,
// round-robin to the members under minQuota, then one each to the members
// at it (the second bullet of kafkaConstrained's comment).
func (q constrained) fill(tp *topology, count, owner []int32) {
	under, atMin := q.under, q.atMin
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
		if count[c]++; count[c] == q.minQ {
			if fromUnder {
				under = slices.Delete(under, next-1, next)
				next--
			}
			atMin = append(atMin, c)
		}
	}
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
