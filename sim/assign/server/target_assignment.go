package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/javaorder"
)

// GroupMember is one member of a consumer group as the coordinator keeps it
// for the target assignment: its ids and subscribed topic names.
type GroupMember struct {
	MemberID   string
	InstanceID string // group.instance.id; "" for a dynamic member
	Topics     []string
}

// TargetInput is what GroupMetadataManager.updateTargetAssignment hands
// TargetAssignmentBuilder when a member's heartbeat makes the group epoch
// move on.
type TargetInput struct {
	// Members are the group's members before this heartbeat, in the order
	// the group keeps them.
	Members []GroupMember
	// Target is the group's current target assignment by member id.
	Target map[string][]assign.TopicPartition
	// Updated is the member whose heartbeat triggers the computation: a new
	// member, or an existing one with a changed subscription.
	Updated GroupMember
	Topics  []Topic
}

// TargetResult is TargetAssignmentResult.
type TargetResult struct {
	// Target is the new target assignment of every member.
	Target assign.Assignment
	// Changed lists the members whose target assignment changed (Kafka
	// writes a ConsumerGroupTargetAssignmentMember record for each), in the
	// order Kafka writes them.
	Changed []string
	// Replaced is the member id of a static member that Updated replaces
	// (same group.instance.id, new member id), or "". The caller removes it
	// from the group.
	Replaced string
	// Inexact reports that a hashed collection Kafka iterates is in an
	// order kgrepl does not follow (a member id removed from a tree bin of
	// the member map, or keys Java tells apart only by identity hash code):
	// Kafka's answer may differ.
	Inexact bool
}

// TargetAssignment is TargetAssignmentBuilder.build as updateTargetAssignment
// drives it: every member of the group plus the updated one, each with its
// current target assignment; a static member that comes back under a new
// member id replaces the old one and inherits its target assignment; the
// assignor computes the new target, and the members whose target changed are
// listed. The assignor sees the members in the order Java iterates the
// builder's HashMap, with the replaced member put and then removed, as Kafka
// does.
func TargetAssignment(as Assignor, in TargetInput) (TargetResult, error) {
	if in.Updated.MemberID == "" {
		return TargetResult{}, fmt.Errorf("the updated member has no member id")
	}
	var res TargetResult
	byID := map[string]GroupMember{}
	m := javaorder.NewMap[string](javaorder.DefaultCapacity, javaorder.StringCompare)
	for _, gm := range in.Members {
		if gm.MemberID == "" {
			return TargetResult{}, fmt.Errorf("a group member has no member id")
		}
		byID[gm.MemberID] = gm
		m.Put(gm.MemberID, javaorder.StringHash(gm.MemberID))
		if in.Updated.InstanceID != "" && gm.InstanceID == in.Updated.InstanceID && gm.MemberID != in.Updated.MemberID {
			res.Replaced = gm.MemberID
		}
	}
	byID[in.Updated.MemberID] = in.Updated
	m.Put(in.Updated.MemberID, javaorder.StringHash(in.Updated.MemberID))
	if res.Replaced != "" {
		m.Remove(res.Replaced, javaorder.StringHash(res.Replaced))
	}

	var inexact bool
	order := m.Keys()
	res.Inexact = !m.Exact()
	members := make([]Member, len(order))
	for i, id := range order {
		gm := byID[id]
		assigned := in.Target[id]
		if id == in.Updated.MemberID && res.Replaced != "" {
			assigned = in.Target[res.Replaced]
		}
		members[i] = Member{MemberID: id, InstanceID: gm.InstanceID, Topics: gm.Topics, Assigned: assigned}
	}
	out, err := as.assign(Input{Members: members, Topics: in.Topics}, specOptions{javaOrder: true, inexact: &inexact})
	if err != nil {
		return TargetResult{}, err
	}
	res.Inexact = res.Inexact || inexact
	res.Target = out
	for _, id := range order {
		old, had := in.Target[id]
		if !had || !slices.Equal(sorted(old), out[id]) {
			res.Changed = append(res.Changed, id)
		}
	}
	return res, nil
}

// sorted is ps sorted by (topic, partition): ps itself when it already is
// (as targets the assignors gave are), else a sorted copy.
func sorted(ps []assign.TopicPartition) []assign.TopicPartition {
	if slices.IsSortedFunc(ps, comparePartitions) {
		return ps
	}
	out := slices.Clone(ps)
	assign.SortPartitions(out)
	return out
}

func comparePartitions(a, b assign.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return a.Partition - b.Partition
}
