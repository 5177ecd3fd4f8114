package coord

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Hooks reach into the coordinator for the engine's own tests: they set up
// states a scenario reaches only by luck (a member removed while its
// JoinGroup waits, a static member replaced while its SyncGroup waits)
// and read what the coordinator keeps to itself. Nothing else calls them.
// A hook of one kind of group panics when the group is of the other.
type Hooks struct{ c *Coordinator }

// Hooks are the coordinator's test hooks.
func (c *Coordinator) Hooks() Hooks { return Hooks{c} }

func (h Hooks) classic() *ClassicGroup   { return h.c.group.(*ClassicGroup) }
func (h Hooks) consumer() *ConsumerGroup { return h.c.group.(*ConsumerGroup) }
func (h Hooks) base() *groupBase {
	if g, ok := h.c.group.(*ClassicGroup); ok {
		return &g.groupBase
	}
	return &h.consumer().groupBase
}

// RemoveMember removes a classic member as an expired session or a
// LeaveGroup does.
func (h Hooks) RemoveMember(id, why string) { h.classic().removeMember(id, why) }

// StaticRejoin swaps a new instance in for static member oldID.
func (h Hooks) StaticRejoin(p *wire.Packet, r *wire.JoinGroupRequest, oldID string) {
	h.classic().staticRejoin(p, r, oldID)
}

// PrepareRebalance starts a join round.
func (h Hooks) PrepareRebalance(reason string) { h.classic().prepareRebalance(reason) }

// SetJoined marks classic member id as having sent JoinGroup in the
// current round, or not.
func (h Hooks) SetJoined(id string, joined bool) { h.classic().members.get(id).Joined = joined }

// CompleteJoin completes the join round.
func (h Hooks) CompleteJoin() { h.classic().completeJoin() }

// SessionExpiry is a classic member's session timer firing for the
// silence that began at since.
func (h Hooks) SessionExpiry(id string, since int) { h.classic().sessionExpiry(id, since) }

// Fence marks a member id as one a static rejoin replaced.
func (h Hooks) Fence(memberID string) { store.PutMap(&h.base().fenced, memberID, true) }

// SetWaiting makes join (or sync, when not nil) classic member id's
// request waiting at the coordinator.
func (h Hooks) SetWaiting(id string, join, sync *wire.Packet) {
	gm := h.classic().members.get(id)
	gm.joinPkt, gm.syncPkt = join, sync
}

// Waiting is classic member id's JoinGroup and SyncGroup waiting at the
// coordinator (nil for none).
func (h Hooks) Waiting(id string) (join, sync *wire.Packet) {
	gm := h.classic().members.get(id)
	if gm == nil {
		return nil, nil
	}
	return gm.joinPkt, gm.syncPkt
}

// SilentSince is the tick classic member id's session was last started,
// or -1 while it is heard every tick (a classic member inside a consumer
// group too).
func (h Hooks) SilentSince(id string) int {
	if g, ok := h.c.group.(*ConsumerGroup); ok {
		return g.members.get(id).classic.silentSince
	}
	return h.classic().members.get(id).silentSince
}

// JoinTimer is classic member id's join timer in force inside a consumer
// group (0 when none).
func (h Hooks) JoinTimer(id string) int { return h.consumer().members.get(id).classic.joinTimer }

// NumClassic is the count of classic members the group keeps (0 in a
// classic group, which keeps none).
func (h Hooks) NumClassic() int {
	if g, ok := h.c.group.(*ConsumerGroup); ok {
		return g.numClassic
	}
	return 0
}

// SetNumClassic sets that count (a test of the check that it is right).
func (h Hooks) SetNumClassic(n int) { h.consumer().numClassic = n }

// Lazy reports whether the maps made at their first write are made:
// static members, and member ids fenced by a static rejoin.
func (h Hooks) Lazy() (static, fenced bool) { return h.base().static != nil, h.base().fenced != nil }

// PutStatic records static member instance as member id.
func (h Hooks) PutStatic(instance, id string) { store.PutMap(&h.base().static, instance, id) }

// Static is the member id static member instance goes by ("" for none).
func (h Hooks) Static(instance string) string { return h.base().static[instance] }

// Fenced reports whether a static rejoin replaced member id.
func (h Hooks) Fenced(id string) bool { return h.base().fenced[id] }

// MemberIDsByMap lists the member ids of the members map in order (what
// the member-id-ordered list must hold).
func (h Hooks) MemberIDsByMap() []string {
	var ids []string
	if g, ok := h.c.group.(*ClassicGroup); ok {
		for _, m := range store.ValuesByKey(g.members.byID) {
			ids = append(ids, m.MemberID)
		}
		return ids
	}
	for _, m := range store.ValuesByKey(h.consumer().members.byID) {
		ids = append(ids, m.MemberID)
	}
	return ids
}

// SharesMembersWith reports whether o's group holds any of the member
// records of this one's (a world's copy must hold its own).
func (h Hooks) SharesMembersWith(o *Coordinator) bool {
	mine := map[any]bool{}
	for _, m := range h.records() {
		mine[m] = true
	}
	for _, m := range o.Hooks().records() {
		if mine[m] {
			return true
		}
	}
	return false
}

// records are the group's member records, from its list and its map.
func (h Hooks) records() []any {
	var out []any
	switch g := h.c.group.(type) {
	case *ClassicGroup:
		for _, m := range g.members.list() {
			out = append(out, m)
		}
		for _, m := range g.members.byID {
			out = append(out, m)
		}
	case *ConsumerGroup:
		for _, m := range g.members.list() {
			out = append(out, m)
		}
		for _, m := range g.members.byID {
			out = append(out, m)
		}
	}
	return out
}

// ValidateOffsetCommit answers as the group does whether memberID may
// commit at epoch (a TxnOffsetCommit with txn).
func (h Hooks) ValidateOffsetCommit(memberID, instanceID string, epoch int, txn bool) wire.ErrorCode {
	return h.c.group.validateOffsetCommit(memberID, instanceID, epoch, txn)
}

// FenceMember fences a consumer group's member as a session timeout does.
func (h Hooks) FenceMember(id, why string) {
	g := h.consumer()
	g.fenceMember(g.members.get(id), why)
}

// SetConsumerGroup replaces the group with a consumer group as d describes
// it: its state, epochs and assignor, its members with their epochs,
// states, assignments, targets, what they revoke, and whether they speak
// the classic protocol (a view's test draws a state a scenario reaches
// only by luck).
func (h Hooks) SetConsumerGroup(d Description) {
	b := h.c.newBase()
	b.state = d.State
	g := newConsumerGroup(b)
	g.groupEpoch, g.assignmentEpoch, g.assignor = d.GroupEpoch, d.AssignmentEpoch, d.Assignor
	for _, m := range d.Members {
		gm := &ConsumerMember{MemberID: m.MemberID, ClientID: m.ClientID, InstanceID: m.InstanceID, Inc: m.Inc,
			Topics: m.Topics, Strategy: m.Strategy, Assignment: m.Assignment, MemberEpoch: m.MemberEpoch,
			PreviousMemberEpoch: m.PreviousMemberEpoch, MemberState: m.MemberState, Target: m.Target, Revoking: m.Revoking}
		if m.ClassicMember {
			gm.classic = &classicInConsumer{silentSince: -1,
				ClassicMemberMetadata: ClassicMemberMetadata{Protocols: m.Protocols, Owned: m.Owned, OwnedGen: m.OwnedGen}}
		}
		g.putMember(gm)
		if gm.InstanceID != "" {
			store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
		}
	}
	h.c.group = g
}
