package client

import (
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Loop is where the application thread stands in its poll loop.
type Loop int

const (
	LoopIdle       Loop = iota // about to call poll()
	LoopFetching               // in poll(): a Fetch in flight or parked at the broker
	LoopProcessing             // processing the batch poll returned
	LoopCommitting             // in commitSync()
	LoopFlushing               // waiting for every produce answer
	LoopInitPID                // waiting for InitProducerId
	LoopTxnOffsets             // in sendOffsetsToTransaction
	LoopTxnEnd                 // in commitTransaction / abortTransaction
	LoopWaiting                // waiting for a retry backoff
)

func (l Loop) String() string {
	return [...]string{"idle", "polling", "processing", "committing", "flushing", "init-producer", "txn-offsets", "txn-end", "backoff"}[l]
}

// pollLoop is the application thread: the consume-process-produce loop
// around KafkaConsumer.poll() (poll, process each record of the batch,
// commit as the mode says, poll again), with its blocking calls
// (commitSync, flush, commitTransaction) and close().
type pollLoop struct {
	state    Loop
	fetchID  int           // numbers the Fetch requests: a late answer to an earlier one is dropped
	batch    []wire.Record // the records poll() returned: entries, each a record or a run (wire.Record.Count)
	batchIdx int           // the entry of batch in hand
	runAt    int           // the records of the entry in hand already processed
	workLeft int64         // work left on the record in hand, in work units (work)
	workedAt int           // the tick of the last tick of work (one a tick)
	slowNext bool          // the next record is slow
	slowNow  bool          // the record in hand is slow
	// crashAfter: crash once this many more records are done; -1 = never.
	crashAfter int
	closing    bool
	closeNow   bool                        // close --now: break out after the record in hand
	closeOffs  map[wire.TopicPartition]int // what close() commits, once flushed
	// What the loop does when a blocking call returns: commitSync, and
	// flush (every produce answered).
	afterCommit cont
	afterFlush  cont
	// leftPollAt is the tick the application last returned from poll();
	// timer checks the stretch outside poll() that began then.
	leftPollAt int
	timer      pollTimer
}

// fetchTimeout: a Fetch neither answered nor held at the broker (a long
// poll the broker holds stands for empty answers to fetches sent again) was
// lost on the way: the fetcher gives up on it and fetches again.
func (l *pollLoop) fetchTimeout(m *Member, id int) {
	if l.state != LoopFetching || l.fetchID != id || m.host.FetchOutstanding(m.Client, m.Inc, id) {
		return
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to Fetch within request.timeout.ms (%d): fetching again", m.Label(), m.Cfg.RequestTimeout)
	l.abandonFetch()
	m.wakeUp()
}

// heldFetchLost: the answer to fetch id, which the broker held until data
// arrived, was lost. When the request timeout reserved at its sending
// (timeoutAt) has passed, having found the fetch held, it is set again,
// request.timeout.ms from now: without it the member would wait for the
// lost answer for ever.
func (l *pollLoop) heldFetchLost(m *Member, id int, timeoutAt int) {
	if l.state != LoopFetching || l.fetchID != id || timeoutAt > m.env.Now() {
		return
	}
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmFetchTimeout, Client: m.Client, Inc: m.Inc, Key: id})
}

// inPoll is true while the application thread is inside poll(), where the
// consumer runs rebalances and callbacks.
func (l *pollLoop) inPoll() bool { return l.state == LoopIdle || l.state == LoopFetching }

// act runs the application thread for this tick.
func (l *pollLoop) act(m *Member) {
	for guard := 0; guard < 8 && m.Alive; guard++ {
		switch l.state {
		case LoopIdle, LoopFetching:
			if !l.poll(m) {
				return
			}
		case LoopProcessing:
			if l.workedAt == m.env.Now() {
				l.wakeNext(m) // one tick of work per tick
				return
			}
			l.workedAt = m.env.Now()
			l.work(m)
			// linger.ms > 0: the member's turn is over, its open batches
			// go (producer.lingerAppend)
			m.prod.drainLinger(m)
			return
		default:
			return // waiting for an answer
		}
	}
}

// poll is one pass of KafkaConsumer.poll(): rebalance work first, then the
// auto-commit, then a Fetch. It reports whether the loop moved on and
// should be run again this tick.
func (l *pollLoop) poll(m *Member) bool {
	if l.closing {
		l.finishClose(m)
		return false
	}
	if m.Zombie {
		l.stopZombie(m) // it finished what it had in hand
		return false
	}
	// The group protocol's work comes first: poll() runs the rebalance
	// before it fetches.
	if handled, again := m.group.poll(m); handled {
		return again
	}
	if !m.prod.ready(m) {
		return false
	}
	if l.state == LoopFetching {
		return false // a Fetch is already out
	}
	m.commits.maybeAutoCommit(m)
	req := m.env.NewFetchRequest()
	slots := m.env.SlotScratch()
	tps, offs := m.fetchableInto(m.env.PartitionScratch(), slots, req.Partitions, req.Offsets)
	if len(tps) == 0 {
		req.Partitions, req.Offsets = tps[:0], offs[:0]
		m.env.UnuseFetchRequest(req)
		return false
	}
	l.fetchID++
	req.ID, req.Partitions, req.Offsets, req.Max = l.fetchID, tps, offs, m.Cfg.MaxPollRecords
	req.Slots = append(req.Slots[:0], *slots...) // checked, or -1 (fetchableInto): the leader's
	l.state = LoopFetching
	// "o0@3 o1@5 max 3": every fetch writes it
	text := m.env.Trace().FetchRequest(req.Partitions, *slots, req.Offsets, req.Max)
	p := m.env.Packet()
	p.Type, p.Text, p.Body = wire.Fetch, text, req
	m.send(p)
	// The request timeout is reserved and set only when the fetch may go
	// unanswered (armFetchTimeout).
	p.TimerAt, p.TimerSeq = m.env.Reserve(m.env.Now() + m.Cfg.RequestTimeout)
	if p.Lost {
		m.env.Push(FetchTimeoutTimer(p))
	}
	return false
}

// abandonFetch gives up the Fetch in flight, if any: the loop is back
// before its next poll(), and a late answer is dropped.
func (l *pollLoop) abandonFetch() {
	if l.state == LoopFetching {
		l.fetchID++ // a late answer is ignored
		l.state = LoopIdle
	}
}

// onFetchResponse takes the records of the Fetch in flight that are still
// wanted (owned, at the position) as the batch poll() returns (Kafka's
// FetchCollector), moves the positions past them, and leaves poll():
// processing, or first commitSync under commit-before.
func (l *pollLoop) onFetchResponse(m *Member, p *wire.Packet) {
	r := p.Body.(*wire.FetchResponse)
	if l.state != LoopFetching || r.ID != l.fetchID {
		return
	}
	batch := l.batch[:0] // the batch in hand is done: reuse its array
	// Consumer protocol: a partition pending revocation is not fetchable
	// (SubscriptionState.isFetchable; KAFKA-16460 marks it at the start
	// of the reconciliation): FetchCollector.fetchRecords returns none of
	// the records a Fetch in flight brings back for it, and its position
	// stays. (The classic client's cooperative revocation runs at the next
	// poll(), before it collects anything.)
	paused := len(m.pendingRevocation) > 0 && m.Consumer()
	// An entry is a record or a run of them: the run is taken whole when
	// its first record is at the position (then each next one is).
	// The answer lists its partitions in the order the Fetch asked for
	// them, Owned's (fetchableInto), usually the slots' order: the
	// position and the ownership of each are found from where the
	// previous one's were (cursors), its number checked once.
	posAt, ownAt := 0, 0
	for i := range r.Records {
		f := &r.Records[i]
		// tpIndex numbers an input partition by its slot; checked before
		// it is trusted (by the entry it finds, else by the numbering)
		k, pos := f.TPI-1, m.positions.refHinted(f.TP, f.TPI-1, &posAt)
		if pos == nil {
			k = m.positions.slotOf(f.TP, f.TPI-1)
			pos = m.positions.refSlot(k, &posAt)
		}
		if pos != nil {
			if *pos == f.Offset && m.ownsSlot(f.TP, k, &ownAt) && (!paused || !m.revoking(f.TP)) {
				batch = append(batch, *f)
				*pos = f.End()
			}
			continue
		}
		if pos, ok := m.positions.getHint(f.TP, k); ok && pos == f.Offset && m.ownsHint(f.TP, k) && (!paused || !m.revoking(f.TP)) {
			batch = append(batch, *f)
			m.positions.setHint(f.TP, k, f.End())
		}
	}
	if len(batch) == 0 {
		l.state = LoopIdle
		return
	}
	m.rotate, m.hasRotate = batch[len(batch)-1].TP, true
	l.batch, l.batchIdx, l.runAt, l.workLeft = batch, 0, 0, 0
	l.workedAt = m.env.Now() // processing starts next tick
	// "%s poll() returned o2.3 o2.4", its Records the batch: the answer's
	// text when the batch is every record of it
	answer := wire.TextRef(0)
	if len(batch) == len(r.Records) {
		answer = p.Text
	}
	m.env.Trace().Polled(m.who(), batch, answer)
	l.leftPollAt = m.env.Now()
	l.armPollTimer(m)
	if m.prod.mode == ProducerTransactional {
		m.prod.beginTxn()
	}
	if m.Cfg.Commit == CommitBefore && m.prod.mode != ProducerTransactional {
		m.commits.commitSync(m, m.fetchPositionList(nil), contProcess)
		return
	}
	l.state = LoopProcessing
}

// work spends one tick on the batch in hand: a tick of work is
// processBudget units, a record costs ProcessTicks of them (a slow one
// SlowTicks ticks' worth), so a member finishes a record every few ticks,
// one a tick (the page's default: each record its own tick), or several in
// one tick. A record's cost left over carries into the next tick; a
// tick's budget left over when the batch ends is idle time.
//
// The batch is a list of runs (wire.Record.Count): the whole records of
// the run in hand that the budget pays for are finished at once
// (wholeRecords), and what a tick finishes of one run is one processed
// event, one call of the sink and one run of invoices (finished). A slow
// record, a crash due after N records and close --now cut a run exactly
// where they cut the records one at a time.
func (l *pollLoop) work(m *Member) {
	budget := m.Cfg.processBudget()
	cost := int64(m.Cfg.ProcessTicks)
	var done finished // told before every return and before any other event
	for {
		if l.batchIdx >= len(l.batch) {
			done.flush(m)
			l.batchDone(m)
			return
		}
		if l.workLeft == 0 && !l.slowNext && !m.env.PerRecord() {
			if k := l.wholeRecords(budget, cost); k > 0 {
				budget -= int64(k) * cost
				if !l.finishRecords(m, &done, k) || l.stopsAfter(m, &done, budget) {
					return
				}
				continue
			}
		}
		f := &l.batch[l.batchIdx]
		if l.workLeft == 0 {
			l.workLeft = cost
			l.slowNow = false
			if l.slowNext {
				l.slowNext = false
				l.slowNow = true
				l.workLeft = int64(m.Cfg.SlowTicks) * budget
				done.flush(m) // the records before it come first
				name := f.ValueIn(m.env.Layout())
				if f.Len() > 1 {
					name = m.env.Layout().Name(f.TP, f.Offset+l.runAt)
				}
				m.env.Trace().StopEventf(trace.EvSlowStart, m.Client, "%s starts slow record %s (%d ticks)", m.Label(), name, m.Cfg.SlowTicks)
			}
		}
		spend := min(budget, l.workLeft)
		l.workLeft -= spend
		budget -= spend
		if l.workLeft > 0 {
			done.flush(m)
			l.wakeNext(m)
			return
		}
		if !l.finishRecords(m, &done, 1) || l.stopsAfter(m, &done, budget) {
			return
		}
	}
}

// stopsAfter ends the tick's work after records were finished, when the
// batch is done (its end: commit as the mode says) or the tick's budget
// is spent (on next tick), telling the records finished first; it reports
// whether the work stopped.
func (l *pollLoop) stopsAfter(m *Member, done *finished, budget int64) bool {
	switch {
	case l.batchIdx >= len(l.batch):
		done.flush(m)
		l.batchDone(m)
	case budget == 0:
		done.flush(m)
		l.wakeNext(m)
	default:
		return false
	}
	return true
}

// wholeRecords is how many records of the entry in hand, from the next one
// on (none in hand), budget pays for whole at cost each (all that are left
// at cost 0), stopping at the record a crash is due after and at the one a
// close --now breaks out after: what one record at a time would finish
// before it stopped, or started a record it cannot finish.
func (l *pollLoop) wholeRecords(budget, cost int64) int {
	f := &l.batch[l.batchIdx]
	k := f.Len() - l.runAt
	if cost > 0 {
		k = int(min(int64(k), budget/cost))
	}
	if l.crashAfter > 0 {
		k = min(k, l.crashAfter)
	}
	if l.closing && l.closeNow {
		k = min(k, 1)
	}
	return k
}

// finishRecords ends the next k records of the entry in hand (the record
// in hand first): processed, their invoices sent (done gathers them into
// the tick's run of that partition); a crash or a close --now due after
// them. It reports whether the loop goes on with the batch.
func (l *pollLoop) finishRecords(m *Member, done *finished, k int) bool {
	l.slowNow = false
	f := &l.batch[l.batchIdx]
	off := f.Offset + l.runAt
	if l.runAt += k; l.runAt >= f.Len() {
		l.batchIdx, l.runAt = l.batchIdx+1, 0
	}
	done.add(m, f, off, k)
	if l.crashAfter > 0 {
		l.crashAfter -= k
		if l.crashAfter == 0 {
			done.flush(m)
			m.prod.drainLinger(m) // the crash comes after the invoices are sent, as at linger.ms 0
			m.Crash(true)
			return false
		}
	}
	if l.closing && l.closeNow {
		done.flush(m)
		m.prod.drainLinger(m) // close() flushes the open batches first
		// The rest of the batch is left unprocessed: the batch keeps the
		// records done.
		if l.runAt > 0 {
			l.batch[l.batchIdx].Count = l.runAt
			l.batchIdx++
		}
		l.batch, l.runAt = l.batch[:l.batchIdx], 0
		l.finishClose(m)
		return false
	}
	return true
}

// finished is the run of records a tick's work has finished and not yet
// told: records that follow each other in one partition are one processed
// event, one call of the sink and one run of invoices (flush). With
// env.Env.PerRecord (tests only) each record is told on its own, as before
// runs.
type finished struct {
	run wire.Record // Count 0: none
	// at is a cursor in the processed offsets: the batch's runs come in
	// the order of its partitions, usually the slots' (refSlot).
	at int
}

// add takes the run of k records of f's partition from offset off on (f
// is an entry of the batch in hand), finished after what done holds: told
// at once when it does not continue it. The run is not built apart and
// then copied in whole: a copy of a Record written field by field just
// before stalled on those stores (store forwarding), a third of
// finishRecords' time in T1's profile; f's fields are copied as they are
// and the run's offset and count written after.
func (done *finished) add(m *Member, f *wire.Record, off, k int) {
	n := max(k, 1) // the run's Len
	if d := &done.run; d.Count > 0 && !(d.Named && f.Named && d.TPI > 0 && d.TPI == f.TPI && d.End() == off) {
		done.flush(m)
	}
	if done.run.Count == 0 {
		done.run = *f
		done.run.Offset, done.run.Count = off, n
	} else {
		done.run.Count += n
	}
	if m.env.PerRecord() {
		done.flush(m)
	}
}

// flush tells the run: the positions processed move past it, the
// processed event, the sink and the invoices (as finishRecord did for one
// record, in that order).
func (done *finished) flush(m *Member) {
	run := done.run
	if run.Count == 0 {
		return
	}
	done.run = wire.Record{}
	// k: the run's partition's number, checked (refHinted found the
	// entry held under it to be the partition's; slotOf checks it against
	// the world's numbering), or -1
	k := run.TPI - 1
	if ref := m.processed.refHinted(run.TP, k, &done.at); ref != nil {
		*ref = run.End()
	} else if k = m.processed.slotOf(run.TP, k); !m.processed.setRef(k, &done.at, run.End()) {
		m.processed.setHint(run.TP, k, run.End())
	}
	who := m.who()
	// "%s processed o2.3", its Records the run
	m.env.Trace().Processed(who, &run)
	m.host.RecordProcessed(who, run, k) // by value: a pointer would move run to the heap (an interface call)
	if run.Named {
		m.prod.produceInvoiceRun(m, run.TP, run.TPI, run.Offset, run.Len())
	} else {
		m.prod.produceInvoice(m, run)
	}
}

// batchDone runs the end of one loop iteration: commit as the mode says,
// then back to poll().
func (l *pollLoop) batchDone(m *Member) {
	l.batch, l.batchIdx, l.runAt = l.batch[:0], 0, 0
	// linger.ms > 0: the open batches go before the commit, the flush or
	// commitTransaction (KafkaProducer.flush and commitTransaction send
	// every batch the RecordAccumulator holds at once)
	m.prod.drainLinger(m)
	switch {
	case m.prod.mode == ProducerTransactional:
		m.prod.commitTxn(m, m.processedPositions(), contBackToPoll)
	case m.Cfg.Commit == CommitAfter:
		m.prod.flush(m, contCommitBatch)
	default:
		l.backToPoll(m)
	}
}

// backToPoll ends a loop iteration: poll() is called again.
func (l *pollLoop) backToPoll(m *Member) {
	l.state = LoopIdle
	m.wakeUp()
}

// commitThrew is commitSync throwing. Before the batch was processed
// (commit before), the loop skips the batch and seeks back, so the records
// are read (and committed first) again by whoever owns them next.
func (l *pollLoop) commitThrew(m *Member) {
	if l.afterCommit != contProcess {
		return
	}
	for i := len(l.batch) - 1; i >= 0; i-- {
		f := l.batch[i]
		if _, ok := m.positions.get(f.TP); ok {
			m.positions.set(f.TP, f.Offset)
		}
	}
	l.batch, l.batchIdx, l.runAt = nil, 0, 0
	l.afterCommit = contBackToPoll
}

// stopZombie: a zombie back at poll() has finished what it had in hand.
func (l *pollLoop) stopZombie(m *Member) {
	m.env.Trace().Eventf(trace.EvZombie, m.Client, "%s stops: it has no place in the group", m.Label())
	m.Stop()
}

// finishClose is close(): the record in hand is done; commit as the mode
// says, LeaveGroup unless static, stop.
func (l *pollLoop) finishClose(m *Member) {
	l.abandonFetch()
	switch {
	case m.prod.mode == ProducerTransactional && m.prod.txn.open:
		m.prod.commitTxn(m, m.processedPositions(), contCloseDone)
	case m.InGroup() && m.commits.needed(m, m.commits.positions(m)):
		l.closeOffs = m.commits.positions(m)
		m.prod.flush(m, contCommitClose)
	default:
		m.prod.flush(m, contCloseDone)
	}
}

// closeDone ends close(): leave the group, stop.
func (l *pollLoop) closeDone(m *Member) {
	if m.InGroup() {
		m.group.leave(m)
	}
	m.env.Trace().Eventf(trace.EvClosed, m.Client, "%s closed", m.Client)
	m.Ended = "closed"
	m.Stop()
}

// cont is what the application thread does when a blocking call returns
// (commitSync, flush, commitTransaction). Continuations are data, not
// closures, so that a World can be copied.
type cont int

const (
	contNone         cont = iota
	contIdle              // back inside poll(): the loop goes on
	contProcess           // start processing the batch in hand (commit before)
	contBackToPoll        // the end of a loop iteration
	contRevokeDone        // onPartitionsRevoked's commit answered: the revocation goes on
	contCloseDone         // close(): LeaveGroup and stop
	contCommitBatch       // flushed: commitSync the processed positions, then back to poll
	contCommitClose       // flushed: commitSync what close() commits, then stop
	contEndTxnCommit      // flushed: EndTxn(COMMIT)
	contEndTxnAbort       // flushed: EndTxn(ABORT)
)

// resume goes on as c says once a blocking call returned.
func (l *pollLoop) resume(m *Member, c cont) {
	switch c {
	case contIdle:
		l.state = LoopIdle
		m.wakeUp()
	case contProcess:
		l.state = LoopProcessing
		m.wakeUp()
	case contBackToPoll:
		l.backToPoll(m)
	case contRevokeDone:
		l.state = LoopIdle
		m.group.revokeCommitted(m)
		m.wakeUp()
	case contCloseDone:
		l.closeDone(m)
	case contCommitBatch:
		m.commits.commitSync(m, m.processedPositionList(), contBackToPoll)
	case contCommitClose:
		offs := l.closeOffs
		l.closeOffs = nil
		m.commits.commitSync(m, listOf(offs), contCloseDone)
	case contEndTxnCommit:
		m.prod.endTxn(m, true)
	case contEndTxnAbort:
		m.prod.endTxn(m, false)
	}
}

// wakeNext lets the process act next tick (it is in the middle of a record).
func (l *pollLoop) wakeNext(m *Member) {
	if m.Alive {
		m.env.WakeNext(m.proc)
	}
}
