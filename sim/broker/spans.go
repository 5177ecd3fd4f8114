package broker

import (
	"iter"
	"sort"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// The batches of invoices a log keeps as one entry each (CellLog.spans),
// moved from cells.go.

// cellSpan is a batch of invoices (a Produce of ProduceRequest.SrcCount
// records) kept as one entry rather than a cellRec a record: cells first
// .. first+n-1, the invoices of n records of the input partition numbered
// part, from offset src to src+span: every one of them when n is span+1,
// else those the default partitioner sends to this log's partition
// (topo.Partitioner), enumerated when read; written by wr at tick,
// sequence numbers from seq (-1: none), in transaction state txn (a
// marker marks the whole batch: one transaction's). No pointer and
// nothing a record: 36 bytes a batch. before is how many cells the spans
// before it hold. wrTxn is the writer's index in writers (low 24 bits)
// and the TxnMark (high 8).
type cellSpan struct {
	first, before int32
	src, span, n  int32
	part          int32
	seq           int32
	tick          int32
	wrTxn         uint32
}

const spanTxnAt = 24 // the TxnMark's place in cellSpan.wrTxn

func (s *cellSpan) txn() TxnMark                     { return TxnMark(s.wrTxn >> spanTxnAt) }
func (s *cellSpan) setTxn(m TxnMark)                 { s.wrTxn = s.wrTxn&(1<<spanTxnAt-1) | uint32(m)<<spanTxnAt }
func (c *CellLog) spanWriter(s *cellSpan) cellWriter { return c.writers[s.wrTxn&(1<<spanTxnAt-1)] }

// spanWriterIndex is wr's index in writers for a span: one of the last
// eight, else added (past maxWriters too: a span keeps 24 bits of it).
func (c *CellLog) spanWriterIndex(wr cellWriter) uint32 {
	for i := len(c.writers) - 1; i >= max(len(c.writers)-8, 0); i-- {
		if c.writers[i] == wr {
			return uint32(i)
		}
	}
	if len(c.writers) >= 1<<spanTxnAt {
		panic("sim: more than 2^24 producer ids and epochs wrote to " + c.tp.String())
	}
	c.writers = append(c.writers, wr)
	return uint32(len(c.writers) - 1)
}

// spanSource is the offset of the source of span s's j-th cell.
func (c *CellLog) spanSource(s *cellSpan, j int) int {
	if s.n == s.span+1 {
		return int(s.src) + j
	}
	part := c.names.Partitioner(c.names.Input().At(int(s.part)))
	slot := outputIndex(c.names, c.tp)
	for off := int(s.src); off <= int(s.src+s.span); off++ {
		if part.Slot(off) == slot {
			if j == 0 {
				return off
			}
			j--
		}
	}
	panic("sim: a span of " + c.tp.String() + " holds fewer sources than its count")
}

// locate finds cell i of a log in recs: in span k as its j-th cell (in),
// else at index ri of recs.
func (c *CellLog) locate(i int) (k, j, ri int, in bool) {
	if c.spans == nil {
		return 0, 0, i, false
	}
	n := c.spans.Len()
	if last := c.spans.Last(); int(last.first) <= i {
		k = n - 1
	} else {
		k = sort.Search(n, func(k int) bool { return int(c.spans.At(k).first) > i }) - 1
		if k < 0 {
			return 0, 0, i, false
		}
	}
	s := c.spans.At(k)
	if j := i - int(s.first); j < int(s.n) {
		return k, j, 0, true
	}
	return k, 0, i - int(s.before) - int(s.n), false
}

// spanCell is cell i, the j-th of span s.
func (c *CellLog) spanCell(i, j int, s cellSpan) Cell {
	wr := c.spanWriter(&s)
	out := Cell{Offset: i, PID: wr.pid, Epoch: int(wr.epoch), Seq: -1, Txn: s.txn(), Tick: int(s.tick)}
	if s.seq >= 0 {
		out.Seq = int(s.seq) + j
	}
	if wr.producer > 0 {
		out.Producer = c.producers[wr.producer-1]
	}
	var buf [80]byte
	b := append(buf[:0], "inv("...)
	at := len(b)
	b = c.names.AppendName(b, c.names.Input().At(int(s.part)), c.spanSource(&s, j))
	b = append(b, ')')
	out.Value = string(b)
	out.Source = out.Value[at : len(out.Value)-1]
	return out
}

// appendRun appends a batch of invoices as one span: the invoices of n
// (more than one) records of the input partition numbered part from
// offset src to last, every one of them or those the partitioner sends to
// this log's partition (cellSpan); v's writer, first sequence number,
// transaction state and tick.
func (c *CellLog) appendRun(v Cell, part, src, last, n int) {
	c.toRecs()
	if c.spans == nil {
		c.spans = new(store.Seq[cellSpan])
	}
	before := int32(0)
	if last := c.spans.Last(); last != nil {
		before = last.before + last.n
	}
	wr := cellWriter{pid: v.PID, epoch: store.Int32Of(v.Epoch, "producer epoch"), producer: c.producerID(v.Producer)}
	c.spans.Append(cellSpan{first: store.Int32Of(c.n, "offset"), before: before, src: store.Int32Of(src, "source offset"),
		span: store.Int32Of(last-src, "source span"), n: store.Int32Of(n, "batch"), part: int32(part),
		seq: store.Int32Of(v.Seq, "producer sequence"), tick: store.Int32Of(v.Tick, "tick"), wrTxn: c.spanWriterIndex(wr) | uint32(v.Txn)<<spanTxnAt})
	c.n += n
	store.Int32Of(c.n, "offset")
}

// spanSources ranges over span s's cells (by their place in it) with the
// offsets of their sources.
func (c *CellLog) spanSources(s *cellSpan) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		if s.n == s.span+1 {
			for j := 0; j < int(s.n); j++ {
				if !yield(j, int(s.src)+j) {
					return
				}
			}
			return
		}
		part := c.names.Partitioner(c.names.Input().At(int(s.part)))
		slot, j := outputIndex(c.names, c.tp), 0
		for off := int(s.src); off <= int(s.src+s.span) && j < int(s.n); off++ {
			if part.Slot(off) == slot {
				if !yield(j, off) {
					return
				}
				j++
			}
		}
	}
}
