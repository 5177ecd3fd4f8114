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
	// (or, consumer, a stale member epoch); fetchAtPoll: the consumer's
	// OffsetFetch failed and poll() threw, the next poll() asks again
	pendingFetch   bool
	fetchAtPoll    bool
	offsetFetchSeq int // numbers the OffsetFetch requests, for their request timeout
	// autoInFlight: the consumer protocol's AutoCommitState.hasInflightCommit,
	// an auto-commit (the interval one, or the one before reconciling)
	// sent and not answered; autoSeq numbers them, for their request
	// timeout.
	autoInFlight bool
	autoSeq      int
}

// fire is one of the commits' timers firing: an OffsetFetch to ask
// again (its retry backoff, or its request timeout), a commitSync to send
// again, the auto-commit deadline of a member waiting in poll().
func (cm *commits) fire(m *Member, t wire.Timer) {
	switch t.Kind {
	case tmOffsetFetchRetry:
		// The retry of the latest OffsetFetch only (a retry of one since
		// replaced would replace it back), for every partition still
		// waiting for its committed offset, not only those it named: a
		// partition assigned while an answer was retried is one of them.
		if m.Phase == PhaseFetchingOffsets && cm.pendingFetch && cm.offsetFetchSeq == t.Key {
			cm.fetchInitializing(m)
		}
	case tmOffsetFetchTimeout:
		if m.Phase == PhaseFetchingOffsets && !cm.pendingFetch && cm.offsetFetchSeq == t.Key {
			if len(m.unpositioned()) > 0 { // else its partitions were revoked meanwhile: nothing to ask
				m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to OffsetFetch within request.timeout.ms (%d): asking again", m.Label(), m.Cfg.RequestTimeout)
			}
			cm.fetchInitializing(m)
		}
	case tmCommitRetry:
		cm.retry(m, t.Key)
	case tmAutoCommit:
		if cm.nextAuto == t.Key && m.loop.inPoll() {
			cm.maybeAutoCommit(m)
		}
	case tmAutoCommitTimeout:
		if cm.autoInFlight && cm.autoSeq == t.Key {
			// A retriable failure (TimeoutException): the timer is set to
			// the retry backoff (maybeResetTimerWithBackoff), under a tick.
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to the auto-commit within request.timeout.ms (%d): the next one after the retry backoff", m.Label(), m.Cfg.RequestTimeout)
			cm.autoDone(m)
			cm.nextAuto = m.env.Now() + ConsumerRetryBackoff
			cm.armAuto(m)
		}
	}
}

// autoSent: the consumer protocol's interval auto-commit goes out; the
// next waits for its answer, or its request timeout. (The auto-commit
// before reconciling sets autoInFlight itself and has its own timers.)
func (cm *commits) autoSent(m *Member) {
	cm.autoInFlight = true
	cm.autoSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmAutoCommitTimeout, Client: m.Client, Inc: m.Inc, Key: cm.autoSeq})
}

// autoDone: an auto-commit was answered, or timed out
// (CommitRequestManager.autoCommitCallback clears hasInflightCommit
// whichever auto-commit it was). An interval auto-commit skipped meanwhile
// goes now if the application is in poll() (its poll loop turns within a
// tick); otherwise at its next poll().
func (cm *commits) autoDone(m *Member) {
	if !cm.autoInFlight {
		return
	}
	cm.autoInFlight = false
	if m.Alive && m.loop.inPoll() && m.env.Now() >= cm.nextAuto {
		cm.maybeAutoCommit(m)
	}
}

// resetAutoCommitTimer is CommitRequestManager.resetAutoCommitTimer: the
// next interval auto-commit is due an interval from now.
func (cm *commits) resetAutoCommitTimer(m *Member) {
	cm.nextAuto = m.env.Now() + m.Cfg.AutoCommitInterval
	cm.armAuto(m)
}

// armAuto sets the timer of a member waiting in poll() for the
// auto-commit deadline (once per deadline).
func (cm *commits) armAuto(m *Member) {
	if cm.autoArmed != cm.nextAuto && m.anyPositioned() {
		cm.autoArmed = cm.nextAuto
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: cm.nextAuto, Kind: tmAutoCommit, Client: m.Client, Inc: m.Inc, Key: cm.nextAuto})
	}
}

func (cm *commits) fetchOffsets(m *Member, tps []wire.TopicPartition) {
	// One copy of tps for the request and its timeout (the coordinator's
	// answer shares it too: nobody writes to it).
	cm.fetchOffsetsOf(m, append([]wire.TopicPartition{}, tps...))
}

// fetchOffsetsOf is fetchOffsets keeping tps itself in the request and
// its timeout: a list nobody changes in place (Owned, which is replaced,
// never changed: an eager assignment's partitions are all of it), which
// each member's OffsetFetch at every eager rebalance copied.
func (cm *commits) fetchOffsetsOf(m *Member, tps []wire.TopicPartition) {
	cm.pendingFetch, cm.fetchAtPoll = false, false
	r := &wire.OffsetFetchRequest{Partitions: tps}
	if epoch := m.group.commitEpoch(m); m.group.memberEpochs() && epoch > 0 {
		// The AsyncKafkaConsumer's OffsetFetch carries the member id and
		// epoch while the member has one
		// (CommitRequestManager.OffsetFetchRequestState.toUnsentRequest,
		// v9+); without, neither (null and -1), and the coordinator
		// checks nothing (ConsumerGroup.validateOffsetFetch).
		r.MemberID, r.MemberEpoch, r.HasMember = m.MemberID, epoch, true
	}
	cm.offsetFetchSeq++
	r.ID = cm.offsetFetchSeq
	format, args := "%s", []any{trace.Parts{L: m.env.Layout(), TPs: tps}}
	if r.HasMember {
		format, args = "%s, epoch %d, %s", append(args, r.MemberEpoch, r.MemberID)
	}
	m.send(&wire.Packet{Type: wire.OffsetFetch, Text: m.env.Trace().Textf(format, args...), Body: r})
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmOffsetFetchTimeout, Client: m.Client, Inc: m.Inc, Key: cm.offsetFetchSeq})
}

func (cm *commits) onOffsetFetchResponse(m *Member, p *wire.Packet) {
	// An answer to an OffsetFetch since replaced by another (for more
	// partitions) is dropped: OffsetsRequestManager keeps one pending
	// fetch of committed offsets and acts on the latest request's result.
	if m.Phase != PhaseFetchingOffsets || p.Req.Body.(*wire.OffsetFetchRequest).ID != cm.offsetFetchSeq {
		return
	}
	r := p.Body.(*wire.OffsetFetchResponse)
	if p.Error == wire.UnstableOffsetCommit {
		// A transaction is still committing offsets for one of these: ask again.
		cm.pendingFetch = true
		m.env.Trace().Eventf(trace.EvUnstableOffset, m.Client, "%s: OffsetFetch answered UNSTABLE_OFFSET_COMMIT, asking again in %d", m.Client, m.Cfg.RetryBackoff)
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmOffsetFetchRetry, Client: m.Client, Inc: m.Inc, Key: cm.offsetFetchSeq})
		return
	}
	if p.Error == wire.StaleMemberEpoch && m.group.commitEpoch(m) > 0 {
		// CommitRequestManager.fetchOffsetsWithRetries retries
		// STALE_MEMBER_EPOCH while the member has an epoch
		// (isStaleEpochErrorAndValidEpochAvailable), with its latest epoch,
		// after the retry backoff (ConsumerRetryBackoff: under a tick).
		cm.pendingFetch = true
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: OffsetFetch answered %s, asking again with the latest epoch", m.Label(), p.Error)
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmOffsetFetchRetry, Client: m.Client, Inc: m.Inc, Key: cm.offsetFetchSeq})
		return
	}
	if p.Error == wire.StaleMemberEpoch || p.Error == wire.UnknownMemberID {
		// Not retried: the error completes the positions update
		// (OffsetsRequestManager.refreshOffsets) and poll() throws it to
		// the application (AsyncKafkaConsumer.updateFetchPositions catches
		// only TimeoutException); the partitions still need positions, so
		// the application's next poll() asks again (maybeFetchAgain).
		cm.fetchAtPoll = true
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: OffsetFetch answered %s: poll() throws %s; the next poll() asks again", m.Label(), p.Error, fetchException(p.Error))
		m.wakeUp()
		return
	}
	// Each partition's slot looked up once (its topic once per run of
	// its partitions), a hint for the owned check and the three offsets.
	var tc topo.TopicCache
	m.positions.reserve(len(r.Partitions))
	m.processed.reserve(len(r.Partitions))
	m.committed.reserve(len(r.Partitions))
	for i, tp := range r.Partitions {
		off := r.Offsets[i]
		if off < 0 {
			off = 0 // auto.offset.reset=earliest
		}
		k := int32(-1)
		if x := m.positions.idx; x != nil {
			if s, ok := x.Slot(tp, &tc); ok {
				k = int32(s)
			}
		}
		if !m.ownsHint(tp, k) {
			continue
		}
		m.positions.setHint(tp, k, off)
		m.processed.setHint(tp, k, off)
		m.committed.setHint(tp, k, r.Offsets[i])
	}
	// A partition owned but not in this answer still has no position
	// (assigned after the request went, its own request since dropped):
	// it is asked for now, as the consumers ask for every partition still
	// initializing at each poll (ConsumerCoordinator.
	// refreshCommittedOffsetsIfNeeded, OffsetsRequestManager.
	// initWithCommittedOffsetsIfNeeded), where it was never fetched.
	cm.fetchInitializing(m)
}

// fetchInitializing asks again for the committed offsets of every owned
// partition without a position (OffsetsRequestManager's
// initializingPartitions at this attempt), or, when none is left, ends
// the wait for them.
func (cm *commits) fetchInitializing(m *Member) {
	still := m.unpositioned()
	if len(still) == 0 {
		cm.pendingFetch = false
		m.Phase = PhaseStable
		// A long poll already waiting at the broker does not name the new
		// partitions: ask again with them (the fetcher adds them next round).
		m.loop.abandonFetch()
		return
	}
	cm.fetchOffsetsOf(m, still)
}

// fetchException is the exception poll() throws for an OffsetFetch error.
func fetchException(code wire.ErrorCode) string {
	if code == wire.UnknownMemberID {
		return "UnknownMemberIdException"
	}
	return "StaleMemberEpochException"
}

// maybeFetchAgain is the consumer's poll() after an OffsetFetch error it
// threw: the partitions still waiting for their committed offsets (every
// owned one without a position) are asked for again.
func (cm *commits) maybeFetchAgain(m *Member) {
	if !cm.fetchAtPoll || m.Phase != PhaseFetchingOffsets {
		return
	}
	still := m.unpositioned()
	if len(still) == 0 {
		cm.fetchAtPoll = false
		m.Phase = PhaseStable
		return
	}
	cm.fetchOffsets(m, still)
}

// maybeAutoCommit is the auto-commit inside poll(): when the interval has
// passed, commit the positions of every positioned partition (async),
// changed or not, as ConsumerCoordinator.maybeAutoCommitOffsetsAsync does
// with subscriptions.allConsumed(); with nothing positioned no request goes
// out (sendOffsetCommitRequest returns at once on empty offsets). A member
// waiting in a long poll wakes for the auto-commit deadline
// (ConsumerCoordinator.timeToNextPoll), so a timer stands for that.
//
// Under the consumer protocol one auto-commit is in flight at a time
// (AutoCommitState.shouldAutoCommit): while one is (the interval one, or
// the one before reconciling), the interval auto-commit is skipped and the
// timer left expired, so it goes once that one is answered. The classic
// client has no such rule.
func (cm *commits) maybeAutoCommit(m *Member) {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional || !m.group.autoCommits(m) {
		return
	}
	if m.env.Now() >= cm.nextAuto {
		if cm.autoInFlight {
			return // "Skipping auto-commit on the interval because a previous one is still in-flight."
		}
		req := m.env.NewCommitRequest()
		l := m.fetchPositionList(req.Offsets)
		if req.Partitions, req.Slots, req.Offsets = l.tps, l.slots, l.offs; len(req.Partitions) > 0 {
			req.Auto = wire.AutoInterval
			if m.group.memberEpochs() {
				cm.autoSent(m)
			}
			cm.send(m, req)
		} else {
			m.env.UnuseCommitRequest(req)
		}
		cm.nextAuto = m.env.Now() + m.Cfg.AutoCommitInterval
	}
	cm.armAuto(m)
}

// positions is what a commit on revocation or close commits: the
// processed positions for commit-after, the fetch positions for auto.
func (cm *commits) positions(m *Member) map[wire.TopicPartition]int {
	if m.Cfg.Commit == CommitAuto {
		return m.fetchPositions()
	}
	return m.processedPositions()
}

// positionList is positions as a commitList, in partition order, without
// the map (onJoinPrepare's commit of a member's 100 partitions, at every
// rebalance, made a map and sorted it).
func (cm *commits) positionList(m *Member) commitList {
	if m.Cfg.Commit == CommitAuto {
		return m.fetchPositionList(nil)
	}
	return m.processedPositionList()
}

// neededList is needed for a commitList.
func (cm *commits) neededList(m *Member, offs commitList) bool {
	if m.Cfg.Commit == CommitBefore || m.prod.mode == ProducerTransactional {
		return false
	}
	for i, tp := range offs.tps {
		hint := int32(-1)
		if i < len(offs.slots) {
			hint = offs.slots[i]
		}
		if c, ok := m.committed.getHint(tp, hint); !ok || c != offs.offs[i] {
			return true
		}
	}
	return false
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

// refusedLocally is a commitSync the membership refuses in the client,
// no request sent (commitRefusedLocally says why: the classic client's
// rule; the consumer protocol's client refuses none). It reports whether
// the commit was refused (the loop has then moved on).
func (cm *commits) refusedLocally(m *Member, then cont) bool {
	why := m.group.commitRefusedLocally(m)
	if why == "" {
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
	req.MemberID, req.Generation, req.InstanceID = m.MemberID, m.group.commitEpoch(m), m.Cfg.InstanceID
	// "o0@3 o1@5, gen 2, C1-1": every commit writes it
	text := m.env.Trace().CommitRequest(req.Partitions, req.Slots, req.Offsets, m.group.memberEpochs(), req.Generation, wire.OrDash(m.MemberID))
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
	if req.Auto == wire.AutoInterval && m.group.memberEpochs() {
		defer cm.autoDone(m) // once the answer is taken in
	}
	if req.BeforeReconcile {
		m.group.receive(m, p) // the consumer protocol's commit before reconciling
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
