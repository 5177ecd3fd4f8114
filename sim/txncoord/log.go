package txncoord

import (
	"iter"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Log is __transaction_state: every record the transaction coordinator
// wrote, in order. A record is 32 bytes: its transactional id and group as
// numbers in the log's store.NameTable, its state as a number, its tick and epoch
// as int32 (int32Of names the bound), and its partition list as an index
// into lists, which gets a new list only when a transaction's partitions
// changed (its three or four records share one). At, All and Slice give
// back the TxnLogRecords that were appended. Chunks are shared between
// clones as for any Seq.
type Log struct {
	recs  store.Seq[logRec]
	lists store.Seq[[]wire.TopicPartition] // never changed once appended
	names store.NameTable                  // transactional ids and groups
}

type logRec struct {
	pid   int64
	tick  int32
	epoch int32
	id    int32 // transactional id, in names
	group int32 // in names
	list  int32 // in lists
	state uint8 // in states
}

// states numbers the states for compact records.
var states = [...]State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
	CompleteAbort, PrepareEpochFence, Dead}

func stateOf(s State) uint8 {
	for i, v := range states {
		if v == s {
			return uint8(i)
		}
	}
	panic("sim: unknown transaction state " + string(s))
}

// Len is the number of records.
func (l *Log) Len() int { return l.recs.Len() }

// At returns record i.
func (l *Log) At(i int) LogRecord {
	r := l.recs.At(i)
	return LogRecord{Tick: int(r.tick), TransactionalID: l.names.Name(r.id), PID: r.pid, Epoch: int(r.epoch),
		State: states[r.state], Partitions: l.lists.At(int(r.list)), Group: l.names.Name(r.group)}
}

// All ranges over the records with their indexes, oldest first.
func (l *Log) All() iter.Seq2[int, LogRecord] { return store.RangeFrom(0, l.Len(), l.At) }

// Slice copies records [from, to) into a new slice.
func (l *Log) Slice(from, to int) []LogRecord { return store.SliceOf(from, to, l.At) }

// append adds a record. Its Partitions must never change afterwards; a
// record whose list is the previous record's slice (same array, same
// length) shares its entry in lists.
func (l *Log) append(rec LogRecord) {
	list := l.lists.Len() - 1
	if last := l.lists.Last(); last == nil || !sameSlice(*last, rec.Partitions) {
		l.lists.Append(rec.Partitions)
		list++
	}
	l.recs.Append(logRec{pid: rec.PID, tick: store.Int32Of(rec.Tick, "tick"), epoch: store.Int32Of(rec.Epoch, "producer epoch"),
		id: l.names.Index(rec.TransactionalID), group: l.names.Index(rec.Group), list: store.Int32Of(list, "partition lists"),
		state: stateOf(rec.State)})
}

// sameSlice reports whether a and b are the same slice of the same array.
func sameSlice(a, b []wire.TopicPartition) bool {
	return len(a) == len(b) && cap(a) == cap(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (l *Log) clone() Log {
	return Log{recs: l.recs.Clone(), lists: l.lists.Clone(), names: l.names.Clone()}
}

// Transitions lists every transaction state change, for the invariant
// checks: 12 bytes each (tick, transactional id as a number in the log's
// names, from and to as state numbers). At, All and Slice give back the
// Transitions that were appended.
type Transitions struct {
	recs  store.Seq[txnTransitionRec]
	names store.NameTable
}

type txnTransitionRec struct {
	tick     int32
	id       int32
	from, to uint8
}

// Len is the number of transitions.
func (t *Transitions) Len() int { return t.recs.Len() }

// At returns transition i.
func (t *Transitions) At(i int) Transition {
	r := t.recs.At(i)
	return Transition{Tick: int(r.tick), TransactionalID: t.names.Name(r.id), From: states[r.from], To: states[r.to]}
}

// All ranges over the transitions with their indexes, oldest first.
func (t *Transitions) All() iter.Seq2[int, Transition] {
	return store.RangeFrom(0, t.Len(), t.At)
}

// Slice copies transitions [from, to) into a new slice.
func (t *Transitions) Slice(from, to int) []Transition { return store.SliceOf(from, to, t.At) }

func (t *Transitions) append(tr Transition) {
	t.recs.Append(txnTransitionRec{tick: store.Int32Of(tr.Tick, "tick"), id: t.names.Index(tr.TransactionalID),
		from: stateOf(tr.From), to: stateOf(tr.To)})
}

func (t *Transitions) clone() Transitions {
	return Transitions{recs: t.recs.Clone(), names: t.names.Clone()}
}
