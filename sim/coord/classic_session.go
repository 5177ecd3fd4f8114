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
func (g *ClassicGroup) silentFromNow(gm *ClassicMember) { g.silentFrom(gm, g.env.Now()) }

// silentFrom starts gm's session timeout from tick since (at most now).
func (g *ClassicGroup) silentFrom(gm *ClassicMember, since int) {
	gm.silentSince = since
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: max(since+gm.SessionTimeout, g.env.Now()+1), Kind: tmSessionExpiry, Member: gm.MemberID, Key: since})
}

// silentSinceLastBeat: gm's process stopped sending heartbeats (it crashed,
// closed, rejoins, or goes by another member id). The coordinator last
// heard it at its last heartbeat: with heartbeat.interval.ms, up to an
// interval ago, so the session timeout
// (rescheduleClassicGroupMemberHeartbeat at each heartbeat) runs out that
// much sooner after the crash; with the implicit heartbeat, now.
func (g *ClassicGroup) silentSinceLastBeat(gm *ClassicMember) {
	since := g.env.Now()
	if at, ok := g.procs.LastHeartbeat(gm.ClientID, gm.Inc, since); ok && at < since {
		since = at
	}
	g.silentFrom(gm, since)
}

// What a classic member's heartbeat is answered with, when it must learn
// something (tmHeartbeatAnswer's Arg).
const (
	beatRebalance = 1 // REBALANCE_IN_PROGRESS: a join round began (Key: its start)
	beatUnknown   = 2 // UNKNOWN_MEMBER_ID: the coordinator removed the member
)

// answerNextHeartbeat tells client's process inc, going by memberID,
// what its next heartbeat's answer says (Kafka's classicGroupHeartbeat:
// REBALANCE_IN_PROGRESS while the group prepares a rebalance,
// UNKNOWN_MEMBER_ID for a member it no longer has). With the implicit
// heartbeat (heard every tick: the page's) the answer goes now, as its own
// packet (RebalanceNotification); with heartbeat.interval.ms it goes when
// the member's next heartbeat arrives, up to an interval later, if the
// reason still holds then (heartbeatArrives).
func (g *ClassicGroup) answerNextHeartbeat(client string, inc int, memberID string, answer, key int) {
	at, ok := g.procs.NextHeartbeat(client, inc, g.env.Now())
	if !ok {
		g.sendHeartbeatAnswer(client, inc, memberID, answer)
		return
	}
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: at, Kind: tmHeartbeatAnswer, Client: client, Inc: inc, Member: memberID, Key: key, Arg: answer})
}

// heartbeatArrives is a member's heartbeat reaching the coordinator with
// an answer due (answerNextHeartbeat): sent if the process still beats
// with that member id and the reason holds; a heartbeat thread enabled
// again since (a new schedule) is answered at its own next heartbeat.
func (g *ClassicGroup) heartbeatArrives(t wire.Timer) {
	if !g.procs.Heartbeating(t.Client, t.Inc, t.Member) {
		return // it sends none now: it learns from its next JoinGroup or SyncGroup
	}
	switch t.Arg {
	case beatRebalance:
		gm := g.members.get(t.Member)
		if g.state != PreparingRebalance || g.roundStart != t.Key || gm == nil || gm.Joined {
			return
		}
	case beatUnknown:
		if g.members.get(t.Member) != nil {
			return
		}
	}
	if at, ok := g.procs.NextHeartbeat(t.Client, t.Inc, g.env.Now()-1); ok && at != g.env.Now() {
		// Its heartbeat thread was enabled anew since: no heartbeat of
		// the new schedule arrives now.
		t.At = at // the same answer, due then (After numbers it anew)
		g.env.After(t)
		return
	}
	g.sendHeartbeatAnswer(t.Client, t.Inc, t.Member, t.Arg)
}

// sendHeartbeatAnswer sends a heartbeat's answer, drawn as its own packet.
func (g *ClassicGroup) sendHeartbeatAnswer(client string, inc int, memberID string, answer int) {
	p := &wire.Packet{From: wire.Broker, To: client, ToInc: inc, Type: wire.RebalanceNotification, Response: true}
	if answer == beatUnknown {
		p.Error, p.Summary, p.Body = wire.UnknownMemberID, "heartbeat: "+memberID+" is not a member", &wire.LeaveGroupRequest{MemberID: memberID}
	} else {
		p.Error, p.Summary = wire.RebalanceInProgress, "heartbeat: rebalance, rejoin"
	}
	g.env.Send(p)
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
		g.silentSinceLastBeat(gm)
	}
}

// processStopped is the implicit heartbeat thread of client's process inc
// going quiet: the coordinator last heard it now and removes it after the
// session timeout.
func (g *ClassicGroup) processStopped(client string, inc int) {
	for _, gm := range g.members.list() {
		if gm.ClientID == client && gm.Inc == inc && gm.silentSince < 0 {
			g.silentSinceLastBeat(gm)
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
