package client

// Transactions, client side (Kafka's TransactionManager, as
// KafkaProducer's transactional calls drive it): beginTransaction,
// AddPartitionsToTxn before the first record to a partition,
// sendOffsetsToTransaction (AddOffsetsToTxn, then TxnOffsetCommit to the
// group coordinator), commitTransaction / abortTransaction (EndTxn).

import (
	"sort"
	"strconv"

	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// clientTxn is the transactional producer's view of its transaction.
type clientTxn struct {
	open       bool
	partitions map[wire.TopicPartition]bool
	adding     bool
	then       cont
	offs       map[wire.TopicPartition]int
}

// beginTxn is beginTransaction.
func (pr *producer) beginTxn() {
	pr.txn = clientTxn{open: true, partitions: map[wire.TopicPartition]bool{}}
}

func (pr *producer) onAddPartitionsResponse(m *Member, p *wire.Packet) {
	if !pr.answered(callAddPartitions, p) {
		return // an answer to a request sent again, answered already
	}
	pr.txn.adding = false
	switch p.Error {
	case wire.None:
	case wire.ConcurrentTransactions:
		// The previous transaction's markers are still being written.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmAddPartitionsRetry, Client: m.Client, Inc: m.Inc})
		return
	default:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: AddPartitionsToTxn refused with %s: ProducerFencedException", m.Label(), p.Error)
		m.fatal("producer fenced")
		return
	}
	for _, tp := range p.Req.Body.(*wire.AddPartitionsToTxnRequest).Partitions {
		pr.txn.partitions[tp] = true
	}
	q := pr.queued
	pr.queued = nil
	for _, req := range q {
		if pr.txn.partitions[req.TP] {
			pr.gate(m, req)
		} else {
			pr.queued = append(pr.queued, req)
		}
	}
	// Records for a partition that came while this one was being added.
	pr.addPartitionsRetry(m)
}

// addPartitionsRetry asks again to add the partition the first queued record needs.
func (pr *producer) addPartitionsRetry(m *Member) {
	if m.Alive && len(pr.queued) > 0 && !pr.txn.adding {
		pr.addPartitions(m, pr.queued[0].TP)
	}
}

// addPartitions asks the transaction coordinator to add tp to the
// transaction (AddPartitionsToTxn), before the records queued for it go.
func (pr *producer) addPartitions(m *Member, tp wire.TopicPartition) {
	pr.txn.adding = true
	seq := pr.coord.next()
	pr.call(m, callAddPartitions, pr.txnID+" "+tp.String(),
		&wire.AddPartitionsToTxnRequest{TransactionalID: pr.txnID, PID: pr.pid, Epoch: pr.epoch, Partitions: []wire.TopicPartition{tp}, Call: seq})
}

// commitTxn is sendOffsetsToTransaction then commitTransaction.
func (pr *producer) commitTxn(m *Member, offs map[wire.TopicPartition]int, then cont) {
	if !pr.txn.open {
		m.loop.resume(m, then)
		return
	}
	pr.txn.then, pr.txn.offs = then, offs
	m.loop.state = LoopTxnOffsets
	seq := pr.coord.next()
	pr.call(m, callAddOffsets, pr.txnID+" group "+m.host.GroupID(),
		&wire.AddOffsetsToTxnRequest{TransactionalID: pr.txnID, PID: pr.pid, Epoch: pr.epoch, Group: m.host.GroupID(), Call: seq})
}

func (pr *producer) onAddOffsetsResponse(m *Member, p *wire.Packet) {
	if !pr.answered(callAddOffsets, p) {
		return // an answer to a request sent again, answered already
	}
	if p.Error != wire.None {
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: AddOffsetsToTxn refused with %s: ProducerFencedException", m.Label(), p.Error)
		m.fatal("producer fenced")
		return
	}
	seq := pr.coord.next()
	req := &wire.TxnOffsetCommitRequest{TransactionalID: pr.txnID, Group: m.host.GroupID(), PID: pr.pid, Epoch: pr.epoch,
		MemberID: m.MemberID, Generation: m.Generation, InstanceID: m.Cfg.InstanceID, Call: seq}
	tps := make([]wire.TopicPartition, 0, len(pr.txn.offs))
	for tp := range pr.txn.offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].Less(tps[j]) })
	for _, tp := range tps {
		req.Partitions = append(req.Partitions, tp)
		req.Offsets = append(req.Offsets, pr.txn.offs[tp])
	}
	pr.call(m, callTxnOffsetCommit, m.env.Layout().Offsets(req.Partitions, req.Offsets)+", "+epochWord(m.group.memberEpochs())+" "+strconv.Itoa(req.Generation)+", "+wire.OrDash(req.MemberID), req)
}

func (pr *producer) onTxnOffsetCommitResponse(m *Member, p *wire.Packet) {
	if !pr.answered(callTxnOffsetCommit, p) {
		return // an answer to a request sent again, answered already
	}
	switch p.Error {
	case wire.None:
		pr.flush(m, contEndTxnCommit)
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
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: TxnOffsetCommit refused with %s: sendOffsetsToTransaction throws %s (abortable), the application aborts the transaction", m.Label(), p.Error, ex)
		pr.flush(m, contEndTxnAbort)
	default:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: TxnOffsetCommit refused with %s: ProducerFencedException", m.Label(), p.Error)
		m.fatal("producer fenced")
	}
}

func (pr *producer) endTxn(m *Member, commit bool) {
	m.loop.state = LoopTxnEnd
	s := "COMMIT"
	if !commit {
		s = "ABORT"
	}
	m.send(&wire.Packet{Type: wire.EndTxn, Summary: pr.txnID + " " + s,
		Body: &wire.EndTxnRequest{TransactionalID: pr.txnID, PID: pr.pid, Epoch: pr.epoch, Commit: commit}})
	pr.endTxnSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmEndTxnTimeout, Client: m.Client, Inc: m.Inc, Key: pr.endTxnSeq, Arg: boolInt(commit)})
}

func (pr *producer) onEndTxnResponse(m *Member, p *wire.Packet) {
	req := p.Req.Body.(*wire.EndTxnRequest)
	if m.loop.state != LoopTxnEnd {
		return // an answer to an EndTxn this producer has stopped waiting for
	}
	switch p.Error {
	case wire.None:
	case wire.ConcurrentTransactions:
		// TransactionManager.EndTxnHandler: retriable; ask again after the backoff.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmEndTxnRetry, Client: m.Client, Inc: m.Inc, Key: boolInt(req.Commit)})
		return
	case wire.InvalidTxnState:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: EndTxn refused with INVALID_TXN_STATE: the producer fails (KafkaException)", m.Label())
		m.fatal("INVALID_TXN_STATE on EndTxn")
		return
	default:
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: EndTxn refused with %s: ProducerFencedException", m.Label(), p.Error)
		m.fatal("producer fenced")
		return
	}
	if req.Commit {
		for tp, o := range pr.txn.offs {
			m.committed.set(tp, o)
		}
	} else {
		// Aborted: the application rewinds to what is committed, so the
		// records are read again. A partition it never fetched an offset
		// for (a world that starts stable) has none committed: it rewinds
		// as auto.offset.reset=earliest says, as it does for a committed
		// offset of -1. Only partitions it still owns: Kafka's seek
		// refuses others.
		for tp := range pr.txn.offs {
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
	then := pr.txn.then
	pr.txn = clientTxn{}
	m.loop.state = LoopIdle
	m.loop.resume(m, then)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// epochWord names what commits carry: the generation (classic) or the
// member epoch (consumer: memberEpochs).
func epochWord(memberEpochs bool) string {
	if memberEpochs {
		return "epoch"
	}
	return "gen"
}
