package sim

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// producerEvents lists a client's EvProducer events.
func producerEvents(w *World, client string) []Event {
	var out []Event
	for _, e := range w.Events.All() {
		if e.Kind == EvProducer && e.Member == client {
			out = append(out, e)
		}
	}
	return out
}

// noFenced fails the test on any fenced or stopped producer.
func noFenced(t *testing.T, w *World) {
	t.Helper()
	for _, e := range w.Events.All() {
		if e.Kind == EvFenced {
			t.Errorf("t=%d %s", e.Tick, e.Text)
		}
	}
}

// Switching a running group to transactions: each member finishes the
// batch in hand with its idempotent producer, flushes it, closes it and
// creates a transactional one, which starts with
// InitProducerId(transactional.id) and only then AddPartitionsToTxn. The
// teammate's report: both members were fenced at once with
// INVALID_PRODUCER_ID_MAPPING and the group emptied.
func TestSwitchToTransactionalMidRun(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	keepBodies(w)
	c := NewChecker()
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 50, w.GroupSettled)
	stepChecked(t, w, c, 5)
	switchTick := w.Tick
	if err := w.SetProducer("transactional"); err != nil {
		t.Fatal(err)
	}
	stepChecked(t, w, c, 40)

	noFenced(t, w)
	if n := len(w.Group.Members()); n != 2 {
		t.Fatalf("the group has %d members after the switch, want 2", n)
	}
	for _, client := range []string{"C1", "C2"} {
		m := w.current[client]
		if !m.Alive {
			t.Fatalf("%s stopped", client)
		}
		txnID := "tx-" + client
		evs := producerEvents(w, client)
		if len(evs) != 1 || !strings.Contains(evs[0].Text, "closes its idempotent producer") ||
			!strings.Contains(evs[0].Text, "creates a new transactional producer (transactional.id "+txnID+")") {
			t.Fatalf("%s's producer events: %+v, want one idempotent -> transactional", client, evs)
		}
		closed := evs[0].Tick
		// The old producer sent every record before it closed; the new one
		// none before its InitProducerId was answered.
		initAnswered, firstAdd := -1, -1
		oldPID := int64(-1)
		for _, p := range w.Packets.All() {
			p = withBody(w, p)
			switch {
			case p.From == client && p.Type == Produce && !p.Response:
				r := p.Body.(*wire.ProduceRequest)
				if p.Sent <= closed {
					if r.Txn {
						t.Errorf("t=%d %s sent a transactional record before its producer was replaced", p.Sent, client)
					}
					oldPID = r.PID
				} else if !r.Txn || r.PID == oldPID || initAnswered < 0 || firstAdd < 0 {
					t.Errorf("t=%d %s after the switch: %s (txn %v, pid %d; old pid %d; InitProducerId answered at %d, first AddPartitionsToTxn at %d)",
						p.Sent, client, p.Summary, r.Txn, r.PID, oldPID, initAnswered, firstAdd)
				}
			case p.To == client && p.Type == InitProducerID && p.Response && p.Sent > switchTick:
				if r := p.Req.Body.(*wire.InitProducerIDRequest); r.TransactionalID != txnID || p.Error != None {
					t.Errorf("t=%d InitProducerId(%q) answered %s, want %s and NONE", p.Sent, r.TransactionalID, p.Error, txnID)
				}
				initAnswered = p.Sent
			case p.From == client && p.Type == AddPartitionsToTxn && !p.Response:
				if p.Sent < closed || initAnswered < 0 {
					t.Errorf("t=%d %s sent AddPartitionsToTxn before its transactional producer was initialised", p.Sent, client)
				}
				if firstAdd < 0 {
					firstAdd = p.Sent
				}
			}
		}
		if initAnswered < 0 || firstAdd < 0 {
			t.Fatalf("%s: InitProducerId answered at %d, first AddPartitionsToTxn at %d", client, initAnswered, firstAdd)
		}
		e := w.Txn.Entry(txnID)
		if e == nil {
			t.Fatalf("%s not registered with the transaction coordinator", txnID)
		}
		committed := false
		for _, tr := range w.Txn.Transitions.All() {
			if tr.TransactionalID == txnID && tr.To == TxnCompleteCommit {
				committed = true
			}
		}
		if !committed {
			t.Errorf("%s committed no transaction in 40 ticks", txnID)
		}
	}
}

// The other direction, with a transaction open when the setting changes:
// the batch in hand ends with commitTransaction as the loop always does,
// and only then is the transactional producer closed (close() would abort
// a transaction still open: Sender.run). Nothing is left for the
// coordinator's transaction.timeout.ms abort.
func TestSwitchFromTransactionalMidTransaction(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client.TransactionalID = "tx-" + ClientPlaceholder
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	keepBodies(w)
	c := NewChecker()
	e := w.Txn.Entry("tx-C1")
	stepUntil(t, w, c, 30, func() bool { return e.State == TxnOngoing })
	m := w.current["C1"]
	if !m.Hooks().TxnOpen() || m.Hooks().Loop() != LoopProcessing {
		t.Fatalf("tick %d: C1 loop %s, transaction open %v: want a batch in hand inside a transaction", w.Tick, m.Hooks().Loop(), m.Hooks().TxnOpen())
	}
	txnPID := m.Hooks().ProducerPID()
	switchTick := w.Tick
	if err := w.SetProducer("idempotent"); err != nil {
		t.Fatal(err)
	}
	// Past transaction.timeout.ms (30): an abandoned transaction would
	// have been aborted by now.
	stepChecked(t, w, c, cfg.Client.TransactionTimeout+10)

	noFenced(t, w)
	if w.Txn.Aborted != 0 || w.Txn.TimedOut != 0 {
		t.Fatalf("transactions aborted %d (timed out %d), want none", w.Txn.Aborted, w.Txn.TimedOut)
	}
	if e.State != TxnCompleteCommit {
		t.Fatalf("tx-C1 is %s, want CompleteCommit", e.State)
	}
	evs := producerEvents(w, "C1")
	if len(evs) != 1 || !strings.Contains(evs[0].Text, "closes its transactional producer (transactional.id tx-C1") ||
		!strings.Contains(evs[0].Text, "creates a new idempotent producer") {
		t.Fatalf("C1's producer events: %+v, want one transactional -> idempotent", evs)
	}
	closed := evs[0].Tick
	endTxnAnswered, idempotentInit := -1, -1
	var newPIDs []int64
	for _, p := range w.Packets.All() {
		p = withBody(w, p)
		switch {
		case p.To == "C1" && p.Type == EndTxn && p.Response && p.Sent >= switchTick:
			if r := p.Req.Body.(*wire.EndTxnRequest); !r.Commit || p.Error != None {
				t.Errorf("t=%d EndTxn commit=%v answered %s, want COMMIT answered NONE", p.Sent, r.Commit, p.Error)
			}
			endTxnAnswered = p.Sent
		case p.From == "C1" && p.Type == InitProducerID && !p.Response && p.Sent >= closed:
			if r := p.Body.(*wire.InitProducerIDRequest); r.TransactionalID != "" {
				t.Errorf("t=%d InitProducerId(%q) after the switch, want one without a transactional.id", p.Sent, r.TransactionalID)
			}
			idempotentInit = p.Sent
		case p.From == "C1" && p.Type == Produce && !p.Response && p.Sent > closed:
			r := p.Body.(*wire.ProduceRequest)
			if r.Txn || r.PID == txnPID || r.PID < 0 {
				t.Errorf("t=%d after the switch: %s (txn %v pid %d), want an idempotent record with a new pid", p.Sent, p.Summary, r.Txn, r.PID)
			}
			newPIDs = append(newPIDs, r.PID)
		case p.From == "C1" && (p.Type == AddPartitionsToTxn || p.Type == AddOffsetsToTxn) && p.Sent > closed:
			t.Errorf("t=%d %s after the producer became idempotent", p.Sent, p.Type)
		}
	}
	if endTxnAnswered < 0 || endTxnAnswered > closed || idempotentInit < 0 || len(newPIDs) == 0 {
		t.Fatalf("EndTxn(COMMIT) answered at %d, producer closed at %d, idempotent InitProducerId at %d, %d records after: want commit, close, init, records",
			endTxnAnswered, closed, idempotentInit, len(newPIDs))
	}
	// Every invoice is committed or plain: nothing holds the LSO back.
	for _, tp := range w.layout.Outputs() {
		if l := w.broker.Log(tp); l.LSO() != l.HW() {
			t.Errorf("%s: LSO %d < HW %d", tp, l.LSO(), l.HW())
		}
	}
}

// Random schedules with the producer settings changed at random ticks, for
// every client or one: invariants hold every tick, no producer ever uses a
// PID the coordinator does not map to its transactional.id, and the group
// settles with every record processed.
func TestPropertyProducerSwitches(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	modes := []string{"plain", "idempotent", "transactional"}
	for seed := 0; seed < seeds; seed++ {
		// A random topology, every commit mode by turns, 3 to 12 records
		// per partition, 200 ticks of faults by C1 to C4 with static joins
		// on even seeds; then six producer switches drawn below.
		sc := seedWorld(t, seed, worldSpec{
			source:   1000,
			topology: randomTopology,
			commit:   cycle(1, CommitAuto, CommitAfter, CommitBefore),
			records:  span{3, 10},
			ticks:    200, clients: 4, static: seedsAt(2, 0),
		})
		w, cfg, sched, r := sc.w, sc.cfg, sc.sched, sc.r
		for i := 0; i < 6; i++ {
			tick, mode := r.Intn(200), modes[r.Intn(len(modes))]
			a := action{tick: tick, do: func(w *World) error { return w.SetProducer(mode) }, name: "set producer " + mode}
			if r.Intn(3) == 0 {
				c, id := fmt.Sprintf("C%d", 1+r.Intn(4)), fmt.Sprintf("t%d", r.Intn(3))
				a = action{tick: tick, do: func(w *World) error { return w.Set(c, "transactional.id", id) }, name: "set " + c + ".transactional.id " + id}
			}
			sched = append(sched, a)
		}
		sort.SliceStable(sched, func(i, j int) bool { return sched[i].tick < sched[j].tick })
		t.Run(fmt.Sprintf("seed%d-%s", seed, cfg.Client.Commit), func(t *testing.T) {
			runSchedule(t, w, sched, 200)
			ensureMember(t, w)
			if !settle(t, w, 5000) {
				t.Fatalf("not settled and caught up 5000 ticks after the schedule (group %s; schedule: %s)", w.Group.State(), names(sched))
			}
			for _, e := range w.Events.All() {
				if strings.Contains(e.Text, InvalidProducerIDMapping.String()) {
					t.Fatalf("t=%d %s (schedule: %s)", e.Tick, e.Text, names(sched))
				}
			}
		})
	}
}
