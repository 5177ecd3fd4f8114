package assign

import "slices"

// cooperativeStickyAssignor is "cooperative-sticky" (KIP-429): the sticky
// target of the chosen rules, then CooperativeAdjust, so a partition only
// changes hands once its previous owner has revoked it (in the follow-up
// rebalance).
type cooperativeStickyAssignor struct{ rules StickyRules }

func (cooperativeStickyAssignor) Name() string       { return "cooperative-sticky" }
func (cooperativeStickyAssignor) Protocol() Protocol { return Cooperative }

func (a cooperativeStickyAssignor) Assign(in Input) Assignment {
	if a.rules == KafkaRules {
		return kafkaSticky(in, true) // CooperativeAdjust on the way
	}
	return CooperativeAdjust(in, stickyAssignor(a).Assign(in))
}

// CooperativeAdjust is the cooperative protocol's adjustment of a target
// assignment (KIP-429; Kafka's CooperativeStickyAssignor.adjustAssignment):
// a partition that target gives to a new owner while another member still
// owns it (lists it in Owned) is withheld, assigned to nobody this round. Its
// owner, not finding it in its new assignment, revokes it and rejoins at
// once; in that follow-up rebalance nobody owns it and the sticky target
// hands it over. So a partition is never handed to a member while another
// still holds it, and a partition that stays put is never paused.
//
// Precisely, member X keeps partition p of target[X] when no other member
// lists p in Owned, or when X lists p itself and no other claimant has a
// higher Generation. A stale claim (a lower generation, e.g. a zombie that
// missed a rebalance) therefore does not hold back the member of the current
// generation, and a member claiming p with a lower generation than another
// claimant does not get it. Kafka computes the same set (its
// partitionsTransferringOwnership) except in one malformed case: when two
// members claim p in the same generation, Kafka's equal-subscription path
// withholds p from whoever gets it, while we let a claimant of the highest
// generation keep it.
//
// The result has an entry for every member of in (non-nil, sorted by (topic,
// partition)); target entries for ids not in in are dropped. The function is
// pure: neither in nor target is modified.
func CooperativeAdjust(in Input, target Assignment) Assignment {
	type claim struct {
		stamp int32 // last member (index+1) counted
		n     int32 // distinct claimants
		gen   int   // highest generation claimed
	}
	topics := make([]string, 0, len(in.Partitions))
	for t := range in.Partitions {
		topics = append(topics, t)
	}
	tp := newTopology([]Member{{Topics: topics}}, in.Partitions)
	dense := make([]claim, tp.total())
	var sparse map[TopicPartition]*claim // claims on partitions in.Partitions does not know
	lookup := func(p TopicPartition, create bool) *claim {
		if g := tp.id(p); g >= 0 {
			return &dense[g]
		}
		c := sparse[p]
		if c == nil && create {
			if sparse == nil {
				sparse = map[TopicPartition]*claim{}
			}
			c = &claim{}
			sparse[p] = c
		}
		return c
	}
	for mi, m := range in.Members {
		stamp := int32(mi + 1)
		for _, p := range m.Owned {
			if c := lookup(p, true); c.stamp != stamp {
				c.stamp = stamp
				c.n++
				if c.n == 1 || m.Generation > c.gen {
					c.gen = m.Generation
				}
			}
		}
	}
	out := make(Assignment, len(in.Members))
	mark := make([]int32, tp.total()) // mark[g] == mi+1: member mi lists g
	for mi, m := range in.Members {
		want := target[m.MemberID]
		stamp := int32(mi + 1)
		var sparseMine map[TopicPartition]bool
		for _, p := range m.Owned {
			if g := tp.id(p); g >= 0 {
				mark[g] = stamp
			} else {
				if sparseMine == nil {
					sparseMine = map[TopicPartition]bool{}
				}
				sparseMine[p] = true
			}
		}
		owns := func(p TopicPartition) bool {
			if g := tp.id(p); g >= 0 {
				return mark[g] == stamp
			}
			return sparseMine[p]
		}
		got := make([]TopicPartition, 0, len(want))
		for _, p := range want {
			if c := lookup(p, false); c == nil || c.n == 0 || (owns(p) && m.Generation == c.gen) {
				got = append(got, p)
			}
		}
		if !slices.IsSortedFunc(got, comparePartitions) {
			slices.SortFunc(got, comparePartitions)
		}
		out[m.MemberID] = got
	}
	return out
}

func comparePartitions(a, b TopicPartition) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}
