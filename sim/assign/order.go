package assign

import "sort"

// MemberLess reports whether a comes before b in the order Kafka's range and
// round-robin assignors hand out partitions (KIP-345): static members (those
// with a group.instance.id) first, ordered by instance id; then dynamic
// members, ordered by member id. Ids compare as plain strings, so "C10-1"
// sorts before "C2-1", as in Kafka. Two static members with the same instance
// id (which a real group never has) fall back to member id, so the order is
// total and the assignors stay deterministic.
func MemberLess(a, b Member) bool {
	aStatic, bStatic := a.InstanceID != "", b.InstanceID != ""
	switch {
	case aStatic && bStatic:
		if a.InstanceID != b.InstanceID {
			return a.InstanceID < b.InstanceID
		}
		return a.MemberID < b.MemberID
	case aStatic:
		return true
	case bStatic:
		return false
	}
	return a.MemberID < b.MemberID
}

// SortMembers returns a copy of members in Kafka's member order (see
// MemberLess). The input is not modified.
func SortMembers(members []Member) []Member {
	out := append([]Member(nil), members...)
	sort.SliceStable(out, func(i, j int) bool { return MemberLess(out[i], out[j]) })
	return out
}

// kafkaOrder gives the indices of members in Kafka's member order.
func kafkaOrder(members []Member) []int {
	idx := make([]int, len(members))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return MemberLess(members[idx[i]], members[idx[j]]) })
	return idx
}

// idOrder gives the indices of members sorted by member id alone, the order
// the sticky assignors use for every tie and every walk over the members.
func idOrder(members []Member) []int {
	idx := make([]int, len(members))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return members[idx[i]].MemberID < members[idx[j]].MemberID })
	return idx
}

// permute returns members[order[0]], members[order[1]], ...
func permute(members []Member, order []int) []Member {
	out := make([]Member, len(order))
	for i, j := range order {
		out[i] = members[j]
	}
	return out
}
