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
//
// This file holds the member states, consumerMember, joining, the answers'
// and timers' dispatch, fencing, poll() and leaving, and the Member's
// protocol hooks; the heartbeats are in consumer_heartbeat.go, the
// reconciliation and the commit before it in consumer_reconcile.go.

import (
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

// consumerMember is the consumer protocol's membership: Kafka's
// ConsumerMembershipManager (the member state, reconciliation) and
// ConsumerHeartbeatRequestManager (the heartbeat in flight, its timers,
// the fields last sent). The member id and member epoch are the
// process's (Member.MemberID, Member.Generation). Slices are replaced,
// never changed in place, so a copy of the struct is a clone (but for its
// packets: CloneAll).
type consumerMember struct {
	state    string       // MemberState: cgJoining, cgStable, ...
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
	// targetSeq numbers the targets the answers brought; reconciling is
	// the target the reconciliation in progress works to (recSeq its
	// number): AbstractMembershipManager.maybeReconcile's resolved
	// assignment, which a target arriving meanwhile does not change (the
	// member reconciles to that one next).
	targetSeq, recSeq int
	reconciling       []wire.TopicPartition
	// A reconciliation in progress: it waits for the auto-commit before
	// reconciling (commitWait), then revoked waits for the application's
	// onPartitionsRevoked at its next poll (listenerWait). The revoked
	// partitions are paused from its start (pendingRevocation).
	revoked      []wire.TopicPartition
	commitWait   bool
	listenerWait bool
	// The auto-commit before reconciling in flight (commitPkt, attempt
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

// protocol: the consumer protocol.
func (c *consumerMember) protocol() wire.GroupProtocol { return wire.Consumer }

// memberEpochs: commits and OffsetFetch carry the member epoch.
func (c *consumerMember) memberEpochs() bool { return true }

// join: the member id, then transitionToJoining.
func (c *consumerMember) join(m *Member) {
	if m.MemberID == "" {
		m.MemberID = m.env.IssueMemberID(m.Client)
	}
	c.transitionToJoining(m)
}

// transitionToJoining: epoch 0, a full heartbeat at once.
func (c *consumerMember) transitionToJoining(m *Member) {
	m.Generation = 0
	m.Phase = PhaseJoining
	c.state = cgJoining
	c.ownedSent, c.sentReset = false, false
	c.hasTarget, c.revoked, c.commitWait, c.listenerWait = false, nil, false, false
	c.inFlight = nil // an answer to an earlier heartbeat no longer counts
	c.sendHeartbeat(m)
}

// receive handles the protocol's answers: the heartbeat's, and the
// auto-commit's before reconciling.
func (c *consumerMember) receive(m *Member, p *wire.Packet) {
	switch p.Type {
	case wire.ConsumerGroupHeartbeat:
		c.onHeartbeatResponse(m, p)
	case wire.OffsetCommit:
		c.onCommitBeforeReconcile(m, p)
	}
}

// fire is a heartbeat timer or a timer of the auto-commit before reconciling.
func (c *consumerMember) fire(m *Member, t wire.Timer) {
	switch t.Kind {
	case tmHeartbeat:
		c.heartbeatTimer(m, t.Key, t.Arg == 1)
	case tmRevokeCommit:
		c.revokeCommitTimer(m, t.Key, t.Arg == 1)
	}
}

// transitionToFenced is AbstractMembershipManager.transitionToFenced: the partitions
// are lost (onPartitionsLost, nothing committed) and then the member
// rejoins with epoch 0 and the same member id. The user's onPartitionsLost
// runs on the application thread, so an application with a rebalance
// listener (commit-after, transactional: see revokeStep) loses its
// partitions and rejoins at its next poll(); a transaction it finishes
// before then still names them and is refused. Without a listener it all
// happens at once in the background thread.
func (c *consumerMember) transitionToFenced(m *Member, code wire.ErrorCode) {
	m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: ConsumerGroupHeartbeat answered %s: fenced at epoch %d; rejoins with epoch 0", m.Label(), code, m.Generation)
	c.hasTarget, c.revoked, c.commitWait, c.listenerWait = false, nil, false, false
	if c.hasListener(m) {
		c.state = cgFencedState
		c.hbSeq++ // no heartbeats until it rejoins
		c.ivSeq++
		c.due = false
		m.wakeUp()
		return
	}
	c.loseAll(m, "fenced: onPartitionsLost, nothing committed")
	c.transitionToJoining(m)
}

// hasListener: the application has a rebalance listener whose callbacks
// run on its thread, inside poll() (see revokeStep).
func (c *consumerMember) hasListener(m *Member) bool {
	return m.Cfg.Commit == CommitAfter || m.prod.mode == ProducerTransactional
}

// loseAll drops every partition without committing.
func (c *consumerMember) loseAll(m *Member, why string) {
	m.loop.abandonFetch()
	m.subscription.lose(m, why)
	m.commits.pendingFetch = false
	if m.Phase == PhaseFetchingOffsets {
		m.Phase = PhaseStable
	}
}

// poll is the consumer protocol's work at the start of poll(): a member
// that left after a poll timeout rejoins (maybeRejoinStaleMember), a
// revocation waiting for the application's listener runs it, an
// OffsetFetch whose error poll() threw is asked again, and under
// auto-commit a reconciliation waiting for poll() starts
// (maybeReconcile(true), before the interval auto-commit and the Fetch).
// A member idle in poll() starts it as soon as the heartbeat's answer
// arrives: kgrepl's application calls poll() with a timeout under a tick
// (Kafka's application thread notices at its next poll turn, within a
// heartbeat interval, two ticks).
func (c *consumerMember) poll(m *Member) (handled, again bool) {
	if m.Phase == PhaseOut || c.state == cgFencedState {
		why := "stale after the poll timeout: onPartitionsLost, nothing committed"
		if c.state == cgFencedState {
			why = "fenced: onPartitionsLost, nothing committed"
		}
		c.loseAll(m, why)
		c.transitionToJoining(m)
		return true, false
	}
	if c.listenerWait {
		m.loop.abandonFetch()
		offs := map[wire.TopicPartition]int{}
		all := m.processedPositions()
		for _, tp := range c.revoked {
			if o, ok := all[tp]; ok {
				offs[tp] = o
			}
		}
		if m.commits.needed(m, offs) {
			m.commits.commitSync(m, listOf(offs), contRevokeDone)
			return true, false
		}
		c.listenerDone(m)
		return true, true
	}
	m.commits.maybeFetchAgain(m)
	c.maybeReconcile(m, true)
	return false, false
}

// listenerDone: onPartitionsRevoked returned; the reconciliation goes on.
func (c *consumerMember) listenerDone(m *Member) {
	c.listenerWait = false
	if !c.active(m) || c.state != cgReconciling {
		return
	}
	c.revoke(m)
	c.assign(m)
}

// pollTimeout is ConsumerHeartbeatRequestManager.poll finding the poll
// timer expired: the member leaves (epoch -1, -2 if static) without
// revoking anything first, becomes STALE and loses its partitions
// (onPartitionsLost); it rejoins with epoch 0 at its next poll().
func (c *consumerMember) pollTimeout(m *Member, since int) {
	m.env.Trace().Eventf(trace.EvPollTimeout, m.Client, "%s: %d ticks without poll() (max.poll.interval.ms %d): the background thread leaves the group; the process goes on as a zombie",
		m.Client, m.env.Now()-since, m.Cfg.MaxPollInterval)
	c.sendLeave(m, "poll timeout", false)
	c.state = cgStale
	c.hasTarget, c.revoked, c.commitWait, c.listenerWait = false, nil, false, false
	m.pendingRevocation = nil
	if !c.hasListener(m) {
		// onPartitionsLost at once; with a listener, at the next poll().
		c.loseAll(m, "stale after the poll timeout: onPartitionsLost, nothing committed")
	}
	m.Phase = PhaseOut
}

// leave is close(): the leave heartbeat.
func (c *consumerMember) leave(m *Member) {
	c.sendLeave(m, "close", true)
	c.state = cgUnsubscribed
}

// onCommitRefused: a refused commit changes nothing in the membership; the
// heartbeat learns of fencing (CommitRequestManager fails the commit with
// STALE_MEMBER_EPOCH or UNKNOWN_MEMBER_ID and leaves the member alone).
func (c *consumerMember) onCommitRefused(*Member, wire.ErrorCode, bool) {}

// commitRefusedLocally: never. The AsyncKafkaConsumer has no "rebalance in
// progress" check (commitSync, l.1488): a member out of the group, or
// rejoining, sends its commit without an epoch (commitEpoch), and the
// coordinator decides (ConsumerGroup.validateOffsetCommit: accepted when
// the group is empty, else UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH,
// CommitFailedException either way).
func (c *consumerMember) commitRefusedLocally(*Member) string { return "" }

// autoCommits: the interval auto-commit goes whenever the member has
// positioned partitions (none once it lost them), in the group or not.
func (c *consumerMember) autoCommits(*Member) bool { return true }

// commitEpoch is the member epoch OffsetCommit and OffsetFetch carry:
// CommitRequestManager.onMemberEpochUpdated keeps an epoch only while it
// is above 0 (AbstractMembershipManager.updateMemberEpoch), so a member
// joining (0), out of the group (left, stale, fenced) or stopped sends
// none: -1, the field's default (OffsetCommitRequestState.toUnsentRequest).
func (c *consumerMember) commitEpoch(m *Member) int {
	switch c.state {
	case cgReconciling, cgAcknowledging, cgStable:
		if m.Generation > 0 {
			return m.Generation
		}
	}
	return -1
}

// settled: nothing left to reconcile or acknowledge.
func (c *consumerMember) settled(m *Member) bool {
	return m.Phase == PhaseStable && !m.commits.pendingFetch && !c.hasTarget && !c.commitWait && !c.listenerWait &&
		c.state == cgStable && !c.now
}

// rejoinNeeded: the member rejoins by itself (transitionToJoining), never
// at a later poll's request.
func (c *consumerMember) rejoinNeeded() bool { return false }

// commitException: CommitRequestManager.commitSyncExceptionForError throws
// CommitFailedException for every refusal (STALE_MEMBER_EPOCH included);
// an auto-commit's refusal is logged, nothing thrown.
func (c *consumerMember) commitException(*Member, wire.ErrorCode, bool) (sync, async string) {
	return "CommitFailedException", ""
}

// revokeCommitted: onPartitionsRevoked returned; the reconciliation goes on.
func (c *consumerMember) revokeCommitted(m *Member) { c.listenerDone(m) }

// heartbeats: a consumer-protocol member's heartbeats are packets.
func (c *consumerMember) heartbeats(*Member) bool { return false }

// startStable: STABLE, the assignment acknowledged, heartbeating every
// interval.
func (c *consumerMember) startStable(m *Member, _ string, interval int) {
	c.state = cgStable
	c.sentOwned, c.ownedSent = store.Copy(m.Owned), true
	c.interval = max(interval, 1)
	c.armHeartbeat(m, c.interval)
}
