package sim

import (
	"strings"
	"testing"
)

// TestLostCoordinatorCallIsSentAgain: a transactional producer's
// InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn or TxnOffsetCommit
// whose request or answer is lost goes again, unchanged, once
// request.timeout.ms passes without an answer (TransactionManager.
// TxnRequestHandler.onComplete: a request that timed out is a
// disconnection, and the handler is re-enqueued), and the group catches
// up. Before, the producer waited for ever: a consumer stuck in
// sendOffsetsToTransaction, its partitions never committed.
func TestLostCoordinatorCallIsSentAgain(t *testing.T) {
	for _, proto := range protocols {
		for _, typ := range []API{InitProducerID, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit} {
			for _, answer := range []bool{false, true} {
				name := string(proto) + "/" + string(typ)
				if answer {
					name += "/answer"
				}
				t.Run(name, func(t *testing.T) {
					cfg := DefaultConfig()
					cfg.Client.TransactionalID = "tx-" + ClientPlaceholder
					cfg.Client.GroupProtocol = string(proto)
					w, err := New(DefaultTopology(), cfg)
					if err != nil {
						t.Fatal(err)
					}
					if answer {
						w.Drop(DropRule{Type: typ, Response: true, To: "C1", Count: 1})
					} else {
						w.Drop(DropRule{Type: typ, From: "C1", Count: 1})
					}
					// A new process of C1: its producer starts with
					// InitProducerId (the world's first ones start with
					// theirs done).
					if err := w.Restart("C1"); err != nil {
						t.Fatal(err)
					}
					c := NewChecker()
					for i := 0; i < 400 && (len(w.PendingDrops()) > 0 || !w.CaughtUp()); i++ {
						w.Step()
						if err := c.Check(w); err != nil {
							t.Fatal(err)
						}
					}
					if len(w.PendingDrops()) > 0 {
						t.Fatalf("C1 sent no %s in 400 ticks", typ)
					}
					if !w.CaughtUp() {
						t.Fatalf("not caught up after the lost %s (C1's loop %s)", typ, w.Member("C1").Hooks().Loop())
					}
					lost, again := -1, -1
					for _, p := range packetsOf(w, typ, "C1", answer) {
						if p.Lost {
							lost = p.Sent
						} else if lost >= 0 && again < 0 {
							again = p.Sent
						}
					}
					if !answer {
						if again-lost != cfg.Client.RequestTimeout {
							t.Errorf("%s lost at tick %d, sent again at %d: want request.timeout.ms (%d) later", typ, lost, again, cfg.Client.RequestTimeout)
						}
					}
					retries := 0
					for _, e := range eventsOf(w, EvRetry, "C1") {
						if strings.Contains(e.Text, "no answer to "+string(typ)+" within request.timeout.ms") {
							retries++
						}
					}
					if retries != 1 {
						t.Errorf("%d events of %s sent again, want 1", retries, typ)
					}
				})
			}
		}
	}
}
