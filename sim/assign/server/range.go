package server

import (
	"sort"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/javaorder"
)

// Range is Kafka's server-side RangeAssignor ("range"), as rewritten by
// KAFKA-16944: per topic, its subscribers in Kafka's member order (static
// members by group.instance.id first, then dynamic ones by member id) each
// get a contiguous range of partitions/subscribers partitions, the first
// partitions%subscribers of them one more. It is not sticky: the answer does
// not depend on the current assignment, only on who subscribes to what.
type Range struct{}

// Name is RangeAssignor.RANGE_ASSIGNOR_NAME.
func (Range) Name() string { return "range" }

// Assign computes the target assignment (assignHomogeneousGroup and
// assignHeterogeneousGroup give the same answer for a homogeneous group;
// kgrepl runs the one general walk).
func (r Range) Assign(in Input) (assign.Assignment, error) { return r.assign(in, specOptions{}) }

func (Range) assign(in Input, opt specOptions) (assign.Assignment, error) {
	g, err := buildGroupSpec(in, opt)
	if err != nil {
		return nil, err
	}
	if len(g.members) == 0 {
		return assign.Assignment{}, nil
	}
	// sortMemberIds: List.sort is stable, so two static members with the
	// same instance id keep the member map's order.
	order := make([]int, len(g.members))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := g.members[order[i]], g.members[order[j]]
		switch {
		case a.instanceID != "" && b.instanceID != "":
			return javaorder.StringCompare(a.instanceID, b.instanceID) < 0
		case a.instanceID != "":
			return true
		case b.instanceID != "":
			return false
		}
		return javaorder.StringCompare(a.id, b.id) < 0
	})
	subscribers := make([]int, len(g.topics))
	for _, m := range g.members {
		for _, t := range m.subscribed {
			subscribers[t]++
		}
	}
	next := make([]int, len(g.topics))  // TopicMetadata.nextRange
	extra := make([]int, len(g.topics)) // TopicMetadata.extraPartitions
	for t := range g.topics {
		if subscribers[t] > 0 {
			extra[t] = g.topics[t].Partitions % subscribers[t]
		}
	}
	owner := g.newOwners()
	for _, mi := range order {
		for _, t := range g.members[mi].subscribed {
			quota := g.topics[t].Partitions / subscribers[t]
			if extra[t] > 0 {
				quota++
				extra[t]--
			}
			end := min(next[t]+quota, g.topics[t].Partitions)
			for p := next[t]; p < end; p++ {
				owner[t][p] = int32(mi)
			}
			next[t] = end
		}
	}
	return g.result(owner, opt), nil
}
