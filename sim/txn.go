package sim

import (
	"fmt"
	"slices"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TxnState is a transaction's state on the transaction coordinator.
type TxnState string

const (
	TxnEmpty             TxnState = "Empty"
	TxnOngoing           TxnState = "Ongoing"
	TxnPrepareCommit     TxnState = "PrepareCommit"
	TxnPrepareAbort      TxnState = "PrepareAbort"
	TxnCompleteCommit    TxnState = "CompleteCommit"
	TxnCompleteAbort     TxnState = "CompleteAbort"
	TxnPrepareEpochFence TxnState = "PrepareEpochFence"
	TxnDead              TxnState = "Dead"
)

// txnTransitions lists the states Kafka lets each state move to
// (TransactionState's validPreviousStates, read the other way round).
var txnTransitions = map[TxnState][]TxnState{
	TxnEmpty:             {TxnEmpty, TxnOngoing, TxnDead},
	TxnOngoing:           {TxnOngoing, TxnPrepareCommit, TxnPrepareAbort, TxnPrepareEpochFence},
	TxnPrepareCommit:     {TxnCompleteCommit},
	TxnPrepareAbort:      {TxnCompleteAbort},
	TxnCompleteCommit:    {TxnEmpty, TxnOngoing, TxnDead},
	TxnCompleteAbort:     {TxnEmpty, TxnOngoing, TxnDead},
	TxnPrepareEpochFence: {TxnPrepareAbort},
	TxnDead:              {},
}

// LegalTxnTransition reports whether Kafka allows from -> to.
func LegalTxnTransition(from, to TxnState) bool {
	for _, s := range txnTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// TxnEntry is one transactional.id in __transaction_state.
type TxnEntry struct {
	TransactionalID string
	PID             int64
	Epoch           int
	State           TxnState
	Partitions      []TopicPartition // data partitions in the open transaction
	Group           string           // the group whose offsets are in it ("" = none)
	Start           int              // tick the transaction began (-1: none open)
	Timeout         int
	LastUpdate      int
	markersLeft     int
	txnSeq          int // counts transactions, so a stale timeout does nothing
	// logged is the partition list of the newest __transaction_state
	// record: records whose list is the same share it (a transaction
	// writes three or four with one list). Never changed once logged, so
	// the log's records and clones share it.
	logged []TopicPartition
}

// TxnLogRecord is one record of __transaction_state.
type TxnLogRecord struct {
	Tick            int
	TransactionalID string
	PID             int64
	Epoch           int
	State           TxnState
	Partitions      []TopicPartition
	Group           string
}

// TxnTransition is one transaction state change, for the invariant checks.
type TxnTransition struct {
	Tick            int
	TransactionalID string
	From, To        TxnState
}

// TxnCoordinator is B1's transaction coordinator.
type TxnCoordinator struct {
	entries     map[string]*TxnEntry // nil until the first register (putMap)
	byPID       map[int64]*TxnEntry  // the same entries by producer id; nil until the first register
	Log         TxnLog
	Transitions TxnTransitions
	Aborted     int // transactions aborted
	TimedOut    int // of them, by transaction.timeout.ms
}

func newTxnCoordinator() *TxnCoordinator {
	return &TxnCoordinator{}
}

// Entries lists the transactional ids in name order.
func (t *TxnCoordinator) Entries() []*TxnEntry { return valuesByKey(t.entries) }

// Entry looks a transactional id up.
func (t *TxnCoordinator) Entry(id string) *TxnEntry { return t.entries[id] }

func (t *TxnCoordinator) register(id string, pid int64, tick int) *TxnEntry {
	e := &TxnEntry{TransactionalID: id, PID: pid, State: TxnEmpty, Start: -1, LastUpdate: tick}
	store.PutMap(&t.entries, id, e)
	store.PutMap(&t.byPID, pid, e)
	return e
}

func (t *TxnCoordinator) setState(w *World, e *TxnEntry, s TxnState) {
	t.Transitions.append(TxnTransition{Tick: w.Tick, TransactionalID: e.TransactionalID, From: e.State, To: s})
	if e.State != s {
		w.trace.Eventf(EvTxnState, "", "%s: %s -> %s (pid %d epoch %d)", e.TransactionalID, e.State, s, e.PID, e.Epoch)
	}
	e.State = s
	e.LastUpdate = w.Tick
	if e.logged == nil || !slices.Equal(e.logged, e.Partitions) {
		e.logged = append([]TopicPartition{}, e.Partitions...) // never nil, as a record's list always was
	}
	t.Log.append(TxnLogRecord{Tick: w.Tick, TransactionalID: e.TransactionalID, PID: e.PID, Epoch: e.Epoch,
		State: s, Partitions: e.logged[:len(e.logged):len(e.logged)], Group: e.Group})
}

func (t *TxnCoordinator) receive(w *World, p *Packet) {
	switch r := p.Body.(type) {
	case *wire.InitProducerIDRequest:
		t.onInitPID(w, p, r)
	case *wire.AddPartitionsToTxnRequest:
		e, code := t.check(r.TransactionalID, r.PID, r.Epoch)
		if code == None {
			t.begin(w, e)
			for _, tp := range r.Partitions {
				if !wire.ContainsPartition(e.Partitions, tp) {
					e.Partitions = append(e.Partitions, tp)
				}
			}
			wire.SortPartitions(e.Partitions)
			t.setState(w, e, TxnOngoing)
		}
		w.reply(p, code, "", nil)
	case *wire.AddOffsetsToTxnRequest:
		e, code := t.check(r.TransactionalID, r.PID, r.Epoch)
		if code == None {
			t.begin(w, e)
			e.Group = r.Group
			t.setState(w, e, TxnOngoing)
		}
		w.reply(p, code, "", nil)
	case *wire.EndTxnRequest:
		t.onEndTxn(w, p, r)
	}
}

// check validates a transactional request's producer id and epoch.
func (t *TxnCoordinator) check(id string, pid int64, epoch int) (*TxnEntry, ErrorCode) {
	e := t.entries[id]
	if e == nil || e.PID != pid {
		return nil, InvalidProducerIDMapping
	}
	if epoch < e.Epoch {
		return nil, ProducerFenced
	}
	if e.State == TxnPrepareCommit || e.State == TxnPrepareAbort || e.State == TxnPrepareEpochFence {
		return nil, ConcurrentTransactions
	}
	return e, None
}

// checkProduce is the partition leader asking whether a transactional
// write belongs to a transaction that added this partition.
func (t *TxnCoordinator) checkProduce(r *wire.ProduceRequest) ErrorCode {
	e := t.byPID[r.PID]
	if e == nil {
		return InvalidProducerIDMapping
	}
	if r.Epoch < e.Epoch {
		return InvalidProducerEpoch
	}
	if e.State != TxnOngoing || !wire.ContainsPartition(e.Partitions, r.TP) {
		return InvalidTxnState
	}
	return None
}

// begin starts a transaction's clock when it becomes Ongoing.
func (t *TxnCoordinator) begin(w *World, e *TxnEntry) {
	if e.State == TxnOngoing {
		return
	}
	e.Start = w.Tick
	e.txnSeq++
	w.env.After(wire.Timer{Owner: wire.OwnerTxnCoordinator, At: w.Tick + e.Timeout, Kind: tmTxnTimeout, Member: e.TransactionalID, Key: e.txnSeq})
}

// txnTimeout aborts a transaction still open when transaction.timeout.ms ran out.
func (t *TxnCoordinator) txnTimeout(w *World, id string, seq int) {
	e := t.entries[id]
	if e == nil || e.State != TxnOngoing || e.txnSeq != seq {
		return
	}
	t.TimedOut++
	w.trace.Eventf(EvTxnState, "", "%s: open for %d ticks (transaction.timeout.ms %d): the coordinator aborts it", e.TransactionalID, w.Tick-e.Start, e.Timeout)
	// Kafka bumps the epoch when it aborts on timeout, fencing the old producer.
	e.Epoch++
	t.prepareEnd(w, e, false)
}

func (t *TxnCoordinator) onInitPID(w *World, p *Packet, r *wire.InitProducerIDRequest) {
	if r.TransactionalID == "" {
		pid := w.newPID()
		w.reply(p, None, fmt.Sprintf("pid %d epoch 0", pid), &wire.InitProducerIDResponse{PID: pid})
		return
	}
	e := t.entries[r.TransactionalID]
	if e == nil {
		e = t.register(r.TransactionalID, w.newPID(), w.Tick)
		e.Timeout = r.Timeout
		t.setState(w, e, TxnEmpty)
		w.reply(p, None, fmt.Sprintf("pid %d epoch %d", e.PID, e.Epoch), &wire.InitProducerIDResponse{PID: e.PID, Epoch: e.Epoch})
		return
	}
	switch e.State {
	case TxnOngoing:
		// A new instance: fence the old epoch and abort what it left open.
		// PrepareEpochFence is only a pending state in Kafka
		// (TransactionMetadata.prepareFenceProducerEpoch, cleared in
		// TransactionCoordinator.endTransaction): the log goes from
		// Ongoing straight to PrepareAbort with the bumped epoch.
		w.trace.Eventf(EvFenced, "", "%s: InitProducerId from a new instance fences epoch %d and aborts its open transaction", e.TransactionalID, e.Epoch)
		e.Epoch++
		t.prepareEnd(w, e, false)
		w.reply(p, ConcurrentTransactions, "", nil)
		return
	case TxnPrepareCommit, TxnPrepareAbort, TxnPrepareEpochFence:
		w.reply(p, ConcurrentTransactions, "", nil)
		return
	}
	e.Epoch++
	e.Timeout = r.Timeout
	t.setState(w, e, TxnEmpty)
	w.reply(p, None, fmt.Sprintf("pid %d epoch %d", e.PID, e.Epoch), &wire.InitProducerIDResponse{PID: e.PID, Epoch: e.Epoch})
}

// producerEntry finds the transactional id a request names and checks its
// producer id and epoch, answering INVALID_PRODUCER_ID_MAPPING or
// PRODUCER_FENCED itself when they do not match (nil then).
func (t *TxnCoordinator) producerEntry(w *World, p *Packet, tid string, pid int64, epoch int) *TxnEntry {
	e := t.entries[tid]
	if e == nil || e.PID != pid {
		w.reply(p, InvalidProducerIDMapping, "", nil)
		return nil
	}
	if epoch < e.Epoch {
		w.reply(p, ProducerFenced, fmt.Sprintf("epoch %d < %d", epoch, e.Epoch), nil)
		return nil
	}
	return e
}

func (t *TxnCoordinator) onEndTxn(w *World, p *Packet, r *wire.EndTxnRequest) {
	e := t.producerEntry(w, p, r.TransactionalID, r.PID, r.Epoch)
	if e == nil {
		return
	}
	// TransactionCoordinator.endTransaction, state by state.
	same := func(commitState TxnState) bool {
		return r.Commit == (commitState == TxnCompleteCommit || commitState == TxnPrepareCommit)
	}
	switch e.State {
	case TxnOngoing:
		t.prepareEnd(w, e, r.Commit)
		w.reply(p, None, string(e.State), nil)
	case TxnCompleteCommit, TxnCompleteAbort:
		if !same(e.State) {
			w.reply(p, InvalidTxnState, fmt.Sprintf("%s in %s", endWord(r.Commit), e.State), nil)
			return
		}
		w.reply(p, None, "already "+string(e.State), nil)
	case TxnPrepareCommit, TxnPrepareAbort:
		if !same(e.State) {
			w.reply(p, InvalidTxnState, fmt.Sprintf("%s in %s", endWord(r.Commit), e.State), nil)
			return
		}
		w.reply(p, ConcurrentTransactions, "", nil)
	default: // Empty: no transaction to end
		w.reply(p, InvalidTxnState, fmt.Sprintf("%s in %s", endWord(r.Commit), e.State), nil)
	}
}

func endWord(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

// prepareEnd logs PrepareCommit or PrepareAbort (the outcome is decided
// here) and sends WriteTxnMarkers to every partition in the transaction.
func (t *TxnCoordinator) prepareEnd(w *World, e *TxnEntry, commit bool) {
	if commit {
		t.setState(w, e, TxnPrepareCommit)
	} else {
		t.setState(w, e, TxnPrepareAbort)
		t.Aborted++
	}
	e.markersLeft = 0
	what := "COMMIT"
	if !commit {
		what = "ABORT"
	}
	for _, tp := range e.Partitions {
		e.markersLeft++
		w.env.Send(&Packet{From: Broker, To: Broker, Type: WriteTxnMarkers, Summary: what + " " + tp.String(),
			Body: &wire.WriteTxnMarkersRequest{PID: e.PID, Epoch: e.Epoch, Commit: commit, Partitions: []TopicPartition{tp}, TxnID: e.TransactionalID}})
	}
	if e.Group != "" {
		e.markersLeft++
		w.env.Send(&Packet{From: Broker, To: Broker, Type: WriteTxnMarkers, Summary: what + " __consumer_offsets (" + e.Group + ")",
			Body: &wire.WriteTxnMarkersRequest{PID: e.PID, Epoch: e.Epoch, Commit: commit, Offsets: true, TxnID: e.TransactionalID}})
	}
	if e.markersLeft == 0 {
		t.complete(w, e, commit)
	}
}

// writeMarkers is a partition leader writing a COMMIT or ABORT marker.
func (w *World) writeMarkers(p *Packet) {
	r := p.Body.(*wire.WriteTxnMarkersRequest)
	for _, tp := range r.Partitions {
		w.logOf(tp).writeMarker(r.PID, r.Epoch, r.Commit, w.Tick)
	}
	if r.Offsets {
		w.Group.completeTxnOffsets(w, r.PID, r.Commit)
	}
	w.reply(p, None, "", r)
}

func (t *TxnCoordinator) onMarkersWritten(w *World, p *Packet) {
	r := p.Body.(*wire.WriteTxnMarkersRequest)
	e := t.entries[r.TxnID]
	if e == nil || (e.State != TxnPrepareCommit && e.State != TxnPrepareAbort) {
		return
	}
	e.markersLeft--
	if e.markersLeft == 0 {
		t.complete(w, e, r.Commit)
	}
}

func (t *TxnCoordinator) complete(w *World, e *TxnEntry, commit bool) {
	if commit {
		t.setState(w, e, TxnCompleteCommit)
	} else {
		t.setState(w, e, TxnCompleteAbort)
	}
	e.Partitions, e.Group, e.Start = nil, "", -1
}
