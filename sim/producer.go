package sim

import (
	"fmt"
	"hash/fnv"
	"sort"
)

// producer is a member's producer client: plain, idempotent (PID and
// sequence numbers) or transactional.
type producer struct {
	pid          int64 // -1 until InitProducerId answers (or for a plain producer)
	epoch        int
	mode         ProducerMode
	txnID        string
	seq          map[TopicPartition]int
	nextID       int
	unacked      map[int]*produceReq
	queued       []*produceReq // waiting for AddPartitionsToTxn
	initInFlight bool
}

func newProducer() producer {
	return producer{pid: -1, seq: map[TopicPartition]int{}, unacked: map[int]*produceReq{}, mode: ProducerPlain}
}

// clientTxn is the transactional producer's view of its transaction.
type clientTxn struct {
	open       bool
	partitions map[TopicPartition]bool
	adding     bool
	then       cont
	offs       map[TopicPartition]int
}

// producerReady reports whether the producer can send with the mode the
// config asks for; it starts InitProducerId when it cannot.
func (m *Member) producerReady(w *World) bool {
	want := m.Cfg.Producer()
	if (want != m.prod.mode || m.prod.txnID != m.Cfg.TransactionalID) && len(m.prod.unacked) > 0 {
		return false // the old producer is closed only once it has flushed (retries included)
	}
	if want == ProducerPlain {
		if m.prod.mode != ProducerPlain {
			m.prod = newProducer()
		}
		return true
	}
	if m.prod.pid >= 0 && m.prod.mode == want && m.prod.txnID == m.Cfg.TransactionalID {
		return true
	}
	if !m.prod.initInFlight {
		m.initProducer(w)
	}
	return false
}

func (m *Member) initProducer(w *World) {
	m.prod.initInFlight = true
	req := &initPIDReq{TransactionalID: m.Cfg.TransactionalID, Timeout: m.Cfg.TransactionTimeout}
	s := "idempotent"
	if req.TransactionalID != "" {
		s = "transactional.id " + req.TransactionalID
	}
	m.send(w, &Packet{Type: InitProducerID, Summary: s, Body: req})
}

func (m *Member) onInitPIDResponse(w *World, p *Packet) {
	if p.Error == ConcurrentTransactions {
		// The coordinator is still aborting what the previous instance left open.
		w.after(timer{at: w.Tick + m.Cfg.RetryBackoff, kind: tmInitPIDRetry, client: m.Client, inc: m.Inc})
		return
	}
	m.prod.initInFlight = false
	if p.Error != None {
		m.fatal(w, p.Error.String()+" on InitProducerId")
		return
	}
	r := p.Body.(*initPIDResp)
	m.prod.pid, m.prod.epoch = r.PID, r.Epoch
	m.prod.mode, m.prod.txnID = m.Cfg.Producer(), m.Cfg.TransactionalID
	m.prod.seq = map[TopicPartition]int{}
}

// outputPartition picks the invoice partition for an input record: a hash
// of the key, as the default partitioner does.
func (w *World) outputPartition(source string) TopicPartition {
	h := fnv.New32a()
	h.Write([]byte(source))
	return w.outputTPs[int(h.Sum32()%uint32(len(w.outputTPs)))]
}

// produceInvoice sends inv(x) for a processed record.
func (m *Member) produceInvoice(w *World, f fetched) {
	tp := w.outputPartition(f.Value)
	pr := &m.prod
	pr.nextID++
	req := &produceReq{ID: pr.nextID, TP: tp, Value: "inv(" + f.Value + ")", Source: f.Value, PID: -1, Seq: -1, Producer: m.Client}
	if pr.pid >= 0 && m.Cfg.Producer() != ProducerPlain {
		req.PID, req.Epoch = pr.pid, pr.epoch
		req.Seq = pr.seq[tp]
		pr.seq[tp]++
		req.Txn = m.Cfg.Producer() == ProducerTransactional
	}
	pr.unacked[req.ID] = req
	if req.Txn && !m.txn.partitions[tp] {
		pr.queued = append(pr.queued, req)
		if !m.txn.adding {
			m.txn.adding = true
			m.send(w, &Packet{Type: AddPartitionsToTxn, Summary: m.prod.txnID + " " + tp.String(),
				Body: &addPartitionsReq{TransactionalID: pr.txnID, PID: pr.pid, Epoch: pr.epoch, Partitions: []TopicPartition{tp}}})
		}
		return
	}
	m.sendProduce(w, req)
}

func (m *Member) sendProduce(w *World, req *produceReq) {
	s := req.Value
	if req.PID >= 0 {
		s += fmt.Sprintf(" pid %d epoch %d seq %d", req.PID, req.Epoch, req.Seq)
	}
	if req.Attempt > 0 {
		s += " (retry)"
	}
	m.send(w, &Packet{Type: Produce, Summary: s, Body: req})
	// Without an answer by the round trip, retry after retry.backoff.ms.
	w.after(timer{at: w.Tick + 2 + m.Cfg.RetryBackoff, kind: tmProduceRetry, client: m.Client, inc: m.Inc, n: req.ID, m: req.Attempt})
}

// produceRetry resends a produce still unanswered at that attempt.
func (m *Member) produceRetry(w *World, id, attempt int) {
	cur := m.prod.unacked[id]
	if m.Alive && cur != nil && cur.Attempt == attempt {
		m.retryProduce(w, cur)
	}
}

func (m *Member) retryProduce(w *World, req *produceReq) {
	nr := *req
	nr.Attempt++
	m.prod.unacked[nr.ID] = &nr
	w.event(EvRetry, m.Client, "%s retries %s (no answer)", m.label(w), nr.Value)
	m.sendProduce(w, &nr)
}

func (m *Member) onProduceResponse(w *World, p *Packet) {
	r := p.Body.(*produceResp)
	req := m.prod.unacked[r.ID]
	if req == nil {
		return
	}
	switch p.Error {
	case None:
		delete(m.prod.unacked, r.ID)
	case OutOfOrderSequenceNumber:
		// An earlier sequence has not landed yet: send this one again later.
		w.after(timer{at: w.Tick + m.Cfg.RetryBackoff, kind: tmProduceRetry, client: m.Client, inc: m.Inc, n: r.ID, m: req.Attempt})
		return
	case DuplicateSequenceNumber:
		delete(m.prod.unacked, r.ID) // written before: nothing to do
	case InvalidProducerEpoch, ProducerFenced:
		// The transaction cannot commit any more; the next call to the
		// transaction coordinator is refused and ends the producer.
		w.event(EvFenced, m.Client, "%s: produce of %s refused with %s: a newer producer epoch exists", m.label(w), req.Value, p.Error)
		delete(m.prod.unacked, r.ID)
	default:
		delete(m.prod.unacked, r.ID)
	}
	m.checkFlushed(w)
}

// flush waits until every produce is answered, then runs then.
func (m *Member) flush(w *World, then cont) {
	if len(m.prod.unacked) == 0 {
		m.resume(w, then)
		return
	}
	m.loop = LoopFlushing
	m.afterFlush = then
}

func (m *Member) checkFlushed(w *World) {
	if m.loop == LoopFlushing && len(m.prod.unacked) == 0 {
		then := m.afterFlush
		m.afterFlush = contNone
		m.loop = LoopIdle
		m.resume(w, then)
	}
}

// --- transactions, client side ---

func (m *Member) beginTxn(w *World) {
	m.txn = clientTxn{open: true, partitions: map[TopicPartition]bool{}}
}

func (m *Member) onAddPartitionsResponse(w *World, p *Packet) {
	m.txn.adding = false
	switch p.Error {
	case None:
	case ConcurrentTransactions:
		// The previous transaction's markers are still being written.
		w.after(timer{at: w.Tick + m.Cfg.RetryBackoff, kind: tmAddPartitionsRetry, client: m.Client, inc: m.Inc})
		return
	default:
		w.event(EvFenced, m.Client, "%s: AddPartitionsToTxn refused with %s: ProducerFencedException", m.label(w), p.Error)
		m.fatal(w, "producer fenced")
		return
	}
	for _, tp := range p.Req.Body.(*addPartitionsReq).Partitions {
		m.txn.partitions[tp] = true
	}
	q := m.prod.queued
	m.prod.queued = nil
	for _, req := range q {
		if m.txn.partitions[req.TP] {
			m.sendProduce(w, req)
		} else {
			m.prod.queued = append(m.prod.queued, req)
		}
	}
	// Records for a partition that came while this one was being added.
	m.addPartitionsRetry(w)
}

// addPartitionsRetry asks again to add the partition the first queued record needs.
func (m *Member) addPartitionsRetry(w *World) {
	if m.Alive && len(m.prod.queued) > 0 && !m.txn.adding {
		m.txn.adding = true
		tp := m.prod.queued[0].TP
		m.send(w, &Packet{Type: AddPartitionsToTxn, Summary: m.prod.txnID + " " + tp.String(),
			Body: &addPartitionsReq{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, Partitions: []TopicPartition{tp}}})
	}
}

// commitTxn is sendOffsetsToTransaction then commitTransaction.
func (m *Member) commitTxn(w *World, offs map[TopicPartition]int, then cont) {
	if !m.txn.open {
		m.resume(w, then)
		return
	}
	m.txn.then, m.txn.offs = then, offs
	m.loop = LoopTxnOffsets
	m.send(w, &Packet{Type: AddOffsetsToTxn, Summary: m.prod.txnID + " group " + w.Group.ID,
		Body: &addOffsetsReq{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, Group: w.Group.ID}})
}

func (m *Member) onAddOffsetsResponse(w *World, p *Packet) {
	if p.Error != None {
		w.event(EvFenced, m.Client, "%s: AddOffsetsToTxn refused with %s: ProducerFencedException", m.label(w), p.Error)
		m.fatal(w, "producer fenced")
		return
	}
	req := &txnOffsetCommitReq{TransactionalID: m.prod.txnID, Group: w.Group.ID, PID: m.prod.pid, Epoch: m.prod.epoch,
		MemberID: m.MemberID, Generation: m.Generation, InstanceID: m.Cfg.InstanceID}
	tps := make([]TopicPartition, 0, len(m.txn.offs))
	for tp := range m.txn.offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].Less(tps[j]) })
	for _, tp := range tps {
		req.Partitions = append(req.Partitions, tp)
		req.Offsets = append(req.Offsets, m.txn.offs[tp])
	}
	m.send(w, &Packet{Type: TxnOffsetCommit, Summary: offsetSummary(w, req.Partitions, req.Offsets) + ", gen " + itoa(req.Generation) + ", " + orDash(req.MemberID),
		Body: req})
}

func (m *Member) onTxnOffsetCommitResponse(w *World, p *Packet) {
	switch p.Error {
	case None:
		m.flush(w, contEndTxnCommit)
	case UnknownMemberID, IllegalGeneration, FencedInstanceID:
		w.event(EvCommitFailed, m.Client, "%s: TxnOffsetCommit refused with %s: CommitFailedException, aborting the transaction", m.label(w), p.Error)
		m.onFenced(w, p.Error, p.Req.Body.(*txnOffsetCommitReq).Generation)
		m.flush(w, contEndTxnAbort)
	default:
		w.event(EvFenced, m.Client, "%s: TxnOffsetCommit refused with %s: ProducerFencedException", m.label(w), p.Error)
		m.fatal(w, "producer fenced")
	}
}

func (m *Member) endTxn(w *World, commit bool) {
	m.loop = LoopTxnEnd
	s := "COMMIT"
	if !commit {
		s = "ABORT"
	}
	m.send(w, &Packet{Type: EndTxn, Summary: m.prod.txnID + " " + s,
		Body: &endTxnReq{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, Commit: commit}})
	m.endTxnSeq++
	w.after(timer{at: w.Tick + m.Cfg.RequestTimeout, kind: tmEndTxnTimeout, client: m.Client, inc: m.Inc, n: m.endTxnSeq, m: boolInt(commit)})
}

func (m *Member) onEndTxnResponse(w *World, p *Packet) {
	req := p.Req.Body.(*endTxnReq)
	if m.loop != LoopTxnEnd {
		return // an answer to an EndTxn this producer has stopped waiting for
	}
	switch p.Error {
	case None:
	case ConcurrentTransactions:
		// TransactionManager.EndTxnHandler: retriable; ask again after the backoff.
		w.after(timer{at: w.Tick + m.Cfg.RetryBackoff, kind: tmEndTxnRetry, client: m.Client, inc: m.Inc, n: boolInt(req.Commit)})
		return
	case InvalidTxnState:
		w.event(EvFenced, m.Client, "%s: EndTxn refused with INVALID_TXN_STATE: the producer fails (KafkaException)", m.label(w))
		m.fatal(w, "INVALID_TXN_STATE on EndTxn")
		return
	default:
		w.event(EvFenced, m.Client, "%s: EndTxn refused with %s: ProducerFencedException", m.label(w), p.Error)
		m.fatal(w, "producer fenced")
		return
	}
	if req.Commit {
		for tp, o := range m.txn.offs {
			m.committed[tp] = o
		}
	} else {
		// Aborted: rewind to what is committed, so the records are read again.
		for tp := range m.txn.offs {
			if c, ok := m.committed[tp]; ok {
				if c < 0 {
					c = 0 // no committed offset: auto.offset.reset=earliest
				}
				m.positions[tp], m.processed[tp] = c, c
			}
		}
	}
	then := m.txn.then
	m.txn = clientTxn{}
	m.loop = LoopIdle
	m.resume(w, then)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
