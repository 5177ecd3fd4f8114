package coord

// A classic member's session on the coordinator: heartbeats, the session
// timeout, the pending-sync timeout. kgrepl's classic heartbeats are
// implicit (the seed's simplification: a live member is heard every tick),
// so where Kafka's coordinator would receive or miss a heartbeat the
// coordinator asks instead (Processes) or is told (HeartbeatStopped,
// ProcessStopped: sim/heartbeat.go).

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// hearsFrom reports whether gm's process sends heartbeats with gm's member
// id now (client.Member.Heartbeats): only those get a heartbeat's answer. kgrepl
// sends that answer once, at the change, as its own packet (the seed's
// simplification: heard every tick); Kafka's member gets it with its next
// heartbeat, up to heartbeat.interval.ms later, and again with each one.
func (b *groupBase) hearsFrom(clientID string, inc int, memberID string) bool {
	return b.procs.Heartbeating(clientID, inc, memberID)
}

func (g *ClassicGroup) hearsFrom(gm *ClassicMember) bool {
	return g.groupBase.hearsFrom(gm.ClientID, gm.Inc, gm.MemberID)
}

// heartbeatCheck is ClassicGroupMember.hasSatisfiedHeartbeat for a member
// answered in generation gen: heartbeats count only for a member id the
// client holds (kgrepl's heartbeats are implicit: a live process is heard
// with the member id it goes by). One whose client never took the id (the
// JoinGroup answer was lost) is removed after session.timeout.ms; one
// waiting at the coordinator in JoinGroup or SyncGroup counts as heard.
func (g *ClassicGroup) heartbeatCheck(id string, gen int) {
	gm := g.members.get(id)
	if gm == nil || gm.silentSince >= 0 {
		return // gone, or its silence is already being timed
	}
	if !g.procs.Alive(gm.ClientID, gm.Inc) || g.procs.GoesBy(gm.ClientID, gm.Inc, id) {
		return // a dead process is timed by processStopped
	}
	if (g.state == PreparingRebalance && gm.joinPkt != nil) || gm.syncPkt != nil {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: id, Key: gen})
		return
	}
	g.removeMember(id, fmt.Sprintf("session timeout (no heartbeat with %s for %d ticks: its client never took that member id)", id, gm.SessionTimeout))
	if g.state != Empty {
		g.prepareRebalance(id + " timed out")
	}
}

// expirePendingSync is GroupMetadataManager.expirePendingSync: members of
// generation gen that sent no SyncGroup within the rebalance timeout are
// removed, and the group rebalances.
//
// Kafka keys the timer by group id (classicGroupSyncKey), so the next
// rebalance's timer replaces it; kgrepl's timers are never replaced, so one
// set by an earlier incarnation of the group, whose generation numbers the
// new group may reach again, must not fire in the new one.
func (g *ClassicGroup) expirePendingSync(gen, incarnation int) {
	if g.generation != gen || g.c.Incarnation != incarnation || (g.state != CompletingRebalance && g.state != Stable) {
		return
	}
	removed := false
	for _, gm := range g.members.list() {
		if gm.pendingSync {
			g.removeMember(gm.MemberID, "no SyncGroup within the rebalance timeout")
			removed = true
		}
	}
	if removed {
		g.prepareRebalance("members removed on pending sync expiration")
	}
}

// heardLast handles a JoinGroup that arrives after its sender died (packets
// already sent are still delivered): the coordinator hears it this once,
// and then nothing, so the session timeout runs from now.
func (g *ClassicGroup) heardLast(gm *ClassicMember) {
	if !g.procs.Alive(gm.ClientID, gm.Inc) && gm.silentSince < 0 {
		g.silentFromNow(gm)
	}
}

// silentFromNow starts gm's session timeout now: it is heard no more.
func (g *ClassicGroup) silentFromNow(gm *ClassicMember) {
	gm.silentSince = g.env.Now()
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: g.env.Now()})
}

// heartbeatStarted: the process going by member id id sends heartbeats
// again; the coordinator hears it every tick from now.
func (g *ClassicGroup) heartbeatStarted(id string) {
	if gm := g.members.get(id); gm != nil {
		gm.silentSince = -1
	}
}

// rescheduleHeartbeat is rescheduleClassicGroupMemberHeartbeat for a member
// not heard now (completeClassicGroupJoin, propagateAssignment): its
// session timeout runs from now.
func (g *ClassicGroup) rescheduleHeartbeat(gm *ClassicMember) {
	if gm.silentSince >= 0 {
		g.silentFromNow(gm)
	}
}

// memberIDDropped: the process going by member id id stopped sending
// heartbeats, or goes by another member id now: silent from now.
func (g *ClassicGroup) memberIDDropped(id string) {
	if gm := g.members.get(id); gm != nil && gm.silentSince < 0 {
		g.silentFromNow(gm)
	}
}

// processStopped is the implicit heartbeat thread of client's process inc
// going quiet: the coordinator last heard it now and removes it after the
// session timeout.
func (g *ClassicGroup) processStopped(client string, inc int) {
	for _, gm := range g.members.list() {
		if gm.ClientID == client && gm.Inc == inc && gm.silentSince < 0 {
			g.silentFromNow(gm)
		}
	}
}

// sessionExpiry removes a member still silent since the tick it went quiet.
func (g *ClassicGroup) sessionExpiry(id string, since int) {
	cur := g.members.get(id)
	if cur == nil || cur.silentSince != since {
		return
	}
	if (g.state == PreparingRebalance && cur.joinPkt != nil) || cur.syncPkt != nil {
		// A member whose JoinGroup or SyncGroup is waiting at the coordinator
		// counts as heard (Kafka's hasSatisfiedHeartbeat); look again later.
		// kgrepl counts a new member's waiting JoinGroup too: Kafka times
		// those out after group.classic.new.member.join.timeout.ms (5
		// minutes), which kgrepl leaves out.
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + cur.SessionTimeout, Kind: tmSessionExpiry, Member: id, Key: since})
		return
	}
	g.removeMember(id, fmt.Sprintf("session timeout (%d ticks of silence)", g.env.Now()-since))
	if g.state != Empty {
		g.prepareRebalance(id + " timed out")
	}
}
