package client

import (
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Committing offsets and fetching the committed ones: Kafka's
// ConsumerCoordinator (commitOffsetsSync, maybeAutoCommitOffsetsAsync,
// fetchCommittedOffsets) and, under the consumer protocol,
// CommitRequestManager, which kgrepl's two protocols share but for what
// the membership says (commits carry the generation or the member
// epoch; which exception a refusal throws).

// commits is a process's commit state: the auto-commit's schedule, the
// commitSync in flight, the OffsetFetch in flight.
type commits struct {
	nextAuto  int        // when the auto-commit is due next (auto.commit.interval.ms)
	autoArmed int        // the nextAuto a timer is set for
	seq       int        // numbers commitSync attempts, so a stale retry timer does nothing
	pending   commitList // what the commitSync in flight commits
	// pendingFetch: an OffsetFetch to retry after UNSTABLE_OFFSET_COMMIT
	// (or, consumer, a stale member epoch).
	pendingFetch   bool
	offsetFetchSeq int // numbers the OffsetFetch requests, for their request timeout
}

// fire is one of the commits' timers firing: an OffsetFetch to ask
// again (its retry backoff, or its request timeout), a commitSync to send
// again, the auto-commit deadline of a member waiting in poll().
func (cm *commits) fire(m *Member, t wire.Timer) {
	switch t.Kind {
	case tmOffsetFetchRetry:
		if m.Phase == PhaseFetchingOffsets && cm.pendingFetch {
			cm.fetchOffsets(m, t.Partitions)
		}
	case tmOffsetFetchTimeout:
		if m.Phase == PhaseFetchingOffsets && !cm.pendingFetch && cm.offsetFetchSeq == t.Key {
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to OffsetFetch within request.timeout.ms (%d): asking again", m.Label(), m.Cfg.RequestTimeout)
			cm.fetchOffsets(m, t.Partitions)
		}
	case tmCommitRetry:
		cm.retry(m, t.Key)
	case tmAutoCommit:
		if cm.nextAuto == t.Key && m.loop.inPoll() {
			cm.maybeAutoCommit(m)
		}
	}
}

func (cm *commits) fetchOffsets(m *Member, tps []wire.TopicPartition) {
	cm.pendingFetch = false
	r := &wire.OffsetFetchRequest{Partitions: append([]wire.TopicPartition{}, tps...)}
	if m.group.memberEpochs() {
		// The AsyncKafkaConsumer's OffsetFetch carries the member id and
		// epoch (CommitRequestManager.OffsetFetchRequestState, v9+).
		r.MemberID, r.MemberEpoch, r.HasMember = m.MemberID, m.Generation, true
	}
	m.send(&wire.Packet{Type: wire.OffsetFetch, Summary: m.env.Layout().PartList(tps), Body: r})
	cm.offsetFetchSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmOffsetFetchTimeout, Client: m.Client, Inc: m.Inc, Key: cm.offsetFetchSeq, Partitions: append([]wire.TopicPartition{}, tps...)})
}

func (cm *commits) onOffsetFetchResponse(m *Member, p *wire.Packet) {
	if m.Phase != PhaseFetchingOffsets {
		return
	}
	r := p.Body.(*wire.OffsetFetchResponse)
	if p.Error == wire.UnstableOffsetCommit {
		// A transaction is still committing offsets for one of these: ask again.
		cm.pendingFetch = true
		m.env.Trace().Eventf(trace.EvUnstableOffset, m.Client, "%s: OffsetFetch answered UNSTABLE_OFFSET_COMMIT, asking again in %d", m.Client, m.Cfg.RetryBackoff)
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmOffsetFetchRetry, Client: m.Client, Inc: m.Inc, Partitions: r.Partitions})
		return
	}
	if p.Error == wire.StaleMemberEpoch || p.Error == wire.UnknownMemberID {
		// CommitRequestManager.OffsetFetchRequestState fails the fetch
		// without a retry; OffsetsRequestManager keeps the error for the
		// next poll() to throw (cachedUpdatePositionsException), and the
		// partitions, still initializing, are fetched again after that.
		// kgrepl asks again after the retry backoff (ConsumerRetryBackoff), by
		// when the member normally knows its new epoch from its heartbeat.
		cm.pendingFetch = true
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: OffsetFetch answered %s, asking again", m.Label(), p.Error)
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmOffsetFetchRetry, Client: m.Client, Inc: m.Inc, Partitions: r.Partitions})
		return
	}
	for i, tp := range r.Partitions {
		off := r.Offsets[i]
		if off < 0 {
			off = 0 // auto.offset.reset=earliest
		}
		if !m.owns(tp) {
			continue
		}
		m.positions.set(tp, off)
		m.processed.set(tp, off)
		m.committed.set(tp, r.Offsets[i])
	}
	m.Phase = PhaseStable
	// A long poll already waiting at the broker does not name the new
	// partitions: ask again with them (the fetcher adds them next round).
	m.loop.abandonFetch()
}

// maybeAutoCommit is the auto-commit inside poll(): when the interval has
// passed, commit the positions of every positioned partition (async),
// changed or not, as ConsumerCoordinator.maybeAutoCommitOffsetsAsync does
// with subscriptions.allConsumed(); with nothing positioned no request goes
// out (sendOffsetCommitRequest returns at once on empty offsets). A member
// waiting in a long poll wakes for the auto-commit deadline
// (ConsumerCoordinator.timeToNextPoll), so a timer stands for that.
func (cm *commits) maybeAutoCommit(m *Member) {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional || !m.InGroup() || m.group.rebalancing(m) {
		return
	}
	if m.env.Now() >= cm.nextAuto {
		req := m.env.NewCommitRequest()
		l := m.fetchPositionList(req.Offsets)
		if req.Partitions, req.Slots, req.Offsets = l.tps, l.slots, l.offs; len(req.Partitions) > 0 {
			req.Auto = wire.AutoInterval
			cm.send(m, req)
		} else {
			m.env.UnuseCommitRequest(req)
		}
		cm.nextAuto = m.env.Now() + m.Cfg.AutoCommitInterval
	}
	if cm.autoArmed != cm.nextAuto && m.anyPositioned() {
		cm.autoArmed = cm.nextAuto
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: cm.nextAuto, Kind: tmAutoCommit, Client: m.Client, Inc: m.Inc, Key: cm.nextAuto})
	}
}

// positions is what a commit on revocation or close commits: the
// processed positions for commit-after, the fetch positions for auto.
func (cm *commits) positions(m *Member) map[wire.TopicPartition]int {
	if m.Cfg.Commit == CommitAuto {
		return m.fetchPositions()
	}
	return m.processedPositions()
}

func (cm *commits) needed(m *Member, offs map[wire.TopicPartition]int) bool {
	if m.Cfg.Commit == CommitBefore || m.prod.mode == ProducerTransactional {
		return false
	}
	for tp, o := range offs {
		if c, ok := m.committed.get(tp); !ok || c != o {
			return true
		}
	}
	return false
}

// commitSync sends an OffsetCommit of offs (kept in pending) and
// blocks the loop until it is answered. An attempt with no answer by the
// round trip plus retry.backoff.ms is sent again (the coordinator applies
// it idempotently).
func (cm *commits) commitSync(m *Member, offs commitList, then cont) {
	if len(offs.tps) == 0 {
		m.loop.resume(m, then)
		return
	}
	m.loop.state = LoopCommitting
	m.loop.afterCommit = then
	cm.pending = offs
	cm.sendSync(m)
}

// refusedLocally is ConsumerCoordinator.sendOffsetCommitRequest
// finding no stable generation (AbstractCoordinator.generationIfStable is
// null): the commit fails in the client and no request goes out. During
// the member's own rebalance it is RebalanceInProgressException; after the
// generation was reset (AbstractCoordinator.maybeLeaveGroup ->
// resetGenerationOnLeaveGroup on a poll timeout, or
// resetGenerationOnResponseError after UNKNOWN_MEMBER_ID or
// ILLEGAL_GENERATION) it is CommitFailedException. It reports whether the
// commit was refused (the loop has then moved on).
func (cm *commits) refusedLocally(m *Member, then cont) bool {
	var why string
	switch {
	case m.group.rebalancing(m):
		why = "commitSync during its own rebalance: RebalanceInProgressException, nothing sent"
	case m.Phase == PhaseOut || m.group.generationReset():
		why = "commitSync while not part of an active group (its generation was reset): CommitFailedException, nothing sent"
	default:
		return false
	}
	m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: %s", m.Label(), why)
	m.loop.afterCommit = then
	cm.pending = commitList{}
	cm.seq++ // no retry
	m.loop.commitThrew(m)
	then, m.loop.afterCommit = m.loop.afterCommit, contNone
	m.loop.resume(m, then)
	return true
}

func (cm *commits) sendSync(m *Member) {
	if cm.refusedLocally(m, m.loop.afterCommit) {
		return
	}
	cm.seq++
	cm.sendList(m, cm.pending, true, cm.syncAuto(m))
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + 2 + m.Cfg.RetryBackoff, Kind: tmCommitRetry, Client: m.Client, Inc: m.Inc, Key: cm.seq})
}

// retry resends a commitSync that got no answer.
func (cm *commits) retry(m *Member, seq int) {
	if m.Alive && m.loop.state == LoopCommitting && cm.seq == seq {
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to OffsetCommit, sending it again", m.Label())
		cm.sendSync(m)
	}
}

// sendList sends an OffsetCommit of l; the request keeps its
// partitions and slots, and copies the offsets into its own array (from
// the free list).
func (cm *commits) sendList(m *Member, l commitList, sync bool, auto wire.AutoCommit) {
	req := m.env.NewCommitRequest()
	req.Sync, req.Auto, req.Partitions, req.Slots = sync, auto, l.tps, l.slots
	req.Offsets = append(req.Offsets, l.offs...)
	cm.send(m, req)
}

// send fills in the member's side of an OffsetCommit whose
// partitions (in partition order), slots (hints, or nil) and offsets are
// set, and sends it; the request keeps its slices.
func (cm *commits) send(m *Member, req *wire.OffsetCommitRequest) {
	req.MemberID, req.Generation, req.InstanceID = m.MemberID, m.Generation, m.Cfg.InstanceID
	// "o0@3 o1@5, gen 2, C1-1": every commit writes it
	text := m.env.Trace().CommitRequest(req.Partitions, req.Slots, req.Offsets, m.group.memberEpochs(), m.Generation, wire.OrDash(m.MemberID))
	p := m.env.Packet()
	p.Type, p.Text, p.Body = wire.OffsetCommit, text, req
	m.send(p)
}

func (cm *commits) onCommitResponse(m *Member, p *wire.Packet) {
	r := p.Body.(*wire.OffsetCommitResponse)
	if p.Error == wire.None {
		at := 0
		for i, tp := range r.Partitions {
			m.committed.setSlot(tp, m.committed.slotOf(tp, topo.SlotAt(r.Slots, i)), r.Offsets[i], &at)
		}
	}
	req := p.Req.Body.(*wire.OffsetCommitRequest)
	if req.BeforeRevoke {
		m.group.receive(m, p) // the consumer protocol's commit before revoking
		return
	}
	if p.Error != wire.None {
		// Taken before onCommitRefused resets the generation: the response
		// handler compares the generation it sent with the member's at the
		// time the answer arrives.
		unchanged := cm.unchanged(m, req)
		what, thrown := cm.refusal(m, req.Auto, p.Error, unchanged)
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: %s", m.Label(), what)
		m.group.onCommitRefused(m, p.Error, unchanged)
		if thrown {
			m.loop.commitThrew(m)
		}
	}
	if r.Sync && m.loop.state == LoopCommitting {
		then := m.loop.afterCommit
		m.loop.afterCommit, cm.pending = contNone, commitList{}
		cm.seq++ // no retry of an answered commit
		m.loop.resume(m, then)
	}
}

// syncAuto: a blocking commit under auto-commit is the client's own
// (onJoinPrepare before a rejoin, or close()), not the application's.
func (cm *commits) syncAuto(m *Member) wire.AutoCommit {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional {
		return wire.AutoNone
	}
	switch m.loop.afterCommit {
	case contIdle:
		return wire.AutoRejoin
	case contCloseDone:
		return wire.AutoClose
	}
	return wire.AutoNone
}

// refusal says what the client does with an OffsetCommit the
// coordinator refused with code (auto says which commit it was; unchanged
// is unchanged), and whether the application sees an exception. Only
// the application's commitSync throws. The client's own
// auto-commits log the failure and go on: ConsumerCoordinator's
// autoCommitOffsetsAsync callback ("Asynchronous auto-commit of offsets ...
// failed", a warning; the consumer protocol's CommitRequestManager
// autoCommitCallback alike), onJoinPrepare ("... Will continue to join
// group", an error) and maybeAutoCommitOffsetsSync in close() ("consistent
// with async auto-commit failures, we do not propagate the exception"; the
// consumer protocol's AsyncKafkaConsumer close alike). Either way the
// response handler has already reset the generation or asked for a rejoin
// (onCommitRefused). kgrepl's errors here are all non-retriable, so no
// auto-commit is retried after the backoff. kgrepl has no application
// commitAsync (whose callback gets the same exceptions commitSync throws).
//
// One refusal of an asynchronous auto-commit reaches the application: a
// classic client fenced by FENCED_INSTANCE_ID in the generation it sent
// (ConsumerCoordinator.doCommitOffsetsAsync sets asyncCommitFenced, and
// the next poll() throws FencedInstanceIdException from
// invokeCompletedOffsetCommitCallbacks). The membership says which
// (commitException).
func (cm *commits) refusal(m *Member, auto wire.AutoCommit, code wire.ErrorCode, unchanged bool) (string, bool) {
	sync, async := m.group.commitException(m, code, unchanged)
	if (auto == wire.AutoInterval || auto == wire.AutoRejoin) && async != "" {
		return "asynchronous auto-commit refused with " + code.String() + ": the next poll() throws " + async, false
	}
	switch auto {
	case wire.AutoInterval:
		return "asynchronous auto-commit refused with " + code.String() + ": logged as a warning, nothing thrown", false
	case wire.AutoRejoin:
		return "auto-commit before rejoining refused with " + code.String() + ": logged, the rejoin goes on", false
	case wire.AutoClose:
		return "auto-commit in close() refused with " + code.String() + ": logged as a warning, close() goes on", false
	}
	return "OffsetCommit refused with " + code.String() + ": " + sync, true
}

// unchanged: the member's generation and member id are still the
// ones the commit carried (CoordinatorResponseHandler.generationUnchanged).
func (cm *commits) unchanged(m *Member, req *wire.OffsetCommitRequest) bool {
	return req.Generation == m.Generation && req.MemberID == m.MemberID
}
