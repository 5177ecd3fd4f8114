package sim

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

func (g *Group) removeMember(w *World, id, why string) {
	gm := g.members[id]
	if gm == nil {
		return
	}
	g.dropMember(id)
	if gm.InstanceID != "" && g.static[gm.InstanceID] == id {
		delete(g.static, gm.InstanceID)
	}
	w.trace.Eventf(EvRemoved, gm.ClientID, "coordinator removes %s: %s", id, why)
	if gm.joinPkt != nil {
		// GroupMetadataManager completes a JoinGroup still waiting at the
		// coordinator with UNKNOWN_MEMBER_ID before it removes the member:
		// removeMemberAndUpdateClassicGroup for an expired session,
		// removeCurrentMemberFromClassicGroup for a LeaveGroup.
		w.env.Reply(gm.joinPkt, UnknownMemberID, "", nil)
		gm.joinPkt = nil
	}
	// A live process that was removed learns it from its next heartbeat
	// (one that left knows already); one that sends none now learns it
	// from its next JoinGroup or SyncGroup answer.
	if g.hearsFrom(w, gm) {
		w.env.Send(&Packet{From: Broker, To: gm.ClientID, ToInc: gm.Inc, Type: RebalanceNotification, Response: true,
			Error: UnknownMemberID, Summary: "heartbeat: " + id + " is not a member", Body: &wire.LeaveGroupRequest{MemberID: id}})
	}
}

// hearsFrom reports whether gm's process sends heartbeats with gm's member
// id now (Member.heartbeats): only those get a heartbeat's answer. kgrepl
// sends that answer once, at the change, as its own packet (the seed's
// simplification: heard every tick); Kafka's member gets it with its next
// heartbeat, up to heartbeat.interval.ms later, and again with each one.
func (g *Group) hearsFrom(w *World, gm *GroupMember) bool {
	m := w.process(gm.ClientID, gm.Inc)
	return m != nil && m.MemberID == gm.MemberID && m.heartbeats()
}

// checkMember validates member id, instance id and generation the way Kafka
// does for commits and SyncGroup: the member first, then the generation.
func (g *Group) checkMember(memberID, instanceID string, generation int) ErrorCode {
	if instanceID != "" {
		if cur, ok := g.static[instanceID]; ok && cur != memberID {
			return FencedInstanceID
		}
	}
	if g.fenced[memberID] {
		return FencedInstanceID
	}
	if _, ok := g.members[memberID]; !ok {
		return UnknownMemberID
	}
	if generation != g.Generation {
		return IllegalGeneration
	}
	return None
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

func (g *Group) onJoin(w *World, p *Packet, r *wire.JoinGroupRequest) {
	if g.Type == ConsumerGroup {
		if len(g.members) > 0 {
			// A classic member joins the consumer group as a classic member
			// (GroupMetadataManager.classicGroupJoinToConsumerGroup).
			g.classicJoinToConsumerGroup(w, p, r)
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
		w.trace.Eventf(EvGroupState, "", "group %s (consumer, empty, group epoch %d) is deleted and made anew as a classic group at generation 0 (group.protocol=classic); its committed offsets stay", g.ID, from)
	}
	// GroupMetadataManager.classicGroupJoinNewMember and
	// classicGroupJoinExistingMember: a member with no assignor in common
	// with the group is refused with INCONSISTENT_GROUP_PROTOCOL.
	if !g.supportsProtocol(r.Strategy) {
		w.env.Reply(p, InconsistentGroupProtocol, r.Strategy+" is not supported by every member", nil)
		return
	}
	if r.MemberID == "" {
		if r.InstanceID != "" {
			if old, ok := g.static[r.InstanceID]; ok {
				g.staticRejoin(w, p, r, old)
				return
			}
		}
		nr := *r
		nr.MemberID = w.issueMemberID(r.Client)
		gm := g.addMember(&nr, w.Tick)
		gm.joinPkt = p
		g.heardLast(w, gm)
		if g.State == PreparingRebalance && g.initialRound {
			// GroupMetadataManager.addMemberThenRebalanceOrCompleteJoin.
			g.newMemberAdded = true
		}
		g.prepareRebalance(w, gm.ClientID+" joins as "+gm.MemberID)
		return
	}
	if code := g.checkMember(r.MemberID, r.InstanceID, g.Generation); code == UnknownMemberID || code == FencedInstanceID {
		w.env.Reply(p, code, "", nil)
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
			g.answerJoin(w, gm, p)
			return
		}
		g.markJoined(gm, p)
		g.prepareRebalance(w, gm.MemberID+" rejoins with new metadata")
	case Empty:
		g.markJoined(gm, p)
		g.prepareRebalance(w, gm.MemberID+" joins")
	}
}

func (g *Group) markJoined(gm *GroupMember, p *Packet) {
	if !gm.Joined {
		g.joinSeq++
		gm.joinOrder = g.joinSeq
	}
	gm.Joined = true
	gm.joinPkt = p
}

// staticRejoin swaps a new member id in for a returning static member: same
// assignment, no rebalance, no new generation (KIP-345).
func (g *Group) staticRejoin(w *World, p *Packet, r *wire.JoinGroupRequest, oldID string) {
	old := g.members[oldID]
	// ClassicGroup.replaceStaticMember fences the old instance at once: a
	// JoinGroup or SyncGroup of it still waiting is answered
	// FENCED_INSTANCE_ID, which its client treats as fatal
	// (AbstractCoordinator's JoinGroupResponseHandler and
	// SyncGroupResponseHandler). A process already gone never reads it.
	if old.joinPkt != nil {
		w.env.Reply(old.joinPkt, FencedInstanceID, "static member "+r.InstanceID+" replaced by a new instance", nil)
	}
	if old.syncPkt != nil {
		w.env.Reply(old.syncPkt, FencedInstanceID, "static member "+r.InstanceID+" replaced by a new instance", nil)
	}
	nr := *r
	nr.MemberID = w.issueMemberID(r.Client)
	g.dropMember(oldID)
	store.PutMap(&g.fenced, oldID, true)
	gm := &GroupMember{MemberID: nr.MemberID, ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc, Topics: r.Topics,
		// The new instance's metadata, as Kafka stores it.
		Owned: r.Owned, OwnedGen: r.OwnedGen, Strategy: r.Strategy, Protocols: []string{r.Strategy}, RebalanceTimeout: r.RebalanceTimeout,
		SessionTimeout: r.SessionTimeout, Assignment: old.Assignment, Joined: old.Joined, joinOrder: old.joinOrder, silentSince: -1,
		pendingSync: old.pendingSync}
	g.putMember(gm)
	g.heardLast(w, gm)
	store.PutMap(&g.static, r.InstanceID, gm.MemberID)
	if g.Leader == oldID {
		g.Leader = gm.MemberID
	}
	w.trace.Eventf(EvStaticRejoin, r.Client, "static member %s returns as %s, swapped in for %s: same assignment, generation stays %d",
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
			g.prepareRebalance(w, "static member "+r.InstanceID+" joined with a change of protocol")
			return
		}
		if g.withheld(w) {
			// A cooperative round withheld partitions for their owner to
			// revoke; a new instance owns nothing and will not rejoin to
			// hand them over, so the group rebalances (kgrepl's rule: Kafka
			// would leave them unassigned until the next rebalance).
			g.markJoined(gm, p)
			g.prepareRebalance(w, "static member "+r.InstanceID+" returns while partitions are withheld")
			return
		}
		g.answerJoin(w, gm, p)
	case PreparingRebalance:
		g.markJoined(gm, p)
	default:
		// Kafka rebalances when a static member comes back while the group
		// is not Stable: the leader's plan may name the old member id.
		g.markJoined(gm, p)
		g.prepareRebalance(w, "static member "+r.InstanceID+" returns as "+gm.MemberID)
	}
}

// answerJoin answers one member's JoinGroup with the generation in force.
func (g *Group) answerJoin(w *World, gm *GroupMember, p *Packet) {
	resp := &wire.JoinGroupResponse{MemberID: gm.MemberID, Generation: g.Generation, Leader: g.Leader, Protocol: g.Assignor}
	summary := fmt.Sprintf("gen %d, member %s, leader %s", g.Generation, gm.MemberID, orDash(g.Leader))
	if gm.MemberID == g.Leader && g.State == CompletingRebalance {
		resp.Members = g.memberList()
		summary += ", members " + memberIDs(g.Members())
	}
	w.env.Reply(p, None, summary, resp)
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
func (g *Group) prepareRebalance(w *World, reason string) {
	if g.State == PreparingRebalance {
		return
	}
	if g.State == CompletingRebalance {
		for _, gm := range g.Members() {
			if gm.syncPkt != nil {
				w.env.Reply(gm.syncPkt, RebalanceInProgress, "", nil)
				gm.syncPkt = nil
				g.rescheduleHeartbeat(w, gm) // propagateAssignment
			}
		}
	}
	initial := g.State == Empty && w.Cfg.InitialRebalanceDelay > 0
	g.transition(w, PreparingRebalance, reason)
	g.RebalanceStarts++
	g.roundStart = w.Tick
	timeout := 0
	for _, gm := range g.Members() {
		if gm.RebalanceTimeout > timeout {
			timeout = gm.RebalanceTimeout
		}
	}
	g.deadline = w.Tick + timeout
	g.initialRound, g.newMemberAdded = initial, false
	if initial {
		// GroupMetadataManager.prepareRebalance: the group is new; give the
		// members more time to join. No rebalance-timeout deadline here.
		d := w.Cfg.InitialRebalanceDelay
		g.initialRemaining = timeout - d
		if g.initialRemaining < 0 {
			g.initialRemaining = 0
		}
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + d, Kind: tmInitialRebalance, Key: g.roundStart, Arg: d})
	} else {
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.deadline, Kind: tmRebalanceDeadline, Key: g.roundStart})
	}
	for _, gm := range g.Members() {
		if gm.joinPkt == nil || gm.joinPkt.Delivered != w.Tick {
			gm.Joined = false
			gm.joinPkt = nil
		}
		if !gm.Joined && g.hearsFrom(w, gm) {
			// Told by its next heartbeat's answer; a member sending none
			// (joining, its generation reset, dead) hears nothing: its next
			// JoinGroup or SyncGroup comes anyway.
			w.env.Send(&Packet{From: Broker, To: gm.ClientID, ToInc: gm.Inc, Type: RebalanceNotification, Response: true,
				Error: RebalanceInProgress, Summary: "heartbeat: rebalance, rejoin"})
		}
	}
}

// tick ends the coordinator's part of a tick: a join round whose members
// have all joined completes here, so JoinGroups that arrive in one tick are
// answered in one generation.
func (g *Group) tick(w *World) { g.kind().tick(w, g) }

// classicKind is the classic group's groupKind.
type classicKind struct{}

// validateOffsetCommit is ClassicGroup.validateOffsetCommit: the member,
// then the generation; a plain commit while the group is
// CompletingRebalance is refused with REBALANCE_IN_PROGRESS.
func (classicKind) validateOffsetCommit(g *Group, memberID, instanceID string, gen int, txn bool) ErrorCode {
	code := g.checkMember(memberID, instanceID, gen)
	if code == None && !txn && g.State == CompletingRebalance {
		code = RebalanceInProgress
	}
	return code
}

func (classicKind) tick(w *World, g *Group) {
	if g.State != PreparingRebalance || g.initialRound {
		return // an initial rebalance never completes early (maybeCompleteJoinPhase)
	}
	for _, gm := range g.members {
		if !gm.Joined {
			return
		}
	}
	g.completeJoin(w)
}

func (g *Group) completeJoin(w *World) {
	for _, gm := range g.Members() {
		if !gm.Joined && gm.InstanceID == "" {
			g.removeMember(w, gm.MemberID, fmt.Sprintf("did not rejoin within the rebalance timeout (%d)", g.deadline-g.roundStart))
		}
	}
	if len(g.members) > 0 && !g.anyJoined() {
		// Only static members that have not rejoined are left: Kafka keeps
		// them and tries the round again rather than form an empty generation.
		w.trace.Eventf(EvGeneration, "", "no member rejoined within the rebalance timeout; the round starts again")
		g.roundStart = w.Tick
		g.deadline = w.Tick + (g.deadline - g.roundStart)
		timeout := 0
		for _, gm := range g.members {
			if gm.RebalanceTimeout > timeout {
				timeout = gm.RebalanceTimeout
			}
		}
		g.deadline = w.Tick + timeout
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.deadline, Kind: tmRebalanceDeadline, Key: g.roundStart})
		return
	}
	g.Generation++
	if len(g.members) == 0 {
		g.Leader = ""
		g.transition(w, Empty, "no members")
		w.trace.Eventf(EvGeneration, "", "generation %d: no members", g.Generation)
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
	g.transition(w, CompletingRebalance, fmt.Sprintf("generation %d", g.Generation))
	w.trace.Eventf(EvGeneration, "", "generation %d: leader %s, %s, members %s", g.Generation, g.Leader, g.Assignor, memberIDs(g.Members()))
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
	w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + timeout, Kind: tmPendingSync, Key: g.Generation, Arg: g.Incarnation})
	// rescheduleClassicGroupMemberHeartbeat for every member left, static
	// ones that did not rejoin too (completeClassicGroupJoin walks
	// allMembers): the session runs from now for a member whose client is
	// not heartbeating (a JoinGroup counted as heard while it waited
	// here).
	for _, gm := range joined {
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: gm.MemberID, Key: g.Generation})
		g.rescheduleHeartbeat(w, gm)
	}
	for _, gm := range g.Members() {
		if !gm.Joined {
			g.rescheduleHeartbeat(w, gm)
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
			w.env.Reply(gm.joinPkt, None, summary, resp)
		}
		gm.joinPkt = nil
		gm.Joined = false
	}
}

// initialDelayOver is GroupMetadataManager.tryCompleteInitialRebalanceElseSchedule:
// if a member joined during the delay and time remains, wait again (the
// configured delay, at most what remains); otherwise complete the join.
func (g *Group) initialDelayOver(w *World, roundStart, delay int) {
	if g.Type != ClassicGroup || g.State != PreparingRebalance || !g.initialRound || g.roundStart != roundStart {
		return
	}
	if g.newMemberAdded && g.initialRemaining != 0 {
		g.newMemberAdded = false
		d := w.Cfg.InitialRebalanceDelay
		if d > g.initialRemaining {
			d = g.initialRemaining
		}
		g.initialRemaining -= delay
		if g.initialRemaining < 0 {
			g.initialRemaining = 0
		}
		w.trace.Eventf(EvGeneration, "", "a member joined during group.initial.rebalance.delay.ms: the first rebalance waits %d more", d)
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + d, Kind: tmInitialRebalance, Key: roundStart, Arg: d})
		return
	}
	g.initialRound = false
	g.completeJoin(w)
}

// heartbeatCheck is ClassicGroupMember.hasSatisfiedHeartbeat for a member
// answered in generation gen: heartbeats count only for a member id the
// client holds (kgrepl's heartbeats are implicit: a live process is heard
// with the member id it goes by). One whose client never took the id (the
// JoinGroup answer was lost) is removed after session.timeout.ms; one
// waiting at the coordinator in JoinGroup or SyncGroup counts as heard.
func (g *Group) heartbeatCheck(w *World, id string, gen int) {
	gm := g.members[id]
	if gm == nil || gm.silentSince >= 0 || (g.Type == ConsumerGroup && !gm.ClassicMember) {
		return // gone, or its silence is already being timed
	}
	m := w.process(gm.ClientID, gm.Inc)
	if m == nil || !m.Alive || m.MemberID == id {
		return // a dead process is timed by processStopped
	}
	if g.Type == ConsumerGroup {
		// A classic member inside a consumer group: its session runs out
		// (scheduleConsumerGroupSessionTimeout at its JoinGroup answer).
		g.fenceMember(w, gm, fmt.Sprintf("session timeout (no heartbeat with %s for %d ticks: its client never took that member id)", id, gm.SessionTimeout))
		return
	}
	if (g.State == PreparingRebalance && gm.joinPkt != nil) || gm.syncPkt != nil {
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + gm.SessionTimeout, Kind: tmHeartbeatCheck, Member: id, Key: gen})
		return
	}
	g.removeMember(w, id, fmt.Sprintf("session timeout (no heartbeat with %s for %d ticks: its client never took that member id)", id, gm.SessionTimeout))
	if g.State != Empty {
		g.prepareRebalance(w, id+" timed out")
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
func (g *Group) expirePendingSync(w *World, gen, incarnation int) {
	if g.Type != ClassicGroup || g.Generation != gen || g.Incarnation != incarnation || (g.State != CompletingRebalance && g.State != Stable) {
		return
	}
	removed := false
	for _, gm := range g.Members() {
		if gm.pendingSync {
			g.removeMember(w, gm.MemberID, "no SyncGroup within the rebalance timeout")
			removed = true
		}
	}
	if removed {
		g.prepareRebalance(w, "members removed on pending sync expiration")
	}
}

// withheld reports whether a subscribed partition has no owner in the
// generation (the cooperative protocol's first round holds some back).
func (g *Group) withheld(w *World) bool {
	subscribed := map[string]bool{}
	owned := map[TopicPartition]bool{}
	for _, gm := range g.members {
		for _, t := range gm.Topics {
			subscribed[t] = true
		}
		for _, tp := range gm.Assignment {
			owned[tp] = true
		}
	}
	for _, tp := range w.layout.Inputs() {
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

func (g *Group) onSync(w *World, p *Packet, r *wire.SyncGroupRequest) {
	if code := g.checkMember(r.MemberID, r.InstanceID, r.Generation); code != None {
		w.env.Reply(p, code, "", nil)
		return
	}
	gm := g.members[r.MemberID]
	gm.pendingSync = false
	switch g.State {
	case PreparingRebalance:
		w.env.Reply(p, RebalanceInProgress, "", nil)
	case Stable:
		g.answerSync(w, gm, p)
	case CompletingRebalance:
		if r.MemberID != g.Leader {
			gm.syncPkt = p
			return
		}
		// Members the plan leaves out get an empty assignment, as in Kafka.
		for id, m := range g.members {
			m.Assignment = append([]TopicPartition{}, r.Plan[id]...)
		}
		g.transition(w, Stable, fmt.Sprintf("leader %s sent the plan", r.MemberID))
		g.answerSync(w, gm, p)
		// propagateAssignment completes the leader's own sync future as
		// well, and restarts its session with the others'.
		g.rescheduleHeartbeat(w, gm)
		for _, m := range g.Members() {
			if m.syncPkt != nil {
				g.answerSync(w, m, m.syncPkt)
				m.syncPkt = nil
				g.rescheduleHeartbeat(w, m) // propagateAssignment
			}
		}
	default:
		w.env.Reply(p, UnknownMemberID, "", nil)
	}
}

func (g *Group) answerSync(w *World, gm *GroupMember, p *Packet) {
	w.env.Reply(p, None, w.layout.PartList(gm.Assignment), &wire.SyncGroupResponse{Assignment: append([]TopicPartition{}, gm.Assignment...)})
}

func (g *Group) onLeave(w *World, p *Packet, r *wire.LeaveGroupRequest) {
	if code := g.checkMember(r.MemberID, r.InstanceID, g.Generation); code == UnknownMemberID || code == FencedInstanceID {
		w.env.Reply(p, code, "", nil)
		return
	}
	g.removeMember(w, r.MemberID, "LeaveGroup")
	w.env.Reply(p, None, "", nil)
	if g.State != Empty {
		g.prepareRebalance(w, r.MemberID+" left")
	}
}

// processStopped is the implicit heartbeat thread going quiet: the
// coordinator last heard the member now and removes it after the session
// timeout.
// heardLast handles a JoinGroup that arrives after its sender died (packets
// already sent are still delivered): the coordinator hears it this once,
// and then nothing, so the session timeout runs from now.
func (g *Group) heardLast(w *World, gm *GroupMember) {
	if g.Type == ConsumerGroup {
		return
	}
	if m := w.process(gm.ClientID, gm.Inc); (m == nil || !m.Alive) && gm.silentSince < 0 {
		gm.silentSince = w.Tick
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: w.Tick})
	}
}

// heartbeatStopped: the process going by member id id stopped sending
// heartbeats (Member.heartbeats): silent from now. Classic groups only: a
// classic member inside a consumer group keeps kgrepl's older rule (heard
// while its process goes by the id).
func (g *Group) heartbeatStopped(w *World, id string) {
	if g.Type != ClassicGroup {
		return
	}
	g.memberIDDropped(w, id)
}

// heartbeatStarted: the process going by member id id sends heartbeats
// again; the coordinator hears it every tick from now.
func (g *Group) heartbeatStarted(w *World, id string) {
	if g.Type == ConsumerGroup {
		// A classic member inside a consumer group: its first heartbeat
		// is answered REBALANCE_IN_PROGRESS if it must rejoin, which
		// starts its join timer.
		g.notifyClassicMembers(w)
		return
	}
	if gm := g.members[id]; gm != nil {
		gm.silentSince = -1
	}
}

// rescheduleHeartbeat is rescheduleClassicGroupMemberHeartbeat for a member
// not heard now (completeClassicGroupJoin, propagateAssignment): its
// session timeout runs from now.
func (g *Group) rescheduleHeartbeat(w *World, gm *GroupMember) {
	if gm.silentSince < 0 {
		return
	}
	gm.silentSince = w.Tick
	w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: w.Tick})
}

// memberIDDropped: a live process goes by another member id now.
func (g *Group) memberIDDropped(w *World, id string) {
	if g.Type == ConsumerGroup {
		// A consumer-protocol member's heartbeats are real packets: it just
		// stops sending them. A classic member is heard no more.
		if gm := g.members[id]; gm != nil && gm.ClassicMember && gm.silentSince < 0 {
			gm.silentSince = w.Tick
			g.classicSession(w, gm, w.Tick+gm.SessionTimeout)
		}
		return
	}
	if gm := g.members[id]; gm != nil && gm.silentSince < 0 {
		gm.silentSince = w.Tick
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + gm.SessionTimeout, Kind: tmSessionExpiry, Member: id, Key: w.Tick})
	}
}

// The member is found by its process, not by the member id the process
// knows: one that died with its JoinGroup unanswered never learned its id.
func (g *Group) processStopped(w *World, m *Member) {
	if g.Type == ConsumerGroup {
		// A consumer-protocol member's session runs from its last
		// heartbeat; a classic member's heartbeat thread goes quiet now.
		for _, gm := range g.Members() {
			if gm.ClassicMember && gm.ClientID == m.Client && gm.Inc == m.Inc && gm.silentSince < 0 {
				gm.silentSince = w.Tick
				g.classicSession(w, gm, w.Tick+gm.SessionTimeout)
			}
		}
		return
	}
	for _, gm := range g.Members() {
		if gm.ClientID != m.Client || gm.Inc != m.Inc || gm.silentSince >= 0 {
			continue
		}
		gm.silentSince = w.Tick
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + gm.SessionTimeout, Kind: tmSessionExpiry, Member: gm.MemberID, Key: w.Tick})
	}
}

// sessionExpiry removes a member still silent since the tick it went quiet.
func (g *Group) sessionExpiry(w *World, id string, since int) {
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
		w.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: w.Tick + cur.SessionTimeout, Kind: tmSessionExpiry, Member: id, Key: since})
		return
	}
	g.removeMember(w, id, fmt.Sprintf("session timeout (%d ticks of silence)", w.Tick-since))
	if g.State != Empty {
		g.prepareRebalance(w, id+" timed out")
	}
}
