package coord

// The classic group's rebalance protocol on the coordinator (the classic
// half of Kafka's GroupMetadataManager): JoinGroup rounds, the leader's
// plan through SyncGroup, LeaveGroup.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// onJoin is GroupMetadataManager.classicGroupJoinToClassicGroup.
func (g *ClassicGroup) onJoin(p *wire.Packet, r *wire.JoinGroupRequest) {
	// classicGroupJoinNewMember and classicGroupJoinExistingMember: a
	// member with no assignor in common with the group is refused with
	// INCONSISTENT_GROUP_PROTOCOL.
	if !g.supportsProtocols(r.Protocols) {
		g.env.Reply(p, wire.InconsistentGroupProtocol, fmt.Sprintf("%s shares no assignor with every member (%s)",
			strings.Join(r.Protocols, ","), g.listedProtocols()), nil)
		return
	}
	if r.MemberID == "" {
		g.joinNewMember(p, r)
		return
	}
	if code := g.checkMember(r.MemberID, r.InstanceID, g.generation); code == wire.UnknownMemberID || code == wire.FencedInstanceID {
		g.env.Reply(p, code, "", nil)
		return
	}
	gm := g.members.get(r.MemberID)
	// ClassicGroupMember.matches: the subscription as a whole (topics,
	// owned partitions, the generation it carries) and the protocol.
	changed := !slices.Equal(gm.Topics, r.Topics) || !slices.Equal(gm.Owned, r.Owned) || !slices.Equal(gm.Protocols, r.Protocols) || gm.OwnedGen != r.OwnedGen
	gm.Topics, gm.Owned, gm.OwnedGen, gm.Strategy = r.Topics, r.Owned, r.OwnedGen, r.First()
	g.setProtocols(gm, r.Protocols)
	gm.RebalanceTimeout, gm.SessionTimeout = r.RebalanceTimeout, r.SessionTimeout
	switch g.state {
	case PreparingRebalance:
		g.markJoined(gm, p)
	case CompletingRebalance, Stable:
		// Nothing new: answer with the generation in force, as Kafka does;
		// only a leader's JoinGroup in Stable forces a rebalance.
		if !changed && (gm.MemberID != g.leader || g.state == CompletingRebalance) {
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

// joinNewMember is classicGroupJoinNewMember: a static member coming back
// is swapped in for its old member id; anyone else gets a new member id
// and starts a rebalance.
func (g *ClassicGroup) joinNewMember(p *wire.Packet, r *wire.JoinGroupRequest) {
	if r.InstanceID != "" {
		if old, ok := g.static[r.InstanceID]; ok {
			g.staticRejoin(p, r, old)
			return
		}
	}
	nr := *r
	nr.MemberID = g.env.IssueMemberID(r.Client)
	gm := g.addMember(&nr)
	gm.joinPkt = p
	g.heardLast(gm)
	if g.state == PreparingRebalance && g.initialRound {
		// GroupMetadataManager.addMemberThenRebalanceOrCompleteJoin.
		g.newMemberAdded = true
	}
	g.prepareRebalance(gm.ClientID + " joins as " + gm.MemberID)
}

func (g *ClassicGroup) markJoined(gm *ClassicMember, p *wire.Packet) {
	if !gm.Joined {
		g.joinSeq++
		gm.joinOrder = g.joinSeq
	}
	gm.Joined = true
	gm.joinPkt = p
}

// staticRejoin swaps a new member id in for a returning static member: same
// assignment, no rebalance, no new generation (KIP-345).
func (g *ClassicGroup) staticRejoin(p *wire.Packet, r *wire.JoinGroupRequest, oldID string) {
	old := g.members.get(oldID)
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
	g.members.drop(oldID)
	store.PutMap(&g.fenced, oldID, true)
	gm := &ClassicMember{MemberID: nr.MemberID, ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc, Topics: r.Topics,
		// The new instance's metadata, as Kafka stores it.
		Strategy: r.First(), RebalanceTimeout: r.RebalanceTimeout,
		ClassicMemberMetadata: ClassicMemberMetadata{Owned: r.Owned, OwnedGen: r.OwnedGen, Protocols: g.sharedProtocols(r.Protocols),
			SessionTimeout: r.SessionTimeout},
		Assignment: old.Assignment, Joined: old.Joined, joinOrder: old.joinOrder, silentSince: -1,
		pendingSync: old.pendingSync}
	g.members.put(gm.MemberID, gm)
	g.heardLast(gm)
	store.PutMap(&g.static, r.InstanceID, gm.MemberID)
	if g.leader == oldID {
		g.leader = gm.MemberID
	}
	g.env.Trace().Eventf(trace.EvStaticRejoin, r.Client, "static member %s returns as %s, swapped in for %s: same assignment, generation stays %d",
		r.InstanceID, gm.MemberID, oldID, g.generation)
	switch g.state {
	case Stable:
		// GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin:
		// in Stable only a change of the group's protocol rebalances; a
		// changed subscription alone gets the old assignment back, and the
		// client, finding it does not match (checkAssignmentMatchedSubscription),
		// rejoins with its new subscription.
		if g.selectProtocol() != g.protocol {
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
func (g *ClassicGroup) answerJoin(gm *ClassicMember, p *wire.Packet) {
	resp := &wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: g.generation, Leader: g.leader, Protocol: g.protocol}
	summary := fmt.Sprintf("gen %d, member %s, leader %s", g.generation, gm.MemberID, wire.OrDash(g.leader))
	if gm.MemberID == g.leader && g.state == CompletingRebalance {
		resp.Members = g.memberList()
		summary += ", members " + classicMemberIDs(g.members.list())
	}
	g.env.Reply(p, wire.None, summary, resp)
}

// memberList is what the leader is sent: every member's subscription and claims.
func (g *ClassicGroup) memberList() []assign.Member {
	var list []assign.Member
	for _, gm := range g.members.list() {
		list = append(list, assign.Member{MemberID: gm.MemberID, InstanceID: gm.InstanceID, Topics: gm.Topics,
			Owned: gm.Owned, Generation: gm.OwnedGen})
	}
	return list
}

// maxRebalanceTimeout is the longest rebalance timeout among the members:
// the join round's length.
func (g *ClassicGroup) maxRebalanceTimeout() int {
	timeout := 0
	for _, gm := range g.members.list() {
		if gm.RebalanceTimeout > timeout {
			timeout = gm.RebalanceTimeout
		}
	}
	return timeout
}

// prepareRebalance moves the group to PreparingRebalance and tells every
// member that has not joined yet.
func (g *ClassicGroup) prepareRebalance(reason string) {
	if g.state == PreparingRebalance {
		return
	}
	if g.state == CompletingRebalance {
		for _, gm := range g.members.list() {
			if gm.syncPkt != nil {
				g.env.Reply(gm.syncPkt, wire.RebalanceInProgress, "", nil)
				gm.syncPkt = nil
				g.rescheduleHeartbeat(gm) // propagateAssignment
			}
		}
	}
	initial := g.state == Empty && g.cfg.InitialRebalanceDelay > 0
	g.transition(PreparingRebalance, reason)
	g.rebalanced()
	g.roundStart = g.env.Now()
	timeout := g.maxRebalanceTimeout()
	g.deadline = g.env.Now() + timeout
	g.initialRound, g.newMemberAdded = initial, false
	if initial {
		// GroupMetadataManager.prepareRebalance: the group is new; give the
		// members more time to join. No rebalance-timeout deadline here.
		d := g.cfg.InitialRebalanceDelay
		g.initialRemaining = max(timeout-d, 0)
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + d, Kind: tmInitialRebalance, Key: g.roundStart, Arg: d})
	} else {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.deadline, Kind: tmRebalanceDeadline, Key: g.roundStart})
	}
	for _, gm := range g.members.list() {
		if gm.joinPkt == nil || gm.joinPkt.Delivered != g.env.Now() {
			gm.Joined = false
			gm.joinPkt = nil
		}
		if !gm.Joined && g.hearsFrom(gm) {
			// Told by its next heartbeat's answer; a member sending none
			// (joining, its generation reset, dead) hears nothing: its next
			// JoinGroup or SyncGroup comes anyway.
			g.answerNextHeartbeat(gm.ClientID, gm.Inc, gm.MemberID, beatRebalance, g.roundStart)
		}
	}
}

// tick ends the group's part of a tick: a join round whose members have
// all joined completes here, so JoinGroups that arrive in one tick are
// answered in one generation.
func (g *ClassicGroup) tick() {
	if g.state != PreparingRebalance || g.initialRound {
		return // an initial rebalance never completes early (maybeCompleteJoinPhase)
	}
	for _, gm := range g.members.byID {
		if !gm.Joined {
			return
		}
	}
	g.completeJoin()
}

// completeJoin is GroupMetadataManager.completeClassicGroupJoin.
func (g *ClassicGroup) completeJoin() {
	for _, gm := range g.members.list() {
		if !gm.Joined && gm.InstanceID == "" {
			g.removeMember(gm.MemberID, fmt.Sprintf("did not rejoin within the rebalance timeout (%d)", g.deadline-g.roundStart))
		}
	}
	if g.members.len() > 0 && !g.anyJoined() {
		// Only static members that have not rejoined are left: Kafka keeps
		// them and tries the round again rather than form an empty generation.
		g.env.Trace().Eventf(trace.EvGeneration, "", "no member rejoined within the rebalance timeout; the round starts again")
		g.roundStart = g.env.Now()
		g.deadline = g.env.Now() + g.maxRebalanceTimeout()
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.deadline, Kind: tmRebalanceDeadline, Key: g.roundStart})
		return
	}
	g.generation++
	if g.members.len() == 0 {
		g.leader = ""
		g.transition(Empty, "no members")
		g.env.Trace().Eventf(trace.EvGeneration, "", "generation %d: no members", g.generation)
		return
	}
	joined := []*ClassicMember{}
	for _, gm := range g.members.list() {
		if gm.Joined {
			joined = append(joined, gm)
		}
	}
	sort.SliceStable(joined, func(i, j int) bool { return joined[i].joinOrder < joined[j].joinOrder })
	if l := g.members.get(g.leader); l == nil || !l.Joined {
		g.leader = joined[0].MemberID
	}
	g.protocol = g.selectProtocol()
	g.transition(CompletingRebalance, fmt.Sprintf("generation %d", g.generation))
	g.env.Trace().Eventf(trace.EvGeneration, "", "generation %d: leader %s, %s, members %s", g.generation, g.leader, g.protocol, classicMemberIDs(g.members.list()))
	list := g.memberList()
	// Every member must now heartbeat with the member id it was given, and
	// send SyncGroup within the rebalance timeout (schedulePendingSync).
	for _, gm := range g.members.list() {
		gm.pendingSync = true
	}
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + g.maxRebalanceTimeout(), Kind: tmPendingSync, Key: g.generation, Arg: g.c.Incarnation})
	// rescheduleClassicGroupMemberHeartbeat for every member left, static
	// ones that did not rejoin too (completeClassicGroupJoin walks
	// allMembers): the session runs from now for a member whose client is
	// not heartbeating (a JoinGroup counted as heard while it waited
	// here).
	for _, gm := range joined {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: gm.MemberID, Key: g.generation})
		g.rescheduleHeartbeat(gm)
	}
	for _, gm := range g.members.list() {
		if !gm.Joined {
			g.rescheduleHeartbeat(gm)
		}
	}
	for _, gm := range joined {
		resp := &wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: g.generation, Leader: g.leader, Protocol: g.protocol}
		summary := fmt.Sprintf("gen %d, member %s, leader %s", g.generation, gm.MemberID, g.leader)
		if gm.MemberID == g.leader {
			resp.Members = list
			summary += ", members " + classicMemberIDs(g.members.list())
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
func (g *ClassicGroup) initialDelayOver(roundStart, delay int) {
	if g.state != PreparingRebalance || !g.initialRound || g.roundStart != roundStart {
		return
	}
	if g.newMemberAdded && g.initialRemaining != 0 {
		g.newMemberAdded = false
		d := min(g.cfg.InitialRebalanceDelay, g.initialRemaining)
		g.initialRemaining = max(g.initialRemaining-delay, 0)
		g.env.Trace().Eventf(trace.EvGeneration, "", "a member joined during group.initial.rebalance.delay.ms: the first rebalance waits %d more", d)
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + d, Kind: tmInitialRebalance, Key: roundStart, Arg: d})
		return
	}
	g.initialRound = false
	g.completeJoin()
}

// listedProtocols says what the members list, for INCONSISTENT_GROUP_PROTOCOL's
// trace line: each distinct list and how many members list it.
func (g *ClassicGroup) listedProtocols() string {
	count := map[string]int{}
	var order []string
	for _, l := range g.protocolLists() {
		k := strings.Join(l, ",")
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s: %d", k, count[k])
	}
	return "members list " + strings.Join(parts, ", ")
}

// onSync is GroupMetadataManager.classicGroupSync.
func (g *ClassicGroup) onSync(p *wire.Packet, r *wire.SyncGroupRequest) {
	if code := g.checkMember(r.MemberID, r.InstanceID, r.Generation); code != wire.None {
		g.env.Reply(p, code, "", nil)
		return
	}
	gm := g.members.get(r.MemberID)
	gm.pendingSync = false
	switch g.state {
	case PreparingRebalance:
		g.env.Reply(p, wire.RebalanceInProgress, "", nil)
	case Stable:
		g.answerSync(gm, p)
	case CompletingRebalance:
		if r.MemberID != g.leader {
			gm.syncPkt = p
			return
		}
		// Members the plan leaves out get an empty assignment, as in Kafka.
		for id, m := range g.members.byID {
			m.Assignment = append([]wire.TopicPartition{}, r.Plan[id]...)
		}
		g.transition(Stable, fmt.Sprintf("leader %s sent the plan", r.MemberID))
		g.answerSync(gm, p)
		// propagateAssignment completes the leader's own sync future as
		// well, and restarts its session with the others'.
		g.rescheduleHeartbeat(gm)
		for _, m := range g.members.list() {
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

func (g *ClassicGroup) answerSync(gm *ClassicMember, p *wire.Packet) {
	// The answer shares the member's assignment: it is replaced, never
	// changed in place (ClassicMember), and the client copies what it
	// keeps (an empty one is a new empty list, as before).
	got := gm.Assignment
	if len(got) == 0 {
		got = []wire.TopicPartition{}
	}
	g.env.ReplyText(p, wire.None, g.env.Trace().Textf("%s", trace.Parts{L: g.env.Layout(), TPs: gm.Assignment}), &wire.SyncGroupResponse{Assignment: got})
}

// onLeave is GroupMetadataManager.classicGroupLeave.
func (g *ClassicGroup) onLeave(p *wire.Packet, r *wire.LeaveGroupRequest) {
	if code := g.checkMember(r.MemberID, r.InstanceID, g.generation); code == wire.UnknownMemberID || code == wire.FencedInstanceID {
		g.env.Reply(p, code, "", nil)
		return
	}
	g.removeMember(r.MemberID, "LeaveGroup")
	g.env.Reply(p, wire.None, "", nil)
	if g.state != Empty {
		g.prepareRebalance(r.MemberID + " left")
	}
}

func (g *ClassicGroup) removeMember(id, why string) {
	gm := g.members.get(id)
	if gm == nil {
		return
	}
	g.members.drop(id)
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
		g.answerNextHeartbeat(gm.ClientID, gm.Inc, id, beatUnknown, 0)
	}
}
