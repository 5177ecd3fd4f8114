package coord

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Hooks reach into the coordinator for the engine's own tests: they set up
// states a scenario reaches only by luck (a member removed while its
// JoinGroup waits, a static member replaced while its SyncGroup waits)
// and read what the coordinator keeps to itself. Nothing else calls them.
type Hooks struct{ g *Group }

// Hooks are the coordinator's test hooks.
func (g *Group) Hooks() Hooks { return Hooks{g} }

// RemoveMember removes a member as an expired session or a LeaveGroup does.
func (h Hooks) RemoveMember(id, why string) { h.g.removeMember(id, why) }

// StaticRejoin swaps a new instance in for static member oldID.
func (h Hooks) StaticRejoin(p *wire.Packet, r *wire.JoinGroupRequest, oldID string) {
	h.g.staticRejoin(p, r, oldID)
}

// PrepareRebalance starts a join round.
func (h Hooks) PrepareRebalance(reason string) { h.g.prepareRebalance(reason) }

// CompleteJoin completes the join round.
func (h Hooks) CompleteJoin() { h.g.completeJoin() }

// SessionExpiry is a member's session timer firing for the silence that
// began at since.
func (h Hooks) SessionExpiry(id string, since int) { h.g.sessionExpiry(id, since) }

// Fence marks a member id as one a static rejoin replaced.
func (h Hooks) Fence(memberID string) { h.g.fencedPut(memberID) }

// SetWaiting makes join (or sync, when not nil) member id's request
// waiting at the coordinator.
func (h Hooks) SetWaiting(id string, join, sync *wire.Packet) {
	gm := h.g.members[id]
	gm.joinPkt, gm.syncPkt = join, sync
}

// Waiting is member id's JoinGroup and SyncGroup waiting at the
// coordinator (nil for none).
func (h Hooks) Waiting(id string) (join, sync *wire.Packet) {
	gm := h.g.members[id]
	if gm == nil {
		return nil, nil
	}
	return gm.joinPkt, gm.syncPkt
}

// SilentSince is the tick member id's session was last started, or -1
// while it is heard every tick.
func (h Hooks) SilentSince(id string) int { return h.g.members[id].silentSince }

// JoinTimer is member id's join timer in force (a classic member inside a
// consumer group; 0 when none).
func (h Hooks) JoinTimer(id string) int { return h.g.members[id].joinTimer }

// NumClassic is the count of classic members the group keeps.
func (h Hooks) NumClassic() int { return h.g.numClassic }

// SetNumClassic sets that count (a test of the check that it is right).
func (h Hooks) SetNumClassic(n int) { h.g.numClassic = n }

// Lazy reports whether the maps made at their first write are made:
// static members, and member ids fenced by a static rejoin.
func (h Hooks) Lazy() (static, fenced bool) { return h.g.static != nil, h.g.fenced != nil }

// fencedPut records a member id a static rejoin replaced.
func (g *Group) fencedPut(id string) { store.PutMap(&g.fenced, id, true) }

// PutStatic records static member instance as member id.
func (h Hooks) PutStatic(instance, id string) { store.PutMap(&h.g.static, instance, id) }

// Static is the member id static member instance goes by ("" for none).
func (h Hooks) Static(instance string) string { return h.g.static[instance] }

// Fenced reports whether a static rejoin replaced member id.
func (h Hooks) Fenced(id string) bool { return h.g.fenced[id] }

// MembersByMap lists the members map's values in member-id order (what
// Members must equal).
func (h Hooks) MembersByMap() []*GroupMember { return store.ValuesByKey(h.g.members) }

// ValidateOffsetCommit answers as the group does whether memberID may
// commit at epoch (a TxnOffsetCommit with txn).
func (h Hooks) ValidateOffsetCommit(memberID, instanceID string, epoch int, txn bool) wire.ErrorCode {
	return h.g.kind().validateOffsetCommit(h.g, memberID, instanceID, epoch, txn)
}

// FenceMember fences a consumer group's member as a session timeout does.
func (h Hooks) FenceMember(id, why string) { h.g.fenceMember(h.g.members[id], why) }
