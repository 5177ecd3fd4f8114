package coord

// The classic group protocol on the coordinator (Kafka's
// group/classic/ClassicGroup and the classic half of GroupMetadataManager):
// JoinGroup, SyncGroup, LeaveGroup, the implicit heartbeats and the
// session, rebalance and pending-sync timeouts.

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

func (g *Group) addMember(r *wire.JoinGroupRequest, tick int) *GroupMember {
	g.joinSeq++
	gm := &GroupMember{MemberID: r.MemberID, ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc,
		Topics: r.Topics, Owned: r.Owned, OwnedGen: r.OwnedGen, Strategy: r.Strategy, Protocols: []string{r.Strategy},
		RebalanceTimeout: r.RebalanceTimeout, SessionTimeout: r.SessionTimeout, Joined: true,
		joinOrder: g.joinSeq, silentSince: -1}
	g.putMember(gm)
	if gm.InstanceID != "" {
		store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
	}
	return gm
}

func (g *Group) removeMember(id, why string) {
	gm := g.members[id]
	if gm == nil {
		return
	}
	g.dropMember(id)
	if gm.InstanceID != "" && g.static[gm.InstanceID] == id {
		delete(g.static, gm.InstanceID)
	}
	g.env.Trace().Eventf(trace.EvRemoved, gm.ClientID, "coordinator removes %s: %s", id, why)
	if gm.joinPkt != nil {
		// GroupMetadataManager completes a JoinGroup still waiting at the
		// coordinator with UNKNOWN_MEMBER_ID before it removes the member:
		// removeMemberAndUpdateClassicGroup for an expired session,
		// removeCurrentMemberFromClassicGroup for a LeaveGroup.
		g.env.Reply(gm.joinPkt, wire.UnknownMemberID, "", nil)
		gm.joinPkt = nil
	}
	// A live process that was removed learns it from its next heartbeat
	// (one that left knows already); one that sends none now learns it
	// from its next JoinGroup or SyncGroup answer.
	if g.hearsFrom(gm) {
		g.env.Send(&wire.Packet{From: wire.Broker, To: gm.ClientID, ToInc: gm.Inc, Type: wire.RebalanceNotification, Response: true,
			Error: wire.UnknownMemberID, Summary: "heartbeat: " + id + " is not a member", Body: &wire.LeaveGroupRequest{MemberID: id}})
	}
}

// hearsFrom reports whether gm's process sends heartbeats with gm's member
// id now (Member.heartbeats): only those get a heartbeat's answer. kgrepl
// sends that answer once, at the change, as its own packet (the seed's
// simplification: heard every tick); Kafka's member gets it with its next
// heartbeat, up to heartbeat.interval.ms later, and again with each one.
func (g *Group) hearsFrom(gm *GroupMember) bool {
	return g.procs.Heartbeating(gm.ClientID, gm.Inc, gm.MemberID)
}

// checkMember validates member id, instance id and generation the way Kafka
// does for commits and SyncGroup: the member first, then the generation.
func (g *Group) checkMember(memberID, instanceID string, generation int) wire.ErrorCode {
	if instanceID != "" {
		if cur, ok := g.static[instanceID]; ok && cur != memberID {
			return wire.FencedInstanceID
		}
	}
	if g.fenced[memberID] {
		return wire.FencedInstanceID
	}
	if _, ok := g.members[memberID]; !ok {
		return wire.UnknownMemberID
	}
	if generation != g.Generation {
		return wire.IllegalGeneration
	}
	return wire.None
}

// supportsProtocol is ClassicGroup.supportsProtocols for a member naming
// one assignor: an empty group takes any; otherwise every member must
// support it (the joining member's own record included, as Kafka counts).
func (g *Group) supportsProtocol(strategy string) bool {
	if g.State == Empty || len(g.members) == 0 {
		return true
	}
	for _, gm := range g.members {
		found := false
		for _, s := range gm.Protocols {
			if s == strategy {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// allowProtocol records that a member now also supports strategy. kgrepl's
// stand-in for the first bounce of the rolling upgrade Kafka needs to
// switch assignors (SPEC §4 skips it): a live member whose
// partition.assignment.strategy is set is counted as supporting both the
// assignor it joined with and the new one until it rejoins.
func (g *Group) allowProtocol(memberID, strategy string) {
	gm := g.members[memberID]
	if gm == nil {
		return
	}
	for _, s := range gm.Protocols {
		if s == strategy {
			return
		}
	}
	gm.Protocols = append(append([]string{}, gm.Protocols...), strategy)
}

func (g *Group) onJoin(p *wire.Packet, r *wire.JoinGroupRequest) {
	if g.Type == ConsumerGroup {
		if len(g.members) > 0 {
			// A classic member joins the consumer group as a classic member
			// (GroupMetadataManager.classicGroupJoinToConsumerGroup).
			g.classicJoinToConsumerGroup(p, r)
			return
		}
		// An empty consumer group becomes a classic group when a classic
		// member joins: GroupMetadataManager.classicGroupJoinToClassicGroup
		// deletes it (maybeDeleteEmptyConsumerGroup: tombstones for its
		// epoch, assignments and subscriptions) and
		// getOrMaybeCreateClassicGroup makes a new ClassicGroup at
		// generation 0. The committed offsets stay.
		from := g.GroupEpoch
		g.recreate(ClassicGroup)
		g.env.Trace().Eventf(trace.EvGroupState, "", "group %s (consumer, empty, group epoch %d) is deleted and made anew as a classic group at generation 0 (group.protocol=classic); its committed offsets stay", g.ID, from)
	}
	// GroupMetadataManager.classicGroupJoinNewMember and
	// classicGroupJoinExistingMember: a member with no assignor in common
	// with the group is refused with INCONSISTENT_GROUP_PROTOCOL.
	if !g.supportsProtocol(r.Strategy) {
		g.env.Reply(p, wire.InconsistentGroupProtocol, r.Strategy+" is not supported by every member", nil)
		return
	}
	if r.MemberID == "" {
		if r.InstanceID != "" {
			if old, ok := g.static[r.InstanceID]; ok {
				g.staticRejoin(p, r, old)
				return
			}
		}
		nr := *r
		nr.MemberID = g.env.IssueMemberID(r.Client)
		gm := g.addMember(&nr, g.env.Now())
		gm.joinPkt = p
		g.heardLast(gm)
		if g.State == PreparingRebalance && g.initialRound {
			// GroupMetadataManager.addMemberThenRebalanceOrCompleteJoin.
			g.newMemberAdded = true
		}
		g.prepareRebalance(gm.ClientID + " joins as " + gm.MemberID)
		return
	}
	if code := g.checkMember(r.MemberID, r.InstanceID, g.Generation); code == wire.UnknownMemberID || code == wire.FencedInstanceID {
		g.env.Reply(p, code, "", nil)
		return
	}
	gm := g.members[r.MemberID]
	// ClassicGroupMember.matches: the subscription as a whole (topics,
	// owned partitions, the generation it carries) and the protocol.
	changed := !slices.Equal(gm.Topics, r.Topics) || !slices.Equal(gm.Owned, r.Owned) || gm.Strategy != r.Strategy || gm.OwnedGen != r.OwnedGen
	gm.Topics, gm.Owned, gm.OwnedGen, gm.Strategy = r.Topics, r.Owned, r.OwnedGen, r.Strategy
	gm.Protocols = []string{r.Strategy}
	gm.RebalanceTimeout, gm.SessionTimeout = r.RebalanceTimeout, r.SessionTimeout
	switch g.State {
	case PreparingRebalance:
		g.markJoined(gm, p)
	case CompletingRebalance, Stable:
		// Nothing new: answer with the generation in force, as Kafka does;
		// only a leader's JoinGroup in Stable forces a rebalance.
		if !changed && (gm.MemberID != g.Leader || g.State == CompletingRebalance) {
			g.answerJoin(gm, p)
			return
		}
		g.markJoined(gm, p)
		g.prepareRebalance(gm.MemberID + " rejoins with new metadata")
	case Empty:
		g.markJoined(gm, p)
		g.prepareRebalance(gm.MemberID + " joins")
	}
}

func (g *Group) markJoined(gm *GroupMember, p *wire.Packet) {
	if !gm.Joined {
		g.joinSeq++
		gm.joinOrder = g.joinSeq
	}
	gm.Joined = true
	gm.joinPkt = p
}

// staticRejoin swaps a new member id in for a returning static member: same
// assignment, no rebalance, no new generation (KIP-345).
func (g *Group) staticRejoin(p *wire.Packet, r *wire.JoinGroupRequest, oldID string) {
	old := g.members[oldID]
	// ClassicGroup.replaceStaticMember fences the old instance at once: a
	// JoinGroup or SyncGroup of it still waiting is answered
	// FENCED_INSTANCE_ID, which its client treats as fatal
	// (AbstractCoordinator's JoinGroupResponseHandler and
	// SyncGroupResponseHandler). A process already gone never reads it.
	if old.joinPkt != nil {
		g.env.Reply(old.joinPkt, wire.FencedInstanceID, "static member "+r.InstanceID+" replaced by a new instance", nil)
	}
	if old.syncPkt != nil {
		g.env.Reply(old.syncPkt, wire.FencedInstanceID, "static member "+r.InstanceID+" replaced by a new instance", nil)
	}
	nr := *r
	nr.MemberID = g.env.IssueMemberID(r.Client)
	g.dropMember(oldID)
	store.PutMap(&g.fenced, oldID, true)
	gm := &GroupMember{MemberID: nr.MemberID, ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc, Topics: r.Topics,
		// The new instance's metadata, as Kafka stores it.
		Owned: r.Owned, OwnedGen: r.OwnedGen, Strategy: r.Strategy, Protocols: []string{r.Strategy}, RebalanceTimeout: r.RebalanceTimeout,
		SessionTimeout: r.SessionTimeout, Assignment: old.Assignment, Joined: old.Joined, joinOrder: old.joinOrder, silentSince: -1,
		pendingSync: old.pendingSync}
	g.putMember(gm)
	g.heardLast(gm)
	store.PutMap(&g.static, r.InstanceID, gm.MemberID)
	if g.Leader == oldID {
		g.Leader = gm.MemberID
	}
	g.env.Trace().Eventf(trace.EvStaticRejoin, r.Client, "static member %s returns as %s, swapped in for %s: same assignment, generation stays %d",
		r.InstanceID, gm.MemberID, oldID, g.Generation)
	switch g.State {
	case Stable:
		// GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin:
		// in Stable only a change of the group's protocol rebalances; a
		// changed subscription alone gets the old assignment back, and the
		// client, finding it does not match (checkAssignmentMatchedSubscription),
		// rejoins with its new subscription.
		if g.chooseProtocol() != g.Assignor {
			g.markJoined(gm, p)
			g.prepareRebalance("static member " + r.InstanceID + " joined with a change of protocol")
			return
		}
		if g.withheld() {
			// A cooperative round withheld partitions for their owner to
			// revoke; a new instance owns nothing and will not rejoin to
			// hand them over, so the group rebalances (kgrepl's rule: Kafka
			// would leave them unassigned until the next rebalance).
			g.markJoined(gm, p)
			g.prepareRebalance("static member " + r.InstanceID + " returns while partitions are withheld")
			return
		}
		g.answerJoin(gm, p)
	case PreparingRebalance:
		g.markJoined(gm, p)
	default:
		// Kafka rebalances when a static member comes back while the group
		// is not Stable: the leader's plan may name the old member id.
		g.markJoined(gm, p)
		g.prepareRebalance("static member " + r.InstanceID + " returns as " + gm.MemberID)
	}
}

// answerJoin answers one member's JoinGroup with the generation in force.
func (g *Group) answerJoin(gm *GroupMember, p *wire.Packet) {
	resp := &wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: g.Generation, Leader: g.Leader, Protocol: g.Assignor}
	summary := fmt.Sprintf("gen %d, member %s, leader %s", g.Generation, gm.MemberID, wire.OrDash(g.Leader))
	if gm.MemberID == g.Leader && g.State == CompletingRebalance {
		resp.Members = g.memberList()
		summary += ", members " + memberIDs(g.Members())
	}
	g.env.Reply(p, wire.None, summary, resp)
}

// memberList is what the leader is sent: every member's subscription and claims.
func (g *Group) memberList() []assign.Member {
	var list []assign.Member
	for _, gm := range g.Members() {
		list = append(list, assign.Member{MemberID: gm.MemberID, InstanceID: gm.InstanceID, Topics: gm.Topics,
			Owned: gm.Owned, Generation: gm.OwnedGen})
	}
	return list
}

// prepareRebalance moves the group to PreparingRebalance and tells every
// member that has not joined yet.
func (g *Group) prepareRebalance(reason string) {
	if g.State == PreparingRebalance {
		return
	}
	if g.State == CompletingRebalance {
		for _, gm := range g.Members() {
			if gm.syncPkt != nil {
				g.env.Reply(gm.syncPkt, wire.RebalanceInProgress, "", nil)
				gm.syncPkt = nil
				g.rescheduleHeartbeat(gm) // propagateAssignment
			}
		}
	}
	initial := g.State == Empty && g.cfg.InitialRebalanceDelay > 0
	g.transition(PreparingRebalance, reason)
	g.RebalanceStarts++
	g.roundStart = g.env.Now()
	timeout := 0
	for _, gm := range g.Members() {
		if gm.RebalanceTimeout > timeout {
			timeout = gm.RebalanceTimeout
		}
	}
	g.deadline = g.env.Now() + timeout
	g.initialRound, g.newMemberAdded = initial, false
	if initial {
		// GroupMetadataManager.prepareRebalance: the group is new; give the
		// members more time to join. No rebalance-timeout deadline here.
		d := g.cfg.InitialRebalanceDelay
		g.initialRemaining = timeout - d
		if g.initialRemaining < 0 {
			g.initialRemaining = 0
		}
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + d, Kind: tmInitialRebalance, Key: g.roundStart, Arg: d})
	} else {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.deadline, Kind: tmRebalanceDeadline, Key: g.roundStart})
	}
	for _, gm := range g.Members() {
		if gm.joinPkt == nil || gm.joinPkt.Delivered != g.env.Now() {
			gm.Joined = false
			gm.joinPkt = nil
		}
		if !gm.Joined && g.hearsFrom(gm) {
			// Told by its next heartbeat's answer; a member sending none
			// (joining, its generation reset, dead) hears nothing: its next
			// JoinGroup or SyncGroup comes anyway.
			g.env.Send(&wire.Packet{From: wire.Broker, To: gm.ClientID, ToInc: gm.Inc, Type: wire.RebalanceNotification, Response: true,
				Error: wire.RebalanceInProgress, Summary: "heartbeat: rebalance, rejoin"})
		}
	}
}

// tick ends the coordinator's part of a tick: a join round whose members
// have all joined completes here, so JoinGroups that arrive in one tick are
// answered in one generation.
func (g *Group) tick() { g.kind().tick(g) }

// classicKind is the classic group's groupKind.
type classicKind struct{}

// validateOffsetCommit is ClassicGroup.validateOffsetCommit: the member,
// then the generation; a plain commit while the group is
// CompletingRebalance is refused with REBALANCE_IN_PROGRESS.
func (classicKind) validateOffsetCommit(g *Group, memberID, instanceID string, gen int, txn bool) wire.ErrorCode {
	code := g.checkMember(memberID, instanceID, gen)
	if code == wire.None && !txn && g.State == CompletingRebalance {
		code = wire.RebalanceInProgress
	}
	return code
}

func (classicKind) tick(g *Group) {
	if g.State != PreparingRebalance || g.initialRound {
		return // an initial rebalance never completes early (maybeCompleteJoinPhase)
	}
	for _, gm := range g.members {
		if !gm.Joined {
			return
		}
	}
	g.completeJoin()
}

func (g *Group) completeJoin() {
	for _, gm := range g.Members() {
		if !gm.Joined && gm.InstanceID == "" {
			g.removeMember(gm.MemberID, fmt.Sprintf("did not rejoin within the rebalance timeout (%d)", g.deadline-g.roundStart))
		}
	}
	if len(g.members) > 0 && !g.anyJoined() {
		// Only static members that have not rejoined are left: Kafka keeps
		// them and tries the round again rather than form an empty generation.
		g.env.Trace().Eventf(trace.EvGeneration, "", "no member rejoined within the rebalance timeout; the round starts again")
		g.roundStart = g.env.Now()
		g.deadline = g.env.Now() + (g.deadline - g.roundStart)
		timeout := 0
		for _, gm := range g.members {
			if gm.RebalanceTimeout > timeout {
				timeout = gm.RebalanceTimeout
			}
		}
		g.deadline = g.env.Now() + timeout
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.deadline, Kind: tmRebalanceDeadline, Key: g.roundStart})
		return
	}
	g.Generation++
	if len(g.members) == 0 {
		g.Leader = ""
		g.transition(Empty, "no members")
		g.env.Trace().Eventf(trace.EvGeneration, "", "generation %d: no members", g.Generation)
		return
	}
	joined := []*GroupMember{}
	for _, gm := range g.Members() {
		if gm.Joined {
			joined = append(joined, gm)
		}
	}
	sort.SliceStable(joined, func(i, j int) bool { return joined[i].joinOrder < joined[j].joinOrder })
	if _, ok := g.members[g.Leader]; !ok || !g.members[g.Leader].Joined {
		g.Leader = joined[0].MemberID
	}
	g.Assignor = g.chooseProtocol()
	g.transition(CompletingRebalance, fmt.Sprintf("generation %d", g.Generation))
	g.env.Trace().Eventf(trace.EvGeneration, "", "generation %d: leader %s, %s, members %s", g.Generation, g.Leader, g.Assignor, memberIDs(g.Members()))
	list := g.memberList()
	// GroupMetadataManager.completeClassicGroupJoin: every member must now
	// heartbeat with the member id it was given, and send SyncGroup within
	// the rebalance timeout (schedulePendingSync).
	timeout := 0
	for _, gm := range g.Members() {
		gm.pendingSync = true
		if gm.RebalanceTimeout > timeout {
			timeout = gm.RebalanceTimeout
		}
	}
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + timeout, Kind: tmPendingSync, Key: g.Generation, Arg: g.Incarnation})
	// rescheduleClassicGroupMemberHeartbeat for every member left, static
	// ones that did not rejoin too (completeClassicGroupJoin walks
	// allMembers): the session runs from now for a member whose client is
	// not heartbeating (a JoinGroup counted as heard while it waited
	// here).
	for _, gm := range joined {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: gm.MemberID, Key: g.Generation})
		g.rescheduleHeartbeat(gm)
	}
	for _, gm := range g.Members() {
		if !gm.Joined {
			g.rescheduleHeartbeat(gm)
		}
	}
	for _, gm := range joined {
		resp := &wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: g.Generation, Leader: g.Leader, Protocol: g.Assignor}
		summary := fmt.Sprintf("gen %d, member %s, leader %s", g.Generation, gm.MemberID, g.Leader)
		if gm.MemberID == g.Leader {
			resp.Members = list
			summary += ", members " + memberIDs(g.Members())
		}
		if gm.joinPkt != nil {
			g.env.Reply(gm.joinPkt, wire.None, summary, resp)
		}
		gm.joinPkt = nil
		gm.Joined = false
	}
}

// initialDelayOver is GroupMetadataManager.tryCompleteInitialRebalanceElseSchedule:
// if a member joined during the delay and time remains, wait again (the
// configured delay, at most what remains); otherwise complete the join.
func (g *Group) initialDelayOver(roundStart, delay int) {
	if g.Type != ClassicGroup || g.State != PreparingRebalance || !g.initialRound || g.roundStart != roundStart {
		return
	}
	if g.newMemberAdded && g.initialRemaining != 0 {
		g.newMemberAdded = false
		d := g.cfg.InitialRebalanceDelay
		if d > g.initialRemaining {
			d = g.initialRemaining
		}
		g.initialRemaining -= delay
		if g.initialRemaining < 0 {
			g.initialRemaining = 0
		}
		g.env.Trace().Eventf(trace.EvGeneration, "", "a member joined during group.initial.rebalance.delay.ms: the first rebalance waits %d more", d)
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + d, Kind: tmInitialRebalance, Key: roundStart, Arg: d})
		return
	}
	g.initialRound = false
	g.completeJoin()
}

// heartbeatCheck is ClassicGroupMember.hasSatisfiedHeartbeat for a member
// answered in generation gen: heartbeats count only for a member id the
// client holds (kgrepl's heartbeats are implicit: a live process is heard
// with the member id it goes by). One whose client never took the id (the
// JoinGroup answer was lost) is removed after session.timeout.ms; one
// waiting at the coordinator in JoinGroup or SyncGroup counts as heard.
func (g *Group) heartbeatCheck(id string, gen int) {
	gm := g.members[id]
	if gm == nil || gm.silentSince >= 0 || (g.Type == ConsumerGroup && !gm.ClassicMember) {
		return // gone, or its silence is already being timed
	}
	if !g.procs.Alive(gm.ClientID, gm.Inc) || g.procs.GoesBy(gm.ClientID, gm.Inc, id) {
		return // a dead process is timed by processStopped
	}
	if g.Type == ConsumerGroup {
		// A classic member inside a consumer group: its session runs out
		// (scheduleConsumerGroupSessionTimeout at its JoinGroup answer).
		g.fenceMember(gm, fmt.Sprintf("session timeout (no heartbeat with %s for %d ticks: its client never took that member id)", id, gm.SessionTimeout))
		return
	}
	if (g.State == PreparingRebalance && gm.joinPkt != nil) || gm.syncPkt != nil {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: id, Key: gen})
		return
	}
	g.removeMember(id, fmt.Sprintf("session timeout (no heartbeat with %s for %d ticks: its client never took that member id)", id, gm.SessionTimeout))
	if g.State != Empty {
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
func (g *Group) expirePendingSync(gen, incarnation int) {
	if g.Type != ClassicGroup || g.Generation != gen || g.Incarnation != incarnation || (g.State != CompletingRebalance && g.State != Stable) {
		return
	}
	removed := false
	for _, gm := range g.Members() {
		if gm.pendingSync {
			g.removeMember(gm.MemberID, "no SyncGroup within the rebalance timeout")
			removed = true
		}
	}
	if removed {
		g.prepareRebalance("members removed on pending sync expiration")
	}
}

// withheld reports whether a subscribed partition has no owner in the
// generation (the cooperative protocol's first round holds some back).
func (g *Group) withheld() bool {
	subscribed := map[string]bool{}
	owned := map[wire.TopicPartition]bool{}
	for _, gm := range g.members {
		for _, t := range gm.Topics {
			subscribed[t] = true
		}
		for _, tp := range gm.Assignment {
			owned[tp] = true
		}
	}
	for _, tp := range g.env.Layout().Inputs() {
		if subscribed[tp.Topic] && !owned[tp] {
			return true
		}
	}
	return false
}

func (g *Group) anyJoined() bool {
	for _, gm := range g.members {
		if gm.Joined {
			return true
		}
	}
	return false
}

// chooseProtocol picks the strategy most members name (ties: the leader's).
func (g *Group) chooseProtocol() string {
	count := map[string]int{}
	for _, gm := range g.members {
		count[gm.Strategy]++
	}
	best := g.members[g.Leader].Strategy
	for _, s := range assign.Strategies {
		if count[s] > count[best] {
			best = s
		}
	}
	return best
}

func (g *Group) onSync(p *wire.Packet, r *wire.SyncGroupRequest) {
	if code := g.checkMember(r.MemberID, r.InstanceID, r.Generation); code != wire.None {
		g.env.Reply(p, code, "", nil)
		return
	}
	gm := g.members[r.MemberID]
	gm.pendingSync = false
	switch g.State {
	case PreparingRebalance:
		g.env.Reply(p, wire.RebalanceInProgress, "", nil)
	case Stable:
		g.answerSync(gm, p)
	case CompletingRebalance:
		if r.MemberID != g.Leader {
			gm.syncPkt = p
			return
		}
		// Members the plan leaves out get an empty assignment, as in Kafka.
		for id, m := range g.members {
			m.Assignment = append([]wire.TopicPartition{}, r.Plan[id]...)
		}
		g.transition(Stable, fmt.Sprintf("leader %s sent the plan", r.MemberID))
		g.answerSync(gm, p)
		// propagateAssignment completes the leader's own sync future as
		// well, and restarts its session with the others'.
		g.rescheduleHeartbeat(gm)
		for _, m := range g.Members() {
			if m.syncPkt != nil {
				g.answerSync(m, m.syncPkt)
				m.syncPkt = nil
				g.rescheduleHeartbeat(m) // propagateAssignment
			}
		}
	default:
		g.env.Reply(p, wire.UnknownMemberID, "", nil)
	}
}

func (g *Group) answerSync(gm *GroupMember, p *wire.Packet) {
	g.env.Reply(p, wire.None, g.env.Layout().PartList(gm.Assignment), &wire.SyncGroupResponse{Assignment: append([]wire.TopicPartition{}, gm.Assignment...)})
}

func (g *Group) onLeave(p *wire.Packet, r *wire.LeaveGroupRequest) {
	if code := g.checkMember(r.MemberID, r.InstanceID, g.Generation); code == wire.UnknownMemberID || code == wire.FencedInstanceID {
		g.env.Reply(p, code, "", nil)
		return
	}
	g.removeMember(r.MemberID, "LeaveGroup")
	g.env.Reply(p, wire.None, "", nil)
	if g.State != Empty {
		g.prepareRebalance(r.MemberID + " left")
	}
}

// processStopped is the implicit heartbeat thread going quiet: the
// coordinator last heard the member now and removes it after the session
// timeout.
// heardLast handles a JoinGroup that arrives after its sender died (packets
// already sent are still delivered): the coordinator hears it this once,
// and then nothing, so the session timeout runs from now.
func (g *Group) heardLast(gm *GroupMember) {
	if g.Type == ConsumerGroup {
		return
	}
	if !g.procs.Alive(gm.ClientID, gm.Inc) && gm.silentSince < 0 {
		gm.silentSince = g.env.Now()
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: g.env.Now()})
	}
}

// heartbeatStopped: the process going by member id id stopped sending
// heartbeats (Member.heartbeats): silent from now. Classic groups only: a
// classic member inside a consumer group keeps kgrepl's older rule (heard
// while its process goes by the id).
func (g *Group) heartbeatStopped(id string) {
	if g.Type != ClassicGroup {
		return
	}
	g.memberIDDropped(id)
}

// heartbeatStarted: the process going by member id id sends heartbeats
// again; the coordinator hears it every tick from now.
func (g *Group) heartbeatStarted(id string) {
	if g.Type == ConsumerGroup {
		// A classic member inside a consumer group: its first heartbeat
		// is answered REBALANCE_IN_PROGRESS if it must rejoin, which
		// starts its join timer.
		g.notifyClassicMembers()
		return
	}
	if gm := g.members[id]; gm != nil {
		gm.silentSince = -1
	}
}

// rescheduleHeartbeat is rescheduleClassicGroupMemberHeartbeat for a member
// not heard now (completeClassicGroupJoin, propagateAssignment): its
// session timeout runs from now.
func (g *Group) rescheduleHeartbeat(gm *GroupMember) {
	if gm.silentSince < 0 {
		return
	}
	gm.silentSince = g.env.Now()
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: g.env.Now()})
}

// memberIDDropped: a live process goes by another member id now.
func (g *Group) memberIDDropped(id string) {
	if g.Type == ConsumerGroup {
		// A consumer-protocol member's heartbeats are real packets: it just
		// stops sending them. A classic member is heard no more.
		if gm := g.members[id]; gm != nil && gm.ClassicMember && gm.silentSince < 0 {
			gm.silentSince = g.env.Now()
			g.classicSession(gm, g.env.Now()+gm.SessionTimeout)
		}
		return
	}
	if gm := g.members[id]; gm != nil && gm.silentSince < 0 {
		gm.silentSince = g.env.Now()
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmSessionExpiry, Member: id, Key: g.env.Now()})
	}
}

// ProcessStopped is the implicit heartbeat thread of client's process inc
// going quiet (it crashed, closed or stopped): the coordinator last heard
// it now and removes it after the session timeout. The member is found by
// its process, not by the member id the process knows: one that died with
// its JoinGroup unanswered never learned its id.
func (g *Group) ProcessStopped(client string, inc int) {
	if g.Type == ConsumerGroup {
		// A consumer-protocol member's session runs from its last
		// heartbeat; a classic member's heartbeat thread goes quiet now.
		for _, gm := range g.Members() {
			if gm.ClassicMember && gm.ClientID == client && gm.Inc == inc && gm.silentSince < 0 {
				gm.silentSince = g.env.Now()
				g.classicSession(gm, g.env.Now()+gm.SessionTimeout)
			}
		}
		return
	}
	for _, gm := range g.Members() {
		if gm.ClientID != client || gm.Inc != inc || gm.silentSince >= 0 {
			continue
		}
		gm.silentSince = g.env.Now()
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: g.env.Now()})
	}
}

// sessionExpiry removes a member still silent since the tick it went quiet.
func (g *Group) sessionExpiry(id string, since int) {
	cur := g.members[id]
	if g.Type != ClassicGroup || cur == nil || cur.silentSince != since {
		return
	}
	if (g.State == PreparingRebalance && cur.joinPkt != nil) || cur.syncPkt != nil {
		// A member whose JoinGroup or SyncGroup is waiting at the coordinator
		// counts as heard (Kafka's hasSatisfiedHeartbeat); look again later.
		// kgrepl counts a new member's waiting JoinGroup too: Kafka times
		// those out after group.classic.new.member.join.timeout.ms (5
		// minutes), which kgrepl leaves out.
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + cur.SessionTimeout, Kind: tmSessionExpiry, Member: id, Key: since})
		return
	}
	g.removeMember(id, fmt.Sprintf("session timeout (%d ticks of silence)", g.env.Now()-since))
	if g.State != Empty {
		g.prepareRebalance(id + " timed out")
	}
}
