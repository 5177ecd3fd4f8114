package client

// The consumer protocol's heartbeats, client side: Kafka's
// ConsumerHeartbeatRequestManager and HeartbeatRequestState (a heartbeat
// every interval, one at a time, and at once when joining, acknowledging
// or leaving; full or partial requests; the retry backoff after a failed
// attempt; the leave heartbeat) and the answers' handling
// (onHeartbeatResponse: the new target, fencing, fatal errors). The
// membership and its states are in consumer.go, the reconciliation in
// consumer_reconcile.go.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// sendHeartbeat is ConsumerHeartbeatRequestManager.makeHeartbeatRequest:
// member id, epoch and instance id always; when joining, or after a failed
// heartbeat forgot the sent fields, every field; otherwise the owned
// partitions only when they changed since the last heartbeat (the
// acknowledgement of a reconciliation). The subscription and rebalance
// timeout never change in kgrepl after joining.
func (c *consumerMember) sendHeartbeat(m *Member) {
	// The background thread polls its request managers in order,
	// CommitRequestManager before ConsumerHeartbeatRequestManager
	// (RequestManagers' list, ConsumerNetworkThread.runOnce), every
	// iteration: an interval auto-commit due when a heartbeat goes
	// (CommitRequestManager.poll's maybeAutoCommitAsync) goes out first,
	// with the epoch the member has, and the coordinator reads it before
	// the heartbeat that may move the epoch on. Sent after it, the commit
	// met the new epoch and was refused (STALE_MEMBER_EPOCH) every time the
	// two met: with both timers at 5 s by default, a rolling restart under
	// the consumer protocol committed nothing and every moved partition was
	// read again. This holds for every heartbeat, the interval's, one sent
	// at once (heartbeatNow: joining, acknowledging) and one sent on an
	// answer because it came due meanwhile. kgrepl's auto-commit timer runs
	// only while the application is in poll() (Kafka's is advanced by the
	// application's poll, PollEvent's updateAutoCommitTimer).
	if m.loop.inPoll() {
		m.commits.maybeAutoCommit(m)
	}
	full := c.state == cgJoining || c.sentReset
	retry := c.state != cgJoining && c.sentReset
	c.sentReset = false
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
	if full || !c.ownedSent || !slices.Equal(c.sentOwned, m.Owned) {
		r.Owned, r.OwnedSent = store.Copy(m.Owned), true
		c.sentOwned, c.ownedSent = r.Owned, true
		s = append(s, "owns "+m.env.Layout().PartList(m.Owned))
	}
	// "epoch 2" (every heartbeat), then the fields sent, if any
	summary := m.env.Trace().HeartbeatRequest(m.Generation, strings.Join(s, ", "))
	c.now = false
	// AbstractMembershipManager.onHeartbeatRequestGenerated: the
	// acknowledgement is made when the heartbeat goes, not when answered.
	if c.state == cgAcknowledging {
		c.state = cgStable
		if c.hasTarget && !slices.Equal(wire.SortedCopy(c.target), wire.SortedCopy(m.Owned)) {
			c.state = cgReconciling
		}
	}
	c.inFlight = m.send(&wire.Packet{Type: wire.ConsumerGroupHeartbeat, Text: summary, Body: r})
	c.hbSeq++
	// No answer within request.timeout.ms: a failed attempt (heartbeatTimer).
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmHeartbeat, Client: m.Client, Inc: m.Inc, Key: c.hbSeq, Arg: 1})
	// AbstractHeartbeatRequestManager.makeHeartbeatRequest: the interval
	// timer restarts when a heartbeat is sent (HeartbeatRequestState.resetTimer),
	// not when it is answered, so heartbeats go every interval, not every
	// interval plus the round trip. Before the first answer the client has
	// no interval from the coordinator: Kafka runs its own default until
	// the answer's interval replaces it (updateHeartbeatIntervalMs resets
	// the timer then); kgrepl arms the timer at that answer.
	c.due = false
	if c.interval > 0 {
		c.armHeartbeat(m, c.interval)
	}
}

// armHeartbeat (re)starts the interval timer: the next heartbeat is due
// after the given ticks.
func (c *consumerMember) armHeartbeat(m *Member, after int) {
	c.ivSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + after, Kind: tmHeartbeat, Client: m.Client, Inc: m.Inc, Key: c.ivSeq})
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
func (c *consumerMember) heartbeatNow(m *Member) {
	if c.inFlight != nil {
		c.now = true
		return
	}
	c.sendHeartbeat(m)
}

// sendLeave is the leave heartbeat: epoch -1, or -2 for a static member
// (AbstractMembershipManager.leaveGroupEpoch). Its answer is not waited for.
// transitionToSendingLeaveGroup clears the local assignment first, so the
// request carries the owned partitions as an empty list (they changed since
// the last heartbeat; kgrepl compares partitions, as in sendHeartbeat);
// close() also unsubscribed (leaveGroup: subscriptions.unsubscribe), so its
// leave carries an empty subscription too. A leave after the poll timeout
// keeps the subscription, which goes unsent.
func (c *consumerMember) sendLeave(m *Member, why string, unsubscribe bool) {
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
	if !c.ownedSent || len(c.sentOwned) > 0 {
		r.Owned, r.OwnedSent = []wire.TopicPartition{}, true
		c.sentOwned, c.ownedSent = r.Owned, true
		summary += ", owns {}"
	}
	m.send(&wire.Packet{Type: wire.ConsumerGroupHeartbeat, Summary: summary, Body: r})
	c.inFlight, c.due = nil, false
	c.hbSeq++ // no more heartbeats until it joins again
	c.ivSeq++
}

// heartbeatTimer: the interval passed, or the backoff after a failed
// attempt (send the next heartbeat, or, with one in flight, send it when
// that one is answered), or the one in flight got no answer within
// request.timeout.ms: as AbstractHeartbeatRequestManager.onFailure does,
// the sent fields are forgotten, the next heartbeat is a full one, and it
// goes after the retry backoff (ConsumerRetryBackoff), as after a retriable
// error answer.
func (c *consumerMember) heartbeatTimer(m *Member, seq int, timeout bool) {
	if !c.active(m) {
		return
	}
	if timeout {
		if seq != c.hbSeq || c.inFlight == nil {
			return
		}
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to ConsumerGroupHeartbeat within request.timeout.ms (%d): a full one after the retry backoff", m.Label(), m.Cfg.RequestTimeout)
		c.inFlight = nil
		c.onFailedAttempt(m)
		return
	}
	if seq != c.ivSeq {
		return
	}
	if c.inFlight != nil {
		c.due = true
		return
	}
	c.sendHeartbeat(m)
}

// onFailedAttempt is HeartbeatRequestState.onFailedAttempt with
// resetHeartbeatState: the sent fields are forgotten (the next request is
// full) and the next heartbeat goes after the retry backoff.
func (c *consumerMember) onFailedAttempt(m *Member) {
	c.sentReset = true
	c.due = false
	c.armHeartbeat(m, ConsumerRetryBackoff)
}

// active: the member heartbeats (it is joining or in the group).
func (c *consumerMember) active(m *Member) bool {
	switch c.state {
	case cgJoining, cgReconciling, cgAcknowledging, cgStable:
		return m.Alive
	}
	return false
}

// onHeartbeatResponse handles the heartbeat's answers
// (ConsumerHeartbeatRequestManager.onResponse, and the membership manager's
// onHeartbeatSuccess).
func (c *consumerMember) onHeartbeatResponse(m *Member, p *wire.Packet) {
	if p.Req != c.inFlight || !c.active(m) {
		return // a leave's answer, or one to a heartbeat since replaced
	}
	c.inFlight = nil
	switch p.Error {
	case wire.None:
	case wire.FencedMemberEpoch, wire.UnknownMemberID:
		c.transitionToFenced(m, p.Error)
		return
	default:
		// AbstractHeartbeatRequestManager.onErrorResponse and
		// ConsumerHeartbeatRequestManager.handleSpecificError: fatal
		// (handleFatalFailure): UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID,
		// GROUP_ID_NOT_FOUND, UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED,
		// and any error it does not expect (its default case). The member
		// stops heartbeating, poll() throws and the application stops.
		// Kafka retries only the coordinator's errors (not available, not
		// the coordinator, loading), which kgrepl's single broker never
		// gives.
		m.fatal(p.Error.String() + " on ConsumerGroupHeartbeat")
		return
	}
	r := p.Body.(*wire.ConsumerGroupHeartbeatResponse)
	m.Generation = r.MemberEpoch
	if c.state == cgJoining {
		c.state = cgStable
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
	if interval != c.interval {
		c.interval = interval
		c.due = false
		c.armHeartbeat(m, interval)
	}
	if r.HasAssignment {
		c.target, c.hasTarget = store.Copy(r.Assignment), true
		c.targetSeq++
		wire.SortPartitions(c.target)
	}
	// The background thread's AbstractMembershipManager.poll:
	// maybeReconcile(false). Under auto-commit it only marks the member
	// RECONCILING; the application's next poll() starts it.
	c.maybeReconcile(m, false)
	if (c.now || c.due) && c.inFlight == nil {
		c.sendHeartbeat(m)
	}
}
