// producer_init.go: a producer's identity: InitProducerId, which gives it its
// PID and epoch (TransactionManager.initializeTransactions), and the
// replacement of a producer whose settings changed (close() and a new
// KafkaProducer); producer.go sends its records, txn.go its transactions.

package client

import (
	"fmt"
	"strings"

	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// replace closes the member's producer and creates one with the
// settings the member has now. It is kgrepl's stand-in for "the
// application was redeployed with a new producer config": a
// KafkaProducer's config is fixed when it is constructed, so changing
// enable.idempotence or transactional.id means close() and a new
// KafkaProducer. ready calls it only between batches, once the old
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
func (pr *producer) replace(m *Member) {
	old := *pr
	*pr = newProducer(m.Cfg)
	// The new producer's numbers go on from the old one's, so a timer of
	// the old one finds nothing; so does its transaction state, which
	// between batches is that of none open.
	pr.nextID, pr.endTxnSeq, pr.txn, pr.coord.last = old.nextID, old.endTxnSeq, old.txn, old.coord.last
	if old.sent == 0 {
		return // never sent anything: as if it had been created with these settings
	}
	m.env.Trace().Eventf(trace.EvProducer, m.Client, "%s's producer settings changed: it closes its %s and creates a new %s",
		m.Label(), describeProducer(old.mode, old.pid, old.epoch, old.txnID), describeProducer(pr.mode, -1, 0, pr.txnID))
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

func (pr *producer) initProducerID(m *Member) {
	pr.initInFlight = true
	seq := pr.coord.next()
	req := &wire.InitProducerIDRequest{TransactionalID: pr.txnID, Timeout: m.Cfg.TransactionTimeout, Call: seq}
	s := "idempotent"
	if req.TransactionalID != "" {
		s = "transactional.id " + req.TransactionalID
	}
	pr.call(m, callInitProducerID, s, req)
}

func (pr *producer) onInitPIDResponse(m *Member, p *wire.Packet) {
	if !pr.answered(callInitProducerID, p) {
		return // an answer to a request sent again, answered already
	}
	if p.Error == wire.ConcurrentTransactions {
		// The coordinator is still aborting what the previous instance left open.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmInitPIDRetry, Client: m.Client, Inc: m.Inc})
		return
	}
	pr.initInFlight = false
	if p.Error != wire.None {
		m.fatal(p.Error.String() + " on InitProducerId")
		return
	}
	r := p.Body.(*wire.InitProducerIDResponse)
	pr.pid, pr.epoch = r.PID, r.Epoch
	pr.seq = nil // sequence numbers start at 0 under the new PID (a slice of its own: clones share none)
}
