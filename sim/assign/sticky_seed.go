package assign

import (
	"slices"
	"sort"
)

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
// Member ids compare as plain strings. forceGeneral makes equal
// subscriptions take the general balance loop too (the tests check both
// loops agree).
func seedSticky(in Input, forceGeneral bool) Assignment {
	ms := permute(in.Members, idOrder(in.Members))
	tp := newTopology(ms, in.Partitions)
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
	if equal && !forceGeneral {
		seedBalanceEqual(lists)
	} else {
		seedBalanceGeneral(lists, can, T, tp.topicOf)
	}
	return tp.assignment(memberIDs(ms), lists)
}

// seedBalanceEqual is the balance loop when every member can take every
// partition: the most loaded member (ties: lower id) gives its last
// partition to the least loaded (ties: lower id) until counts differ by at
// most one. Two heaps keep both ends at O(log n) per move.
func seedBalanceEqual(lists [][]int32) {
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

// seedBalanceGeneral is the balance loop for unequal subscriptions (see
// seedSticky). It re-sorts the members before every move, which is fine for
// the group sizes the simulator runs with unequal subscriptions.
func seedBalanceGeneral(lists [][]int32, can bitset, T int, topicOf []int32) {
	n := len(lists)
	donors := make([]int32, n)
	receivers := make([]int32, n)
	for {
		for m := range donors {
			donors[m], receivers[m] = int32(m), int32(m)
		}
		sort.Slice(donors, func(i, j int) bool {
			a, b := donors[i], donors[j]
			if la, lb := len(lists[a]), len(lists[b]); la != lb {
				return la > lb
			}
			return a < b
		})
		sort.Slice(receivers, func(i, j int) bool {
			a, b := receivers[i], receivers[j]
			if la, lb := len(lists[a]), len(lists[b]); la != lb {
				return la < lb
			}
			return a < b
		})
		if !seedMoveOne(lists, donors, receivers, can, T, topicOf) {
			return
		}
	}
}

func seedMoveOne(lists [][]int32, donors, receivers []int32, can bitset, T int, topicOf []int32) bool {
	if len(receivers) == 0 {
		return false
	}
	fewest := len(lists[receivers[0]])
	for _, d := range donors {
		ld := len(lists[d])
		if ld-fewest < 2 {
			// Donors only get smaller from here on.
			return false
		}
		for _, r := range receivers {
			if ld-len(lists[r]) < 2 {
				break
			}
			for i := ld - 1; i >= 0; i-- {
				g := lists[d][i]
				if can.has(int(r)*T + int(topicOf[g])) {
					lists[d] = slices.Delete(lists[d], i, i+1)
					lists[r] = insertSorted(lists[r], g)
					return true
				}
			}
		}
	}
	return false
}

func insertSorted(l []int32, g int32) []int32 {
	i, _ := slices.BinarySearch(l, g)
	return slices.Insert(l, i, g)
}
