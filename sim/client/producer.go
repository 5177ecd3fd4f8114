package client

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// producer is a member's producer client: plain, idempotent (PID and
// sequence numbers) or transactional. Its settings are fixed when it is
// created, as a KafkaProducer's are: when the member's settings change,
// replaceProducer closes it and creates another.
type producer struct {
	pid   int64 // -1 until InitProducerId answers (or for a plain producer)
	epoch int
	mode  ProducerMode // enable.idempotence and transactional.id, as created
	txnID string
	// seq is the next sequence number per output partition, by its index
	// in outputTPs; nil until the first (a plain producer numbers
	// nothing).
	seq          []int
	nextID       int // numbers produce requests; a new producer goes on from the old one's, so a retry timer of the old one finds nothing
	sent         int // records this producer has sent
	unacked      unackedReqs
	queued       []*wire.ProduceRequest // waiting for AddPartitionsToTxn
	initInFlight bool
	// text is what its next produce's text may refer back to (the trace's).
	text trace.ProducerText
}

// unackedReqs are a producer's produce requests sent and not answered
// yet, in ID order: a few at a time, so a slice, which World.Clone copies
// in one allocation for every member (a map cost two each). IDs only grow
// (nextID), so a new one goes at the end; a retry replaces its request.
type unackedReqs []*wire.ProduceRequest

func (u unackedReqs) find(id int) (int, bool) {
	// Requests are answered, and sent, in ID order: the one asked for is
	// almost always the oldest, or past the newest.
	if n := len(u); n > 0 {
		switch {
		case u[0].ID == id:
			return 0, true
		case u[n-1].ID < id:
			return n, false
		}
	} else {
		return 0, false
	}
	return slices.BinarySearchFunc(u, id, func(r *wire.ProduceRequest, id int) int { return cmp.Compare(r.ID, id) })
}

// get is the request with that ID, or nil.
func (u unackedReqs) get(id int) *wire.ProduceRequest {
	if i, ok := u.find(id); ok {
		return u[i]
	}
	return nil
}

// put adds r, or replaces the request with its ID.
func (u *unackedReqs) put(r *wire.ProduceRequest) {
	if n := len(*u); n == 0 || (*u)[n-1].ID < r.ID {
		*u = append(*u, r) // a new request: the newest ID (the usual case)
		return
	}
	i, ok := u.find(r.ID)
	if ok {
		(*u)[i] = r
		return
	}
	*u = slices.Insert(*u, i, r)
}

// del removes the request with that ID, if there is one.
func (u *unackedReqs) del(id int) {
	if i, ok := u.find(id); ok {
		*u = slices.Delete(*u, i, i+1)
	}
}

// newProducer is a producer created with cc's producer settings. A
// non-plain one has no PID until initProducer's InitProducerId answers.
func newProducer(cc ClientConfig) producer {
	return producer{pid: -1, mode: cc.Producer(), txnID: cc.TransactionalID}
}

// clientTxn is the transactional producer's view of its transaction.
type clientTxn struct {
	open       bool
	partitions map[wire.TopicPartition]bool
	adding     bool
	then       cont
	offs       map[wire.TopicPartition]int
}

// producerStale reports whether the member's settings ask for a producer
// other than the one it holds (set producer, enable.idempotence,
// transactional.id changed while it runs).
func (m *Member) producerStale() bool {
	return m.Cfg.Producer() != m.prod.mode || m.Cfg.TransactionalID != m.prod.txnID
}

// producerReady is called inside poll(), between batches, before a Fetch
// goes out. It reports whether the producer can send; it replaces a stale
// producer and starts InitProducerId for one that has no PID yet.
func (m *Member) producerReady() bool {
	if m.producerStale() {
		// The application leaves poll() to close its producer: a Fetch
		// still out would bring a batch for a producer that cannot
		// send it yet, so its answer is dropped and asked for again
		// once the new producer is ready.
		m.abandonFetch()
		if len(m.prod.unacked) > 0 || m.prod.initInFlight {
			// KafkaProducer.close() returns only once Sender.run's
			// shutdown loop has had every request in flight answered
			// (retries included), InitProducerId too. A produce answer
			// wakes the member, which then comes back here.
			return false
		}
		m.replaceProducer()
	}
	if m.prod.mode == ProducerPlain || m.prod.pid >= 0 {
		return true
	}
	if !m.prod.initInFlight {
		m.initProducer()
	}
	return false
}

// replaceProducer closes the member's producer and creates one with the
// settings the member has now. It is kgrepl's stand-in for "the
// application was redeployed with a new producer config": a
// KafkaProducer's config is fixed when it is constructed, so changing
// enable.idempotence or transactional.id means close() and a new
// KafkaProducer. producerReady calls it only between batches, once the old
// producer has flushed. The new producer starts over: a fresh PID from
// InitProducerId (TransactionManager.initializeTransactions, with the
// transactional.id for a transactional one: a new id starts at epoch 0, a
// known one has its epoch bumped) before its first record, then AddPartitionsToTxn per
// transaction; sequence numbers restart at 0 under the new PID.
//
// No transaction is open here: the loop ends each batch with
// commitTransaction (batchDone) and is back in poll() only after EndTxn
// was answered. Had one been open, close() would abort it (Sender.run,
// "Aborting incomplete transaction due to shutdown": EndTxn(ABORT) once
// in-flight requests are done), and a producer that vanished without
// close() would leave it to the transaction coordinator, which aborts it
// after transaction.timeout.ms (TransactionCoordinator.
// abortTimedOutTransactions; kgrepl's txnTimeout), as it does for a crash.
func (m *Member) replaceProducer() {
	old := m.prod
	m.prod = newProducer(m.Cfg)
	m.prod.nextID = old.nextID
	if old.sent == 0 {
		return // never sent anything: as if it had been created with these settings
	}
	m.env.Trace().Eventf(trace.EvProducer, m.Client, "%s's producer settings changed: it closes its %s and creates a new %s",
		m.label(), describeProducer(old.mode, old.pid, old.epoch, old.txnID), describeProducer(m.prod.mode, -1, 0, m.prod.txnID))
}

// describeProducer names a producer in narration: "idempotent producer
// (pid 1000 epoch 0)".
func describeProducer(mode ProducerMode, pid int64, epoch int, txnID string) string {
	var parts []string
	if txnID != "" {
		parts = append(parts, "transactional.id "+txnID)
	}
	if pid >= 0 {
		parts = append(parts, fmt.Sprintf("pid %d epoch %d", pid, epoch))
	}
	s := string(mode) + " producer"
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func (m *Member) initProducer() {
	m.prod.initInFlight = true
	req := &wire.InitProducerIDRequest{TransactionalID: m.prod.txnID, Timeout: m.Cfg.TransactionTimeout}
	s := "idempotent"
	if req.TransactionalID != "" {
		s = "transactional.id " + req.TransactionalID
	}
	m.send(&wire.Packet{Type: wire.InitProducerID, Summary: s, Body: req})
}

func (m *Member) onInitPIDResponse(p *wire.Packet) {
	if p.Error == wire.ConcurrentTransactions {
		// The coordinator is still aborting what the previous instance left open.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmInitPIDRetry, Client: m.Client, Inc: m.Inc})
		return
	}
	m.prod.initInFlight = false
	if p.Error != wire.None {
		m.fatal(p.Error.String() + " on InitProducerId")
		return
	}
	r := p.Body.(*wire.InitProducerIDResponse)
	m.prod.pid, m.prod.epoch = r.PID, r.Epoch
	m.prod.seq = nil // sequence numbers start at 0 under the new PID (a slice of its own: clones share none)
}

// outputSlot picks the invoice partition for an input record, as its
// index in outputTPs: a hash of the key (its value), as the default
// partitioner does (FNV-1a, 32 bits).
func (m *Member) outputSlot(source string) int {
	h := uint32(topo.FNVBasis)
	for i := 0; i < len(source); i++ {
		h = (h ^ uint32(source[i])) * topo.FNVPrime
	}
	return int(h % uint32(len(m.env.Layout().Outputs())))
}

// outputSlotOf is outputSlot of a fetched record's value, hashed without
// spelling it when it is the record's name.
func (m *Member) outputSlotOf(f *wire.Record) int {
	if !f.Named {
		return m.outputSlot(f.Value)
	}
	return int(m.env.Layout().FNVName(topo.FNVBasis, f.TP, f.Offset) % uint32(len(m.env.Layout().Outputs())))
}

// produceInvoice sends inv(x) for a processed record.
func (m *Member) produceInvoice(f wire.Record) {
	out := m.outputSlotOf(&f)
	tp := m.env.Layout().Outputs()[out]
	pr := &m.prod
	pr.nextID++
	pr.sent++
	req := m.env.NewProduceRequest()
	*req = wire.ProduceRequest{ID: pr.nextID, TP: tp, PID: -1, Seq: -1, Producer: m.Client,
		Src: f.TP, SrcOffset: f.Offset, HasSrc: true, Named: f.Named, SrcTPI: f.TPI, FreeEpoch: req.FreeEpoch}
	req.TPI = int32(len(m.env.Layout().Inputs()) + out + 1) // tpIndex numbers the output's partitions after the inputs', in outputTPs' order
	if !f.Named {
		req.Value, req.Source = "inv("+f.Value+")", f.Value
	}
	if pr.pid >= 0 && pr.mode != ProducerPlain {
		req.PID, req.Epoch = pr.pid, pr.epoch
		if pr.seq == nil {
			pr.seq = make([]int, len(m.env.Layout().Outputs()))
		}
		req.Seq = pr.seq[out]
		pr.seq[out]++
		req.Txn = pr.mode == ProducerTransactional
	}
	pr.unacked.put(req)
	if req.Txn && !m.txn.partitions[tp] {
		pr.queued = append(pr.queued, req)
		if !m.txn.adding {
			m.txn.adding = true
			m.send(&wire.Packet{Type: wire.AddPartitionsToTxn, Summary: m.prod.txnID + " " + tp.String(),
				Body: &wire.AddPartitionsToTxnRequest{TransactionalID: pr.txnID, PID: pr.pid, Epoch: pr.epoch, Partitions: []wire.TopicPartition{tp}}})
		}
		return
	}
	m.sendProduce(req)
}

func (m *Member) sendProduce(req *wire.ProduceRequest) {
	// "inv(o2.3) pid %d epoch %d seq %d (retry)": every produce writes it.
	p := m.env.Packet()
	p.Text = m.env.Trace().ProduceRequest(req, &m.prod.text)
	p.Type, p.Body = wire.Produce, req
	m.send(p)
	// Without an answer by the round trip, retry after retry.backoff.ms.
	// The timer is reserved (its tick and its place among the timers) and
	// set only when the answer will not settle the request (armRetry): in
	// steady traffic it would fire after the answer and do nothing.
	p.TimerAt, p.TimerSeq = m.env.Reserve(m.env.Now() + 2 + m.Cfg.RetryBackoff)
	if p.Lost {
		m.env.Push(ProduceRetryTimer(p))
	}
}

// produceRetry resends a produce still unanswered at that attempt.
func (m *Member) produceRetry(id, attempt int) {
	cur := m.prod.unacked.get(id)
	if m.Alive && cur != nil && cur.Attempt == attempt {
		m.retryProduce(cur)
	}
}

func (m *Member) retryProduce(req *wire.ProduceRequest) {
	nr := *req
	nr.Attempt++
	nr.FreeEpoch = 0 // a heap object of its own, not from the free lists
	m.prod.unacked.put(&nr)
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s retries %s (no answer)", m.label(), nr.ValueIn(m.env.Layout()))
	m.sendProduce(&nr)
}

func (m *Member) onProduceResponse(p *wire.Packet) {
	r := p.Body.(*wire.ProduceResponse)
	req := m.prod.unacked.get(r.ID)
	if req == nil {
		return
	}
	switch p.Error {
	case wire.None:
		m.prod.unacked.del(r.ID)
	case wire.OutOfOrderSequenceNumber:
		// An earlier sequence has not landed yet: send this one again later.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmProduceRetry, Client: m.Client, Inc: m.Inc, Key: r.ID, Arg: req.Attempt})
		return
	case wire.DuplicateSequenceNumber:
		m.prod.unacked.del(r.ID) // written before: nothing to do
	case wire.InvalidProducerEpoch, wire.ProducerFenced:
		// The transaction cannot commit any more; the next call to the
		// transaction coordinator is refused and ends the producer.
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: produce of %s refused with %s: a newer producer epoch exists", m.label(), req.ValueIn(m.env.Layout()), p.Error)
		m.prod.unacked.del(r.ID)
	default:
		m.prod.unacked.del(r.ID)
	}
	m.checkFlushed()
}

// flush waits until every produce is answered, then runs then.
func (m *Member) flush(then cont) {
	if len(m.prod.unacked) == 0 {
		m.resume(then)
		return
	}
	m.loop = LoopFlushing
	m.afterFlush = then
}

func (m *Member) checkFlushed() {
	if m.loop == LoopFlushing && len(m.prod.unacked) == 0 {
		then := m.afterFlush
		m.afterFlush = contNone
		m.loop = LoopIdle
		m.resume(then)
	}
}

// --- transactions, client side ---

func (m *Member) beginTxn() {
	m.txn = clientTxn{open: true, partitions: map[wire.TopicPartition]bool{}}
}

func (m *Member) onAddPartitionsResponse(p *wire.Packet) {
	m.txn.adding = false
	switch p.Error {
	case wire.None:
	case wire.ConcurrentTransactions:
		// The previous transaction's markers are still being written.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmAddPartitionsRetry, Client: m.Client, Inc: m.Inc})
		return
	default:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: AddPartitionsToTxn refused with %s: ProducerFencedException", m.label(), p.Error)
		m.fatal("producer fenced")
		return
	}
	for _, tp := range p.Req.Body.(*wire.AddPartitionsToTxnRequest).Partitions {
		m.txn.partitions[tp] = true
	}
	q := m.prod.queued
	m.prod.queued = nil
	for _, req := range q {
		if m.txn.partitions[req.TP] {
			m.sendProduce(req)
		} else {
			m.prod.queued = append(m.prod.queued, req)
		}
	}
	// Records for a partition that came while this one was being added.
	m.addPartitionsRetry()
}

// addPartitionsRetry asks again to add the partition the first queued record needs.
func (m *Member) addPartitionsRetry() {
	if m.Alive && len(m.prod.queued) > 0 && !m.txn.adding {
		m.txn.adding = true
		tp := m.prod.queued[0].TP
		m.send(&wire.Packet{Type: wire.AddPartitionsToTxn, Summary: m.prod.txnID + " " + tp.String(),
			Body: &wire.AddPartitionsToTxnRequest{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, Partitions: []wire.TopicPartition{tp}}})
	}
}

// commitTxn is sendOffsetsToTransaction then commitTransaction.
func (m *Member) commitTxn(offs map[wire.TopicPartition]int, then cont) {
	if !m.txn.open {
		m.resume(then)
		return
	}
	m.txn.then, m.txn.offs = then, offs
	m.loop = LoopTxnOffsets
	m.send(&wire.Packet{Type: wire.AddOffsetsToTxn, Summary: m.prod.txnID + " group " + m.host.GroupID(),
		Body: &wire.AddOffsetsToTxnRequest{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, Group: m.host.GroupID()}})
}

func (m *Member) onAddOffsetsResponse(p *wire.Packet) {
	if p.Error != wire.None {
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: AddOffsetsToTxn refused with %s: ProducerFencedException", m.label(), p.Error)
		m.fatal("producer fenced")
		return
	}
	req := &wire.TxnOffsetCommitRequest{TransactionalID: m.prod.txnID, Group: m.host.GroupID(), PID: m.prod.pid, Epoch: m.prod.epoch,
		MemberID: m.MemberID, Generation: m.Generation, InstanceID: m.Cfg.InstanceID}
	tps := make([]wire.TopicPartition, 0, len(m.txn.offs))
	for tp := range m.txn.offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].Less(tps[j]) })
	for _, tp := range tps {
		req.Partitions = append(req.Partitions, tp)
		req.Offsets = append(req.Offsets, m.txn.offs[tp])
	}
	m.send(&wire.Packet{Type: wire.TxnOffsetCommit, Summary: m.env.Layout().Offsets(req.Partitions, req.Offsets) + ", " + m.epochWord() + " " + strconv.Itoa(req.Generation) + ", " + wire.OrDash(req.MemberID),
		Body: req})
}

func (m *Member) onTxnOffsetCommitResponse(p *wire.Packet) {
	switch p.Error {
	case wire.None:
		m.flush(contEndTxnCommit)
	case wire.UnknownMemberID, wire.IllegalGeneration, wire.FencedInstanceID:
		// TransactionManager.TxnOffsetCommitHandler.handleResponse: an
		// abortable error (abortableError): sendOffsetsToTransaction throws
		// it, and the application, not the client, aborts the transaction
		// (the consume-process-produce loop's abortTransaction). A consumer
		// group answers a stale member epoch with ILLEGAL_GENERATION here
		// (OffsetMetadataManager.validateTransactionalOffsetCommit).
		// The producer's error does not reach the consumer: its
		// coordinator keeps its generation, and it learns of the new one
		// from its own next answer (a heartbeat's, or a commit's).
		ex := "CommitFailedException"
		if p.Error == wire.FencedInstanceID {
			ex = "FencedInstanceIdException"
		}
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: TxnOffsetCommit refused with %s: sendOffsetsToTransaction throws %s (abortable), the application aborts the transaction", m.label(), p.Error, ex)
		m.flush(contEndTxnAbort)
	default:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: TxnOffsetCommit refused with %s: ProducerFencedException", m.label(), p.Error)
		m.fatal("producer fenced")
	}
}

func (m *Member) endTxn(commit bool) {
	m.loop = LoopTxnEnd
	s := "COMMIT"
	if !commit {
		s = "ABORT"
	}
	m.send(&wire.Packet{Type: wire.EndTxn, Summary: m.prod.txnID + " " + s,
		Body: &wire.EndTxnRequest{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, Commit: commit}})
	m.endTxnSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmEndTxnTimeout, Client: m.Client, Inc: m.Inc, Key: m.endTxnSeq, Arg: boolInt(commit)})
}

func (m *Member) onEndTxnResponse(p *wire.Packet) {
	req := p.Req.Body.(*wire.EndTxnRequest)
	if m.loop != LoopTxnEnd {
		return // an answer to an EndTxn this producer has stopped waiting for
	}
	switch p.Error {
	case wire.None:
	case wire.ConcurrentTransactions:
		// TransactionManager.EndTxnHandler: retriable; ask again after the backoff.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmEndTxnRetry, Client: m.Client, Inc: m.Inc, Key: boolInt(req.Commit)})
		return
	case wire.InvalidTxnState:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: EndTxn refused with INVALID_TXN_STATE: the producer fails (KafkaException)", m.label())
		m.fatal("INVALID_TXN_STATE on EndTxn")
		return
	default:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: EndTxn refused with %s: ProducerFencedException", m.label(), p.Error)
		m.fatal("producer fenced")
		return
	}
	if req.Commit {
		for tp, o := range m.txn.offs {
			m.committed.set(tp, o)
		}
	} else {
		// Aborted: the application rewinds to what is committed, so the
		// records are read again. A partition it never fetched an offset
		// for (a world that starts stable) has none committed: it rewinds
		// as auto.offset.reset=earliest says, as it does for a committed
		// offset of -1. Only partitions it still owns: Kafka's seek
		// refuses others.
		for tp := range m.txn.offs {
			if !m.owns(tp) {
				continue
			}
			c, ok := m.committed.get(tp)
			if !ok || c < 0 {
				c = 0
			}
			m.positions.set(tp, c)
			m.processed.set(tp, c)
		}
	}
	then := m.txn.then
	m.txn = clientTxn{}
	m.loop = LoopIdle
	m.resume(then)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
