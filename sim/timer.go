package sim

// timerKind says what a timer does when it fires.
type timerKind int

const (
	tmRebalanceDeadline        timerKind = iota // the join round that began at n ends
	tmSessionExpiry                             // member id silent since n
	tmPollTimeout                               // client/inc outside poll() since n (m 1: the one standing for the process's latest check, armPollTimer)
	tmOffsetFetchRetry                          // client/inc asks for tps again
	tmInitPIDRetry                              // client/inc sends InitProducerId again
	tmProduceRetry                              // client/inc resends produce n at attempt m
	tmAddPartitionsRetry                        // client/inc asks AddPartitionsToTxn again
	tmTxnTimeout                                // transactional id's transaction number n times out
	tmCommitRetry                               // client/inc resends commitSync attempt n
	tmAutoCommit                                // client/inc: poll() returns empty and is called again at n
	tmEndTxnRetry                               // client/inc sends EndTxn again (n: 1 = COMMIT)
	tmInitialRebalance                          // the initial join round that began at n: its delay of m ticks is over
	tmJoinTimeout                               // client/inc: JoinGroup number n unanswered
	tmSyncTimeout                               // client/inc: SyncGroup number n unanswered
	tmFetchTimeout                              // client/inc: Fetch n unanswered
	tmOffsetFetchTimeout                        // client/inc: OffsetFetch number n unanswered (tps)
	tmEndTxnTimeout                             // client/inc: EndTxn number n unanswered
	tmHeartbeatCheck                            // member id answered in generation n: heard with it since?
	tmPendingSync                               // generation n of the group's incarnation m: members that sent no SyncGroup are removed
	tmConsumerSessionTimeout                    // consumer group member id: session timer number n
	tmConsumerRebalanceTimeout                  // consumer group member id: rebalance timer number n, at member epoch m
	tmHeartbeat                                 // client/inc: ConsumerGroupHeartbeat timer number n (m: 1 = request timeout)
	tmRevokeCommit                              // client/inc: auto-commit before revocation attempt n (m: 1 = request timeout, 0 = retry)
	tmClassicJoinTimeout                        // consumer group classic member id: join timer number n (told to rejoin)
	tmClassicSyncTimeout                        // consumer group classic member id: sync timer number n (JoinGroup answered)
)

// timer is something due at a tick. Timers are data, not closures, so a
// World can be copied; one that no longer applies checks that itself when
// it fires. Timers due at the same tick fire in the order they were set.
type timer struct {
	at, seq int
	kind    timerKind
	client  string
	inc     int
	proc    int32 // client/inc's process number plus one, when known (World.procOf); 0 when not
	id      string
	n, m    int
	tps     []TopicPartition
}

type timerQueue struct {
	// heap is a binary min-heap of the timers' keys; slots holds the
	// timers themselves (about 100 bytes each, with strings and a slice),
	// which never move while queued; free lists the empty slots.
	heap  []timerKey
	slots []timer
	free  []int32
	seq   int
}

// timerKey is what the heap orders and moves: a timer's due tick and
// sequence number, and its slot.
type timerKey struct {
	at, seq int
	slot    int32
}

func (q *timerQueue) Len() int { return len(q.heap) }

// next is the due tick of the first timer (Len() > 0).
func (q *timerQueue) next() int { return q.heap[0].at }

// clone copies the queued timers only, each into the slot of its place in
// the heap (the same heap, so the same order), with no free slots, and
// with room to grow: a world that steps sets timers at once, and the first
// one would copy arrays cut to their length again.
func (q *timerQueue) clone() timerQueue { return q.cloneOver(timerQueue{}) }

// cloneOver is clone in the arrays of spare (a finished copy's queue,
// World.clone) when they have that room.
func (q *timerQueue) cloneOver(spare timerQueue) timerQueue {
	n := timerQueue{seq: q.seq}
	if len(q.heap) == 0 {
		return n
	}
	if room := 2 * len(q.heap); cap(spare.heap) >= room && cap(spare.slots) >= room {
		n.heap, n.slots = spare.heap[:len(q.heap)], spare.slots[:len(q.heap)]
		clear(spare.slots[len(q.heap):cap(spare.slots)]) // the finished copy's timers: their strings and lists
	} else {
		n.heap, n.slots = make([]timerKey, len(q.heap), room), make([]timer, len(q.heap), room)
	}
	for i, k := range q.heap {
		n.slots[i] = q.slots[k.slot]
		n.heap[i] = timerKey{at: k.at, seq: k.seq, slot: int32(i)}
	}
	return n
}

// push and pop keep q.heap a binary min-heap. They are written out rather
// than taken from container/heap, whose interface boxes every key in an
// interface value.
//
// Both move a hole rather than swap: the parents or children move one step
// each and the key is written once, where the swaps would have left it.
// The order is total (seq is unique), so the timers fire in the same order
// whatever the heap's layout.
func (q *timerQueue) push(t timer) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[slot] = t
	} else {
		slot = int32(len(q.slots))
		q.slots = append(q.slots, t)
	}
	k := timerKey{at: t.at, seq: t.seq, slot: slot}
	q.heap = append(q.heap, k)
	i := len(q.heap) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !keyLess(&k, &q.heap[parent]) {
			break
		}
		q.heap[i] = q.heap[parent]
		i = parent
	}
	q.heap[i] = k
}

func (q *timerQueue) pop() timer {
	top := q.heap[0]
	t := q.slots[top.slot]
	q.slots[top.slot] = timer{} // let the GC have its strings and slices
	q.free = append(q.free, top.slot)
	last := len(q.heap) - 1
	moving := q.heap[last]
	q.heap = q.heap[:last]
	if last == 0 {
		return t
	}
	i := 0
	for {
		small, l, r := -1, 2*i+1, 2*i+2
		if l < last && keyLess(&q.heap[l], &moving) {
			small = l
		}
		if r < last && keyLess(&q.heap[r], &moving) && (small < 0 || keyLess(&q.heap[r], &q.heap[l])) {
			small = r
		}
		if small < 0 {
			break
		}
		q.heap[i] = q.heap[small]
		i = small
	}
	q.heap[i] = moving
	return t
}

// keyLess orders keys by due tick, then by the order their timers were
// set: a total order (seq is unique), so the firing order does not depend
// on how the heap is laid out.
func keyLess(a, b *timerKey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// reserve is after without the timer: the tick it would be due at and its
// sequence number, for a timer set later, if at all, that fires as if it
// had been set now (armRetry). Timers that are never set leave gaps in the
// sequence, which only orders them.
func (w *World) reserve(at int) (int, int) {
	if at <= w.Tick {
		at = w.Tick + 1
	}
	w.timers.seq++
	return at, w.timers.seq
}

// after sets a timer (no earlier than the next tick).
func (w *World) after(t timer) {
	t.at, t.seq = w.reserve(t.at)
	w.timers.push(t)
}

func (w *World) fireTimers() {
	for w.timers.Len() > 0 && w.timers.next() <= w.Tick {
		w.fire(w.timers.pop())
	}
}

func (w *World) fire(t timer) {
	switch t.kind {
	case tmRebalanceDeadline:
		if g := w.Group; g.Type == ClassicGroup && g.State == PreparingRebalance && g.roundStart == t.n {
			g.completeJoin(w)
		}
	case tmSessionExpiry:
		w.Group.sessionExpiry(w, t.id, t.n)
	case tmTxnTimeout:
		w.Txn.txnTimeout(w, t.id, t.n)
	case tmInitialRebalance:
		w.Group.initialDelayOver(w, t.n, t.m)
	case tmHeartbeatCheck:
		w.Group.heartbeatCheck(w, t.id, t.n)
	case tmPendingSync:
		w.Group.expirePendingSync(w, t.n, t.m)
	case tmConsumerSessionTimeout:
		w.Group.consumerSessionTimeout(w, t.id, t.n)
	case tmConsumerRebalanceTimeout:
		w.Group.consumerRebalanceTimeout(w, t.id, t.n, t.m)
	case tmClassicJoinTimeout, tmClassicSyncTimeout:
		w.Group.classicMemberTimeout(w, t.id, t.n, t.kind == tmClassicSyncTimeout)
	default:
		m := w.procOf(t.client, t.inc, t.proc)
		if m == nil || !m.Alive {
			return
		}
		switch t.kind {
		case tmPollTimeout:
			m.firePollTimer(w, t)
		case tmHeartbeat:
			m.heartbeatTimer(w, t.n, t.m == 1)
		case tmRevokeCommit:
			m.revokeCommitTimer(w, t.n, t.m == 1)
		case tmOffsetFetchRetry:
			if m.Phase == PhaseFetchingOffsets && m.pendingFetch {
				m.sendOffsetFetch(w, t.tps)
			}
		case tmInitPIDRetry:
			m.initProducer(w)
		case tmProduceRetry:
			m.produceRetry(w, t.n, t.m)
		case tmAddPartitionsRetry:
			m.addPartitionsRetry(w)
		case tmCommitRetry:
			m.commitRetry(w, t.n)
		case tmJoinTimeout:
			m.joinTimeout(w, t.n)
		case tmSyncTimeout:
			m.syncTimeout(w, t.n)
		case tmFetchTimeout:
			m.fetchTimeout(w, t.n)
		case tmOffsetFetchTimeout:
			if m.Phase == PhaseFetchingOffsets && !m.pendingFetch && m.offsetFetchSeq == t.n {
				w.trace.Eventf(EvRetry, m.Client, "%s: no answer to OffsetFetch within request.timeout.ms (%d): asking again", m.label(w), m.Cfg.RequestTimeout)
				m.sendOffsetFetch(w, t.tps)
			}
		case tmEndTxnTimeout:
			if m.loop == LoopTxnEnd && m.endTxnSeq == t.n {
				w.trace.Eventf(EvRetry, m.Client, "%s: no answer to EndTxn within request.timeout.ms (%d): sending it again", m.label(w), m.Cfg.RequestTimeout)
				m.endTxn(w, t.m == 1)
			}
		case tmEndTxnRetry:
			if m.loop == LoopTxnEnd {
				m.endTxn(w, t.n == 1)
			}
		case tmAutoCommit:
			if m.nextAuto == t.n && m.inPoll() {
				m.maybeAutoCommit(w)
			}
		}
	}
}
