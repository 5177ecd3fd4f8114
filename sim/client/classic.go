package client

// The classic group protocol, client side (Kafka's ConsumerCoordinator and
// AbstractCoordinator): FindCoordinator, then JoinGroup and SyncGroup with
// a client-side leader running the assignor, the implicit heartbeat
// thread, rejoining, eager and cooperative revocation, LeaveGroup.

import (
	"slices"
	"sort"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// classicMember is the classic protocol's membership: what Kafka's
// AbstractCoordinator and ConsumerCoordinator keep beyond the generation
// (the member id and generation are the process's: Member.MemberID,
// Member.Generation). Slices are replaced, never changed in place, so a
// copy of the struct is a clone (but for the packet: CloneAll).
type classicMember struct {
	leader   string       // the group's leader, from the JoinGroup answer
	lastJoin *wire.Packet // the JoinGroup whose answer counts
	rejoin   bool         // send JoinGroup at the next poll (rejoinNeeded)
	lost     bool         // its generation is gone: drop every partition at the next poll
	// unjoined: the generation was reset keeping the member id
	// (AbstractCoordinator's MemberState UNJOINED while Phase still says
	// Stable); no heartbeats until the next JoinGroup is answered.
	unjoined bool
	// beatSince is the tick the heartbeat thread was last enabled
	// (HeartbeatThread.enable, beatChange): with heartbeat.interval.ms,
	// its heartbeats go one interval after it and every interval on.
	beatSince int
	// joinFuture is the ID plus one of the JoinGroup, then the SyncGroup,
	// of the rebalance in flight (AbstractCoordinator.joinFuture), 0 when
	// none: after a reset the client waits for its answer before it sends
	// the next JoinGroup.
	joinFuture int
	// A JoinGroup answer that arrived outside poll(), handled at the next
	// one (the body is never changed, so clones may share it).
	joinAnswer    *wire.JoinGroupResponse
	joinAnswerErr wire.ErrorCode
	hasJoinAnswer bool
	// Requests counted so that a timeout knows whether its request is
	// still the one outstanding (request.timeout.ms).
	joinSeq, syncSeq int
	joinRetry        bool   // send JoinGroup again at the next poll
	joinedGen        int    // generation of Owned, sent as sticky user data
	groupProto       string // the group's assignor, from the last JoinGroup answer
	// The eager StickyAssignor's memory (StickyAssignor.onAssignment): the
	// last assignment and its generation, sent as subscription user data
	// even after an eager revocation emptied Owned. Replaced, never changed
	// in place.
	stickyPrev []wire.TopicPartition
	stickyGen  int
	hasSticky  bool
}

// protocol: the classic protocol.
func (c *classicMember) protocol() wire.GroupProtocol { return wire.Classic }

// memberEpochs: commits carry the generation.
func (c *classicMember) memberEpochs() bool { return false }

// join starts membership once the coordinator is found: the first JoinGroup.
func (c *classicMember) join(m *Member) { c.sendJoin(m) }

// receive handles the classic protocol's answers and notifications.
func (c *classicMember) receive(m *Member, p *wire.Packet) {
	switch p.Type {
	case wire.RebalanceNotification:
		if p.Error == wire.UnknownMemberID {
			// Only news about the member id this process still goes by.
			if r, ok := p.Body.(*wire.LeaveGroupRequest); ok && r.MemberID == m.MemberID {
				c.leaveGroupState(m, "the coordinator no longer knows "+m.MemberID)
			}
			return
		}
		// Kafka's heartbeat handler acts on REBALANCE_IN_PROGRESS only in
		// a stable member; one already joining ignores it.
		if m.InGroup() && (m.Phase == PhaseStable || m.Phase == PhaseFetchingOffsets) {
			c.rejoin = true
		}
	case wire.JoinGroup:
		c.onJoinResponse(m, p)
	case wire.SyncGroup:
		c.onSyncResponse(m, p)
	}
}

// poll is the rebalance work at the start of poll() (ensureActiveGroup and
// onJoinPrepare). handled reports that poll() stops here, again whether
// the loop moves on this tick.
func (c *classicMember) poll(m *Member) (handled, again bool) {
	c.takeJoinAnswer(m)
	if c.joinRetry {
		c.joinRetry = false
		if m.Phase == PhaseJoining || m.Phase == PhaseSyncing {
			m.loop.abandonFetch()
			c.sendJoin(m)
			return true, false
		}
	}
	if m.Phase == PhaseOut {
		// Back in poll() after leaving or being removed: join as a new member.
		c.setMemberID(m, "")
		m.Generation = -1
		c.giveUpLost(m)
		if c.waitJoinFuture() {
			return true, false
		}
		c.sendJoin(m)
		return true, false
	}
	lost := c.lost
	if lost {
		c.giveUpLost(m)
		m.commits.pendingFetch = false
		if m.Phase == PhaseFetchingOffsets {
			m.Phase = PhaseStable
		}
	}
	if len(m.pendingRevocation) > 0 {
		m.loop.abandonFetch()
		return true, c.revokeCooperative(m)
	}
	if c.rejoin && (m.Phase == PhaseStable || m.Phase == PhaseFetchingOffsets) {
		// A rebalance comes before fetching offsets: poll() runs
		// ensureActiveGroup first.
		m.loop.abandonFetch()
		if m.Phase == PhaseFetchingOffsets {
			m.commits.pendingFetch = false
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
		if offs := m.commits.positionList(m); m.commits.neededList(m, offs) && (m.Cfg.Commit == CommitAuto || m.Cfg.RebalanceProtocol() == assign.Eager) {
			m.commits.commitSync(m, offs, contIdle)
			return true, false
		}
		if m.Cfg.RebalanceProtocol() == assign.Eager && !lost {
			// onJoinPrepare: with no generation the partitions were lost
			// above, and nothing is revoked.
			m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s revokes %s (eager)", m.Client, trace.Parts{L: m.env.Layout(), TPs: m.Owned})
			m.revokeAll()
		}
		if c.waitJoinFuture() {
			return true, false
		}
		c.sendJoin(m)
		if m.Cfg.RebalanceProtocol() == assign.Eager {
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
func (c *classicMember) waitJoinFuture() bool { return c.joinFuture != 0 }

// await makes req, a JoinGroup or SyncGroup just sent, the join future's
// request; awaits reports whether req is it. (joinFuture keeps the packet's
// ID plus one, so that 0 says none.)
func (c *classicMember) await(req *wire.Packet)       { c.joinFuture = req.ID + 1 }
func (c *classicMember) awaits(req *wire.Packet) bool { return req != nil && c.joinFuture == req.ID+1 }

// joinFutureDone is the answer to the request of a join future abandoned
// by a reset: the future is done, and a member inside poll() sends its
// next JoinGroup now (a busy one at its next poll()).
func (c *classicMember) joinFutureDone(m *Member) {
	c.joinFuture = 0
	if m.loop.inPoll() {
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
func (c *classicMember) heartbeats(m *Member) bool {
	if !m.Alive || m.MemberID == "" || c.unjoined {
		return false
	}
	return m.Phase == PhaseSyncing || m.Phase == PhaseStable || m.Phase == PhaseFetchingOffsets
}

// beatChange tells the coordinator when the heartbeats stop or start
// (or go on under another member id): was and wasID are heartbeats() and
// the member id before the change.
func (c *classicMember) beatChange(m *Member, was bool, wasID string) {
	now := c.heartbeats(m)
	if was && (!now || m.MemberID != wasID) {
		m.host.HeartbeatStopped(wasID)
	}
	if now && (!was || m.MemberID != wasID) {
		c.beatSince = m.env.Now()
		m.host.HeartbeatStarted(m.MemberID)
		if !was && !m.loop.inPoll() {
			// HeartbeatThread.enable resets the heartbeat's timeouts, the
			// max.poll.interval.ms timer among them: a JoinGroup answer
			// read inside commitSync starts the stretch anew.
			m.loop.leftPollAt = m.env.Now()
			m.loop.armPollTimer(m)
		}
	}
}

// giveUpLost is onJoinPrepare finding no generation (NO_GENERATION after
// resetStateOnResponseError or resetGenerationOnLeaveGroup): every
// partition is given up as lost (onPartitionsLost), nothing committed.
func (c *classicMember) giveUpLost(m *Member) {
	m.loop.abandonFetch()
	c.lost = false
	m.subscription.lose(m, "its generation is gone: onPartitionsLost, nothing committed")
}

// pollTimeout is the heartbeat thread finding max.poll.interval.ms passed
// outside poll() (the member is in the group and still outside poll()).
func (c *classicMember) pollTimeout(m *Member, since int) {
	if !c.heartbeats(m) {
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
		was := c.heartbeats(m)
		m.Generation = -1
		m.Phase = PhaseOut
		c.beatChange(m, was, m.MemberID)
		return
	}
	m.env.Trace().Eventf(trace.EvPollTimeout, m.Client, "%s: %d ticks without poll() (max.poll.interval.ms %d): the heartbeat thread sends LeaveGroup; the process goes on as a zombie",
		m.Client, m.env.Now()-since, m.Cfg.MaxPollInterval)
	m.send(&wire.Packet{Type: wire.LeaveGroup, Summary: m.MemberID + " (poll timeout)", Body: &wire.LeaveGroupRequest{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID}})
	was := c.heartbeats(m)
	m.Phase = PhaseOut
	c.beatChange(m, was, m.MemberID)
}

// leave is close() leaving the group: LeaveGroup, none for a static member
// (AbstractCoordinator.maybeLeaveGroup).
func (c *classicMember) leave(m *Member) {
	// maybeLeaveGroup sends none from UNJOINED either (a reset generation).
	if !m.Static() && !c.unjoined {
		m.send(&wire.Packet{Type: wire.LeaveGroup, Summary: m.MemberID + " (close)", Body: &wire.LeaveGroupRequest{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID}})
	}
}

// joinRequest is what this member sends in JoinGroup.
func (c *classicMember) joinRequest(m *Member) *wire.JoinGroupRequest {
	r := &wire.JoinGroupRequest{MemberID: m.MemberID, Client: m.Client, Inc: m.Inc, InstanceID: m.Cfg.InstanceID,
		Topics: m.Topics, Protocols: m.Cfg.Assignors(), RebalanceTimeout: m.Cfg.MaxPollInterval,
		SessionTimeout: m.Cfg.SessionTimeout, OwnedGen: c.joinedGen}
	r.Owned = append([]wire.TopicPartition{}, m.Owned...)
	if slices.Contains(r.Protocols, "sticky") && c.hasSticky {
		// StickyAssignor.subscriptionUserData: the previous assignment and
		// generation, which memberData reads instead of ownedPartitions.
		// Kafka sends it in the "sticky" entry only, each entry with its
		// own metadata; kgrepl sends one per member, so an eager member
		// listing sticky and cooperative-sticky would show
		// cooperative-sticky its previous assignment where Kafka shows
		// none (ownedPartitions are empty after an eager revocation).
		r.Owned = append([]wire.TopicPartition{}, c.stickyPrev...)
		r.OwnedGen = c.stickyGen
	}
	return r
}

func (c *classicMember) sendJoin(m *Member) {
	// initiateJoinGroup: PREPARING_REBALANCE, so the heartbeats stop.
	was := c.heartbeats(m)
	m.Phase = PhaseJoining
	c.unjoined = false
	c.beatChange(m, was, m.MemberID)
	c.rejoin, c.joinRetry = false, false
	req := c.joinRequest(m)
	s := "subscribe " + strings.Join(m.Topics, ",")
	if len(req.Protocols) > 1 {
		s += ", assignors " + strings.Join(req.Protocols, ",")
	}
	if m.Cfg.RebalanceProtocol() == assign.Cooperative {
		s += ", owns " + m.env.Layout().PartList(m.Owned)
	}
	c.lastJoin = m.send(&wire.Packet{Type: wire.JoinGroup, Summary: s, Body: req})
	c.await(c.lastJoin)
	c.joinSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.joinTimeoutTicks(), Kind: tmJoinTimeout, Client: m.Client, Inc: m.Inc, Key: c.joinSeq})
}

// joinTimeout: the JoinGroup got no answer in time (the request or the
// answer was lost). Kafka's joinGroupIfNeeded treats the timeout as
// retriable and joins again, with the member id it holds (none for a new
// member), from inside poll().
func (c *classicMember) joinTimeout(m *Member, seq int) {
	if c.joinSeq != seq || c.hasJoinAnswer || !c.awaits(c.lastJoin) {
		return
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to JoinGroup within %d ticks (rebalance timeout + margin): joining again", m.Label(), m.Cfg.joinTimeoutTicks())
	c.joinFuture = 0
	// Outside PhaseJoining a reset left the join future waiting for this
	// answer: the timeout fails it, and the loop sends the next JoinGroup
	// as after any reset. In PhaseJoining the join itself is retried.
	if m.Phase == PhaseJoining {
		c.joinRetry = true
	}
	m.wakeUp()
}

// syncTimeout: the SyncGroup got no answer within request.timeout.ms; the
// client fails the join and joins again with its member id.
func (c *classicMember) syncTimeout(m *Member, seq int) {
	if c.syncSeq != seq || c.joinFuture == 0 || c.awaits(c.lastJoin) {
		return // answered, or the join future is a later JoinGroup
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to SyncGroup within request.timeout.ms (%d): joining again", m.Label(), m.Cfg.RequestTimeout)
	c.joinFuture = 0
	// Outside PhaseSyncing a reset left the join future waiting for this
	// SyncGroup (the member rejoins as after any reset); in PhaseSyncing
	// the join is retried with the member id.
	if m.Phase == PhaseSyncing {
		c.joinRetry = true
	}
	m.wakeUp()
}

func (c *classicMember) onJoinResponse(m *Member, p *wire.Packet) {
	r, _ := p.Body.(*wire.JoinGroupResponse)
	if p.Req != c.lastJoin || !c.awaits(p.Req) {
		c.staleJoinAnswer(m, p.Error, r)
		return
	}
	if !m.loop.inPoll() && m.loop.state != LoopCommitting {
		// The heartbeat thread is disabled while a JoinGroup is in flight
		// (AbstractCoordinator.HeartbeatThread: state.hasNotJoinedGroup()),
		// so only the application thread reads the answer, inside poll() or
		// a commitSync; a member busy with its batch handles it at its next
		// poll(), and a busy leader delays everyone's SyncGroup.
		c.joinAnswer, c.joinAnswerErr, c.hasJoinAnswer = r, p.Error, true
		return
	}
	c.handleJoinAnswer(m, p.Error, r)
}

// staleJoinAnswer drops the answer to a JoinGroup this member has since
// replaced: a member id it hands out is never used, so the coordinator
// stops hearing it.
func (c *classicMember) staleJoinAnswer(m *Member, code wire.ErrorCode, r *wire.JoinGroupResponse) {
	if r != nil && code == wire.None && r.MemberID != m.MemberID {
		m.host.MemberIDDropped(r.MemberID)
	}
}

// takeJoinAnswer handles a JoinGroup answer that waited for poll().
func (c *classicMember) takeJoinAnswer(m *Member) {
	if !c.hasJoinAnswer {
		return
	}
	r, code := c.joinAnswer, c.joinAnswerErr
	c.joinAnswer, c.joinAnswerErr, c.hasJoinAnswer = nil, wire.None, false
	c.handleJoinAnswer(m, code, r)
}

func (c *classicMember) handleJoinAnswer(m *Member, code wire.ErrorCode, r *wire.JoinGroupResponse) {
	if code == wire.FencedInstanceID || code == wire.InconsistentGroupProtocol || code == wire.GroupMaxSizeReached {
		// JoinGroupResponseHandler raises these whatever the member's
		// state and generation, and joinGroupIfNeeded throws them (not
		// retriable): fatal even in an answer after a reset.
		c.joinFuture = 0
		m.fatal(code.String() + " on JoinGroup")
		return
	}
	if m.Phase != PhaseJoining {
		// The answer to a JoinGroup the member reset its generation under:
		// JoinGroupResponseHandler raises UnjoinedGroupException on a
		// success (the member id it hands out is never used); an error
		// answer finds the generation changed and resets nothing. The
		// join future is done either way.
		c.staleJoinAnswer(m, code, r)
		c.joinFutureDone(m)
		return
	}
	c.joinFuture = 0 // done, or replaced by the SyncGroup's below
	// The JoinGroup rows of the table above onCommitRefused.
	switch code {
	case wire.None:
	case wire.UnknownMemberID:
		c.resetGeneration(m, false)
		return
	case wire.RebalanceInProgress:
		c.sendJoin(m)
		return
	default:
		c.rejoin = true
		return
	}
	// COMPLETING_REBALANCE: heartbeatThread.enable().
	was, wasID := c.heartbeats(m), m.MemberID
	c.setMemberID(m, r.MemberID)
	m.Generation, c.leader, c.groupProto = r.Generation, r.Leader, r.Protocol
	m.Phase = PhaseSyncing
	c.beatChange(m, was, wasID)
	req := &wire.SyncGroupRequest{MemberID: m.MemberID, Generation: m.Generation, InstanceID: m.Cfg.InstanceID}
	p := &wire.Packet{Type: wire.SyncGroup, Summary: "empty", Body: req}
	if r.Leader == m.MemberID && len(r.Members) > 0 {
		a, err := assign.New(r.Protocol, m.Cfg.StickyRules)
		if err != nil {
			a, _ = assign.New("range", m.Cfg.StickyRules)
		}
		req.Plan = a.Assign(assign.Input{Members: r.Members, Partitions: m.env.Layout().TopicSizes()})
		format, args := planSummary(m.env.Layout(), req.Plan, r.Members)
		m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s (leader) ran %s: "+format, append([]any{m.Client, a.Name()}, args...)...)
		p.Summary, p.Text = "", m.env.Trace().Textf("plan "+format, args...)
	}
	c.await(m.send(p))
	c.syncSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmSyncTimeout, Client: m.Client, Inc: m.Inc, Key: c.syncSeq})
}

func (c *classicMember) onSyncResponse(m *Member, p *wire.Packet) {
	if !c.awaits(p.Req) {
		return // the answer to a SyncGroup no longer waited for
	}
	if p.Error == wire.FencedInstanceID {
		// SyncGroupResponseHandler: fatal whatever the generation, so
		// also in an answer after a reset.
		c.joinFuture = 0
		m.fatal("FENCED_INSTANCE_ID on SyncGroup")
		return
	}
	if m.Phase != PhaseSyncing {
		// A reset came while the SyncGroup was out: a success is raised
		// as ILLEGAL_GENERATION, an error finds the generation changed;
		// the join future is done and the member rejoins.
		c.joinFutureDone(m)
		return
	}
	c.joinFuture = 0
	// The SyncGroup rows of the table above onCommitRefused.
	switch p.Error {
	case wire.None:
	case wire.UnknownMemberID, wire.IllegalGeneration:
		c.resetGeneration(m, p.Error == wire.IllegalGeneration)
		return
	default:
		// REBALANCE_IN_PROGRESS: joinGroupIfNeeded joins again at once, in
		// poll(); a member busy with its batch (cooperative: it consumes
		// through the rebalance) sends the JoinGroup at its next poll().
		if m.loop.inPoll() {
			c.sendJoin(m)
		} else {
			c.syncSeq++ // answered: no sync timeout
			c.joinRetry = true
		}
		return
	}
	c.rejoin = false // a rejoin asked for during the rebalance is done with (SyncGroupResponseHandler)
	got := p.Body.(*wire.SyncGroupResponse).Assignment
	c.joinedGen = m.Generation
	if tp, ok := m.unsubscribed(got); ok {
		// ConsumerCoordinator.onJoinComplete: an assignment that does not
		// match the subscription is not taken; the member rejoins with its
		// current subscription.
		m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s gen %d: %s includes %s, outside its subscription %s: rejoins with its current subscription",
			m.Client, m.Generation, m.env.Layout().PartList(got), tp, strings.Join(m.Topics, ","))
		m.Phase = PhaseStable
		c.rejoin = true
		return
	}
	if c.groupProto == "sticky" {
		c.stickyPrev, c.stickyGen, c.hasSticky = append([]wire.TopicPartition{}, got...), m.Generation, true
	}
	var added []wire.TopicPartition
	owned := false // added is Owned (replaced, never changed in place)
	if m.Cfg.RebalanceProtocol() == assign.Eager {
		added, owned = m.assignAll(got), true
	} else {
		// Cooperative: what the new assignment drops is revoked at the
		// next poll; what it adds is assigned now.
		keep := map[wire.TopicPartition]bool{}
		for _, tp := range got {
			keep[tp] = true
		}
		for _, tp := range m.Owned {
			if !keep[tp] {
				m.pendingRevocation = append(m.pendingRevocation, tp)
			}
		}
		added = m.assign(got)
		// A kept partition may still be without a position: its
		// OffsetFetch answer came while the member rejoined, and was
		// dropped, as ConsumerCoordinator.fetchCommittedOffsets drops a
		// pending request of another generation. It is initializing, and
		// asked for with the added ones: Kafka asks for every partition
		// initializing (subscriptions.initializingPartitions), not the
		// assignment's new ones. Without it the member owned the partition
		// and never read it.
		added = withInitializing(m, added)
	}
	m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s gen %d: %s", m.Client, m.Generation, trace.Parts{L: m.env.Layout(), TPs: got})
	if len(added) == 0 {
		m.Phase = PhaseStable
		return
	}
	m.Phase = PhaseFetchingOffsets
	if owned {
		m.commits.fetchOffsetsOf(m, added)
		return
	}
	m.commits.fetchOffsets(m, added)
}

// commitRefusedLocally is ConsumerCoordinator.sendOffsetCommitRequest
// finding no stable generation (AbstractCoordinator.generationIfStable is
// null): the commit fails in the client and no request goes out. During
// the member's own rebalance it is RebalanceInProgressException; after the
// generation was reset (AbstractCoordinator.maybeLeaveGroup ->
// resetGenerationOnLeaveGroup on a poll timeout, or
// resetGenerationOnResponseError after UNKNOWN_MEMBER_ID or
// ILLEGAL_GENERATION) it is CommitFailedException.
func (c *classicMember) commitRefusedLocally(m *Member) string {
	switch {
	case c.rebalancing(m):
		return "commitSync during its own rebalance: RebalanceInProgressException, nothing sent"
	case m.Phase == PhaseOut || c.generationReset():
		return "commitSync while not part of an active group (its generation was reset): CommitFailedException, nothing sent"
	}
	return ""
}

// autoCommits: ConsumerCoordinator.maybeAutoCommitOffsetsAsync commits only
// in a stable generation of a group the member is in.
func (c *classicMember) autoCommits(m *Member) bool { return m.InGroup() && !c.rebalancing(m) }

// commitEpoch: the generation.
func (c *classicMember) commitEpoch(m *Member) int { return m.Generation }

// rebalancing reports whether the member is between its JoinGroup and its
// SyncGroup answer: its generation is not stable, and commits fail.
func (c *classicMember) rebalancing(m *Member) bool {
	return m.Phase == PhaseJoining || m.Phase == PhaseSyncing
}

// revokeCooperative gives up the partitions the new assignment dropped
// (onPartitionsRevoked, committing them first), then rejoins at once.
func (c *classicMember) revokeCooperative(m *Member) bool {
	offs := map[wire.TopicPartition]int{}
	all := m.commits.positions(m)
	for _, tp := range m.pendingRevocation {
		if o, ok := all[tp]; ok {
			offs[tp] = o
		}
	}
	// onPartitionsRevoked: an application that commits after processing
	// commits what it processed there; auto-commit does nothing here.
	if m.Cfg.Commit == CommitAfter && m.commits.needed(m, offs) {
		m.commits.commitSync(m, listOf(offs), contRevokeDone)
		return false
	}
	m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s revokes %s (cooperative)", m.Client, trace.Parts{L: m.env.Layout(), TPs: m.pendingRevocation})
	m.revoke(m.pendingRevocation)
	m.pendingRevocation = nil
	if m.Phase != PhaseJoining {
		c.sendJoin(m) // unless a JoinGroup is already out
	}
	return true
}

// fire is a JoinGroup's or SyncGroup's request timeout.
func (c *classicMember) fire(m *Member, t wire.Timer) {
	switch t.Kind {
	case tmJoinTimeout:
		c.joinTimeout(m, t.Key)
	case tmSyncTimeout:
		c.syncTimeout(m, t.Key)
	}
}

// generationReset: UNJOINED, the generation reset keeping the member id
// (resetGeneration), until the next JoinGroup.
func (c *classicMember) generationReset() bool { return c.lost || c.unjoined }

// rejoinNeeded is AbstractCoordinator.rejoinNeeded.
func (c *classicMember) rejoinNeeded() bool { return c.rejoin }

// revokeCommitted: onPartitionsRevoked committed; the next poll() revokes
// (revokeCooperative) and rejoins.
func (c *classicMember) revokeCommitted(*Member) {}

// settled: stable, nothing to revoke, no rejoin pending, offsets fetched.
func (c *classicMember) settled(m *Member) bool {
	return m.Phase == PhaseStable && !c.rejoin && len(m.pendingRevocation) == 0 && !m.commits.pendingFetch
}

// startStable: the generation's leader is known; a live classic member
// needs no timer: its heartbeats are implicit (sim/heartbeat.go) and a
// dead process is timed from when it stopped.
func (c *classicMember) startStable(_ *Member, leader string, _ int) { c.leader = leader }

// planSummary is a plan as the trace spells it, "C1 {o0 o1} · C2 {p0}",
// as a format and its arguments for Eventf and Textf (each member's list
// kept as a token, not spelled).
func planSummary(layout *topo.Layout, plan assign.Assignment, members []assign.Member) (format string, args []any) {
	ids := make([]string, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.MemberID)
	}
	sort.Strings(ids)
	var f strings.Builder
	args = make([]any, 0, 2*len(ids))
	for i, id := range ids {
		if i > 0 {
			f.WriteString(" · ")
		}
		f.WriteString("%s %s")
		args = append(args, wire.ClientOf(id), trace.Parts{L: layout, TPs: plan[id]})
	}
	return f.String(), args
}

// withInitializing is added, the partitions an assignment adds, with every
// owned partition still without a position that it lacks (in owned order);
// added itself when it lacks none, as it does but after a dropped
// OffsetFetch (onSyncResponse).
func withInitializing(m *Member, added []wire.TopicPartition) []wire.TopicPartition {
	still := m.unpositioned()
	for _, tp := range still {
		if !slices.Contains(added, tp) {
			var out []wire.TopicPartition
			for _, o := range m.Owned {
				if slices.Contains(added, o) || slices.Contains(still, o) {
					out = append(out, o)
				}
			}
			return out
		}
	}
	return added
}
