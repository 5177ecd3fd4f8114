package coord

// Online migration between the two group types (KIP-848's upgrade and
// downgrade paths, group.consumer.migration.policy), as Kafka's
// GroupMetadataManager does it: a classic group whose first
// consumer-protocol member joins becomes a consumer group
// (convertToConsumerGroup, ConsumerGroup.fromClassicGroup); its classic
// members stay, as classic members inside the consumer group, and speak
// JoinGroup/SyncGroup/heartbeat to it (classicGroupJoinToConsumerGroup,
// classicGroupSyncToConsumerGroup, classicGroupHeartbeatToConsumerGroup,
// classicGroupLeaveToConsumerGroup) until they leave; when the last
// consumer-protocol member leaves a group of classic members, it becomes a
// classic group again (validateOnlineDowngradeWithFencedMember,
// convertToClassicGroup) and rebalances.
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
	"sort"
	"strconv"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/reconcile"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// MigrationPolicies are group.consumer.migration.policy's values.
var MigrationPolicies = []string{"disabled", "upgrade", "downgrade", "bidirectional"}

func (g *Group) upgradeEnabled() bool {
	return g.cfg.MigrationPolicy == "upgrade" || g.cfg.MigrationPolicy == "bidirectional"
}

func (g *Group) downgradeEnabled() bool {
	return g.cfg.MigrationPolicy == "downgrade" || g.cfg.MigrationPolicy == "bidirectional"
}

// convertToConsumerGroup is GroupMetadataManager.convertToConsumerGroup:
// JoinGroups and SyncGroups waiting at the classic group are answered
// REBALANCE_IN_PROGRESS; every classic member becomes a classic member of
// a consumer group at the generation as its epoch, STABLE, owning its
// classic assignment, which is also the target (fromClassicGroup).
func (g *Group) convertToConsumerGroup() {
	for _, gm := range g.Members() {
		if gm.joinPkt != nil {
			g.env.Reply(gm.joinPkt, wire.RebalanceInProgress, "the group is becoming a consumer group", nil)
		}
		if gm.syncPkt != nil {
			g.env.Reply(gm.syncPkt, wire.RebalanceInProgress, "the group is becoming a consumer group", nil)
		}
		gm.joinPkt, gm.syncPkt, gm.Joined, gm.pendingSync = nil, nil, false, false
		g.setClassicMember(gm, true)
		gm.MemberEpoch, gm.PreviousMemberEpoch = g.Generation, g.Generation
		gm.MemberState = reconcile.Stable.String()
		gm.Target, gm.Revoking = store.Copy(gm.Assignment), nil
		// convertToConsumerGroup starts every member's session from now
		// (scheduleConsumerGroupSessionTimeout with its classic
		// session.timeout.ms), whatever its classic session was; each
		// heartbeat restarts it (classicGroupHeartbeatToConsumerGroup). A
		// member heard now heartbeats every tick, so its session never
		// runs out while it is heard (consumerKind.tick); a live one not
		// heard is fenced a session timeout from now. kgrepl simplifies
		// for a process already gone: its session keeps running from
		// when it went quiet (Kafka would restart it here; demo 15's
		// restarted C1-1 would then go 3 ticks later).
		switch {
		case g.heardClassic(gm):
			gm.silentSince, gm.sessionTimer = -1, 0
		case !g.procs.Alive(gm.ClientID, gm.Inc) && gm.silentSince >= 0:
			g.classicSession(gm, gm.silentSince+gm.SessionTimeout)
		default:
			gm.silentSince = g.env.Now()
			g.classicSession(gm, g.env.Now()+gm.SessionTimeout)
		}
	}
	from := g.State
	g.Type = ConsumerGroup
	g.GroupEpoch, g.AssignmentEpoch = g.Generation, g.Generation
	g.Leader = ""
	// A new group object in Kafka: it starts in the state it computes, no
	// transition of the old one.
	g.State = g.consumerState()
	g.env.Trace().Eventf(trace.EvGroupState, "", "group %s (classic, %s, generation %d) is converted to a consumer group at group epoch %d (%s); its %d classic members stay",
		g.ID, from, g.Generation, g.GroupEpoch, g.State, len(g.members))
}

// heardClassic: a classic member inside a consumer group is heard while
// its process is alive and goes by the member id (kgrepl's implicit
// heartbeat inside a consumer group), unless it is out of the group: a
// static member past max.poll.interval.ms keeps its id but its heartbeat
// thread stopped (classicClient.pollTimeout).
func (g *Group) heardClassic(gm *GroupMember) bool {
	return g.procs.InGroupAs(gm.ClientID, gm.Inc, gm.MemberID)
}

// classicSession schedules a classic member's session timeout inside a
// consumer group (scheduleConsumerGroupSessionTimeout with the member's
// classic session.timeout.ms).
func (g *Group) classicSession(gm *GroupMember, at int) {
	g.timerSeq++
	gm.sessionTimer = g.timerSeq
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: at, Kind: tmConsumerSessionTimeout, Member: gm.MemberID, Key: gm.sessionTimer})
}

// classicJoinToConsumerGroup is classicGroupJoinToConsumerGroup: the
// member is created or updated like a heartbeat's, the target is
// recomputed if the group epoch moved, the member is reconciled with the
// partitions its JoinGroup says it owns, and the JoinGroup is answered at
// once with the member epoch as the generation (no leader, no barrier).
func (g *Group) classicJoinToConsumerGroup(p *wire.Packet, r *wire.JoinGroupRequest) {
	var gm, replaced *GroupMember
	switch {
	case r.InstanceID != "" && g.static[r.InstanceID] != "":
		old := g.members[g.static[r.InstanceID]]
		if r.MemberID != "" && r.MemberID != old.MemberID {
			g.env.Reply(p, wire.FencedInstanceID, "", nil)
			return
		}
		gm = old
		if r.MemberID == "" {
			// A new instance replaces the static member (a classic member
			// needs no released instance id).
			n := *old
			n.MemberID, n.ClientID, n.Inc = g.env.IssueMemberID(r.Client), r.Client, r.Inc
			n.MemberEpoch, n.PreviousMemberEpoch = 0, 0
			n.Topics, n.Assignment, n.Target, n.Revoking = store.Copy(old.Topics), store.Copy(old.Assignment), store.Copy(old.Target), nil
			n.silentSince, n.sessionTimer, n.rebalanceTimer, n.notified = -1, 0, 0, "" // the new process is heard
			n.joinTimer, n.syncTimer = 0, 0
			gm, replaced = &n, old
		}
	case r.MemberID == "":
		gm = &GroupMember{MemberID: g.env.IssueMemberID(r.Client), ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc,
			MemberState: reconcile.Stable.String(), silentSince: -1}
	default:
		gm = g.members[r.MemberID]
		if gm == nil {
			g.env.Reply(p, wire.UnknownMemberID, "", nil)
			return
		}
	}
	newMember := g.members[gm.MemberID] != gm
	bump := newMember && replaced == nil
	if !slices.Equal(gm.Topics, r.Topics) {
		gm.Topics = store.Copy(r.Topics)
		bump = true
	}
	g.setClassicMember(gm, true)
	gm.Strategy, gm.Protocols = r.Strategy, []string{r.Strategy}
	gm.RebalanceTimeout, gm.SessionTimeout = r.RebalanceTimeout, r.SessionTimeout
	g.admitAndAssign(gm, replaced, newMember, bump, " with the classic protocol")
	// The owned partitions a classic member reports: a cooperative member's
	// subscription carries them; an eager one revoked everything first.
	owned := []wire.TopicPartition{}
	if r.Strategy == "cooperative-sticky" {
		owned = store.Copy(r.Owned)
	}
	if err := g.maybeReconcile(gm, &wire.ConsumerGroupHeartbeatRequest{Owned: owned, OwnedSent: true}); err != nil {
		g.env.Reply(p, wire.FencedMemberEpoch, "", nil)
		return
	}
	gm.notified = ""
	if !g.procs.Alive(gm.ClientID, gm.Inc) {
		// Sent before its process died: heard this once (heardLast). The
		// answer restarts its session from now
		// (classicGroupJoinToConsumerGroup: scheduleConsumerGroupSessionTimeout),
		// even if it was already running.
		gm.silentSince = g.env.Now()
		g.classicSession(gm, g.env.Now()+gm.SessionTimeout)
	} else {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: gm.MemberID, Key: gm.MemberEpoch})
	}
	g.updateConsumerState()
	// The answer's append completes: cancelConsumerGroupJoinTimeout, and
	// scheduleConsumerGroupSyncTimeout with the request's rebalance
	// timeout (it replaces any earlier sync timer of the member).
	gm.joinTimer = 0
	g.timerSeq++
	gm.syncTimer = g.timerSeq
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + r.RebalanceTimeout, Kind: tmClassicSyncTimeout, Member: gm.MemberID, Key: gm.syncTimer})
	g.env.Reply(p, wire.None, fmt.Sprintf("gen %d (member epoch), member %s, no leader", gm.MemberEpoch, gm.MemberID),
		&wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: gm.MemberEpoch, Protocol: r.Strategy})
	g.notifyClassicMembers()
}

// scheduleClassicJoinTimeout is scheduleConsumerGroupJoinTimeoutIfAbsent:
// a classic member told to rejoin (its heartbeat or SyncGroup answered
// REBALANCE_IN_PROGRESS) is fenced unless its JoinGroup comes within its
// rebalance timeout; a timer already running is kept.
func (g *Group) scheduleClassicJoinTimeout(gm *GroupMember) {
	if gm.joinTimer != 0 {
		return
	}
	g.timerSeq++
	gm.joinTimer = g.timerSeq
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.RebalanceTimeout, Kind: tmClassicJoinTimeout, Member: gm.MemberID, Key: gm.joinTimer})
}

// classicMemberTimeout: a classic member's join or sync timer fired
// without being cancelled (consumerGroupFenceMemberOperation).
func (g *Group) classicMemberTimeout(id string, seq int, sync bool) {
	gm := g.members[id]
	if g.Type != ConsumerGroup || gm == nil || !gm.ClassicMember {
		return
	}
	if sync && gm.syncTimer == seq {
		g.fenceMember(gm, fmt.Sprintf("the classic member sent no SyncGroup within its rebalance timeout (%d)", gm.RebalanceTimeout))
	} else if !sync && gm.joinTimer == seq {
		g.fenceMember(gm, fmt.Sprintf("the classic member did not rejoin within its rebalance timeout (%d)", gm.RebalanceTimeout))
	}
}

// classicSyncToConsumerGroup is classicGroupSyncToConsumerGroup: the
// member's current assignment, unless a newer epoch waits for its rejoin.
func (g *Group) classicSyncToConsumerGroup(p *wire.Packet, r *wire.SyncGroupRequest) {
	gm := g.classicMember(p, r.MemberID, r.InstanceID, r.Generation)
	if gm == nil {
		return
	}
	// throwIfRebalanceInProgress: the sync timer stays; a join timer starts.
	if g.GroupEpoch > gm.MemberEpoch && gm.MemberState != reconcile.UnrevokedPartitions.String() {
		g.scheduleClassicJoinTimeout(gm)
		g.env.Reply(p, wire.RebalanceInProgress, "", nil)
		return
	}
	gm.syncTimer = 0 // cancelConsumerGroupSyncTimeout
	g.env.Reply(p, wire.None, g.env.Layout().PartList(gm.Assignment), &wire.SyncGroupResponse{Assignment: wire.SortedCopy(gm.Assignment)})
	// Its heartbeats start again after the SyncGroup answer: one that
	// came while it was joining was ignored, so it is told again.
	gm.notified = ""
	g.notifyClassicMembers()
}

// classicMember is validateConsumerGroupMember with the classic checks
// (throwIfMemberDoesNotUseClassicProtocol, throwIfGenerationIdUnmatched);
// it answers the request itself when the member does not pass.
func (g *Group) classicMember(p *wire.Packet, memberID, instanceID string, gen int) *GroupMember {
	gm := g.members[memberID]
	if instanceID != "" {
		if id, ok := g.static[instanceID]; ok && id != memberID {
			g.env.Reply(p, wire.FencedInstanceID, "", nil)
			return nil
		}
	}
	switch {
	case gm == nil || !gm.ClassicMember:
		g.env.Reply(p, wire.UnknownMemberID, "", nil)
		return nil
	case gen >= 0 && gen != gm.MemberEpoch:
		g.env.Reply(p, wire.IllegalGeneration, "", nil)
		return nil
	}
	return gm
}

// classicLeaveToConsumerGroup is classicGroupLeaveToConsumerGroup.
func (g *Group) classicLeaveToConsumerGroup(p *wire.Packet, r *wire.LeaveGroupRequest) {
	gm := g.classicMember(p, r.MemberID, r.InstanceID, -1)
	if gm == nil {
		return
	}
	g.env.Reply(p, wire.None, "", nil)
	g.fenceMember(gm, "LeaveGroup")
}

// notifyClassicMembers is classicGroupHeartbeatToConsumerGroup's answer
// REBALANCE_IN_PROGRESS, once per change: a classic member rejoins when the
// group epoch moved past it, when it must revoke, or when partitions it
// waits for were released.
func (g *Group) notifyClassicMembers() {
	if g.Type != ConsumerGroup || !g.hasClassicMembers() {
		return
	}
	for _, gm := range g.Members() {
		if !gm.ClassicMember {
			continue
		}
		rejoin := gm.MemberEpoch < g.GroupEpoch || gm.MemberState == reconcile.UnrevokedPartitions.String() ||
			(gm.MemberState == reconcile.UnreleasedPartitions.String() && !g.waitingOnUnreleased(gm))
		key := fmt.Sprintf("%d/%d/%s", g.GroupEpoch, gm.MemberEpoch, gm.MemberState)
		if !rejoin || gm.notified == key {
			continue
		}
		if !g.hearsFrom(gm) {
			// No heartbeat to answer: a member joining (or reset, or dead)
			// is told by its first heartbeat once it sends them again
			// (heartbeatStarted calls this anew).
			continue
		}
		gm.notified = key
		// A heartbeat answered REBALANCE_IN_PROGRESS starts the join timer
		// (classicGroupHeartbeatToConsumerGroup:
		// scheduleConsumerGroupJoinTimeoutIfAbsent); kgrepl tells a
		// heartbeating member once per change, at the change.
		g.scheduleClassicJoinTimeout(gm)
		g.env.Send(&wire.Packet{From: wire.Broker, To: gm.ClientID, ToInc: gm.Inc, Type: wire.RebalanceNotification, Response: true,
			Error: wire.RebalanceInProgress, Summary: "heartbeat: rebalance, rejoin (consumer group epoch " + strconv.Itoa(g.GroupEpoch) + ")"})
	}
}

// hasClassicMembers: some member speaks the classic protocol (the usual
// consumer group has none, and is spared the ordered walks over members).
// ConsumerGroup keeps the count as members change
// (numClassicProtocolMembers, updated in updateMember and removeMember);
// so does kgrepl (numClassic), instead of walking the members on every
// heartbeat.
func (g *Group) hasClassicMembers() bool { return g.numClassic > 0 }

// putMember puts gm in the members map, new or in place of the member
// with its id, keeping numClassic.
func (g *Group) putMember(gm *GroupMember) {
	if old := g.members[gm.MemberID]; old != nil && old.ClassicMember {
		g.numClassic--
	}
	if gm.ClassicMember {
		g.numClassic++
	}
	g.members[gm.MemberID] = gm
	g.membersChanged()
}

// dropMember removes the member with id from the members map, keeping
// numClassic.
func (g *Group) dropMember(id string) {
	if old := g.members[id]; old != nil && old.ClassicMember {
		g.numClassic--
	}
	delete(g.members, id)
	g.membersChanged()
}

// setClassicMember sets gm's ClassicMember flag, keeping numClassic when
// gm is in the members map (a member not in it yet is counted by
// putMember).
func (g *Group) setClassicMember(gm *GroupMember, classic bool) {
	if gm.ClassicMember != classic && g.members[gm.MemberID] == gm {
		if classic {
			g.numClassic++
		} else {
			g.numClassic--
		}
	}
	gm.ClassicMember = classic
}

// waitingOnUnreleased is ConsumerGroup.waitingOnUnreleasedPartition: a
// partition of the member's target it does not have yet is still held.
func (g *Group) waitingOnUnreleased(gm *GroupMember) bool {
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

// maybeDowngrade is validateOnlineDowngradeWithFencedMember and
// convertToClassicGroup: when the member leaving is the last one speaking
// the consumer protocol, the others classic, the group becomes a classic
// group at the group epoch as its generation, each member with its target
// assignment, and rebalances. It reports whether it converted the group
// (the leaving member is then gone).
func (g *Group) maybeDowngrade(leaving *GroupMember, why string) bool {
	if !g.downgradeEnabled() || len(g.members) <= 1 {
		return false
	}
	for _, gm := range g.members {
		if gm != leaving && !gm.ClassicMember {
			return false
		}
	}
	g.dropMember(leaving.MemberID)
	if leaving.InstanceID != "" && g.static[leaving.InstanceID] == leaving.MemberID {
		delete(g.static, leaving.InstanceID)
	}
	g.env.Trace().Eventf(trace.EvRemoved, leaving.ClientID, "coordinator removes %s: %s", leaving.MemberID, why)
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids { // in id order: the session timers armed here fire in the order they are armed
		gm := g.members[id]
		g.setClassicMember(gm, false)
		gm.Assignment, gm.Revoking = store.Copy(gm.Target), nil
		gm.sessionTimer, gm.rebalanceTimer, gm.joinTimer, gm.syncTimer = 0, 0, 0, 0
		// convertToClassicGroup reschedules every member's heartbeat
		// (rescheduleClassicGroupMemberHeartbeat): the session runs from
		// now. One whose heartbeat thread runs (Member.heartbeats) keeps
		// it going every tick; one that sends none (joining, reset, or
		// gone) is removed a session timeout from now, unless a JoinGroup
		// or SyncGroup of it waits (sessionExpiry).
		if g.hearsFrom(gm) {
			gm.silentSince = -1
		} else {
			gm.silentSince = g.env.Now()
			g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: g.env.Now()})
		}
	}
	g.Type = ClassicGroup
	g.Generation = g.GroupEpoch
	g.Leader = ids[0]
	g.Assignor = g.chooseProtocol()
	g.env.Trace().Eventf(trace.EvGroupState, "", "group %s is converted back to a classic group at generation %d: every member left speaks the classic protocol", g.ID, g.Generation)
	g.State = Stable // ClassicGroup.fromConsumerGroup starts Stable
	g.prepareRebalance("downgrade from consumer to classic")
	return true
}
