package client

// The consumer group protocol (KIP-848), client side: Kafka's
// ConsumerMembershipManager / AbstractMembershipManager (member states,
// reconciliation: revoke first, then assign, acknowledge with a heartbeat;
// fencing; leaving), ConsumerHeartbeatRequestManager (a heartbeat every
// interval, one at a time, and at once when joining, acknowledging or
// leaving; full or partial requests) and the revocation half of
// CommitRequestManager (the auto-commit before revoking). The heartbeats
// run on the client's background thread: they go on while the application
// processes a batch.
//
// Member id: Kafka 4.x's client picks its own member id (a random Uuid,
// KIP-1082) when the consumer is created and keeps it for the life of the
// process, across fencing and rejoining. kgrepl keeps its readable ids: a
// process takes the next id of its client (C2-1, then C2-2 for the next
// process after a restart) when it first joins and keeps it.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The client's member states (Kafka's MemberState, consumer side).
const (
	cgJoining       = "JOINING"
	cgReconciling   = "RECONCILING"
	cgAcknowledging = "ACKNOWLEDGING"
	cgStable        = "STABLE"
	cgLeaving       = "LEAVING"
	cgStale         = "STALE"
	cgFencedState   = "FENCED"
	cgUnsubscribed  = "UNSUBSCRIBED"
)

// consumerMember is the consumer protocol's state on a member. Slices are
// replaced, never changed in place, so a copy of the struct is a clone.
type consumerMember struct {
	state    string
	hbSeq    int          // numbers the request-timeout timers; another number is stale
	ivSeq    int          // numbers the interval (and retry backoff) timers
	inFlight *wire.Packet // the heartbeat waiting for its answer (one at a time)
	interval int          // heartbeat interval from the last answer (0: none yet)
	now      bool         // send a heartbeat as soon as none is in flight
	// due: the interval passed while a heartbeat was in flight; the next
	// goes when it is answered (HeartbeatRequestState.canSendRequest:
	// timer expired, no request in flight).
	due bool
	// target is the assignment of the last answer that carried one, not
	// reconciled yet (hasTarget).
	target    []wire.TopicPartition
	hasTarget bool
	// A reconciliation in progress: revoked waits for the auto-commit
	// before revocation (commitWait) or for the application's
	// onPartitionsRevoked at its next poll (listenerWait).
	revoked      []wire.TopicPartition
	commitWait   bool
	listenerWait bool
	// The auto-commit before revocation in flight (commitPkt, attempt
	// commitSeq), retried until commitDeadline (the rebalance timeout).
	commitPkt      *wire.Packet
	commitSeq      int
	commitDeadline int
	// What the last heartbeat sent (ConsumerHeartbeatRequestManager.SentFields).
	sentOwned []wire.TopicPartition
	ownedSent bool
	// sentReset: a heartbeat failed (no answer in time, or an error), so
	// the sent fields were forgotten (AbstractHeartbeatRequestManager's
	// resetHeartbeatState) and the next request is a full one.
	sentReset bool
}

// consumerClient is the consumer protocol's groupClient (stateless; the
// state is Member.cg).
type consumerClient struct{}

// join is transitionToJoining: epoch 0, a full heartbeat at once.
func (consumerClient) join(m *Member) {
	if m.MemberID == "" {
		m.MemberID = m.env.IssueMemberID(m.Client)
	}
	m.cgJoin()
}

func (m *Member) cgJoin() {
	m.Generation = 0
	m.Phase = PhaseJoining
	m.cg.state = cgJoining
	m.cg.ownedSent, m.cg.sentReset = false, false
	m.cg.hasTarget, m.cg.revoked, m.cg.commitWait, m.cg.listenerWait = false, nil, false, false
	m.cg.inFlight = nil // an answer to an earlier heartbeat no longer counts
	m.sendHeartbeat()
}

// sendHeartbeat is ConsumerHeartbeatRequestManager.makeHeartbeatRequest:
// member id, epoch and instance id always; when joining, or after a failed
// heartbeat forgot the sent fields, every field; otherwise the owned
// partitions only when they changed since the last heartbeat (the
// acknowledgement of a reconciliation). The subscription and rebalance
// timeout never change in kgrepl after joining.
func (m *Member) sendHeartbeat() {
	full := m.cg.state == cgJoining || m.cg.sentReset
	retry := m.cg.state != cgJoining && m.cg.sentReset
	m.cg.sentReset = false
	r := &wire.ConsumerGroupHeartbeatRequest{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID, Client: m.Client, Inc: m.Inc,
		MemberEpoch: m.Generation, RebalanceTimeout: -1}
	var s []string
	if full {
		r.RebalanceTimeout = m.Cfg.MaxPollInterval
		r.Topics, r.TopicsSent = store.Copy(m.Topics), true
		r.Assignor = m.Cfg.RemoteAssignor
		if retry {
			s = append(s, "full (after a failed heartbeat)", "subscribe "+strings.Join(m.Topics, ","))
		} else {
			s = append(s, "join", "subscribe "+strings.Join(m.Topics, ","))
		}
	}
	if full || !m.cg.ownedSent || !slices.Equal(m.cg.sentOwned, m.Owned) {
		r.Owned, r.OwnedSent = store.Copy(m.Owned), true
		m.cg.sentOwned, m.cg.ownedSent = r.Owned, true
		s = append(s, "owns "+m.env.Layout().PartList(m.Owned))
	}
	// "epoch 2" (every heartbeat), then the fields sent, if any
	summary := m.env.Trace().HeartbeatRequest(m.Generation, strings.Join(s, ", "))
	m.cg.now = false
	// AbstractMembershipManager.onHeartbeatRequestGenerated: the
	// acknowledgement is made when the heartbeat goes, not when answered.
	if m.cg.state == cgAcknowledging {
		m.cg.state = cgStable
		if m.cg.hasTarget && !slices.Equal(wire.SortedCopy(m.cg.target), wire.SortedCopy(m.Owned)) {
			m.cg.state = cgReconciling
		}
	}
	m.cg.inFlight = m.send(&wire.Packet{Type: wire.ConsumerGroupHeartbeat, Text: summary, Body: r})
	m.cg.hbSeq++
	// No answer within request.timeout.ms: a failed attempt (heartbeatTimer).
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmHeartbeat, Client: m.Client, Inc: m.Inc, Key: m.cg.hbSeq, Arg: 1})
	// AbstractHeartbeatRequestManager.makeHeartbeatRequest: the interval
	// timer restarts when a heartbeat is sent (HeartbeatRequestState.resetTimer),
	// not when it is answered, so heartbeats go every interval, not every
	// interval plus the round trip. Before the first answer the client has
	// no interval from the coordinator: Kafka runs its own default until
	// the answer's interval replaces it (updateHeartbeatIntervalMs resets
	// the timer then); kgrepl arms the timer at that answer.
	m.cg.due = false
	if m.cg.interval > 0 {
		m.armHeartbeat(m.cg.interval)
	}
}

// armHeartbeat (re)starts the interval timer: the next heartbeat is due
// after the given ticks.
func (m *Member) armHeartbeat(after int) {
	m.cg.ivSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + after, Kind: tmHeartbeat, Client: m.Client, Inc: m.Inc, Key: m.cg.ivSeq})
}

// ConsumerRetryBackoff is the wait before a heartbeat is retried after a failed
// attempt, in ticks. Kafka: HeartbeatRequestState.onFailedAttempt sets the
// interval timer to 0 and waits the request's backoff, retry.backoff.ms
// (100 ms) doubling per failed attempt up to retry.backoff.max.ms (1 s),
// the same after a request timeout (AbstractHeartbeatRequestManager.onFailure)
// as after a retriable error answer (onErrorResponse). At kgrepl's
// heartbeat scale (Kafka's 5 s interval is 2 ticks, 2.5 s a tick) every
// one of those waits is under a tick, so the retry goes at the next tick,
// kgrepl's smallest delay, whatever the attempt. kgrepl's RetryBackoff
// setting (3 ticks) is sized for the producer's and classic client's
// retries; here it would be a third of the session timeout.
const ConsumerRetryBackoff = 1

// heartbeatNow sends a heartbeat at once, or as soon as the one in flight
// is answered (shouldHeartbeatNow && !requestInFlight).
func (m *Member) heartbeatNow() {
	if m.cg.inFlight != nil {
		m.cg.now = true
		return
	}
	m.sendHeartbeat()
}

// sendLeave is the leave heartbeat: epoch -1, or -2 for a static member
// (AbstractMembershipManager.leaveGroupEpoch). Its answer is not waited for.
// transitionToSendingLeaveGroup clears the local assignment first, so the
// request carries the owned partitions as an empty list (they changed since
// the last heartbeat; kgrepl compares partitions, as in sendHeartbeat);
// close() also unsubscribed (leaveGroup: subscriptions.unsubscribe), so its
// leave carries an empty subscription too. A leave after the poll timeout
// keeps the subscription, which goes unsent.
func (m *Member) sendLeave(why string, unsubscribe bool) {
	epoch := wire.LeaveGroupMemberEpoch
	if m.Static() {
		epoch = wire.LeaveGroupStaticMemberEpoch
	}
	r := &wire.ConsumerGroupHeartbeatRequest{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID, Client: m.Client, Inc: m.Inc, MemberEpoch: epoch, RebalanceTimeout: -1}
	summary := "leave, epoch " + strconv.Itoa(epoch) + " (" + why + ")"
	if unsubscribe {
		r.Topics, r.TopicsSent = []string{}, true
		summary += ", subscribe nothing"
	}
	if !m.cg.ownedSent || len(m.cg.sentOwned) > 0 {
		r.Owned, r.OwnedSent = []wire.TopicPartition{}, true
		m.cg.sentOwned, m.cg.ownedSent = r.Owned, true
		summary += ", owns {}"
	}
	m.send(&wire.Packet{Type: wire.ConsumerGroupHeartbeat, Summary: summary, Body: r})
	m.cg.inFlight, m.cg.due = nil, false
	m.cg.hbSeq++ // no more heartbeats until it joins again
	m.cg.ivSeq++
}

// heartbeatTimer: the interval passed, or the backoff after a failed
// attempt (send the next heartbeat, or, with one in flight, send it when
// that one is answered), or the one in flight got no answer within
// request.timeout.ms: as AbstractHeartbeatRequestManager.onFailure does,
// the sent fields are forgotten, the next heartbeat is a full one, and it
// goes after the retry backoff (ConsumerRetryBackoff), as after a retriable
// error answer.
func (m *Member) heartbeatTimer(seq int, timeout bool) {
	if !m.cgActive() {
		return
	}
	if timeout {
		if seq != m.cg.hbSeq || m.cg.inFlight == nil {
			return
		}
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to ConsumerGroupHeartbeat within request.timeout.ms (%d): a full one after the retry backoff", m.label(), m.Cfg.RequestTimeout)
		m.cg.inFlight = nil
		m.cgFailedAttempt()
		return
	}
	if seq != m.cg.ivSeq {
		return
	}
	if m.cg.inFlight != nil {
		m.cg.due = true
		return
	}
	m.sendHeartbeat()
}

// cgFailedAttempt is HeartbeatRequestState.onFailedAttempt with
// resetHeartbeatState: the sent fields are forgotten (the next request is
// full) and the next heartbeat goes after the retry backoff.
func (m *Member) cgFailedAttempt() {
	m.cg.sentReset = true
	m.cg.due = false
	m.armHeartbeat(ConsumerRetryBackoff)
}

// cgActive: the member heartbeats (it is joining or in the group).
func (m *Member) cgActive() bool {
	switch m.cg.state {
	case cgJoining, cgReconciling, cgAcknowledging, cgStable:
		return m.Alive
	}
	return false
}

// receive handles the heartbeat's answers.
func (consumerClient) receive(m *Member, p *wire.Packet) {
	if p.Type != wire.ConsumerGroupHeartbeat || p.Req != m.cg.inFlight || !m.cgActive() {
		return // a leave's answer, or one to a heartbeat since replaced
	}
	m.cg.inFlight = nil
	switch p.Error {
	case wire.None:
	case wire.FencedMemberEpoch, wire.UnknownMemberID:
		m.cgFenced(p.Error)
		return
	case wire.UnreleasedInstanceID, wire.FencedInstanceID, wire.GroupIDNotFound, wire.UnsupportedAssignor:
		// AbstractHeartbeatRequestManager / ConsumerHeartbeatRequestManager.handleSpecificError:
		// fatal; poll() throws and the application stops.
		m.fatal(p.Error.String() + " on ConsumerGroupHeartbeat")
		return
	default:
		// AbstractHeartbeatRequestManager.onErrorResponse: retriable; the
		// sent fields are forgotten, a full heartbeat after the backoff.
		m.cgFailedAttempt()
		return
	}
	r := p.Body.(*wire.ConsumerGroupHeartbeatResponse)
	m.Generation = r.MemberEpoch
	if m.cg.state == cgJoining {
		m.cg.state = cgStable
		if m.Phase == PhaseJoining {
			m.Phase = PhaseStable
		}
	}
	interval := r.Interval
	if interval < 1 {
		interval = 1
	}
	// HeartbeatRequestState.updateHeartbeatIntervalMs: the timer restarts
	// from the answer only when the interval changed (the first answer);
	// otherwise it keeps running from the send, and if it expired while
	// this heartbeat was in flight, the next goes now.
	if interval != m.cg.interval {
		m.cg.interval = interval
		m.cg.due = false
		m.armHeartbeat(interval)
	}
	if r.HasAssignment {
		m.cg.target, m.cg.hasTarget = store.Copy(r.Assignment), true
		wire.SortPartitions(m.cg.target)
	}
	m.cgReconcile()
	if (m.cg.now || m.cg.due) && m.cg.inFlight == nil {
		m.sendHeartbeat()
	}
}

// cgFenced is AbstractMembershipManager.transitionToFenced: the partitions
// are lost (onPartitionsLost, nothing committed) and then the member
// rejoins with epoch 0 and the same member id. The user's onPartitionsLost
// runs on the application thread, so an application with a rebalance
// listener (commit-after, transactional: see cgRevokeStep) loses its
// partitions and rejoins at its next poll(); a transaction it finishes
// before then still names them and is refused. Without a listener it all
// happens at once in the background thread.
func (m *Member) cgFenced(code wire.ErrorCode) {
	m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: ConsumerGroupHeartbeat answered %s: fenced at epoch %d; rejoins with epoch 0", m.label(), code, m.Generation)
	m.cg.hasTarget, m.cg.revoked, m.cg.commitWait, m.cg.listenerWait = false, nil, false, false
	if m.cgHasListener() {
		m.cg.state = cgFencedState
		m.cg.hbSeq++ // no heartbeats until it rejoins
		m.cg.ivSeq++
		m.cg.due = false
		m.wakeUp()
		return
	}
	m.cgLoseAll("fenced: onPartitionsLost, nothing committed")
	m.cgJoin()
}

// cgHasListener: the application has a rebalance listener whose callbacks
// run on its thread, inside poll() (see cgRevokeStep).
func (m *Member) cgHasListener() bool {
	return m.Cfg.Commit == CommitAfter || m.prod.mode == ProducerTransactional
}

// cgLoseAll drops every partition without committing.
func (m *Member) cgLoseAll(why string) {
	m.abandonFetch()
	if len(m.Owned) > 0 {
		m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s loses %s (%s)", m.label(), m.env.Layout().PartList(m.Owned), why)
	}
	m.Owned = nil
	m.positions.reset()
	m.processed.reset()
	m.pendingFetch = false
	if m.Phase == PhaseFetchingOffsets {
		m.Phase = PhaseStable
	}
}

// cgReconcile is AbstractMembershipManager.maybeReconcile: one
// reconciliation at a time; revoke what the new assignment drops first,
// then assign what it adds, then acknowledge with a heartbeat.
func (m *Member) cgReconcile() {
	if !m.cg.hasTarget || m.cg.commitWait || m.cg.listenerWait || !m.cgActive() {
		return
	}
	keep := map[wire.TopicPartition]bool{}
	for _, tp := range m.cg.target {
		keep[tp] = true
	}
	var revoked []wire.TopicPartition
	for _, tp := range m.Owned {
		if !keep[tp] {
			revoked = append(revoked, tp)
		}
	}
	if len(revoked) == 0 && slices.Equal(m.Owned, m.cg.target) {
		m.cg.hasTarget = false
		return // nothing to do: the answer repeats the assignment in force
	}
	m.cg.state = cgReconciling
	m.cg.revoked = revoked
	if len(revoked) == 0 {
		m.cgAssign()
		return
	}
	// CommitRequestManager.maybeAutoCommitSyncBeforeRevocation: under
	// auto-commit, the positions consumed so far are committed before
	// anything is revoked, retried until the rebalance timeout
	// (ConsumerMembershipManager passes rebalanceTimeoutMs as the deadline;
	// see onCommitBeforeRevoke); the revocation goes on whatever the
	// outcome.
	if m.Cfg.Commit == CommitAuto && m.prod.mode != ProducerTransactional {
		if offs := m.fetchPositions(); len(offs) > 0 {
			m.cg.commitWait = true
			m.cg.commitDeadline = m.env.Now() + m.Cfg.MaxPollInterval
			m.sendCommitBeforeRevoke(offs)
			return
		}
	}
	m.cgRevokeStep()
}

// cgRevokeStep runs onPartitionsRevoked. ConsumerMembershipManager.invokeOnPartitionsRevokedCallback
// runs the user's rebalance listener on the application thread, so
// revocation waits for the application's next poll(); with no listener it
// completes at once in the background thread. kgrepl's commit-after
// application commits in its listener (as it does under the classic
// protocol), and its transactional application has one too (the EOS
// pattern: the transaction in hand is finished before partitions go; else a
// new owner could fetch the offsets before the TxnOffsetCommit arrives), so
// both wait for poll(); auto-commit and commit-before applications have no
// listener.
func (m *Member) cgRevokeStep() {
	if m.cgHasListener() {
		m.cg.listenerWait = true
		m.wakeUp()
		return
	}
	m.cgRevoke()
	m.cgAssign()
}

// cgRevoke gives the revoked partitions up.
func (m *Member) cgRevoke() {
	drop := map[wire.TopicPartition]bool{}
	for _, tp := range m.cg.revoked {
		drop[tp] = true
	}
	m.positions.delAll(m.cg.revoked) // one pass each, however many go
	m.processed.delAll(m.cg.revoked)
	var keep []wire.TopicPartition
	for _, tp := range m.Owned {
		if !drop[tp] {
			keep = append(keep, tp)
		}
	}
	m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s revokes %s (epoch %d)", m.label(), m.env.Layout().PartList(m.cg.revoked), m.Generation)
	m.Owned, m.cg.revoked = keep, nil
	m.abandonFetch()
}

// cgAssign takes the target's new partitions and acknowledges: their
// offsets are fetched, and a heartbeat reports what the member owns now.
func (m *Member) cgAssign() {
	own := map[wire.TopicPartition]bool{}
	for _, tp := range m.Owned {
		own[tp] = true
	}
	var added []wire.TopicPartition
	owned := slices.Clip(m.Owned) // Owned is replaced, never changed in place: commits share it
	for _, tp := range m.cg.target {
		if !own[tp] {
			added = append(added, tp)
			owned = append(owned, tp)
		}
	}
	if !wire.Sorted(owned) {
		if len(added) == 0 {
			owned = slices.Clone(owned)
		}
		wire.SortPartitions(owned)
	}
	m.Owned = owned
	m.cg.hasTarget = false
	if len(added) > 0 {
		m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s epoch %d: %s", m.label(), m.Generation, m.env.Layout().PartList(m.Owned))
		m.abandonFetch()
		m.Phase = PhaseFetchingOffsets
		m.sendOffsetFetch(added)
	}
	m.cg.state = cgAcknowledging
	m.heartbeatNow()
}

// sendCommitBeforeRevoke is the auto-commit before revocation.
func (m *Member) sendCommitBeforeRevoke(offs map[wire.TopicPartition]int) {
	req := &wire.OffsetCommitRequest{MemberID: m.MemberID, Generation: m.Generation, InstanceID: m.Cfg.InstanceID, BeforeRevoke: true}
	for _, tp := range sortedKeys(offs) {
		req.Partitions = append(req.Partitions, tp)
		req.Offsets = append(req.Offsets, offs[tp])
	}
	m.cg.commitPkt = m.send(&wire.Packet{Type: wire.OffsetCommit, Summary: m.env.Layout().Offsets(req.Partitions, req.Offsets) + ", epoch " + strconv.Itoa(m.Generation) + ", " + m.MemberID + " (before revoking)", Body: req})
	m.cg.commitSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmRevokeCommit, Client: m.Client, Inc: m.Inc, Key: m.cg.commitSeq, Arg: 1})
}

// onCommitBeforeRevoke: the auto-commit before revocation is answered.
// CommitRequestManager.autoCommitSyncBeforeRevocationWithRetries retries
// a retriable error, and STALE_MEMBER_EPOCH while the member has an epoch,
// with the latest positions and epoch, after the retry backoff
// (ConsumerRetryBackoff, as for heartbeats), until the deadline; any other error,
// or the deadline, ends it, and the revocation goes on.
func (m *Member) onCommitBeforeRevoke(p *wire.Packet) {
	if !m.cg.commitWait || p.Req != m.cg.commitPkt {
		return
	}
	m.cg.commitPkt = nil
	if p.Error == wire.StaleMemberEpoch && m.Generation > 0 && m.env.Now() < m.cg.commitDeadline {
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: auto-commit before revoking refused with %s: retrying with the latest positions and epoch", m.label(), p.Error)
		m.cg.commitSeq++
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmRevokeCommit, Client: m.Client, Inc: m.Inc, Key: m.cg.commitSeq})
		return
	}
	m.cg.commitWait = false
	if p.Error != wire.None {
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: auto-commit before revoking refused with %s: revokes anyway", m.label(), p.Error)
	}
	m.cgRevokeStep()
}

// revokeCommitTimer: the auto-commit before revocation got no answer within
// request.timeout.ms (a retriable failure), or its retry backoff passed.
func (m *Member) revokeCommitTimer(seq int, timeout bool) {
	if !m.cg.commitWait || seq != m.cg.commitSeq || !m.cgActive() {
		return
	}
	if timeout {
		m.cg.commitPkt = nil
		if m.env.Now() >= m.cg.commitDeadline {
			m.cg.commitWait = false
			m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: auto-commit before revoking unanswered by the rebalance timeout: revokes anyway", m.label())
			m.cgRevokeStep()
			return
		}
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to the auto-commit before revoking within request.timeout.ms (%d): retrying", m.label(), m.Cfg.RequestTimeout)
		m.cg.commitSeq++
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmRevokeCommit, Client: m.Client, Inc: m.Inc, Key: m.cg.commitSeq})
		return
	}
	// requestAttempt.offsets = subscriptions.allConsumed(): the latest positions.
	m.sendCommitBeforeRevoke(m.fetchPositions())
}

// poll is the consumer protocol's work at the start of poll(): a member
// that left after a poll timeout rejoins (maybeRejoinStaleMember), and a
// revocation waiting for the application's listener runs it.
func (consumerClient) poll(m *Member) (handled, again bool) {
	if m.Phase == PhaseOut || m.cg.state == cgFencedState {
		why := "stale after the poll timeout: onPartitionsLost, nothing committed"
		if m.cg.state == cgFencedState {
			why = "fenced: onPartitionsLost, nothing committed"
		}
		m.cgLoseAll(why)
		m.cgJoin()
		return true, false
	}
	if m.cg.listenerWait {
		m.abandonFetch()
		offs := map[wire.TopicPartition]int{}
		all := m.processedPositions()
		for _, tp := range m.cg.revoked {
			if o, ok := all[tp]; ok {
				offs[tp] = o
			}
		}
		if m.commitNeeded(offs) {
			m.revokeOffs = offs
			m.commitSync(listOf(offs), contConsumerRevokeDone)
			return true, false
		}
		m.cgListenerDone()
		return true, true
	}
	return false, false
}

// cgListenerDone: onPartitionsRevoked returned; the reconciliation goes on.
func (m *Member) cgListenerDone() {
	m.cg.listenerWait = false
	if !m.cgActive() || m.cg.state != cgReconciling {
		return
	}
	m.cgRevoke()
	m.cgAssign()
}

// pollTimeout is ConsumerHeartbeatRequestManager.poll finding the poll
// timer expired: the member leaves (epoch -1, -2 if static) without
// revoking anything first, becomes STALE and loses its partitions
// (onPartitionsLost); it rejoins with epoch 0 at its next poll().
func (consumerClient) pollTimeout(m *Member, since int) {
	m.env.Trace().Eventf(trace.EvPollTimeout, m.Client, "%s: %d ticks without poll() (max.poll.interval.ms %d): the background thread leaves the group; the process goes on as a zombie",
		m.Client, m.env.Now()-since, m.Cfg.MaxPollInterval)
	m.sendLeave("poll timeout", false)
	m.cg.state = cgStale
	m.cg.hasTarget, m.cg.revoked, m.cg.commitWait, m.cg.listenerWait = false, nil, false, false
	if !m.cgHasListener() {
		// onPartitionsLost at once; with a listener, at the next poll().
		m.cgLoseAll("stale after the poll timeout: onPartitionsLost, nothing committed")
	}
	m.Phase = PhaseOut
}

// leave is close(): the leave heartbeat.
func (consumerClient) leave(m *Member) {
	m.sendLeave("close", true)
	m.cg.state = cgUnsubscribed
}

// requestFailed: a refused commit changes nothing in the membership; the
// heartbeat learns of fencing (CommitRequestManager fails the commit with
// STALE_MEMBER_EPOCH or UNKNOWN_MEMBER_ID and leaves the member alone).
func (consumerClient) requestFailed(*Member, wire.ErrorCode, bool) {}

// rebalancing: commits are refused in the client only before the member
// has an epoch (it is joining).
func (consumerClient) rebalancing(m *Member) bool { return m.cg.state == cgJoining }

// cgSettled: nothing left to reconcile or acknowledge.
func (m *Member) cgSettled() bool {
	return m.Phase == PhaseStable && !m.pendingFetch && !m.cg.hasTarget && !m.cg.commitWait && !m.cg.listenerWait &&
		m.cg.state == cgStable && !m.cg.now
}
