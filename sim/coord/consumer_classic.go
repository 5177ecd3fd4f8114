package coord

// Classic members inside a consumer group (online migration): they speak
// JoinGroup/SyncGroup/heartbeat to it (GroupMetadataManager's
// classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
// classicGroupHeartbeatToConsumerGroup, classicGroupLeaveToConsumerGroup)
// until they leave.
//
// kgrepl simplifies: classic heartbeats are implicit (a live process is
// heard), so the REBALANCE_IN_PROGRESS a classic member's heartbeat would
// get is pushed as a RebalanceNotification the moment it applies. Kafka's
// timers for classic members inside a consumer group are kept: the
// session timeout, the join timeout (a member told to rejoin that does not
// within its rebalance timeout is fenced) and the sync timeout (one
// answered JoinGroup that sends no SyncGroup within it is fenced).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/reconcile"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// classicMembers is the consumer group's handling of its classic members:
// their JoinGroup, SyncGroup, LeaveGroup and implicit heartbeats, and their
// timers.
type classicMembers struct{ *ConsumerGroup }

// classic is the group's handling of its classic members.
func (g *ConsumerGroup) classic() classicMembers { return classicMembers{g} }

// supportsClassicProtocols is ConsumerGroup.supportsClassicProtocols: a
// classic member may join when some protocol it lists is listed by every
// classic member already in the group (consumer-protocol members do not
// count; with no classic member any list will do). A rejoining member's
// earlier list counts, as Kafka counts before the request.
func (g classicMembers) supportsClassicProtocols(protocols []string) bool {
	if len(protocols) == 0 {
		return false
	}
	for _, p := range protocols {
		all := true
		for _, gm := range g.members.list() {
			if gm.classic != nil && !slices.Contains(gm.classic.Protocols, p) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// heard: a classic member inside a consumer group is heard while
// its process is alive and goes by the member id (kgrepl's implicit
// heartbeat inside a consumer group), unless it is out of the group: a
// static member past max.poll.interval.ms keeps its id but its heartbeat
// thread stopped (classicClient.pollTimeout).
func (g classicMembers) heard(gm *ConsumerMember) bool {
	return g.procs.InGroupAs(gm.ClientID, gm.Inc, gm.MemberID)
}

// silentFromNow: a classic member is heard no more; its classic
// session runs from now.
func (g classicMembers) silentFromNow(gm *ConsumerMember) {
	gm.classic.silentSince = g.env.Now()
	g.sessionTimeoutAt(gm, g.env.Now()+gm.classic.SessionTimeout)
}

// join is classicGroupJoinToConsumerGroup: the member is created or
// updated like a heartbeat's, the target is recomputed if the group epoch
// moved, the member is reconciled with the partitions its JoinGroup says it
// owns, and the JoinGroup is answered at once with the member epoch as the
// generation (no leader, no barrier).
func (g classicMembers) join(p *wire.Packet, r *wire.JoinGroupRequest) {
	if code, why := g.throwIfFull(r.MemberID); code != wire.None {
		g.env.Reply(p, code, why, nil)
		return
	}
	if !g.supportsClassicProtocols(r.Protocols) {
		why := r.First() + " is not supported by every classic member"
		if len(r.Protocols) > 1 {
			why = "no assignor of " + strings.Join(r.Protocols, ",") + " is supported by every classic member"
		}
		g.env.Reply(p, wire.InconsistentGroupProtocol, why, nil)
		return
	}
	epochBefore := g.groupEpoch
	gm, replaced, code := g.joiningMember(r)
	if code != wire.None {
		g.env.Reply(p, code, "", nil)
		return
	}
	newMember := g.members.get(gm.MemberID) != gm
	bump := newMember && replaced == nil
	if !slices.Equal(gm.Topics, r.Topics) {
		gm.Topics = store.Copy(r.Topics)
		bump = true
	}
	g.setClassic(gm)
	gm.Strategy, gm.classic.Protocols = r.First(), r.Protocols
	gm.RebalanceTimeout, gm.classic.SessionTimeout = r.RebalanceTimeout, r.SessionTimeout
	g.admitAndAssign(gm, replaced, newMember, bump, " with the classic protocol")
	// The owned partitions a classic member reports: a cooperative member's
	// subscription carries them; an eager one (any assignor of its list
	// eager-only: ConsumerCoordinator) revoked everything first.
	owned := []wire.TopicPartition{}
	if assign.ListProtocol(r.Protocols) == assign.Cooperative {
		owned = store.Copy(r.Owned)
	}
	if err := g.maybeReconcile(gm, &wire.ConsumerGroupHeartbeatRequest{Owned: owned, OwnedSent: true}); err != nil {
		g.env.Reply(p, wire.FencedMemberEpoch, "", nil)
		return
	}
	if replaced != nil && g.downgradeWithReplacedMember(replaced) {
		// validateOnlineDowngradeWithReplacedMember: a classic instance
		// replaced the last consumer-protocol member, so the group becomes
		// a classic group (convertToClassicGroup with a joining member):
		// Stable at the group epoch it had before this join, every member
		// with its target, the joiner with the replaced member's, no
		// rebalance. The JoinGroup is answered with the joiner's member
		// epoch as the generation, its own protocol, no leader.
		cg := fromConsumerGroup(g.ConsumerGroup, epochBefore, map[string][]wire.TopicPartition{gm.MemberID: replaced.Target})
		g.c.group = cg
		g.env.Trace().Eventf(trace.EvGroupState, "", "group %s is converted back to a classic group at generation %d, Stable: a classic instance (%s) replaced %s, the last member speaking the consumer protocol; every member keeps its target, no rebalance",
			g.c.id, cg.generation, gm.MemberID, replaced.MemberID)
		g.env.Reply(p, wire.None, fmt.Sprintf("gen %d (member epoch), member %s, no leader", gm.MemberEpoch, gm.MemberID),
			&wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: gm.MemberEpoch, Protocol: r.First()})
		return
	}
	gm.classic.notified = ""
	if !g.procs.Alive(gm.ClientID, gm.Inc) {
		// Sent before its process died: heard this once (heardLast). The
		// answer restarts its session from now
		// (classicGroupJoinToConsumerGroup: scheduleConsumerGroupSessionTimeout),
		// even if it was already running.
		g.silentFromNow(gm)
	} else {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.classic.SessionTimeout, Kind: tmHeartbeatCheck, Member: gm.MemberID, Key: gm.MemberEpoch})
	}
	g.updateState()
	// The answer's append completes: cancelConsumerGroupJoinTimeout, and
	// scheduleConsumerGroupSyncTimeout with the request's rebalance
	// timeout (it replaces any earlier sync timer of the member).
	gm.classic.joinTimer = 0
	gm.classic.syncTimer = g.nextTimer()
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + r.RebalanceTimeout, Kind: tmClassicSyncTimeout, Member: gm.MemberID, Key: gm.classic.syncTimer})
	g.env.Reply(p, wire.None, fmt.Sprintf("gen %d (member epoch), member %s, no leader", gm.MemberEpoch, gm.MemberID),
		&wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: gm.MemberEpoch, Protocol: r.First()})
	g.notify()
}

// joiningMember is the member a classic JoinGroup is for, as
// classicGroupJoinToConsumerGroup finds it
// (getOrMaybeSubscribeStaticConsumerGroupMember,
// getOrMaybeSubscribeDynamicConsumerGroupMember): the static member, or a
// new instance's copy of it when the request comes without a member id
// (replaced: the old one); a new member; the one its member id names; or
// the error the JoinGroup is answered with.
func (g classicMembers) joiningMember(r *wire.JoinGroupRequest) (gm, replaced *ConsumerMember, code wire.ErrorCode) {
	switch {
	case r.InstanceID != "" && g.static[r.InstanceID] != "":
		old := g.members.get(g.static[r.InstanceID])
		if r.MemberID != "" && r.MemberID != old.MemberID {
			return nil, nil, wire.FencedInstanceID
		}
		gm = old
		if r.MemberID == "" {
			// A new instance replaces the static member (a classic member
			// needs no released instance id).
			gm, replaced = old.copyAs(g.env.IssueMemberID(r.Client), r.Client, r.Inc), old
			if gm.classic != nil {
				// the new process is heard, and was told nothing yet
				gm.classic.silentSince, gm.classic.notified = -1, ""
				gm.classic.joinTimer, gm.classic.syncTimer = 0, 0
			}
		}
	case r.MemberID == "":
		gm = &ConsumerMember{MemberID: g.env.IssueMemberID(r.Client), ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc,
			MemberState: reconcile.Stable.String()}
	default:
		gm = g.members.get(r.MemberID)
		if gm == nil {
			return nil, nil, wire.UnknownMemberID
		}
	}
	return gm, replaced, wire.None
}

// scheduleJoinTimeout is scheduleConsumerGroupJoinTimeoutIfAbsent:
// a classic member told to rejoin (its heartbeat or SyncGroup answered
// REBALANCE_IN_PROGRESS) is fenced unless its JoinGroup comes within its
// rebalance timeout; a timer already running is kept.
func (g classicMembers) scheduleJoinTimeout(gm *ConsumerMember) {
	if gm.classic.joinTimer != 0 {
		return
	}
	gm.classic.joinTimer = g.nextTimer()
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.RebalanceTimeout, Kind: tmClassicJoinTimeout, Member: gm.MemberID, Key: gm.classic.joinTimer})
}

// timeout: a classic member's join or sync timer fired
// without being cancelled (consumerGroupFenceMemberOperation).
func (g classicMembers) timeout(id string, seq int, sync bool) {
	gm := g.members.get(id)
	if gm == nil || gm.classic == nil {
		return
	}
	if sync && gm.classic.syncTimer == seq {
		g.fenceMember(gm, fmt.Sprintf("the classic member sent no SyncGroup within its rebalance timeout (%d)", gm.RebalanceTimeout))
	} else if !sync && gm.classic.joinTimer == seq {
		g.fenceMember(gm, fmt.Sprintf("the classic member did not rejoin within its rebalance timeout (%d)", gm.RebalanceTimeout))
	}
}

// sync is classicGroupSyncToConsumerGroup: the member's current
// assignment, unless a newer epoch waits for its rejoin.
func (g classicMembers) sync(p *wire.Packet, r *wire.SyncGroupRequest) {
	gm := g.member(p, r.MemberID, r.InstanceID, r.Generation)
	if gm == nil {
		return
	}
	// throwIfRebalanceInProgress: the sync timer stays; a join timer starts.
	if g.groupEpoch > gm.MemberEpoch && gm.MemberState != reconcile.UnrevokedPartitions.String() {
		g.scheduleJoinTimeout(gm)
		g.env.Reply(p, wire.RebalanceInProgress, "", nil)
		return
	}
	gm.classic.syncTimer = 0 // cancelConsumerGroupSyncTimeout
	g.env.ReplyText(p, wire.None, g.env.Trace().Textf("%s", trace.Parts{L: g.env.Layout(), TPs: gm.Assignment}), &wire.SyncGroupResponse{Assignment: wire.SortedCopy(gm.Assignment)})
	// Its heartbeats start again after the SyncGroup answer: one that
	// came while it was joining was ignored, so it is told again.
	gm.classic.notified = ""
	g.notify()
}

// member is validateConsumerGroupMember with the classic checks
// (throwIfMemberDoesNotUseClassicProtocol, throwIfGenerationIdUnmatched);
// it answers the request itself when the member does not pass.
func (g classicMembers) member(p *wire.Packet, memberID, instanceID string, gen int) *ConsumerMember {
	gm := g.members.get(memberID)
	if instanceID != "" {
		if id, ok := g.static[instanceID]; ok && id != memberID {
			g.env.Reply(p, wire.FencedInstanceID, "", nil)
			return nil
		}
	}
	switch {
	case gm == nil || gm.classic == nil:
		g.env.Reply(p, wire.UnknownMemberID, "", nil)
		return nil
	case gen >= 0 && gen != gm.MemberEpoch:
		g.env.Reply(p, wire.IllegalGeneration, "", nil)
		return nil
	}
	return gm
}

// leave is classicGroupLeaveToConsumerGroup.
func (g classicMembers) leave(p *wire.Packet, r *wire.LeaveGroupRequest) {
	gm := g.member(p, r.MemberID, r.InstanceID, -1)
	if gm == nil {
		return
	}
	g.env.Reply(p, wire.None, "", nil)
	g.fenceMember(gm, "LeaveGroup")
}

// notify is classicGroupHeartbeatToConsumerGroup's answer
// REBALANCE_IN_PROGRESS, once per change: a classic member rejoins when the
// group epoch moved past it, when it must revoke, or when partitions it
// waits for were released.
func (g classicMembers) notify() {
	if g.numClassic == 0 {
		return
	}
	for _, gm := range g.members.list() {
		if gm.classic == nil {
			continue
		}
		rejoin := gm.MemberEpoch < g.groupEpoch || gm.MemberState == reconcile.UnrevokedPartitions.String() ||
			(gm.MemberState == reconcile.UnreleasedPartitions.String() && !g.waitingOnUnreleased(gm))
		key := fmt.Sprintf("%d/%d/%s", g.groupEpoch, gm.MemberEpoch, gm.MemberState)
		if !rejoin || gm.classic.notified == key {
			continue
		}
		if !g.hearsFrom(gm.ClientID, gm.Inc, gm.MemberID) {
			// No heartbeat to answer: a member joining (or reset, or dead)
			// is told by its first heartbeat once it sends them again
			// (heartbeatStarted calls this anew).
			continue
		}
		gm.classic.notified = key
		// A heartbeat answered REBALANCE_IN_PROGRESS starts the join timer
		// (classicGroupHeartbeatToConsumerGroup:
		// scheduleConsumerGroupJoinTimeoutIfAbsent); kgrepl tells a
		// heartbeating member once per change, at the change.
		g.scheduleJoinTimeout(gm)
		g.env.Send(&wire.Packet{From: wire.Broker, To: gm.ClientID, ToInc: gm.Inc, Type: wire.RebalanceNotification, Response: true,
			Error: wire.RebalanceInProgress, Summary: "heartbeat: rebalance, rejoin (consumer group epoch " + strconv.Itoa(g.groupEpoch) + ")"})
	}
}

// waitingOnUnreleased is ConsumerGroup.waitingOnUnreleasedPartition: a
// partition of the member's target it does not have yet is still held.
func (g *ConsumerGroup) waitingOnUnreleased(gm *ConsumerMember) bool {
	has := map[wire.TopicPartition]bool{}
	for _, tp := range gm.Assignment {
		has[tp] = true
	}
	held := g.heldBy(gm)
	for _, tp := range gm.Target {
		if !has[tp] && held(tp) {
			return true
		}
	}
	return false
}

// heartbeatCheck is the check a classic member's JoinGroup answer armed: a
// live process that never took the member id (the answer was lost) runs
// out its session (classicGroupJoinToConsumerGroup:
// scheduleConsumerGroupSessionTimeout) and is fenced.
func (g classicMembers) heartbeatCheck(id string) {
	gm := g.members.get(id)
	if gm == nil || gm.classic == nil || gm.classic.silentSince >= 0 {
		return // gone, or its silence is already being timed
	}
	if !g.procs.Alive(gm.ClientID, gm.Inc) || g.procs.GoesBy(gm.ClientID, gm.Inc, id) {
		return // a dead process is timed by processStopped
	}
	g.fenceMember(gm, fmt.Sprintf("session timeout (no heartbeat with %s for %d ticks: its client never took that member id)", id, gm.classic.SessionTimeout))
}

// memberIDDropped: a live process goes by another member id now. A
// consumer-protocol member's heartbeats are real packets: it just stops
// sending them. A classic member is heard no more.
func (g classicMembers) memberIDDropped(id string) {
	if gm := g.members.get(id); gm != nil && gm.classic != nil && gm.classic.silentSince < 0 {
		g.silentFromNow(gm)
	}
}

// processStopped: a consumer-protocol member's session runs from its last
// heartbeat; a classic member's heartbeat thread goes quiet now.
func (g classicMembers) processStopped(client string, inc int) {
	for _, gm := range g.members.list() {
		if gm.classic != nil && gm.ClientID == client && gm.Inc == inc && gm.classic.silentSince < 0 {
			g.silentFromNow(gm)
		}
	}
}
