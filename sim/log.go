package sim

import "github.com/kgrepl/kgrepl/sim/topo"

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

// batchRecord is what the leader remembers of one of a PID's last batches.
type batchRecord struct {
	seq, offset int
}

// producerEntry is the partition leader's state for one PID (Kafka's
// ProducerStateEntry): its epoch and its last five batches.
type producerEntry struct {
	epoch   int
	batches []batchRecord // at most idempotenceWindow, oldest first
}

// idempotenceWindow is how many batches per PID a partition leader keeps
// (max.in.flight.requests.per.connection = 5).
const idempotenceWindow = 5

// AbortedTxn is one entry of a partition's aborted transaction index.
type AbortedTxn struct {
	PID         int64
	First, Last int // offsets of the first record and of the ABORT marker
}

// PartitionLog is one partition on B1 (replication factor 1, so the high
// watermark is the log end).
type PartitionLog struct {
	TP        TopicPartition
	Cells     CellLog
	openTxn   map[int64]int // PID -> first offset of its open transaction
	producers map[int64]*producerEntry
	Aborted   []AbortedTxn
}

func newLog(tp TopicPartition, names *topo.Layout) *PartitionLog {
	// openTxn and producers stay nil until a transactional or idempotent
	// producer writes (most logs never see one), so a Clone copies no maps.
	return &PartitionLog{TP: tp, Cells: CellLog{tp: tp, names: names}}
}

// HW is the high watermark: with one replica, the log end offset.
func (l *PartitionLog) HW() int { return l.Cells.Len() }

// LSO is the last stable offset: the first offset of the oldest open
// transaction, or the high watermark when none is open.
func (l *PartitionLog) LSO() int {
	lso := l.HW()
	for _, first := range l.openTxn {
		if first < lso {
			lso = first
		}
	}
	return lso
}

// OpenTxnFirst gives the first offset of pid's open transaction here.
func (l *PartitionLog) OpenTxnFirst(pid int64) (int, bool) {
	o, ok := l.openTxn[pid]
	return o, ok
}

func (l *PartitionLog) append(c Cell) int {
	off := l.opening(c)
	l.Cells.append(c)
	return off
}

// appendInvoice appends c, an invoice for record srcOff of input partition
// src (slot a hint: its number among the input partitions, or -1), whose Value and
// Source are left unspelled (CellLog.appendInvoice).
func (l *PartitionLog) appendInvoice(c Cell, src TopicPartition, srcOff, slot int) int {
	off := l.opening(c)
	l.Cells.appendInvoice(c, src, srcOff, slot)
	return off
}

// opening notes the first offset of c's transaction, when c opens one
// here, and returns the offset c is about to take.
func (l *PartitionLog) opening(c Cell) int {
	off := l.Cells.Len()
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

// appendUpstream adds n records of the upstream producer (an input
// partition's records) at tick; their values are their names.
func (l *PartitionLog) appendUpstream(n, tick int) {
	l.Cells.appendUpstream(n, tick)
}

// writeMarker ends pid's open transaction here with a COMMIT or ABORT
// control record and marks its cells.
func (l *PartitionLog) writeMarker(pid int64, epoch int, commit bool, tick int) {
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
func (l *PartitionLog) ReadCommitted(i int) bool {
	if i >= l.LSO() || !l.Cells.IsData(i) {
		return false
	}
	txn := l.Cells.Txn(i)
	return txn != TxnAborted && txn != TxnOpen
}
