package broker

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TxnMark is the transactional state of a data cell, as a reader sees it.
type TxnMark int

const (
	NotTransactional TxnMark = iota
	TxnOpen                  // written in a transaction that has no marker yet
	TxnCommitted             // a COMMIT marker follows
	TxnAborted               // an ABORT marker follows: read_committed skips it
)

func (m TxnMark) String() string {
	return [...]string{"-", "open", "committed", "aborted"}[m]
}

// Cell is one record of a partition log: data, or a control record (marker).
type Cell struct {
	Offset   int
	Value    string // "o2.3" for input, "inv(o2.3)" for output, "COMMIT"/"ABORT" for a marker
	Source   string // for an invoice, the input record it was made from
	Producer string // client id that wrote it; "" for the upstream input producer
	PID      int64  // producer id; -1 without idempotence
	Epoch    int
	Seq      int // sequence number; -1 without idempotence
	Txn      TxnMark
	Control  string // "COMMIT" or "ABORT" for a marker, else ""
	Tick     int
}

// IsData is true for a data record (not a marker).
func (c Cell) IsData() bool { return c.Control == "" }

// batchRecord is what the leader remembers of one of a PID's last batches
// (Kafka's BatchMetadata): its first and last sequence numbers and its
// first record's offset.
type batchRecord struct {
	seq, last, offset int
}

// producerEntry is the partition leader's state for one PID (Kafka's
// ProducerStateEntry): its epoch and its last five batches.
type producerEntry struct {
	epoch int
	// batches are the last nb batches, oldest first, in the entry itself
	// (a batch's check read them from an array of their own: one cache
	// miss more a Produce, T1's 400 a tick).
	batches [idempotenceWindow]batchRecord
	nb      int
	// wr is where this PID's last span found its writer in the log
	// (writerHint): a clone's entry starts without it.
	wr writerHint
}

// idempotenceWindow is how many batches per PID a partition leader keeps
// (ProducerStateEntry.NUM_BATCHES_TO_RETAIN = 5: the idempotent
// producer's most max.in.flight.requests.per.connection, so a retried
// batch that was written is always among them; client.MaxInFlight).
const idempotenceWindow = 5

// AbortedTxn is one entry of a partition's aborted transaction index.
type AbortedTxn struct {
	PID         int64
	First, Last int // offsets of the first record and of the ABORT marker
}

// Log is one partition on B1 (replication factor 1, so the high
// watermark is the log end).
type Log struct {
	Cells     CellLog // first: its hot fields (CellLog.n) start the object
	TP        wire.TopicPartition
	openTxn   map[int64]int // PID -> first offset of its open transaction
	producers *producerTable
	Aborted   []AbortedTxn
	forgot    *Forgotten // what the cells below the start contribute to Delivery (forget.go), nil for none
}

func NewLog(tp wire.TopicPartition, names *topo.Layout) *Log {
	// openTxn and producers stay nil until a transactional or idempotent
	// producer writes (most logs never see one), so a Clone copies no maps.
	return &Log{TP: tp, Cells: CellLog{tp: tp, names: names}}
}

// HW is the high watermark: with one replica, the log end offset.
func (l *Log) HW() int { return l.Cells.Len() }

// LSO is the last stable offset: the first offset of the oldest open
// transaction, or the high watermark when none is open.
func (l *Log) LSO() int {
	lso := l.HW()
	for _, first := range l.openTxn {
		if first < lso {
			lso = first
		}
	}
	return lso
}

// EverTransactional reports whether a transaction ever wrote here (a
// cell of one, or a marker). Until one does, every cell from the log's
// start to its high watermark is a data record a reader returns at either
// isolation level (the LSO is the high watermark): a view counts and
// finds them without reading one.
func (l *Log) EverTransactional() bool { return l.Cells.everTxn }

// OpenTxnFirst gives the first offset of pid's open transaction here.
func (l *Log) OpenTxnFirst(pid int64) (int, bool) {
	o, ok := l.openTxn[pid]
	return o, ok
}

func (l *Log) append(c Cell) int {
	off := l.opening(&c)
	l.Cells.append(c)
	return off
}

// appendInvoice appends c, an invoice for record srcOff of input partition
// src (slot a hint: its number among the input partitions, or -1), whose Value and
// Source are left unspelled (CellLog.appendInvoice).
func (l *Log) appendInvoice(c Cell, src wire.TopicPartition, srcOff, slot int) int {
	off := l.opening(&c)
	l.Cells.appendInvoice(c, src, srcOff, slot)
	return off
}

// opening notes the first offset of c's transaction, when c opens one
// here, and returns the offset c is about to take.
func (l *Log) opening(c *Cell) int {
	off := l.Cells.Len()
	if c.Txn != NotTransactional {
		l.Cells.everTxn = true // a transaction's cell, or its marker
	}
	if c.Txn == TxnOpen {
		if _, ok := l.openTxn[c.PID]; !ok {
			if l.openTxn == nil {
				l.openTxn = map[int64]int{}
			}
			l.openTxn[c.PID] = off
		}
	}
	return off
}

// AppendUpstream adds n records of the upstream producer (an input
// partition's records) at tick; their values are their names.
func (l *Log) AppendUpstream(n, tick int) {
	l.Cells.appendUpstream(n, tick)
}

// WriteMarker ends pid's open transaction here with a COMMIT or ABORT
// control record and marks its cells.
func (l *Log) WriteMarker(pid int64, epoch int, commit bool, tick int) {
	mark, name := TxnCommitted, "COMMIT"
	if !commit {
		mark, name = TxnAborted, "ABORT"
	}
	first, ok := l.openTxn[pid]
	if !ok {
		// Nothing of this transaction reached this partition, but it was
		// added to it: the leader writes the marker all the same
		// (TransactionMarkerChannelManager sends one to every partition
		// of the transaction); with no data there is no aborted range.
		l.append(Cell{Value: name, Control: name, PID: pid, Epoch: epoch, Seq: -1, Txn: mark, Tick: tick})
		return
	}
	l.Cells.markTxn(first, pid, mark)
	delete(l.openTxn, pid)
	off := l.append(Cell{Value: name, Control: name, PID: pid, Epoch: epoch, Seq: -1, Txn: mark, Tick: tick})
	if !commit {
		l.Aborted = append(l.Aborted, AbortedTxn{PID: pid, First: first, Last: off})
	}
}

// ReadCommitted reports whether a read_committed reader returns cell i:
// below the LSO, a data record, and not part of an aborted transaction.
func (l *Log) ReadCommitted(i int) bool {
	if i >= l.LSO() || !l.Cells.IsData(i) {
		return false
	}
	txn := l.Cells.Txn(i)
	return txn != TxnAborted && txn != TxnOpen
}

// CloneInto copies l into n, its producer entries into the arrays of buf
// (the ones n's last contents used, when n is a finished copy's log: its
// producers map is reused too), which it then holds.
func (l *Log) CloneInto(n *Log, buf *ProducerBufs) {
	producers := buf.producers
	*n = *l
	n.Cells = l.Cells.clone()
	// Most logs never see an idempotent or transactional producer: their
	// maps stay nil (made at the first write), so a copy makes none.
	n.openTxn, n.producers = store.CopyLazy(l.openTxn), nil
	n.Aborted = store.Copy(l.Aborted)
	if l.producers == nil || len(l.producers.m) == 0 {
		return
	}
	// The entries, their batches in them, in one array: two allocations a
	// log, not one an entry, and none when buf has the room.
	if producers == nil {
		producers = make(map[int64]*producerEntry, len(l.producers.m))
	}
	clear(producers)
	n.producers = &producerTable{m: producers} // its cache its own
	ents := store.ReuseBuf(buf.ents, len(l.producers.m))[:0]
	for pid, e := range l.producers.m {
		ents = append(ents, producerEntry{epoch: e.epoch, batches: e.batches, nb: e.nb})
		producers[pid] = &ents[len(ents)-1]
	}
	*buf = ProducerBufs{producers: producers, ents: ents}
}

// producerTable is a log's producer entries by PID (Kafka's
// ProducerStateManager), made at the first write of an idempotent or
// transactional producer, and the entries last looked up (pids, nil until
// the first lookup; a copy's its own: CloneInto). Kept behind a pointer,
// not as two fields of Log, which a world keeps one of a partition
// (kernel's world cost: 100,000 partitions and a copy).
type producerTable struct {
	m    map[int64]*producerEntry
	pids *pidCache
}

// pidCache keeps a log's producer entries by PID, direct-mapped (a
// PID's entry is PIDs modulo pidWays): what producerTable.m maps each PID
// to, for as long as it does (Log.producer). PIDs are issued in turn
// (Kafka's ProducerIdManager; txncoord), so a group's producers, a
// hundred or two, seldom share an entry. A lookup in the map was 30 ns,
// for every Produce of T1 (1% of its time).
type pidCache [pidWays]struct {
	pid int64
	e   *producerEntry
}

const pidWays = 256

// producer is the log's entry for pid, nil for none.
func (l *Log) producer(pid int64) *producerEntry {
	t := l.producers
	if t == nil {
		return nil
	}
	if t.pids != nil {
		if c := &t.pids[pid&(pidWays-1)]; c.pid == pid && c.e != nil {
			return c.e
		}
	}
	e := t.m[pid]
	if e != nil {
		t.cache(pid, e)
	}
	return e
}

// setProducer makes e the log's entry for pid.
func (l *Log) setProducer(pid int64, e *producerEntry) {
	if l.producers == nil {
		l.producers = &producerTable{m: map[int64]*producerEntry{}}
	}
	l.producers.m[pid] = e
	l.producers.cache(pid, e)
}

func (t *producerTable) cache(pid int64, e *producerEntry) {
	if t.pids == nil {
		t.pids = new(pidCache)
	}
	c := &t.pids[pid&(pidWays-1)]
	c.pid, c.e = pid, e
}

// ProducerBufs are where Log.cloneInto puts a log's producer
// entries: its map, and the array of entries.
type ProducerBufs struct {
	producers map[int64]*producerEntry
	ents      []producerEntry
}

// HasOpenTxn reports whether a transaction is open here (the LSO is held
// below the high watermark).
func (l *Log) HasOpenTxn() bool { return len(l.openTxn) > 0 }
