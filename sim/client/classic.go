package client

// The classic group protocol, client side (Kafka's ConsumerCoordinator and
// AbstractCoordinator): FindCoordinator, then JoinGroup and SyncGroup with
// a client-side leader running the assignor, the implicit heartbeat
// thread, rejoining, eager and cooperative revocation, LeaveGroup.

import (
	"slices"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// classicClient is the classic protocol's groupClient. It has no state of
// its own: the member's fields (Generation, Leader, rejoin, revoke, ...)
// are the protocol's state, so a World copies as before.
type classicClient struct{}

// join starts membership once the coordinator is found: the first JoinGroup.
func (classicClient) join(m *Member) { m.sendJoin() }

// receive handles the classic protocol's answers and notifications.
func (classicClient) receive(m *Member, p *wire.Packet) {
	switch p.Type {
	case wire.RebalanceNotification:
		if p.Error == wire.UnknownMemberID {
			// Only news about the member id this process still goes by.
			if r, ok := p.Body.(*wire.LeaveGroupRequest); ok && r.MemberID == m.MemberID {
				m.leaveGroupState("the coordinator no longer knows " + m.MemberID)
			}
			return
		}
		// Kafka's heartbeat handler acts on REBALANCE_IN_PROGRESS only in
		// a stable member; one already joining ignores it.
		if m.InGroup() && (m.Phase == PhaseStable || m.Phase == PhaseFetchingOffsets) {
			m.rejoin = true
		}
	case wire.JoinGroup:
		m.onJoinResponse(p)
	case wire.SyncGroup:
		m.onSyncResponse(p)
	}
}

// poll is the rebalance work at the start of poll() (ensureActiveGroup and
// onJoinPrepare). handled reports that poll() stops here, again whether
// the loop moves on this tick.
func (classicClient) poll(m *Member) (handled, again bool) {
	m.takeJoinAnswer()
	if m.joinRetry {
		m.joinRetry = false
		if m.Phase == PhaseJoining || m.Phase == PhaseSyncing {
			m.abandonFetch()
			m.sendJoin()
			return true, false
		}
	}
	if m.Phase == PhaseOut {
		// Back in poll() after leaving or being removed: join as a new member.
		m.setMemberID("")
		m.Generation = -1
		m.giveUpLost()
		if m.waitJoinFuture() {
			return true, false
		}
		m.sendJoin()
		return true, false
	}
	lost := m.lost
	if lost {
		m.giveUpLost()
		m.pendingFetch = false
		if m.Phase == PhaseFetchingOffsets {
			m.Phase = PhaseStable
		}
	}
	if len(m.revoke) > 0 {
		m.abandonFetch()
		return true, m.revokeCooperative()
	}
	if m.rejoin && (m.Phase == PhaseStable || m.Phase == PhaseFetchingOffsets) {
		// A rebalance comes before fetching offsets: poll() runs
		// ensureActiveGroup first.
		m.abandonFetch()
		if m.Phase == PhaseFetchingOffsets {
			m.pendingFetch = false
			for _, tp := range m.Owned {
				if _, ok := m.positions.get(tp); !ok {
					m.dropOwned(tp)
				}
			}
			m.Phase = PhaseStable
		}
		// onJoinPrepare: the auto-commit of what was consumed (both
		// protocols); under eager also the application's onPartitionsRevoked
		// commit, and then everything is revoked.
		if offs := m.commitPositions(); m.commitNeeded(offs) && (m.Cfg.Commit == CommitAuto || m.protocol() == assign.Eager) {
			m.commitSync(listOf(offs), contIdle)
			return true, false
		}
		if m.protocol() == assign.Eager && !lost {
			// onJoinPrepare: with no generation the partitions were lost
			// above, and nothing is revoked.
			m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s revokes %s (eager)", m.Client, m.env.Layout().PartList(m.Owned))
			m.Owned = nil
			m.positions.reset()
			m.processed.reset()
		}
		if m.waitJoinFuture() {
			return true, false
		}
		m.sendJoin()
		if m.protocol() == assign.Eager {
			return true, false
		}
	}
	return false, false
}

// waitJoinFuture: the generation was reset while a JoinGroup or its
// SyncGroup was in flight. AbstractCoordinator.initiateJoinGroup hands
// back the joinFuture it keeps instead of sending another JoinGroup, so
// joinGroupIfNeeded (after onJoinPrepare) waits for that answer: the
// JoinGroupResponseHandler then finds the member no longer
// PREPARING_REBALANCE (UnjoinedGroupException), the SyncGroupResponseHandler
// finds the generation reset (raised as ILLEGAL_GENERATION), an error
// answer fails it; either way resetJoinGroupFuture, and the next pass of
// the loop sends the next JoinGroup (joinFutureDone).
func (m *Member) waitJoinFuture() bool { return m.joinFuture != 0 }

// await makes req, a JoinGroup or SyncGroup just sent, the join future's
// request; awaits reports whether req is it. (joinFuture keeps the packet's
// ID plus one, so that 0 says none.)
func (m *Member) await(req *wire.Packet)       { m.joinFuture = req.ID + 1 }
func (m *Member) awaits(req *wire.Packet) bool { return req != nil && m.joinFuture == req.ID+1 }

// joinFutureDone is the answer to the request of a join future abandoned
// by a reset: the future is done, and a member inside poll() sends its
// next JoinGroup now (a busy one at its next poll()).
func (m *Member) joinFutureDone() {
	m.joinFuture = 0
	if m.inPoll() {
		m.wakeUp()
	}
}

// heartbeats reports whether the classic heartbeat thread sends
// heartbeats now (AbstractCoordinator.HeartbeatThread.run): it is enabled
// when a JoinGroup answer moves the member to COMPLETING_REBALANCE and
// disables itself while state.hasNotJoinedGroup(): UNJOINED (a reset
// generation, a member that left or was found removed) and
// PREPARING_REBALANCE (a JoinGroup in flight or its answer not yet read).
// kgrepl's heartbeats are implicit: the coordinator hears the member id
// every tick while this holds (SPEC: heard every tick), and not otherwise.
func (m *Member) heartbeats() bool {
	if m.consumer || !m.Alive || m.MemberID == "" || m.unjoined {
		return false
	}
	return m.Phase == PhaseSyncing || m.Phase == PhaseStable || m.Phase == PhaseFetchingOffsets
}

// beatChange tells the coordinator when the heartbeats stop or start
// (or go on under another member id): was and wasID are heartbeats() and
// the member id before the change.
func (m *Member) beatChange(was bool, wasID string) {
	now := m.heartbeats()
	if was && (!now || m.MemberID != wasID) {
		m.host.HeartbeatStopped(wasID)
	}
	if now && (!was || m.MemberID != wasID) {
		m.host.HeartbeatStarted(m.MemberID)
		if !was && !m.inPoll() {
			// HeartbeatThread.enable resets the heartbeat's timeouts, the
			// max.poll.interval.ms timer among them: a JoinGroup answer
			// read inside commitSync starts the stretch anew.
			m.leftPollAt = m.env.Now()
			m.armPollTimer()
		}
	}
}

// giveUpLost is onJoinPrepare finding no generation (NO_GENERATION after
// resetStateOnResponseError or resetGenerationOnLeaveGroup): every
// partition is given up as lost (onPartitionsLost), nothing committed.
func (m *Member) giveUpLost() {
	m.abandonFetch()
	m.lost = false
	if len(m.Owned) > 0 {
		m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s loses %s (its generation is gone: onPartitionsLost, nothing committed)", m.label(), m.env.Layout().PartList(m.Owned))
	}
	m.Owned, m.revoke = nil, nil
	m.positions.reset()
	m.processed.reset()
}

// pollTimeout is the heartbeat thread finding max.poll.interval.ms passed
// outside poll() (the member is in the group and still outside poll()).
func (classicClient) pollTimeout(m *Member, since int) {
	if !m.heartbeats() {
		// The heartbeat thread checks max.poll.interval.ms only while it
		// runs (HeartbeatThread.run: pollTimeoutExpired comes after the
		// hasNotJoinedGroup test): a member joining, or with its
		// generation reset, is not timed out; its next poll() rejoins.
		return
	}
	if m.Static() {
		// A static member sends no LeaveGroup (KIP-345), but its client
		// resets the generation and its heartbeat thread stops: the
		// coordinator removes it after session.timeout.ms unless it comes
		// back first, at its next poll, as the same static member.
		m.env.Trace().Eventf(trace.EvPollTimeout, m.Client, "%s: %d ticks without poll() (max.poll.interval.ms %d): static, so no LeaveGroup; the heartbeats stop until it rejoins",
			m.Client, m.env.Now()-since, m.Cfg.MaxPollInterval)
		m.host.MemberIDDropped(m.MemberID) // heard no more, in a consumer group too
		was := m.heartbeats()
		m.Generation = -1
		m.Phase = PhaseOut
		m.beatChange(was, m.MemberID)
		return
	}
	m.env.Trace().Eventf(trace.EvPollTimeout, m.Client, "%s: %d ticks without poll() (max.poll.interval.ms %d): the heartbeat thread sends LeaveGroup; the process goes on as a zombie",
		m.Client, m.env.Now()-since, m.Cfg.MaxPollInterval)
	m.send(&wire.Packet{Type: wire.LeaveGroup, Summary: m.MemberID + " (poll timeout)", Body: &wire.LeaveGroupRequest{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID}})
	was := m.heartbeats()
	m.Phase = PhaseOut
	m.beatChange(was, m.MemberID)
}

// leave is close() leaving the group: LeaveGroup, none for a static member
// (AbstractCoordinator.maybeLeaveGroup).
func (classicClient) leave(m *Member) {
	// maybeLeaveGroup sends none from UNJOINED either (a reset generation).
	if !m.Static() && !m.unjoined {
		m.send(&wire.Packet{Type: wire.LeaveGroup, Summary: m.MemberID + " (close)", Body: &wire.LeaveGroupRequest{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID}})
	}
}

func (classicClient) requestFailed(m *Member, code wire.ErrorCode, unchanged bool) {
	m.onCommitRefused(code, unchanged)
}

func (classicClient) rebalancing(m *Member) bool { return m.rebalancing() }

func (m *Member) protocol() assign.Protocol {
	a, err := assign.New(m.Cfg.Assignor, m.Cfg.StickyRules)
	if err != nil {
		return assign.Eager
	}
	return a.Protocol()
}

// joinRequest is what this member sends in JoinGroup.
func (m *Member) joinRequest() *wire.JoinGroupRequest {
	r := &wire.JoinGroupRequest{MemberID: m.MemberID, Client: m.Client, Inc: m.Inc, InstanceID: m.Cfg.InstanceID,
		Topics: m.Topics, Strategy: m.Cfg.Assignor, RebalanceTimeout: m.Cfg.MaxPollInterval,
		SessionTimeout: m.Cfg.SessionTimeout, OwnedGen: m.joinedGen}
	r.Owned = append([]wire.TopicPartition{}, m.Owned...)
	if m.Cfg.Assignor == "sticky" && m.hasSticky {
		// StickyAssignor.subscriptionUserData: the previous assignment and
		// generation, which memberData reads instead of ownedPartitions.
		r.Owned = append([]wire.TopicPartition{}, m.stickyPrev...)
		r.OwnedGen = m.stickyGen
	}
	return r
}

func (m *Member) sendJoin() {
	// initiateJoinGroup: PREPARING_REBALANCE, so the heartbeats stop.
	was := m.heartbeats()
	m.Phase = PhaseJoining
	m.unjoined = false
	m.beatChange(was, m.MemberID)
	m.rejoin, m.joinRetry = false, false
	req := m.joinRequest()
	s := "subscribe " + strings.Join(m.Topics, ",")
	if m.protocol() == assign.Cooperative {
		s += ", owns " + m.env.Layout().PartList(m.Owned)
	}
	m.lastJoin = m.send(&wire.Packet{Type: wire.JoinGroup, Summary: s, Body: req})
	m.await(m.lastJoin)
	m.joinSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.joinTimeoutTicks(), Kind: tmJoinTimeout, Client: m.Client, Inc: m.Inc, Key: m.joinSeq})
}

// joinTimeoutTicks is AbstractCoordinator's JoinGroup request timeout:
// max(request.timeout.ms, rebalance timeout + JOIN_GROUP_TIMEOUT_LAPSE).
// Kafka's lapse is 5 s; kgrepl counts it as 1 tick plus the 2-tick round
// trip a tick model adds.
func (m *Member) joinTimeoutTicks() int {
	t := m.Cfg.MaxPollInterval + 3
	if m.Cfg.RequestTimeout > t {
		t = m.Cfg.RequestTimeout
	}
	return t
}

// joinTimeout: the JoinGroup got no answer in time (the request or the
// answer was lost). Kafka's joinGroupIfNeeded treats the timeout as
// retriable and joins again, with the member id it holds (none for a new
// member), from inside poll().
func (m *Member) joinTimeout(seq int) {
	if m.joinSeq != seq || m.hasJoinAnswer || !m.awaits(m.lastJoin) {
		return
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to JoinGroup within %d ticks (rebalance timeout + margin): joining again", m.label(), m.joinTimeoutTicks())
	m.joinFuture = 0
	// Outside PhaseJoining a reset left the join future waiting for this
	// answer: the timeout fails it, and the loop sends the next JoinGroup
	// as after any reset. In PhaseJoining the join itself is retried.
	if m.Phase == PhaseJoining {
		m.joinRetry = true
	}
	m.wakeUp()
}

// syncTimeout: the SyncGroup got no answer within request.timeout.ms; the
// client fails the join and joins again with its member id.
func (m *Member) syncTimeout(seq int) {
	if m.syncSeq != seq || m.joinFuture == 0 || m.awaits(m.lastJoin) {
		return // answered, or the join future is a later JoinGroup
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to SyncGroup within request.timeout.ms (%d): joining again", m.label(), m.Cfg.RequestTimeout)
	m.joinFuture = 0
	// Outside PhaseSyncing a reset left the join future waiting for this
	// SyncGroup (the member rejoins as after any reset); in PhaseSyncing
	// the join is retried with the member id.
	if m.Phase == PhaseSyncing {
		m.joinRetry = true
	}
	m.wakeUp()
}

func (m *Member) onJoinResponse(p *wire.Packet) {
	r, _ := p.Body.(*wire.JoinGroupResponse)
	if p.Req != m.lastJoin || !m.awaits(p.Req) {
		m.staleJoinAnswer(p.Error, r)
		return
	}
	if !m.inPoll() && m.loop != LoopCommitting {
		// The heartbeat thread is disabled while a JoinGroup is in flight
		// (AbstractCoordinator.HeartbeatThread: state.hasNotJoinedGroup()),
		// so only the application thread reads the answer, inside poll() or
		// a commitSync; a member busy with its batch handles it at its next
		// poll(), and a busy leader delays everyone's SyncGroup.
		m.joinAnswer, m.joinAnswerErr, m.hasJoinAnswer = r, p.Error, true
		return
	}
	m.handleJoinAnswer(p.Error, r)
}

// staleJoinAnswer drops the answer to a JoinGroup this member has since
// replaced: a member id it hands out is never used, so the coordinator
// stops hearing it.
func (m *Member) staleJoinAnswer(code wire.ErrorCode, r *wire.JoinGroupResponse) {
	if r != nil && code == wire.None && r.MemberID != m.MemberID {
		m.host.MemberIDDropped(r.MemberID)
	}
}

// takeJoinAnswer handles a JoinGroup answer that waited for poll().
func (m *Member) takeJoinAnswer() {
	if !m.hasJoinAnswer {
		return
	}
	r, code := m.joinAnswer, m.joinAnswerErr
	m.joinAnswer, m.joinAnswerErr, m.hasJoinAnswer = nil, wire.None, false
	m.handleJoinAnswer(code, r)
}

func (m *Member) handleJoinAnswer(code wire.ErrorCode, r *wire.JoinGroupResponse) {
	if code == wire.FencedInstanceID || code == wire.InconsistentGroupProtocol {
		// JoinGroupResponseHandler raises these whatever the member's
		// state and generation, and joinGroupIfNeeded throws them (not
		// retriable): fatal even in an answer after a reset.
		m.joinFuture = 0
		m.fatal(code.String() + " on JoinGroup")
		return
	}
	if m.Phase != PhaseJoining {
		// The answer to a JoinGroup the member reset its generation under:
		// JoinGroupResponseHandler raises UnjoinedGroupException on a
		// success (the member id it hands out is never used); an error
		// answer finds the generation changed and resets nothing. The
		// join future is done either way.
		m.staleJoinAnswer(code, r)
		m.joinFutureDone()
		return
	}
	m.joinFuture = 0 // done, or replaced by the SyncGroup's below
	// The JoinGroup rows of the table above onCommitRefused.
	switch code {
	case wire.None:
	case wire.UnknownMemberID:
		m.resetGeneration(false)
		return
	case wire.RebalanceInProgress:
		m.sendJoin()
		return
	default:
		m.rejoin = true
		return
	}
	// COMPLETING_REBALANCE: heartbeatThread.enable().
	was, wasID := m.heartbeats(), m.MemberID
	m.setMemberID(r.MemberID)
	m.Generation, m.Leader, m.groupProto = r.Generation, r.Leader, r.Protocol
	m.Phase = PhaseSyncing
	m.beatChange(was, wasID)
	req := &wire.SyncGroupRequest{MemberID: m.MemberID, Generation: m.Generation, InstanceID: m.Cfg.InstanceID}
	summary := "empty"
	if r.Leader == m.MemberID && len(r.Members) > 0 {
		a, err := assign.New(r.Protocol, m.Cfg.StickyRules)
		if err != nil {
			a, _ = assign.New("range", m.Cfg.StickyRules)
		}
		req.Plan = a.Assign(assign.Input{Members: r.Members, Partitions: m.env.Layout().TopicSizes()})
		summary = "plan " + planSummary(m.env.Layout(), req.Plan, r.Members)
		m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s (leader) ran %s: %s", m.Client, a.Name(), planSummary(m.env.Layout(), req.Plan, r.Members))
	}
	m.await(m.send(&wire.Packet{Type: wire.SyncGroup, Summary: summary, Body: req}))
	m.syncSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmSyncTimeout, Client: m.Client, Inc: m.Inc, Key: m.syncSeq})
}

func (m *Member) onSyncResponse(p *wire.Packet) {
	if !m.awaits(p.Req) {
		return // the answer to a SyncGroup no longer waited for
	}
	if p.Error == wire.FencedInstanceID {
		// SyncGroupResponseHandler: fatal whatever the generation, so
		// also in an answer after a reset.
		m.joinFuture = 0
		m.fatal("FENCED_INSTANCE_ID on SyncGroup")
		return
	}
	if m.Phase != PhaseSyncing {
		// A reset came while the SyncGroup was out: a success is raised
		// as ILLEGAL_GENERATION, an error finds the generation changed;
		// the join future is done and the member rejoins.
		m.joinFutureDone()
		return
	}
	m.joinFuture = 0
	// The SyncGroup rows of the table above onCommitRefused.
	switch p.Error {
	case wire.None:
	case wire.UnknownMemberID, wire.IllegalGeneration:
		m.resetGeneration(p.Error == wire.IllegalGeneration)
		return
	default:
		// REBALANCE_IN_PROGRESS: joinGroupIfNeeded joins again at once, in
		// poll(); a member busy with its batch (cooperative: it consumes
		// through the rebalance) sends the JoinGroup at its next poll().
		if m.inPoll() {
			m.sendJoin()
		} else {
			m.syncSeq++ // answered: no sync timeout
			m.joinRetry = true
		}
		return
	}
	m.rejoin = false // a rejoin asked for during the rebalance is done with (SyncGroupResponseHandler)
	got := p.Body.(*wire.SyncGroupResponse).Assignment
	m.joinedGen = m.Generation
	if tp, ok := m.unsubscribed(got); ok {
		// ConsumerCoordinator.onJoinComplete: an assignment that does not
		// match the subscription is not taken; the member rejoins with its
		// current subscription.
		m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s gen %d: %s includes %s, outside its subscription %s: rejoins with its current subscription",
			m.Client, m.Generation, m.env.Layout().PartList(got), tp, strings.Join(m.Topics, ","))
		m.Phase = PhaseStable
		m.rejoin = true
		return
	}
	if m.groupProto == "sticky" {
		m.stickyPrev, m.stickyGen, m.hasSticky = append([]wire.TopicPartition{}, got...), m.Generation, true
	}
	var added []wire.TopicPartition
	if m.protocol() == assign.Eager {
		m.Owned = append([]wire.TopicPartition{}, got...)
		added = m.Owned
		m.positions.reset()
		m.processed.reset()
	} else {
		keep := map[wire.TopicPartition]bool{}
		for _, tp := range got {
			keep[tp] = true
		}
		own := map[wire.TopicPartition]bool{}
		for _, tp := range m.Owned {
			own[tp] = true
			if !keep[tp] {
				m.revoke = append(m.revoke, tp)
			}
		}
		owned := slices.Clip(m.Owned) // Owned is replaced, never changed in place: commits share it
		for _, tp := range got {
			if !own[tp] {
				added = append(added, tp)
				owned = append(owned, tp)
			}
		}
		if !wire.Sorted(owned) {
			if len(added) == 0 {
				owned = slices.Clone(owned)
			}
			assign.SortPartitions(owned)
		}
		m.Owned = owned
	}
	m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s gen %d: %s", m.Client, m.Generation, m.env.Layout().PartList(got))
	if len(added) == 0 {
		m.Phase = PhaseStable
		return
	}
	m.Phase = PhaseFetchingOffsets
	m.sendOffsetFetch(added)
}

// unsubscribed finds a partition of a topic the member does not subscribe to.
func (m *Member) unsubscribed(tps []wire.TopicPartition) (wire.TopicPartition, bool) {
	for _, tp := range tps {
		found := false
		for _, t := range m.Topics {
			if t == tp.Topic {
				found = true
			}
		}
		if !found {
			return tp, true
		}
	}
	return wire.TopicPartition{}, false
}

// rebalancing reports whether the member is between its JoinGroup and its
// SyncGroup answer: its generation is not stable, and commits fail.
func (m *Member) rebalancing() bool { return m.Phase == PhaseJoining || m.Phase == PhaseSyncing }

// The classic client's answer handlers, error by error (Kafka's
// AbstractCoordinator and ConsumerCoordinator). "unchanged" is
// CoordinatorResponseHandler.generationUnchanged: the client's generation
// (generation id, member id, protocol) is still the one the request was
// sent in. "reset" is resetStateOnResponseError -> resetStateAndRejoin ->
// resetStateAndGeneration: state UNJOINED (heartbeats stop), generation
// NO_GENERATION with the member id kept only where the table says so,
// rejoinNeeded and needsJoinPrepare, so the next poll()'s onJoinPrepare
// finds no generation and gives every partition up as lost
// (onPartitionsLost) before it sends the JoinGroup; with a JoinGroup or
// SyncGroup still out, it first waits for that answer (joinFuture; kgrepl:
// waitJoinFuture). "rejoin at once" is joinGroupIfNeeded's continue: the
// next JoinGroup goes out with no onJoinPrepare and no backoff. kgrepl's
// rule is resetGeneration.
//
//	API / error            Kafka                                       kgrepl
//	JoinGroup (JoinGroupResponseHandler)
//	 UNKNOWN_MEMBER_ID     unchanged: reset (member id too); changed:  resetGeneration(drop id); an answer
//	                       no reset; rejoin at once either way         after a reset (changed) ends the join
//	                                                                   future only: rejoin (joinFutureDone)
//	 NONE after a reset    UnjoinedGroupException: rejoin              the same (the id handed out unused)
//	 REBALANCE_IN_PROGRESS rejoin at once, no reset                    the same
//	 FENCED_INSTANCE_ID,   fatal, whatever the state and generation    the same (fatal), also in an answer
//	 INCONSISTENT_GROUP_   (joinGroupIfNeeded throws: not retriable)   after a reset (handleJoinAnswer
//	 PROTOCOL                                                          checks them first)
//	 MEMBER_ID_REQUIRED    take the member id given, rejoin at once    not produced: the first answer gives
//	                                                                   the member id (KIP-394's trip skipped)
//	 COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: markCoordinatorUnknown, find it again, retry after the
//	                       backoff                                     not produced: one broker, always the
//	                                                                   coordinator (the same for every row)
//	SyncGroup (SyncGroupResponseHandler)
//	 UNKNOWN_MEMBER_ID,    unchanged: reset (member id kept for        resetGeneration (the same ids); an
//	 ILLEGAL_GENERATION    ILLEGAL_GENERATION); changed: no reset;     answer after a reset (changed) ends
//	                       rejoin either way                           the join future only: rejoin
//	 REBALANCE_IN_PROGRESS rejoin at once (from poll()), no reset      the same; a member busy with its batch
//	                                                                   rejoins at its next poll()
//	 FENCED_INSTANCE_ID    fatal, whatever the generation              the same, also in an answer after a
//	                                                                   reset (checked before it)
//	 NONE after a reset    raised as ILLEGAL_GENERATION: rejoin        the same: the assignment is not taken
//	                       (a success clears rejoinNeeded)             (joinFutureDone); a success clears
//	                                                                   m.rejoin
//	Heartbeat (HeartbeatResponseHandler; kgrepl's heartbeats are implicit,
//	sent while Member.heartbeats: COMPLETING_REBALANCE and STABLE)
//	 REBALANCE_IN_PROGRESS STABLE: requestRejoin; else ignored         the same (Stable, FetchingOffsets)
//	 UNKNOWN_MEMBER_ID,    unchanged: reset (member id kept for        UNKNOWN_MEMBER_ID only, for the member
//	 ILLEGAL_GENERATION,   ILLEGAL_GENERATION); changed: ignored.      id it still goes by: leaveGroupState;
//	 FENCED_INSTANCE_ID    FENCED_INSTANCE_ID also fails the heartbeat the others are not produced
//	                       thread: the next poll() throws it (fatal)
//	LeaveGroup (LeaveGroupResponseHandler)
//	 any                   logged; maybeLeaveGroup reset already       answers not read
//	OffsetCommit (ConsumerCoordinator.OffsetCommitResponseHandler)
//	 UNKNOWN_MEMBER_ID,    changed and PREPARING_REBALANCE (a JoinGroup onCommitRefused; the exception is
//	 ILLEGAL_GENERATION    out): RebalanceInProgressException, no      commitSyncException's
//	                       reset; otherwise reset (member id kept for
//	                       ILLEGAL_GENERATION), CommitFailedException
//	 FENCED_INSTANCE_ID    unchanged: FencedInstanceIdException        unchanged: the process stops at its next
//	                       (fatal); changed: RebalanceInProgress-      poll (Zombie); changed: nothing
//	                       Exception while PREPARING_REBALANCE, else
//	                       CommitFailedException; never a reset
//	 REBALANCE_IN_PROGRESS requestRejoin, RebalanceInProgressException the same
//	OffsetFetch (OffsetFetchResponseHandler: no member id or generation in the classic request)
//	 UNKNOWN_MEMBER_ID,    not retriable: "Unexpected error in fetch   not produced for a classic member
//	 ILLEGAL_GENERATION,   offset response", thrown from poll(); no
//	 REBALANCE_IN_PROGRESS reset
//	TxnOffsetCommit (TransactionManager.TxnOffsetCommitHandler)
//	 UNKNOWN_MEMBER_ID,    the transaction becomes abortable; the      the same (onTxnOffsetCommitResponse)
//	 ILLEGAL_GENERATION,   consumer's coordinator is not told: it
//	 FENCED_INSTANCE_ID    learns from its own next answer
//
// onCommitRefused is the OffsetCommit rows: unchanged says the member's
// generation and member id are those the commit carried.
func (m *Member) onCommitRefused(code wire.ErrorCode, unchanged bool) {
	switch code {
	case wire.UnknownMemberID, wire.IllegalGeneration:
		if !unchanged && m.Phase == PhaseJoining {
			return // RebalanceInProgressException: the member is rejoining already
		}
		m.resetGeneration(code == wire.IllegalGeneration)
	case wire.FencedInstanceID:
		if unchanged && m.Phase != PhaseOut && m.Phase != PhaseClosed {
			// FencedInstanceIdException: another instance took the static
			// member's place; this process stops at its next poll().
			m.Phase = PhaseOut
			m.Zombie = true
		}
	case wire.RebalanceInProgress:
		m.rejoin = true
	}
}

// resetGeneration is resetStateAndRejoin after an error answer: the
// generation is gone, the state UNJOINED (the heartbeats stop: see
// heartbeats), and the member rejoins at its next poll(). Without its
// member id it is out of the group (PhaseOut: the next poll joins as a new
// member); keeping it (ILLEGAL_GENERATION), it gives its partitions up as
// lost at the next poll and rejoins with that id. A JoinGroup or
// SyncGroup still out no longer counts, but its join future stays:
// Kafka's next poll runs onJoinPrepare and then waits for that answer
// before it sends the next JoinGroup (waitJoinFuture).
func (m *Member) resetGeneration(keepID bool) {
	if m.Phase == PhaseOut || m.Phase == PhaseClosed {
		return
	}
	was := m.heartbeats()
	m.Generation = -1
	if !keepID {
		m.Phase = PhaseOut
		m.beatChange(was, m.MemberID)
		return
	}
	if m.Phase == PhaseJoining || m.Phase == PhaseSyncing {
		m.Phase = PhaseStable
	}
	m.rejoin, m.lost, m.unjoined = true, true, true
	m.beatChange(was, m.MemberID)
}

// setMemberID changes the member id this process goes by. The one it drops
// is heard no more (heartbeats carry the new one), so if the coordinator
// still has it, its session timeout starts now.
func (m *Member) setMemberID(id string) {
	if m.MemberID != "" && m.MemberID != id {
		m.host.MemberIDDropped(m.MemberID)
	}
	m.MemberID = id
}

// leaveGroupState marks the member out of the group; it rejoins at its next poll.
func (m *Member) leaveGroupState(why string) {
	if m.Phase == PhaseOut || m.Phase == PhaseClosed {
		return
	}
	m.env.Trace().Eventf(trace.EvRemoved, m.Client, "%s learns it is out of the group: %s", m.Client, why)
	was := m.heartbeats()
	m.Phase = PhaseOut
	m.beatChange(was, m.MemberID)
}

// revokeCooperative gives up the partitions the new assignment dropped
// (onPartitionsRevoked, committing them first), then rejoins at once.
func (m *Member) revokeCooperative() bool {
	offs := map[wire.TopicPartition]int{}
	all := m.commitPositions()
	for _, tp := range m.revoke {
		if o, ok := all[tp]; ok {
			offs[tp] = o
		}
	}
	// onPartitionsRevoked: an application that commits after processing
	// commits what it processed there; auto-commit does nothing here.
	if m.Cfg.Commit == CommitAfter && m.commitNeeded(offs) {
		m.revokeOffs = offs
		m.commitSync(listOf(offs), contRevokeDone)
		return false
	}
	m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s revokes %s (cooperative)", m.Client, m.env.Layout().PartList(m.revoke))
	var keep, gone []wire.TopicPartition
	for _, tp := range m.Owned {
		if !m.revoking(tp) {
			keep = append(keep, tp)
		} else {
			gone = append(gone, tp)
		}
	}
	m.positions.delAll(gone) // one pass each, however many go
	m.processed.delAll(gone)
	m.Owned, m.revoke = keep, nil
	if m.Phase != PhaseJoining {
		m.sendJoin() // unless a JoinGroup is already out
	}
	return true
}
