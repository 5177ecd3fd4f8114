// Package txncoord is B1's transaction coordinator (Kafka's
// TransactionCoordinator): producer ids and epochs, the transactions'
// states and __transaction_state, the transaction timeout, and the
// WriteTxnMarkers it sends to end a transaction.
package txncoord

import (
	"fmt"
	"slices"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// State is a transaction's state on the transaction coordinator.
type State string

const (
	Empty             State = "Empty"
	Ongoing           State = "Ongoing"
	PrepareCommit     State = "PrepareCommit"
	PrepareAbort      State = "PrepareAbort"
	CompleteCommit    State = "CompleteCommit"
	CompleteAbort     State = "CompleteAbort"
	PrepareEpochFence State = "PrepareEpochFence"
	Dead              State = "Dead"
)

// transitions lists the states Kafka lets each state move to
// (TransactionState's validPreviousStates, read the other way round).
var transitions = map[State][]State{
	Empty:             {Empty, Ongoing, Dead},
	Ongoing:           {Ongoing, PrepareCommit, PrepareAbort, PrepareEpochFence},
	PrepareCommit:     {CompleteCommit},
	PrepareAbort:      {CompleteAbort},
	CompleteCommit:    {Empty, Ongoing, Dead},
	CompleteAbort:     {Empty, Ongoing, Dead},
	PrepareEpochFence: {PrepareAbort},
	Dead:              {},
}

// LegalTransition reports whether Kafka allows from -> to.
func LegalTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Entry is one transactional.id in __transaction_state.
type Entry struct {
	TransactionalID string
	PID             int64
	Epoch           int
	State           State
	Partitions      []wire.TopicPartition // data partitions in the open transaction
	Group           string                // the group whose offsets are in it ("" = none)
	Start           int                   // tick the transaction began (-1: none open)
	Timeout         int
	LastUpdate      int
	markersLeft     int
	txnSeq          int // counts transactions, so a stale timeout does nothing
	// logged is the partition list of the newest __transaction_state
	// record: records whose list is the same share it (a transaction
	// writes three or four with one list). Never changed once logged, so
	// the log's records and clones share it.
	logged []wire.TopicPartition
}

// LogRecord is one record of __transaction_state.
type LogRecord struct {
	Tick            int
	TransactionalID string
	PID             int64
	Epoch           int
	State           State
	Partitions      []wire.TopicPartition
	Group           string
}

// Transition is one transaction state change, for the invariant checks.
type Transition struct {
	Tick            int
	TransactionalID string
	From, To        State
}

// Coordinator is B1's transaction coordinator.
type Coordinator struct {
	entries     map[string]*Entry // nil until the first register (putMap)
	byPID       map[int64]*Entry  // the same entries by producer id; nil until the first register
	Log         Log
	Transitions Transitions
	Aborted     int // transactions aborted
	TimedOut    int // of them, by transaction.timeout.ms
	env         *env.Env
	nextPID     int64
}

// New is the transaction coordinator of a world whose environment is e.
func New(e *env.Env) *Coordinator {
	return &Coordinator{env: e, nextPID: 1000}
}

// Entries lists the transactional ids in name order.
func (t *Coordinator) Entries() []*Entry { return store.ValuesByKey(t.entries) }

// Entry looks a transactional id up.
func (t *Coordinator) Entry(id string) *Entry { return t.entries[id] }

func (t *Coordinator) Register(id string, pid int64, tick int) *Entry {
	e := &Entry{TransactionalID: id, PID: pid, State: Empty, Start: -1, LastUpdate: tick}
	store.PutMap(&t.entries, id, e)
	store.PutMap(&t.byPID, pid, e)
	return e
}

func (t *Coordinator) setState(e *Entry, s State) {
	t.Transitions.append(Transition{Tick: t.env.Now(), TransactionalID: e.TransactionalID, From: e.State, To: s})
	if e.State != s {
		t.env.Trace().Eventf(trace.EvTxnState, "", "%s: %s -> %s (pid %d epoch %d)", e.TransactionalID, e.State, s, e.PID, e.Epoch)
	}
	e.State = s
	e.LastUpdate = t.env.Now()
	if e.logged == nil || !slices.Equal(e.logged, e.Partitions) {
		e.logged = append([]wire.TopicPartition{}, e.Partitions...) // never nil, as a record's list always was
	}
	t.Log.append(LogRecord{Tick: t.env.Now(), TransactionalID: e.TransactionalID, PID: e.PID, Epoch: e.Epoch,
		State: s, Partitions: e.logged[:len(e.logged):len(e.logged)], Group: e.Group})
}

// Receive handles a transaction request (InitProducerId,
// AddPartitionsToTxn, AddOffsetsToTxn, EndTxn).
func (t *Coordinator) Receive(p *wire.Packet) {
	switch r := p.Body.(type) {
	case *wire.InitProducerIDRequest:
		t.onInitPID(p, r)
	case *wire.AddPartitionsToTxnRequest:
		e, code := t.check(r.TransactionalID, r.PID, r.Epoch)
		if code == wire.None {
			t.begin(e)
			for _, tp := range r.Partitions {
				if !wire.ContainsPartition(e.Partitions, tp) {
					e.Partitions = append(e.Partitions, tp)
				}
			}
			wire.SortPartitions(e.Partitions)
			t.setState(e, Ongoing)
		}
		t.env.Reply(p, code, "", nil)
	case *wire.AddOffsetsToTxnRequest:
		e, code := t.check(r.TransactionalID, r.PID, r.Epoch)
		if code == wire.None {
			t.begin(e)
			e.Group = r.Group
			t.setState(e, Ongoing)
		}
		t.env.Reply(p, code, "", nil)
	case *wire.EndTxnRequest:
		t.onEndTxn(p, r)
	}
}

// check validates a transactional request's producer id and epoch.
func (t *Coordinator) check(id string, pid int64, epoch int) (*Entry, wire.ErrorCode) {
	e := t.entries[id]
	if e == nil || e.PID != pid {
		return nil, wire.InvalidProducerIDMapping
	}
	if epoch < e.Epoch {
		return nil, wire.ProducerFenced
	}
	if e.State == PrepareCommit || e.State == PrepareAbort || e.State == PrepareEpochFence {
		return nil, wire.ConcurrentTransactions
	}
	return e, wire.None
}

// CheckProduce is the partition leader asking whether a transactional
// write belongs to a transaction that added this partition.
func (t *Coordinator) CheckProduce(r *wire.ProduceRequest) wire.ErrorCode {
	e := t.byPID[r.PID]
	if e == nil {
		return wire.InvalidProducerIDMapping
	}
	if r.Epoch < e.Epoch {
		return wire.InvalidProducerEpoch
	}
	if e.State != Ongoing || !wire.ContainsPartition(e.Partitions, r.TP) {
		return wire.InvalidTxnState
	}
	return wire.None
}

// begin starts a transaction's clock when it becomes Ongoing.
func (t *Coordinator) begin(e *Entry) {
	if e.State == Ongoing {
		return
	}
	e.Start = t.env.Now()
	e.txnSeq++
	t.env.After(wire.Timer{Owner: wire.OwnerTxnCoordinator, At: t.env.Now() + e.Timeout, Kind: timerTimeout, Member: e.TransactionalID, Key: e.txnSeq})
}

// txnTimeout aborts a transaction still open when transaction.timeout.ms ran out.
func (t *Coordinator) txnTimeout(id string, seq int) {
	e := t.entries[id]
	if e == nil || e.State != Ongoing || e.txnSeq != seq {
		return
	}
	t.TimedOut++
	t.env.Trace().Eventf(trace.EvTxnState, "", "%s: open for %d ticks (transaction.timeout.ms %d): the coordinator aborts it", e.TransactionalID, t.env.Now()-e.Start, e.Timeout)
	// Kafka bumps the epoch when it aborts on timeout, fencing the old producer.
	e.Epoch++
	t.prepareEnd(e, false)
}

func (t *Coordinator) onInitPID(p *wire.Packet, r *wire.InitProducerIDRequest) {
	if r.TransactionalID == "" {
		pid := t.NewPID()
		t.env.Reply(p, wire.None, fmt.Sprintf("pid %d epoch 0", pid), &wire.InitProducerIDResponse{PID: pid})
		return
	}
	e := t.entries[r.TransactionalID]
	if e == nil {
		e = t.Register(r.TransactionalID, t.NewPID(), t.env.Now())
		e.Timeout = r.Timeout
		t.setState(e, Empty)
		t.env.Reply(p, wire.None, fmt.Sprintf("pid %d epoch %d", e.PID, e.Epoch), &wire.InitProducerIDResponse{PID: e.PID, Epoch: e.Epoch})
		return
	}
	switch e.State {
	case Ongoing:
		// A new instance: fence the old epoch and abort what it left open.
		// PrepareEpochFence is only a pending state in Kafka
		// (TransactionMetadata.prepareFenceProducerEpoch, cleared in
		// TransactionCoordinator.endTransaction): the log goes from
		// Ongoing straight to PrepareAbort with the bumped epoch.
		t.env.Trace().Eventf(trace.EvFenced, "", "%s: InitProducerId from a new instance fences epoch %d and aborts its open transaction", e.TransactionalID, e.Epoch)
		e.Epoch++
		t.prepareEnd(e, false)
		t.env.Reply(p, wire.ConcurrentTransactions, "", nil)
		return
	case PrepareCommit, PrepareAbort, PrepareEpochFence:
		t.env.Reply(p, wire.ConcurrentTransactions, "", nil)
		return
	}
	e.Epoch++
	e.Timeout = r.Timeout
	t.setState(e, Empty)
	t.env.Reply(p, wire.None, fmt.Sprintf("pid %d epoch %d", e.PID, e.Epoch), &wire.InitProducerIDResponse{PID: e.PID, Epoch: e.Epoch})
}

// ProducerEntry finds the transactional id a request names and checks its
// producer id and epoch, answering INVALID_PRODUCER_ID_MAPPING or
// PRODUCER_FENCED itself when they do not match (nil then).
func (t *Coordinator) ProducerEntry(p *wire.Packet, tid string, pid int64, epoch int) *Entry {
	e := t.entries[tid]
	if e == nil || e.PID != pid {
		t.env.Reply(p, wire.InvalidProducerIDMapping, "", nil)
		return nil
	}
	if epoch < e.Epoch {
		t.env.Reply(p, wire.ProducerFenced, fmt.Sprintf("epoch %d < %d", epoch, e.Epoch), nil)
		return nil
	}
	return e
}

func (t *Coordinator) onEndTxn(p *wire.Packet, r *wire.EndTxnRequest) {
	e := t.ProducerEntry(p, r.TransactionalID, r.PID, r.Epoch)
	if e == nil {
		return
	}
	// TransactionCoordinator.endTransaction, state by state.
	same := func(commitState State) bool {
		return r.Commit == (commitState == CompleteCommit || commitState == PrepareCommit)
	}
	switch e.State {
	case Ongoing:
		t.prepareEnd(e, r.Commit)
		t.env.Reply(p, wire.None, string(e.State), nil)
	case CompleteCommit, CompleteAbort:
		if !same(e.State) {
			t.env.Reply(p, wire.InvalidTxnState, fmt.Sprintf("%s in %s", endWord(r.Commit), e.State), nil)
			return
		}
		t.env.Reply(p, wire.None, "already "+string(e.State), nil)
	case PrepareCommit, PrepareAbort:
		if !same(e.State) {
			t.env.Reply(p, wire.InvalidTxnState, fmt.Sprintf("%s in %s", endWord(r.Commit), e.State), nil)
			return
		}
		t.env.Reply(p, wire.ConcurrentTransactions, "", nil)
	default: // Empty: no transaction to end
		t.env.Reply(p, wire.InvalidTxnState, fmt.Sprintf("%s in %s", endWord(r.Commit), e.State), nil)
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
func (t *Coordinator) prepareEnd(e *Entry, commit bool) {
	if commit {
		t.setState(e, PrepareCommit)
	} else {
		t.setState(e, PrepareAbort)
		t.Aborted++
	}
	e.markersLeft = 0
	what := "COMMIT"
	if !commit {
		what = "ABORT"
	}
	for _, tp := range e.Partitions {
		e.markersLeft++
		t.env.Send(&wire.Packet{From: wire.Broker, To: wire.Broker, Type: wire.WriteTxnMarkers, Summary: what + " " + tp.String(),
			Body: &wire.WriteTxnMarkersRequest{PID: e.PID, Epoch: e.Epoch, Commit: commit, Partitions: []wire.TopicPartition{tp}, TxnID: e.TransactionalID}})
	}
	if e.Group != "" {
		e.markersLeft++
		t.env.Send(&wire.Packet{From: wire.Broker, To: wire.Broker, Type: wire.WriteTxnMarkers, Summary: what + " __consumer_offsets (" + e.Group + ")",
			Body: &wire.WriteTxnMarkersRequest{PID: e.PID, Epoch: e.Epoch, Commit: commit, Offsets: true, TxnID: e.TransactionalID}})
	}
	if e.markersLeft == 0 {
		t.complete(e, commit)
	}
}

// MarkersWritten is a WriteTxnMarkers answered: the transaction completes
// once every partition's is.
func (t *Coordinator) MarkersWritten(p *wire.Packet) {
	r := p.Body.(*wire.WriteTxnMarkersRequest)
	e := t.entries[r.TxnID]
	if e == nil || (e.State != PrepareCommit && e.State != PrepareAbort) {
		return
	}
	e.markersLeft--
	if e.markersLeft == 0 {
		t.complete(e, r.Commit)
	}
}

func (t *Coordinator) complete(e *Entry, commit bool) {
	if commit {
		t.setState(e, CompleteCommit)
	} else {
		t.setState(e, CompleteAbort)
	}
	e.Partitions, e.Group, e.Start = nil, "", -1
}

// clone copies the coordinator into dst (a finished copy's; nil: a new
// one).
// Clone is a copy of t for a world whose environment is e, made in dst
// (a finished copy's coordinator) when given.
func (t *Coordinator) Clone(e *env.Env, dst *Coordinator) *Coordinator {
	if dst == nil {
		dst = new(Coordinator)
	}
	n := dst
	*n = *t
	// Most worlds have no transactional producer: the maps stay nil
	// (putMap makes them at the first register).
	n.entries, n.byPID = nil, nil
	if len(t.entries) > 0 {
		n.entries = make(map[string]*Entry, len(t.entries))
		n.byPID = make(map[int64]*Entry, len(t.byPID))
		old := make(map[*Entry]*Entry, len(t.entries))
		for id, e := range t.entries {
			c := *e
			c.Partitions = store.Copy(e.Partitions)
			n.entries[id] = &c
			old[e] = &c
		}
		for pid, e := range t.byPID {
			n.byPID[pid] = old[e]
		}
	}
	n.Log = t.Log.clone()
	n.Transitions = t.Transitions.clone()
	n.env = e
	return n
}

// The transaction coordinator's timers (wire.OwnerTxnCoordinator).
const (
	timerTimeout uint8 = iota // transactional id Member's transaction number Key times out
)

// Fire is one of the transaction coordinator's timers firing.
func (tc *Coordinator) Fire(t wire.Timer) {
	if t.Kind == timerTimeout {
		tc.txnTimeout(t.Member, t.Key)
	}
}

// NewPID issues the next producer id (InitProducerId; the world's first
// producers at tick 0).
func (t *Coordinator) NewPID() int64 {
	p := t.nextPID
	t.nextPID++
	return p
}
