package assign

import (
	"cmp"
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
func kafkaSticky(in Input) Assignment {
	byID := idOrder(in.Members)
	ms := permute(in.Members, byID)
	tp := newTopology(ms, in.Partitions)
	P := tp.total()
	order := kafkaMemberWalk(in.Members, byID)

	holder := make([]int32, P) // who keeps the claim; -1 none
	last := make([]int32, P)   // last member seen claiming it
	stamp := make([]int32, P)  // skips a member's repeated claims
	multi := make([]bool, P)   // claimed twice in one generation
	for g := range holder {
		holder[g], last[g] = -1, -1
	}
	for _, m := range order {
		gm := ms[m].Generation
		for _, p := range ms[m].Owned {
			g := tp.id(p)
			if g < 0 || stamp[g] == m+1 {
				continue
			}
			stamp[g] = m + 1
			other := last[g]
			switch {
			case other < 0:
				holder[g], last[g] = m, m
			case gm == ms[other].Generation:
				multi[g] = true
				holder[g], last[g] = -1, m
			case gm > ms[other].Generation:
				holder[g], last[g] = m, m
			}
		}
	}

	var lists [][]int32
	if kafkaSubscriptionsEqual(ms) {
		lists = kafkaConstrained(tp, order, holder, multi)
	} else {
		lists = kafkaGeneral(tp, ms, order, holder)
	}
	return tp.assignment(memberIDs(ms), lists)
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
func kafkaConstrained(tp *topology, order []int32, holder []int32, multi []bool) [][]int32 {
	P, n := tp.total(), len(order)
	lists := make([][]int32, n)
	if n == 0 {
		return lists
	}
	owned := make([][]int32, n)
	for g, h := range holder {
		if h >= 0 && !multi[g] {
			owned[h] = append(owned[h], int32(g))
		}
	}
	minQ, maxQ := P/n, (P+n-1)/n
	expOver, over := P%n, 0
	assigned := make([]bool, P)
	var under, atMin []int32 // both end up in id order, as Kafka sorts them
	for _, m := range order {
		o := owned[m]
		slices.SortFunc(o, func(a, b int32) int {
			if c := cmp.Compare(tp.part(a), tp.part(b)); c != 0 {
				return c
			}
			return cmp.Compare(tp.topicOf[a], tp.topicOf[b])
		})
		keep := len(o)
		switch {
		case len(o) < minQ:
			under = append(under, m)
		case len(o) >= maxQ && over < expOver:
			over++
			if over == expOver {
				atMin = atMin[:0]
			}
			keep = maxQ
		default:
			keep = minQ
			if over < expOver {
				atMin = append(atMin, m)
			}
		}
		lists[m] = append(make([]int32, 0, maxQ), o[:keep]...)
		for _, g := range o[:keep] {
			assigned[g] = true
		}
	}
	slices.Sort(under)
	slices.Sort(atMin)

	next, head := 0, 0 // next: the walk over under; head: front of atMin
	for g := int32(0); g < int32(P); g++ {
		if assigned[g] {
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
			panic("assign: kafka sticky: no member can take " + tp.partition(g).String())
		}
		lists[c] = append(lists[c], g)
		switch len(lists[c]) {
		case minQ:
			if fromUnder {
				under = slices.Delete(under, next-1, next)
				next--
			}
			atMin = append(atMin, c)
		case maxQ:
			over++
		}
	}
	return lists
}
