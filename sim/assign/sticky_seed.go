package assign

import "slices"

// seedSticky runs the seed's sticky rules (SeedRules):
//
//  1. Keep: each member keeps what it owns, counting only partitions that
//     still exist and whose topic it subscribes to. When several members
//     claim a partition, the claim with the higher Generation wins; on a tie
//     the lower member id wins.
//  2. Fill: unowned partitions, in (topic, partition) order, each go to the
//     member with the fewest partitions among the topic's subscribers (ties:
//     lower member id).
//  3. Balance: while some member has at least two more partitions than
//     another, the member with the most (ties: lower id) gives its last
//     partition, the highest in (topic, partition) order, to the member with
//     the fewest (ties: lower id). With unequal subscriptions a move needs a
//     receiver that subscribes to the partition's topic: donors are tried from
//     the most loaded down, and for each donor the receivers from the least
//     loaded up (only those with at least two fewer), and the donor gives its
//     last partition that receiver can take; the first such pair moves. Every
//     move lowers the sum of squared counts, so the loop ends.
//
// Member ids compare as plain strings. balance nil picks the balance loop
// (a fast one for equal subscriptions, seedBalanceGeneral otherwise); the
// tests pass others to check they agree.
func seedSticky(in Input, balance seedBalancer) Assignment {
	ms := permute(in.Members, idOrder(in.Members))
	tp := newTopology(ms, in.Partitions).withTopicOf()
	n, T, P := len(ms), len(tp.names), tp.total()

	subs := make([][]int32, n)
	can := newBitset(n * T) // can.has(m*T+t): member m subscribes to topic t
	topicSubs := make([][]int32, T)
	equal := true
	for m := range ms {
		subs[m] = tp.subs(ms[m])
		for _, t := range subs[m] {
			can.set(m*T + int(t))
			topicSubs[t] = append(topicSubs[t], int32(m))
		}
		if m > 0 && !slices.Equal(subs[m], subs[0]) {
			equal = false
		}
	}

	// 1. Keep.
	owner := make([]int32, P)
	for g := range owner {
		owner[g] = -1
	}
	for m := range ms {
		for _, p := range ms[m].Owned {
			g := tp.id(p)
			if g < 0 || !can.has(m*T+int(tp.topicOf[g])) {
				continue
			}
			// Members are walked in id order, so a tie keeps the lower id.
			if o := owner[g]; o < 0 || ms[m].Generation > ms[o].Generation {
				owner[g] = int32(m)
			}
		}
	}
	lists := make([][]int32, n)
	for g, o := range owner {
		if o >= 0 {
			lists[o] = append(lists[o], int32(g))
		}
	}

	// 2. Fill, topic by topic (dense ids ascend in (topic, partition) order).
	fewest := func(a, b int32) bool {
		if la, lb := len(lists[a]), len(lists[b]); la != lb {
			return la < lb
		}
		return a < b
	}
	h := idxHeap{pos: newPos(n), less: fewest}
	for t := int32(0); t < int32(T); t++ {
		if len(topicSubs[t]) == 0 || !slices.Contains(owner[tp.base[t]:tp.base[t+1]], -1) {
			continue
		}
		h.items = h.items[:0]
		for _, m := range topicSubs[t] {
			h.pos[m] = int32(len(h.items))
			h.items = append(h.items, m)
		}
		h.init()
		for g := tp.base[t]; g < tp.base[t+1]; g++ {
			if owner[g] < 0 {
				m := h.top()
				lists[m] = append(lists[m], g)
				h.fix(m)
			}
		}
		for _, m := range h.items {
			h.pos[m] = -1
		}
	}
	for _, l := range lists {
		slices.Sort(l)
	}

	// 3. Balance.
	if balance == nil {
		balance = seedBalanceGeneral
		if equal {
			balance = seedBalanceEqual
		}
	}
	balance(lists, subs, can, T, tp.topicOf)
	return tp.assignment(memberIDs(ms), lists)
}

// seedBalanceEqual is the balance loop when every member can take every
// partition: the most loaded member (ties: lower id) gives its last
// partition to the least loaded (ties: lower id) until counts differ by at
// most one. Two heaps keep both ends at O(log n) per move.
func seedBalanceEqual(lists [][]int32, _ [][]int32, _ bitset, _ int, _ []int32) {
	n := len(lists)
	if n < 2 {
		return
	}
	lo := idxHeap{pos: newPos(n), less: func(a, b int32) bool {
		if la, lb := len(lists[a]), len(lists[b]); la != lb {
			return la < lb
		}
		return a < b
	}}
	hi := idxHeap{pos: newPos(n), less: func(a, b int32) bool {
		if la, lb := len(lists[a]), len(lists[b]); la != lb {
			return la > lb
		}
		return a < b
	}}
	for m := int32(0); m < int32(n); m++ {
		lo.pos[m], hi.pos[m] = m, m
		lo.items = append(lo.items, m)
		hi.items = append(hi.items, m)
	}
	lo.init()
	hi.init()
	for {
		d, r := hi.top(), lo.top()
		if len(lists[d])-len(lists[r]) <= 1 {
			return
		}
		// One count change, then both heaps fixed, then the other: a heap
		// fix assumes only one key moved.
		last := len(lists[d]) - 1
		g := lists[d][last]
		lists[d] = lists[d][:last]
		hi.fix(d)
		lo.fix(d)
		lists[r] = insertSorted(lists[r], g)
		hi.fix(r)
		lo.fix(r)
	}
}

// seedBalancer runs the balance step on per-member sorted lists of dense
// ids; subs[m] are m's topics, can.has(m*T+t) whether m takes topic t.
type seedBalancer func(lists [][]int32, subs [][]int32, can bitset, T int, topicOf []int32)

// seedBalanceGeneral is the balance loop for unequal subscriptions (see
// seedSticky). Members with the same subscription form a group with a heap
// by (count, id), so the first receiver able to take something from a donor
// is the best top among the groups whose topics the donor holds; donors come
// off a heap by (count desc, id).
func seedBalanceGeneral(lists [][]int32, subs [][]int32, can bitset, T int, topicOf []int32) {
	if len(lists) < 2 {
		return
	}
	b := newSeedGeneral(lists, subs, can, T, topicOf)
	var skipped []int32
	for {
		fewest := b.fewest()
		moved := false
		skipped = skipped[:0]
		for b.donors.len() > 0 && !moved {
			d := b.donors.top()
			if len(lists[d])-fewest < 2 {
				break // donors only get smaller from here on
			}
			best := b.receiver(d)
			if best < 0 {
				b.donors.remove(d)
				skipped = append(skipped, d)
				continue
			}
			moved = b.give(d, best)
		}
		for _, d := range skipped {
			b.donors.push(d)
		}
		if !moved {
			return
		}
	}
}

// seedGeneral is seedBalanceGeneral's state: the lists, how many
// partitions of each topic each member holds (held[m*T+t]), the
// receivers' heaps by subscription group, and the donors' heap.
type seedGeneral struct {
	lists       [][]int32
	can         bitset
	T           int
	topicOf     []int32
	held        []int32
	group       []int32   // member -> its subscription group
	groupTopics [][]int32 // group -> its topics
	heaps       []idxHeap // group -> its members by (count, id)
	donors      idxHeap   // every member by (count desc, id)
}

func newSeedGeneral(lists [][]int32, subs [][]int32, can bitset, T int, topicOf []int32) *seedGeneral {
	n := len(lists)
	b := &seedGeneral{lists: lists, can: can, T: T, topicOf: topicOf, held: make([]int32, n*T), group: make([]int32, n)}
	for m, l := range lists {
		for _, g := range l {
			b.held[m*T+int(topicOf[g])]++
		}
	}
	byKey := map[string]int32{}
	recvPos := newPos(n)
	for m := range n {
		key := string(topicKey(subs[m]))
		gi, ok := byKey[key]
		if !ok {
			gi = int32(len(b.heaps))
			byKey[key] = gi
			b.groupTopics = append(b.groupTopics, subs[m])
			b.heaps = append(b.heaps, idxHeap{pos: recvPos, less: b.fewer})
		}
		b.group[m] = gi
		b.heaps[gi].push(int32(m))
	}
	b.donors = idxHeap{pos: newPos(n), less: func(a, c int32) bool {
		if la, lc := len(lists[a]), len(lists[c]); la != lc {
			return la > lc
		}
		return a < c
	}}
	for m := range n {
		b.donors.push(int32(m))
	}
	return b
}

// fewer orders receivers by (count, id).
func (b *seedGeneral) fewer(a, c int32) bool {
	if la, lc := len(b.lists[a]), len(b.lists[c]); la != lc {
		return la < lc
	}
	return a < c
}

// fewest is the smallest count among the receivers.
func (b *seedGeneral) fewest() int {
	fewest := -1
	for gi := range b.heaps {
		if top := b.heaps[gi].top(); top >= 0 && (fewest < 0 || len(b.lists[top]) < fewest) {
			fewest = len(b.lists[top])
		}
	}
	return fewest
}

// receiver is the member that takes a partition from donor d: the best
// (count, id) of the groups' tops with at least two fewer than d and a
// topic d holds; -1 for none.
func (b *seedGeneral) receiver(d int32) int32 {
	ld := len(b.lists[d])
	best := int32(-1)
	for gi, ts := range b.groupTopics {
		top := b.heaps[gi].top()
		if top < 0 || ld-len(b.lists[top]) < 2 || (best >= 0 && !b.fewer(top, best)) {
			continue
		}
		for _, t := range ts {
			if b.held[int(d)*b.T+int(t)] > 0 {
				best = top
				break
			}
		}
	}
	return best
}

// give moves to member to the last of d's partitions whose topic to takes,
// and reports whether d had one.
func (b *seedGeneral) give(d, to int32) bool {
	for i := len(b.lists[d]) - 1; i >= 0; i-- {
		g := b.lists[d][i]
		t := int(b.topicOf[g])
		if !b.can.has(int(to)*b.T + t) {
			continue
		}
		b.lists[d] = slices.Delete(b.lists[d], i, i+1)
		b.held[int(d)*b.T+t]--
		b.counted(d)
		b.lists[to] = insertSorted(b.lists[to], g)
		b.held[int(to)*b.T+t]++
		b.counted(to)
		return true
	}
	return false
}

// counted fixes m's place in both heaps after its count changed.
func (b *seedGeneral) counted(m int32) {
	b.donors.fix(m)
	b.heaps[b.group[m]].fix(m)
}

func insertSorted(l []int32, g int32) []int32 {
	i, _ := slices.BinarySearch(l, g)
	return slices.Insert(l, i, g)
}
