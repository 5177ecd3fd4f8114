package sim

import (
	"iter"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// TxnLog is __transaction_state: every record the transaction coordinator
// wrote, in order. A record is 32 bytes: its transactional id and group as
// numbers in the log's store.NameTable, its state as a number, its tick and epoch
// as int32 (int32Of names the bound), and its partition list as an index
// into lists, which gets a new list only when a transaction's partitions
// changed (its three or four records share one). At, All and Slice give
// back the TxnLogRecords that were appended. Chunks are shared between
// clones as for any Seq.
type TxnLog struct {
	recs  store.Seq[txnLogRec]
	lists store.Seq[[]TopicPartition] // never changed once appended
	names store.NameTable             // transactional ids and groups
}

type txnLogRec struct {
	pid   int64
	tick  int32
	epoch int32
	id    int32 // transactional id, in names
	group int32 // in names
	list  int32 // in lists
	state uint8 // in txnStates
}

// txnStates numbers the states for compact records.
var txnStates = [...]TxnState{TxnEmpty, TxnOngoing, TxnPrepareCommit, TxnPrepareAbort, TxnCompleteCommit,
	TxnCompleteAbort, TxnPrepareEpochFence, TxnDead}

func txnStateOf(s TxnState) uint8 {
	for i, v := range txnStates {
		if v == s {
			return uint8(i)
		}
	}
	panic("sim: unknown transaction state " + string(s))
}

// Len is the number of records.
func (l *TxnLog) Len() int { return l.recs.Len() }

// At returns record i.
func (l *TxnLog) At(i int) TxnLogRecord {
	r := l.recs.At(i)
	return TxnLogRecord{Tick: int(r.tick), TransactionalID: l.names.Name(r.id), PID: r.pid, Epoch: int(r.epoch),
		State: txnStates[r.state], Partitions: l.lists.At(int(r.list)), Group: l.names.Name(r.group)}
}

// All ranges over the records with their indexes, oldest first.
func (l *TxnLog) All() iter.Seq2[int, TxnLogRecord] { return store.RangeFrom(0, l.Len(), l.At) }

// Slice copies records [from, to) into a new slice.
func (l *TxnLog) Slice(from, to int) []TxnLogRecord { return store.SliceOf(from, to, l.At) }

// append adds a record. Its Partitions must never change afterwards; a
// record whose list is the previous record's slice (same array, same
// length) shares its entry in lists.
func (l *TxnLog) append(rec TxnLogRecord) {
	list := l.lists.Len() - 1
	if last := l.lists.Last(); last == nil || !sameSlice(*last, rec.Partitions) {
		l.lists.Append(rec.Partitions)
		list++
	}
	l.recs.Append(txnLogRec{pid: rec.PID, tick: store.Int32Of(rec.Tick, "tick"), epoch: store.Int32Of(rec.Epoch, "producer epoch"),
		id: l.names.Index(rec.TransactionalID), group: l.names.Index(rec.Group), list: store.Int32Of(list, "partition lists"),
		state: txnStateOf(rec.State)})
}

// sameSlice reports whether a and b are the same slice of the same array.
func sameSlice(a, b []TopicPartition) bool {
	return len(a) == len(b) && cap(a) == cap(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (l *TxnLog) clone() TxnLog {
	return TxnLog{recs: l.recs.Clone(), lists: l.lists.Clone(), names: l.names.Clone()}
}

// TxnTransitions lists every transaction state change, for the invariant
// checks: 12 bytes each (tick, transactional id as a number in the log's
// names, from and to as state numbers). At, All and Slice give back the
// TxnTransitions that were appended.
type TxnTransitions struct {
	recs  store.Seq[txnTransitionRec]
	names store.NameTable
}

type txnTransitionRec struct {
	tick     int32
	id       int32
	from, to uint8
}

// Len is the number of transitions.
func (t *TxnTransitions) Len() int { return t.recs.Len() }

// At returns transition i.
func (t *TxnTransitions) At(i int) TxnTransition {
	r := t.recs.At(i)
	return TxnTransition{Tick: int(r.tick), TransactionalID: t.names.Name(r.id), From: txnStates[r.from], To: txnStates[r.to]}
}

// All ranges over the transitions with their indexes, oldest first.
func (t *TxnTransitions) All() iter.Seq2[int, TxnTransition] {
	return store.RangeFrom(0, t.Len(), t.At)
}

// Slice copies transitions [from, to) into a new slice.
func (t *TxnTransitions) Slice(from, to int) []TxnTransition { return store.SliceOf(from, to, t.At) }

func (t *TxnTransitions) append(tr TxnTransition) {
	t.recs.Append(txnTransitionRec{tick: store.Int32Of(tr.Tick, "tick"), id: t.names.Index(tr.TransactionalID),
		from: txnStateOf(tr.From), to: txnStateOf(tr.To)})
}

func (t *TxnTransitions) clone() TxnTransitions {
	return TxnTransitions{recs: t.recs.Clone(), names: t.names.Clone()}
}
