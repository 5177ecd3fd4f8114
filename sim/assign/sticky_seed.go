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
	n := len(lists)
	if n < 2 {
		return
	}
	held := make([]int32, n*T) // held[m*T+t]: partitions of topic t member m has
	for m, l := range lists {
		for _, g := range l {
			held[m*T+int(topicOf[g])]++
		}
	}
	fewer := func(a, b int32) bool {
		if la, lb := len(lists[a]), len(lists[b]); la != lb {
			return la < lb
		}
		return a < b
	}
	group := make([]int32, n)
	var groupTopics [][]int32
	var heaps []idxHeap
	byKey := map[string]int32{}
	recvPos := newPos(n)
	for m := range n {
		key := string(topicKey(subs[m]))
		gi, ok := byKey[key]
		if !ok {
			gi = int32(len(heaps))
			byKey[key] = gi
			groupTopics = append(groupTopics, subs[m])
			heaps = append(heaps, idxHeap{pos: recvPos, less: fewer})
		}
		group[m] = gi
		heaps[gi].push(int32(m))
	}
	donors := idxHeap{pos: newPos(n), less: func(a, b int32) bool {
		if la, lb := len(lists[a]), len(lists[b]); la != lb {
			return la > lb
		}
		return a < b
	}}
	for m := range n {
		donors.push(int32(m))
	}
	counted := func(m int32) {
		donors.fix(m)
		heaps[group[m]].fix(m)
	}
	var skipped []int32
	for {
		fewest := -1
		for gi := range heaps {
			if top := heaps[gi].top(); top >= 0 && (fewest < 0 || len(lists[top]) < fewest) {
				fewest = len(lists[top])
			}
		}
		moved := false
		skipped = skipped[:0]
		for donors.len() > 0 && !moved {
			d := donors.top()
			ld := len(lists[d])
			if ld-fewest < 2 {
				break // donors only get smaller from here on
			}
			best := int32(-1)
			for gi, ts := range groupTopics {
				top := heaps[gi].top()
				if top < 0 || ld-len(lists[top]) < 2 || (best >= 0 && !fewer(top, best)) {
					continue
				}
				for _, t := range ts {
					if held[int(d)*T+int(t)] > 0 {
						best = top
						break
					}
				}
			}
			if best < 0 {
				donors.remove(d)
				skipped = append(skipped, d)
				continue
			}
			for i := ld - 1; i >= 0; i-- {
				g := lists[d][i]
				t := int(topicOf[g])
				if !can.has(int(best)*T + t) {
					continue
				}
				lists[d] = slices.Delete(lists[d], i, i+1)
				held[int(d)*T+t]--
				counted(d)
				lists[best] = insertSorted(lists[best], g)
				held[int(best)*T+t]++
				counted(best)
				moved = true
				break
			}
		}
		for _, d := range skipped {
			donors.push(d)
		}
		if !moved {
			return
		}
	}
}

func insertSorted(l []int32, g int32) []int32 {
	i, _ := slices.BinarySearch(l, g)
	return slices.Insert(l, i, g)
}
