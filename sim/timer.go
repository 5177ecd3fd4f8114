package sim

import "github.com/kgrepl/kgrepl/sim/wire"

// The timers' kinds, by owner (wire.Timer.Kind): each node numbers its
// own. Key and Arg are the numbers each kind is set for.

// The group coordinator's timers (wire.OwnerGroupCoordinator).
const (
	tmRebalanceDeadline        uint8 = iota // the join round that began at Key ends
	tmSessionExpiry                         // Member silent since Key
	tmInitialRebalance                      // the initial join round that began at Key: its delay of Arg ticks is over
	tmHeartbeatCheck                        // Member answered in generation Key: heard with it since?
	tmPendingSync                           // generation Key of the group's incarnation Arg: members that sent no SyncGroup are removed
	tmConsumerSessionTimeout                // consumer group Member: session timer number Key
	tmConsumerRebalanceTimeout              // consumer group Member: rebalance timer number Key, at member epoch Arg
	tmClassicJoinTimeout                    // consumer group classic Member: join timer number Key (told to rejoin)
	tmClassicSyncTimeout                    // consumer group classic Member: sync timer number Key (JoinGroup answered)
)

// A client process's timers (wire.OwnerClient).
const (
	tmPollTimeout        uint8 = iota // outside poll() since Key (Arg 1: the one standing for the process's latest check, armPollTimer)
	tmOffsetFetchRetry                // asks for Partitions again
	tmInitPIDRetry                    // sends InitProducerId again
	tmProduceRetry                    // resends produce Key at attempt Arg
	tmAddPartitionsRetry              // asks AddPartitionsToTxn again
	tmCommitRetry                     // resends commitSync attempt Key
	tmAutoCommit                      // poll() returns empty and is called again at Key
	tmEndTxnRetry                     // sends EndTxn again (Key: 1 = COMMIT)
	tmJoinTimeout                     // JoinGroup number Key unanswered
	tmSyncTimeout                     // SyncGroup number Key unanswered
	tmFetchTimeout                    // Fetch Key unanswered
	tmOffsetFetchTimeout              // OffsetFetch number Key unanswered (Partitions)
	tmEndTxnTimeout                   // EndTxn number Key unanswered (Arg 1: COMMIT)
	tmHeartbeat                       // ConsumerGroupHeartbeat timer number Key (Arg 1: request timeout)
	tmRevokeCommit                    // auto-commit before revocation attempt Key (Arg 1: request timeout, 0: retry)
)

// fire hands a timer due now to its owner.
func (w *World) fire(t wire.Timer) {
	switch t.Owner {
	case wire.OwnerGroupCoordinator:
		w.Group.fire(w, t)
	case wire.OwnerTxnCoordinator:
		w.Txn.Fire(t)
	case wire.OwnerClient:
		if m := w.procOf(t.Client, t.Inc, t.Proc); m != nil && m.Alive {
			m.fire(w, t)
		}
	}
}

// fire is one of the coordinator's timers firing.
func (g *Group) fire(w *World, t wire.Timer) {
	switch t.Kind {
	case tmRebalanceDeadline:
		if g.Type == ClassicGroup && g.State == PreparingRebalance && g.roundStart == t.Key {
			g.completeJoin(w)
		}
	case tmSessionExpiry:
		g.sessionExpiry(w, t.Member, t.Key)
	case tmInitialRebalance:
		g.initialDelayOver(w, t.Key, t.Arg)
	case tmHeartbeatCheck:
		g.heartbeatCheck(w, t.Member, t.Key)
	case tmPendingSync:
		g.expirePendingSync(w, t.Key, t.Arg)
	case tmConsumerSessionTimeout:
		g.consumerSessionTimeout(w, t.Member, t.Key)
	case tmConsumerRebalanceTimeout:
		g.consumerRebalanceTimeout(w, t.Member, t.Key, t.Arg)
	case tmClassicJoinTimeout, tmClassicSyncTimeout:
		g.classicMemberTimeout(w, t.Member, t.Key, t.Kind == tmClassicSyncTimeout)
	}
}

// fire is one of this process's timers firing.
func (m *Member) fire(w *World, t wire.Timer) {
	switch t.Kind {
	case tmPollTimeout:
		m.firePollTimer(w, t)
	case tmHeartbeat:
		m.heartbeatTimer(w, t.Key, t.Arg == 1)
	case tmRevokeCommit:
		m.revokeCommitTimer(w, t.Key, t.Arg == 1)
	case tmOffsetFetchRetry:
		if m.Phase == PhaseFetchingOffsets && m.pendingFetch {
			m.sendOffsetFetch(w, t.Partitions)
		}
	case tmInitPIDRetry:
		m.initProducer(w)
	case tmProduceRetry:
		m.produceRetry(w, t.Key, t.Arg)
	case tmAddPartitionsRetry:
		m.addPartitionsRetry(w)
	case tmCommitRetry:
		m.commitRetry(w, t.Key)
	case tmJoinTimeout:
		m.joinTimeout(w, t.Key)
	case tmSyncTimeout:
		m.syncTimeout(w, t.Key)
	case tmFetchTimeout:
		m.fetchTimeout(w, t.Key)
	case tmOffsetFetchTimeout:
		if m.Phase == PhaseFetchingOffsets && !m.pendingFetch && m.offsetFetchSeq == t.Key {
			w.trace.Eventf(EvRetry, m.Client, "%s: no answer to OffsetFetch within request.timeout.ms (%d): asking again", m.label(w), m.Cfg.RequestTimeout)
			m.sendOffsetFetch(w, t.Partitions)
		}
	case tmEndTxnTimeout:
		if m.loop == LoopTxnEnd && m.endTxnSeq == t.Key {
			w.trace.Eventf(EvRetry, m.Client, "%s: no answer to EndTxn within request.timeout.ms (%d): sending it again", m.label(w), m.Cfg.RequestTimeout)
			m.endTxn(w, t.Arg == 1)
		}
	case tmEndTxnRetry:
		if m.loop == LoopTxnEnd {
			m.endTxn(w, t.Key == 1)
		}
	case tmAutoCommit:
		if m.nextAuto == t.Key && m.inPoll() {
			m.maybeAutoCommit(w)
		}
	}
}
