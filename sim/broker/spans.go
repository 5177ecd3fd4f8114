package broker

import (
	"fmt"
	"iter"
	"sort"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The batches of invoices a log keeps as one entry each (CellLog.spans):
// a run of one input partition's records, or several runs (linger.ms),
// kept once in the log's arena of runs (spanStore.runs).

// spanStore is a log's spans (CellLog.spans) and what only they need: the
// runs of the spans of several runs (spanRun), each kept once,
// append-only; and writerIdx, a writer's index in writers (the last, for
// one listed twice) for the first writerIdxN of them, built at the first
// span whose writer is not one of the last eight (this log's own, never
// shared: a clone starts without it).
type spanStore struct {
	store.Seq[cellSpan]
	runs       store.Bytes // the runs of multi-run spans, each span's encoded as one (encRuns)
	enc        []byte      // scratch: the runs being appended, encoded (this log's own)
	writerIdx  map[cellWriter]uint32
	writerIdxN int
	// spare is the chunks of spans let go of that no clone holds, for
	// the next spans (store.Spare). A clone starts without.
	spare store.Spare[cellSpan]
	// cutHint is the span cutBefore found last: where it looks next (a
	// hint only, right from any place; a clone copies it).
	cutHint int
	// cellCutHint is the cell cutBefore found last in a log of spans and
	// cells between them, a hint as cutHint is.
	cellCutHint int
}

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
//
// A batch of several runs (ProduceRequest.Runs, linger.ms) is one span
// too, its part multiRun: its span runs are encoded at place src of
// spans.runs (the log's arena of runs, each kept once: encRuns), its n
// cells theirs in order.
type cellSpan struct {
	first, before int32
	src, span, n  int32
	part          int32
	seq           int32
	tick          int32
	wrTxn         uint32
}

const spanTxnAt = 24 // the TxnMark's place in cellSpan.wrTxn

// multiRun is the part of a span whose sources are runs in spans.runs.
const multiRun = -1

// spanRun is one run of a multi-run span's sources: the invoices of
// records of the input partition numbered part from offset src to
// src+span, every one of them or those the partitioner sends to the log's
// partition, the span's cells from at on (up to the next run's at, or the
// span's end). from..to is the input range its producer cut it from
// (wire.SrcRun.From): no record of it outside the run goes to the log's
// partition; from = src and to = src+span claim nothing more.
type spanRun struct {
	part, src, span, at int32
	from, to            int32
}

// run is span s's k-th run (of span runs when multi-run, else the span's
// own) and its number of cells.
func (c *CellLog) run(s *cellSpan, k int) (r spanRun, n int) {
	if s.part != multiRun {
		return s.ownRun(), int(s.n)
	}
	rr := c.runsOf(s)
	for i := 0; i <= k; i++ {
		r, n, _ = rr.next()
	}
	return r, n
}

// ownCode is ownRun as decodeRun reads a run (runCode).
func (s *cellSpan) ownCode() runCode {
	return runCode{part: s.part, src: s.src, span: s.span, n: s.n, from: s.src, to: s.src + s.span}
}

// ownRun is the run of a span of one run (not multiRun): it claims no
// range past its own.
func (s *cellSpan) ownRun() spanRun {
	return spanRun{part: s.part, src: s.src, span: s.span, from: s.src, to: s.src + s.span}
}

// runCount is how many runs span s's sources are.
func (s *cellSpan) runCount() int {
	if s.part != multiRun {
		return 1
	}
	return int(s.span)
}

// runOf finds span s's j-th cell: its run's index and its place in it.
func (c *CellLog) runOf(s *cellSpan, j int) (k, jj int) {
	if s.part != multiRun {
		return 0, j
	}
	rr := c.runsOf(s)
	for k = 0; ; k++ {
		r, n, ok := rr.next()
		if !ok || j < int(r.at)+n {
			return k, j - int(r.at)
		}
	}
}

func (s *cellSpan) txn() TxnMark                     { return TxnMark(s.wrTxn >> spanTxnAt) }
func (s *cellSpan) setTxn(m TxnMark)                 { s.wrTxn = s.wrTxn&(1<<spanTxnAt-1) | uint32(m)<<spanTxnAt }
func (c *CellLog) spanWriter(s *cellSpan) cellWriter { return c.writers[s.wrTxn&(1<<spanTxnAt-1)] }

// spanWriterIndex is wr's index in writers for a span: one of the last
// eight, else found in writerIdx (a log written by 100 producers in turn
// added a writer a batch: 29 MB of T1's 160), else added (past maxWriters
// too: a span keeps 24 bits of it).
func (c *CellLog) spanWriterIndex(wr cellWriter) uint32 {
	for i := len(c.writers) - 1; i >= max(len(c.writers)-8, 0); i-- {
		if c.writers[i] == wr {
			return uint32(i)
		}
	}
	if c.spans.writerIdx == nil {
		c.spans.writerIdx = make(map[cellWriter]uint32, len(c.writers))
	}
	for ; c.spans.writerIdxN < len(c.writers); c.spans.writerIdxN++ { // the writers added since
		c.spans.writerIdx[c.writers[c.spans.writerIdxN]] = uint32(c.spans.writerIdxN)
	}
	if i, ok := c.spans.writerIdx[wr]; ok {
		return i
	}
	if len(c.writers) >= 1<<spanTxnAt {
		panic("sim: more than 2^24 producer ids and epochs wrote to " + c.tp.String())
	}
	c.writers = append(c.writers, wr)
	return uint32(len(c.writers) - 1)
}

// writerHint is the answer of a writer's last lookup in a log
// (writerIndex) for the next of its batches: T1's logs are each written
// by 100 producers in turn, and looking the name up (producerID, a map
// past producerScan names) and then the writer (spanWriterIndex, a map
// past the last eight) was 3% of its CPU. Both lists only grow, and both
// lookups answer from them alone, so while they are as long as when the
// hint was taken, the same name, producer id and epoch get the same
// index: a hint is used only then, and a stale one costs the lookups it
// would have saved. The zero hint holds nothing.
type writerHint struct {
	name     string // the producer's name (Cell.Producer)
	producer uint16 // its index in producers plus one
	idx      uint32 // the writer's index in writers
	nw, np   int    // len(writers), len(producers) when taken; nw 0: none
}

// writerIndex is the index in writers of v's writer (producer id, epoch,
// name) for a span (spanWriterIndex), from h when it holds it, which then
// holds it (h nil: no hint).
func (c *CellLog) writerIndex(v *Cell, h *writerHint) uint32 {
	epoch := store.Int32Of(v.Epoch, "producer epoch")
	if h != nil && h.nw > 0 && h.nw == len(c.writers) && h.np == len(c.producers) && h.name == v.Producer &&
		c.writers[h.idx] == (cellWriter{pid: v.PID, epoch: epoch, producer: h.producer}) {
		return h.idx
	}
	wr := cellWriter{pid: v.PID, epoch: epoch, producer: c.producerID(v.Producer)}
	i := c.spanWriterIndex(wr)
	if h != nil {
		*h = writerHint{name: v.Producer, producer: wr.producer, idx: i, nw: len(c.writers), np: len(c.producers)}
	}
	return i
}

// spanSource is the source of span s's j-th cell: its input partition's
// number and its offset.
func (c *CellLog) spanSource(s *cellSpan, j int) (part, off int) {
	k, j := c.runOf(s, j)
	r, n := c.run(s, k)
	return int(r.part), c.runSource(r, n, j)
}

// runSource is the offset of the source of the j-th of run r's n cells.
func (c *CellLog) runSource(r spanRun, n, j int) int {
	if n == int(r.span)+1 {
		return int(r.src) + j
	}
	part := c.names.Partitioner(c.names.Input().At(int(r.part)))
	slot := outputIndex(c.names, c.tp)
	for off := int(r.src); off <= int(r.src+r.span); off++ {
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
	if i < int(c.startOff) {
		c.forgotten(i)
	}
	if c.spans == nil {
		return 0, 0, i, false
	}
	n, first := c.spans.Len(), c.spans.First()
	if last := c.spans.Last(); int(last.first) <= i {
		k = n - 1
	} else {
		k = first + sort.Search(n-first, func(k int) bool { return int(c.spans.At(first+k).first) > i }) - 1
		if k < first {
			// Before every span kept: after those let go of, if any
			// (forget.go), whose cells the first kept one's before counts.
			if first == 0 {
				return 0, 0, i, false
			}
			return 0, 0, i - int(c.spans.At(first).before), false
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
	part, off := c.spanSource(&s, j)
	b = c.names.AppendName(b, c.names.Input().At(part), off)
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
func (c *CellLog) appendRun(v *Cell, part, src, last, n int, h *writerHint) {
	c.appendSpan(v, store.Int32Of(src, "source offset"), store.Int32Of(last-src, "source span"),
		store.Int32Of(n, "batch"), int32(part), h)
}

// appendRuns appends a batch of several runs (ProduceRequest.Runs) as one
// span, its runs kept in spans.runs; v's writer, first sequence number,
// transaction state and tick. It appends nothing and returns false when a
// run is out of a span's reach (its source not an input partition, or
// past topo.MaxRefOffset).
func (c *CellLog) appendRuns(v *Cell, runs []wire.SrcRun, h *writerHint) bool {
	in := len(c.names.Inputs())
	st := c.spans // made the log's only once every run is in reach: a spanStore holds a span (locate)
	if st == nil {
		st = new(spanStore)
	}
	// Encoded in place in the arena's open chunk when it has the room for
	// a batch's runs (encRunRoom a run, about twice what a run of
	// T1 takes), else in the scratch and copied there: the same bytes at
	// the same place either way (store.Bytes.AppendRoom).
	enc := st.runs.Room(encRunRoom * len(runs))
	scratch := enc == nil
	if scratch {
		enc = st.enc[:0]
	}
	// Each run checked as it is encoded (encRuns), in one pass.
	enc, at, ok := encRuns(enc, runs, in)
	if !ok {
		return false
	}
	if verifyCovers {
		for k := range runs {
			c.verifyCover(&runs[k])
		}
	}
	c.spans = st
	if scratch {
		st.enc = enc
	}
	first := st.runs.AppendRoom(enc)
	c.appendSpan(v, int32(first), store.Int32Of(len(runs), "runs"), store.Int32Of(at, "batch"), multiRun, h)
	return true
}

// verifyCovers makes appendRuns check each run's covered range against
// the partitioner (verifyCover): tests only (VerifyCoversForTest).
var verifyCovers bool

// VerifyCoversForTest makes output logs check the input range each run
// of a batch claims (wire.SrcRun.From) against the partitioner, panicking
// at a wrong claim, and returns the function that restores it: for tests,
// never while another test steps a world.
func VerifyCoversForTest() (restore func()) {
	old := verifyCovers
	verifyCovers = true
	return func() { verifyCovers = old }
}

// verifyCover panics unless the records of the range run claims
// (wire.SrcRun.From, past its own) that the partitioner sends to this
// log's partition are exactly the run's: none outside it, Count inside.
func (c *CellLog) verifyCover(run *wire.SrcRun) {
	if run.From == run.First && run.To == run.Last {
		return // claims nothing past the run
	}
	part := c.names.Partitioner(c.names.Input().At(int(run.Part)))
	slot, n := outputIndex(c.names, c.tp), int32(0)
	for off := int(run.From); off <= int(run.To); off++ {
		if part.Slot(off) != slot {
			continue
		}
		if off < int(run.First) || off > int(run.Last) {
			panic(fmt.Sprintf("sim: a batch to %s claims input partition %d's records %d..%d (its run %d..%d), but record %d goes to it",
				c.tp, run.Part, run.From, run.To, run.First, run.Last, off))
		}
		n++
	}
	if run.Count != n {
		panic(fmt.Sprintf("sim: a batch to %s claims %d of input partition %d's records %d..%d; %d of them go to it",
			c.tp, run.Count, run.Part, run.First, run.Last, n))
	}
}

// appendSpan appends a span of n cells whose sources are src, span and
// part (cellSpan's) at the log's end, written as v (its writer, first
// sequence number, transaction state and tick), its writer's index from h
// when h holds it (h nil: no hint). The span is written in place in its
// chunk, field by field (store.Seq.AppendSpareSlot): one built on the
// stack, and v passed by value, were copied down the calls and read back
// in wider words than they were written in (a store-forwarding stall a
// batch, T1's 400 a tick).
func (c *CellLog) appendSpan(v *Cell, src, span, n, part int32, h *writerHint) {
	c.toRecs()
	if c.spans == nil {
		c.spans = new(spanStore)
	}
	var before int32
	if last := c.spans.Last(); last != nil {
		before = last.before + last.n
	}
	first := store.Int32Of(c.n, "offset")
	seq, tick := store.Int32Of(v.Seq, "producer sequence"), store.Int32Of(v.Tick, "tick")
	wrTxn := c.writerIndex(v, h) | uint32(v.Txn)<<spanTxnAt
	// Field by field: a composite literal is built on the stack and
	// copied, as the value passed was. Every field is set: a slot of a
	// spare chunk holds a span let go of.
	sp := c.spans.AppendSpareSlot(&c.spans.spare)
	sp.first, sp.before, sp.src, sp.span, sp.n = first, before, src, span, n
	sp.part, sp.seq, sp.tick, sp.wrTxn = part, seq, tick, wrTxn
	c.n += int(n)
	store.Int32Of(c.n, "offset")
}

// spanSources ranges over span s's cells (by their place in it) with
// their sources (input partition number, offset), run by run.
func (c *CellLog) spanSources(s *cellSpan) iter.Seq2[int, [2]int] {
	return func(yield func(int, [2]int) bool) {
		if s.part != multiRun {
			r, n := c.run(s, 0)
			for j, off := range c.runSources(r, n) {
				if !yield(j, [2]int{int(r.part), off}) {
					return
				}
			}
			return
		}
		for rr := c.runsOf(s); ; {
			r, n, ok := rr.next()
			if !ok {
				return
			}
			for j, off := range c.runSources(r, n) {
				if !yield(int(r.at)+j, [2]int{int(r.part), off}) {
					return
				}
			}
		}
	}
}

// runSources ranges over run r's n cells (by their place in it) with the
// offsets of their sources.
func (c *CellLog) runSources(r spanRun, n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		if n == int(r.span)+1 {
			for j := 0; j < n; j++ {
				if !yield(j, int(r.src)+j) {
					return
				}
			}
			return
		}
		part := c.names.Partitioner(c.names.Input().At(int(r.part)))
		slot, j := outputIndex(c.names, c.tp), 0
		for off := int(r.src); off <= int(r.src+r.span) && j < n; off++ {
			if part.Slot(off) == slot {
				if !yield(j, off) {
					return
				}
				j++
			}
		}
	}
}

// CellRun is what Runs tells of a run of data cells: cells I to I+N-1,
// all in transaction state Txn, the invoices of records of the input
// partition numbered Part from offset First to Last (OK), every one of
// them, or when Filtered those the default partitioner sends to this
// log's partition (topo.Partitioner), N of them, one each in offset
// order. OK is false for cells whose source is no input record's
// (SourceRef): a single cell, or a log's upstream records (no source).
type CellRun struct {
	I, N, Part, First, Last int
	Filtered, OK            bool
	Txn                     TxnMark
}

// Runs ranges over the data cells below offset n (markers left out),
// oldest first, as runs: a span's runs as they are kept, the cells
// between spans one by one (those in a row of one input partition, in
// offset order and transaction state, as one run). No run it yields holds
// both a cell below cut and one at or past it: a run of a span across cut
// is yielded cell by cell (Delivery splits at the LSO). Its cost is per
// run and per cell outside spans, never per cell of a span.
func (c *CellLog) Runs(cut, n int) iter.Seq[CellRun] { return c.RunsFrom(0, cut, n) }

// RunsFrom is Runs of the cells from cell from on (the log's start when
// from is below it): a run with cells on both sides of from is yielded
// from it on, cell by cell. Its cost is per run and cell from there on, not
// from the start: Delivery reads on from where it read before
// (deliveryCache).
func (c *CellLog) RunsFrom(from, cut, n int) iter.Seq[CellRun] {
	return func(yield func(CellRun) bool) {
		n = min(n, c.Len())
		if !c.inRecs { // upstream records: no source, never transactional
			from = max(from, 0) // (upstream logs keep every cell from 0)
			if from < cut && cut < n {
				if !yield(CellRun{I: from, N: cut - from, Txn: NotTransactional}) {
					return
				}
				yield(CellRun{I: cut, N: n - cut, Txn: NotTransactional})
			} else if from < n {
				yield(CellRun{I: from, N: n - from, Txn: NotTransactional})
			}
			return
		}
		var pend CellRun // cells between spans gathered into a run, N 0: none
		flush := func() bool {
			if pend.N == 0 {
				return true
			}
			r := pend
			pend.N = 0
			return yield(r)
		}
		cells := func(from, to, before int) bool { // cells from..to-1, none in a span, before of them in spans before
			for i := from; i < to; i++ {
				cs, ok := c.recSource(i, i-before)
				if !ok {
					continue
				}
				if pend.N > 0 && cs.OK && pend.OK && cs.Part == pend.Part && cs.Off == pend.Last+1 && cs.Txn == pend.Txn &&
					i == pend.I+pend.N && (i < cut) == (pend.I < cut) {
					pend.N++
					pend.Last++
					continue
				}
				if !flush() {
					return false
				}
				pend = CellRun{I: i, N: 1, Part: cs.Part, First: cs.Off, Last: cs.Off, OK: cs.OK, Txn: cs.Txn}
			}
			return true
		}
		i := max(from, int(c.startOff))
		k, before := c.spanFrom(i)
		if c.spans != nil && k > c.spans.First() && i < n {
			// The span before k may hold cell i (from inside a span):
			// its runs from i on, and the rest from its end.
			if s := c.spans.At(k - 1); int(s.first)+int(s.n) > i {
				if !c.yieldSpan(yield, &s, i, cut, n) {
					return
				}
				i, before = int(s.first)+int(s.n), int(s.before)+int(s.n)
			}
		}
		for ; c.spans != nil && k < c.spans.Len() && i < n; k++ {
			s := c.spans.At(k)
			if !cells(i, min(int(s.first), n), before) || !flush() || !c.yieldSpan(yield, &s, i, cut, n) {
				return
			}
			i, before = int(s.first)+int(s.n), int(s.before)+int(s.n)
		}
		if cells(i, n, before) {
			flush()
		}
	}
}

// yieldSpan yields span s's runs (yieldRun) from its cell from on.
func (c *CellLog) yieldSpan(yield func(CellRun) bool, s *cellSpan, from, cut, n int) bool {
	first, txn := int(s.first), s.txn()
	if s.part != multiRun {
		r, rn := c.run(s, 0)
		return c.yieldRun(yield, first, r, rn, txn, from, cut, n)
	}
	for rr := c.runsOf(s); ; {
		r, rn, ok := rr.next()
		if !ok {
			return true
		}
		if !c.yieldRun(yield, first, r, rn, txn, from, cut, n) {
			return false
		}
	}
}

// yieldRun yields run r (rn cells) of the span whose first cell is first,
// its cells from from to n-1: whole when they are all of it and lie on one
// side of cut, else those cells one by one.
func (c *CellLog) yieldRun(yield func(CellRun) bool, first int, r spanRun, rn int, txn TxnMark, from, cut, n int) bool {
	at := first + int(r.at)
	if at >= n || at+rn <= from {
		return true
	}
	if at >= from && at+rn <= n && (at+rn <= cut || at >= cut) {
		return yield(CellRun{I: at, N: rn, Part: int(r.part), First: int(r.src), Last: int(r.src + r.span),
			Filtered: rn != int(r.span)+1, OK: true, Txn: txn})
	}
	for j, off := range c.runSources(r, rn) {
		if at+j < from {
			continue
		}
		if at+j >= n {
			break
		}
		if !yield(CellRun{I: at + j, N: 1, Part: int(r.part), First: off, Last: off, OK: true, Txn: txn}) {
			return false
		}
	}
	return true
}
