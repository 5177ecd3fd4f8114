package assign

// GeneralAssignmentBuilder.isBalanced, answered from bookkeeping kept
// move by move rather than by Kafka's scan over every partition.

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
