package client

// The consumer protocol's reconciliation, client side: Kafka's
// AbstractMembershipManager.maybeReconcile / revokeAndAssign (revoke what
// the new target drops, running onPartitionsRevoked on the application
// thread when there is a listener, then assign what it adds, then
// acknowledge with a heartbeat) and the commit before reconciling
// (CommitRequestManager's auto-commit before revoking: its request, answer
// and timers). The membership and its states are in consumer.go, the
// heartbeats in consumer_heartbeat.go.

import (
	"slices"

	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// maybeReconcile is AbstractMembershipManager.maybeReconcile(canCommit):
// one reconciliation at a time; commit what was consumed, revoke what the
// new assignment drops, then assign what it adds, then acknowledge with a
// heartbeat. canCommit: called from the application's poll()
// (ApplicationEventProcessor.process(PollEvent)) rather than from the
// background thread (AbstractMembershipManager.poll). Under auto-commit
// a reconciliation starts only from poll() (KAFKA-18641, Kafka 4.0.0): the
// commit before it then carries the positions at the end of the batch
// just processed (allConsumed), never records poll() returned and the
// application has not processed yet. In the other modes it starts at once
// in the background.
func (c *consumerMember) maybeReconcile(m *Member, canCommit bool) {
	if !c.hasTarget || c.commitWait || c.listenerWait || !c.active(m) {
		return
	}
	keep := map[wire.TopicPartition]bool{}
	for _, tp := range c.target {
		keep[tp] = true
	}
	var revoked []wire.TopicPartition
	for _, tp := range m.Owned {
		if !keep[tp] {
			revoked = append(revoked, tp)
		}
	}
	if len(revoked) == 0 && slices.Equal(m.Owned, c.target) {
		c.hasTarget = false
		return // nothing to do: the answer repeats the assignment in force
	}
	c.state = cgReconciling
	if c.autoCommit(m) && !canCommit {
		return // if (autoCommitEnabled && !canCommit) return;
	}
	c.revoked = revoked
	c.reconciling, c.recSeq = c.target, c.targetSeq
	// markPendingRevocationToPauseFetching (KAFKA-16460): the partitions
	// to revoke are not fetched from now on, and records of theirs a Fetch
	// in flight brings back are dropped (onFetchResponse), so their
	// positions stay where the commit below puts them.
	m.pendingRevocation = revoked
	// signalReconciliationStarted ->
	// CommitRequestManager.maybeAutoCommitSyncBeforeRebalance: under
	// auto-commit, before every reconciliation (one that only adds
	// partitions too), the positions consumed so far are committed
	// (subscriptions.allConsumed(); no request when there are none),
	// retried until the rebalance timeout (see onCommitBeforeReconcile);
	// the reconciliation goes on once it ends, whatever the outcome.
	if c.autoCommit(m) {
		if offs := m.fetchPositions(); len(offs) > 0 {
			c.commitWait = true
			c.commitDeadline = m.env.Now() + m.Cfg.MaxPollInterval
			c.sendCommitBeforeReconcile(m, offs)
			return
		}
	}
	c.revokeAndAssign(m)
}

// autoCommit: the application runs under enable.auto.commit=true
// (kgrepl's auto-commit mode without a transactional producer).
func (c *consumerMember) autoCommit(m *Member) bool {
	return m.Cfg.Commit == CommitAuto && m.prod.mode != ProducerTransactional
}

// revokeAndAssign is AbstractMembershipManager.revokeAndAssign: revoke
// (if anything goes), then assign.
func (c *consumerMember) revokeAndAssign(m *Member) {
	if len(c.revoked) == 0 {
		c.assign(m)
		return
	}
	c.revokeStep(m)
}

// revokeStep runs onPartitionsRevoked. ConsumerMembershipManager.invokeOnPartitionsRevokedCallback
// runs the user's rebalance listener on the application thread, so
// revocation waits for the application's next poll(); with no listener it
// completes at once in the background thread. kgrepl's commit-after
// application commits in its listener (as it does under the classic
// protocol), and its transactional application has one too (the EOS
// pattern: the transaction in hand is finished before partitions go; else a
// new owner could fetch the offsets before the TxnOffsetCommit arrives), so
// both wait for poll(); auto-commit and commit-before applications have no
// listener.
func (c *consumerMember) revokeStep(m *Member) {
	if c.hasListener(m) {
		c.listenerWait = true
		m.wakeUp()
		return
	}
	c.revoke(m)
	c.assign(m)
}

// revoke gives the revoked partitions up.
func (c *consumerMember) revoke(m *Member) {
	m.revoke(c.revoked)
	m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s revokes %s (epoch %d)", m.Label(), trace.Parts{L: m.env.Layout(), TPs: c.revoked}, m.Generation)
	c.revoked, m.pendingRevocation = nil, nil
	m.loop.abandonFetch()
}

// assign takes the target's new partitions and acknowledges: their
// offsets are fetched, and a heartbeat reports what the member owns now.
// The reconciliation is complete: under auto-commit the interval timer
// restarts from now (signalReconciliationCompleting ->
// CommitRequestManager.resetAutoCommitTimer), so the next interval
// commit goes an interval later, normally at the epoch the acknowledgement
// brings.
func (c *consumerMember) assign(m *Member) {
	added := m.assign(c.reconciling)
	// The member's assignment is now the target the reconciliation
	// started from (revokeAndAssign: currentAssignment = the resolved
	// assignment). A newer target that came meanwhile is still to
	// reconcile: the acknowledgement's heartbeat finds it and the member
	// goes back to RECONCILING (onHeartbeatRequestGenerated), where
	// taking it here as done kept a partition the new target revoked and
	// left the group waiting for it until the rebalance timeout.
	if c.recSeq == c.targetSeq {
		c.hasTarget = false
	}
	c.reconciling, c.revoked, m.pendingRevocation = nil, nil, nil
	if len(added) > 0 {
		m.env.Trace().Eventf(trace.EvAssigned, m.Client, "%s epoch %d: %s", m.Label(), m.Generation, trace.Parts{L: m.env.Layout(), TPs: m.Owned})
		m.loop.abandonFetch()
		m.Phase = PhaseFetchingOffsets
		// Every partition still initializing, not only the added ones:
		// an OffsetFetch in flight for earlier ones is replaced
		// (OffsetsRequestManager.initWithCommittedOffsetsIfNeeded).
		m.commits.fetchOffsets(m, m.unpositioned())
	}
	if c.autoCommit(m) {
		m.commits.resetAutoCommitTimer(m)
	}
	c.state = cgAcknowledging
	c.heartbeatNow(m)
}

// sendCommitBeforeReconcile is the auto-commit before reconciling. It is
// an auto-commit in flight (AutoCommitState.hasInflightCommit): the
// interval auto-commit waits for it.
func (c *consumerMember) sendCommitBeforeReconcile(m *Member, offs map[wire.TopicPartition]int) {
	epoch := c.commitEpoch(m)
	req := &wire.OffsetCommitRequest{MemberID: m.MemberID, Generation: epoch, InstanceID: m.Cfg.InstanceID, BeforeReconcile: true}
	for _, tp := range sortedKeys(offs) {
		req.Partitions = append(req.Partitions, tp)
		req.Offsets = append(req.Offsets, offs[tp])
	}
	m.commits.autoInFlight = true // each attempt's answer clears it; a retry sets it again
	c.commitPkt = m.send(&wire.Packet{Type: wire.OffsetCommit, Text: m.env.Trace().Textf("%s, epoch %d, %s (before reconciling)", trace.Positions{L: m.env.Layout(), TPs: req.Partitions, Offs: req.Offsets}, epoch, m.MemberID), Body: req})
	c.commitSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmRevokeCommit, Client: m.Client, Inc: m.Inc, Key: c.commitSeq, Arg: 1})
}

// onCommitBeforeReconcile: the auto-commit before reconciling is answered.
// CommitRequestManager.autoCommitSyncBeforeRebalanceWithRetries retries
// a retriable error, and STALE_MEMBER_EPOCH while the member has an epoch,
// with the latest positions and epoch, after the retry backoff
// (ConsumerRetryBackoff, as for heartbeats), until the deadline; any other
// error, or the deadline, ends it ("Auto-commit request before reconciling
// new assignment failed. Will proceed with the reconciliation anyway."). A
// member fenced, left or rejoined meanwhile has dropped the reconciliation
// (maybeAbortReconciliation).
func (c *consumerMember) onCommitBeforeReconcile(m *Member, p *wire.Packet) {
	if p.Req != c.commitPkt {
		return
	}
	c.commitPkt = nil
	if c.commitWait && c.active(m) && p.Error == wire.StaleMemberEpoch && c.commitEpoch(m) > 0 && m.env.Now() < c.commitDeadline {
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: auto-commit before reconciling refused with %s: retrying with the latest positions and epoch", m.Label(), p.Error)
		c.commitSeq++
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmRevokeCommit, Client: m.Client, Inc: m.Inc, Key: c.commitSeq})
		return
	}
	defer m.commits.autoDone(m) // after the reconciliation went on
	if !c.commitWait {
		return // the reconciliation was dropped meanwhile
	}
	c.commitWait = false
	if !c.active(m) || c.state != cgReconciling {
		return
	}
	if p.Error != wire.None {
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: auto-commit before reconciling refused with %s: reconciles anyway", m.Label(), p.Error)
	}
	c.revokeAndAssign(m)
}

// revokeCommitTimer: the auto-commit before reconciling got no answer
// within request.timeout.ms (a retriable failure), or its retry backoff
// passed.
func (c *consumerMember) revokeCommitTimer(m *Member, seq int, timeout bool) {
	if seq != c.commitSeq {
		return
	}
	if !c.commitWait || !c.active(m) {
		// The reconciliation was dropped meanwhile: the attempt's request
		// timeout still ends the auto-commit in flight.
		if timeout && c.commitPkt != nil {
			c.commitPkt = nil
			m.commits.autoDone(m)
		}
		return
	}
	if timeout {
		c.commitPkt = nil
		if m.env.Now() >= c.commitDeadline {
			c.commitWait = false
			m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: auto-commit before reconciling unanswered by the rebalance timeout: reconciles anyway", m.Label())
			c.revokeAndAssign(m)
			m.commits.autoDone(m)
			return
		}
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to the auto-commit before reconciling within request.timeout.ms (%d): retrying", m.Label(), m.Cfg.RequestTimeout)
		c.commitSeq++
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmRevokeCommit, Client: m.Client, Inc: m.Inc, Key: c.commitSeq})
		return
	}
	// requestAttempt.offsets = subscriptions.allConsumed(): the latest positions.
	c.sendCommitBeforeReconcile(m, m.fetchPositions())
}
