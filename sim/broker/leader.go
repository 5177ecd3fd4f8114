package broker

import (
	"fmt"
	"iter"
	"math"
	"weak"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Broker is B1 as the leader of every partition: the logs, the Fetch
// requests it holds until data arrives, and the produce path with its
// idempotence and transaction checks.
type Broker struct {
	env    *env.Env
	layout *topo.Layout
	logs   []*Log // every log, by its partition's number (topo.Layout.Number)
	parked []parkedFetch
	// clock is how far steady production has gone (steady.go); every
	// log reads it. nextWake is the first wake tick of parked; wakeBuf
	// ProduceSteady's scratch; perTick the test-only per-tick path.
	clock    Clock
	nextWake int
	wakeBuf  []wakePair
	wakeTmp  []wakePair // sortWakes' scratch
	due      dueMemo    // steadyEnd's (a copy starts without)
	// wakeCounts is sortWakes' count of each digit (made at the first
	// sort of many: a copy starts without)
	wakeCounts *[len(wakeDigits)][1 << 11]int32
	recBuf     []wire.Record             // answerFetch's scratch (a copy starts without)
	topics     topicRuns                 // answerFetch's topics, kept from Fetch to Fetch (a copy starts without)
	fold       weak.Pointer[foldScratch] // the output logs' general folds' lists (forget.go; a copy starts without)
	hints      []OutputFold              // folds of copies to start the output logs' next folds from (HintFoldsOf; a copy shares them)
	perTick    *perTickProducers
	steadies   []logSteady // the input logs' steady production, by number (nil before the first rate)
	senders    Senders
	txns       Transactions
	// ZombieWrites counts records written to an output partition by a
	// process that had lost its place (replaced by a restart, or out of
	// the group) when the write landed.
	ZombieWrites int
}

// Senders is what the partition leader may learn of a request's sender
// beyond the request, and tell it: whether a held Fetch is still waited
// for (a process gone, or past that fetch, gets no answer), whether a
// producer has lost its place (its writes are counted as a zombie's), and
// that a held Fetch's answer was lost.
type Senders interface {
	FetchWaiting(client string, inc int, fetchID int) bool
	Displaced(client string, inc int, proc int32) bool
	// HeldFetchLost: the answer to a Fetch the broker held (a long poll)
	// was lost on the wire; timeoutAt is the tick its sender's request
	// timeout was set for when it was held (answerHeld).
	HeldFetchLost(client string, inc int, fetchID int, timeoutAt int)
}

// Transactions is the transaction coordinator as the partition leader asks
// it whether a transactional write belongs to an open transaction that
// added the partition.
type Transactions interface {
	CheckProduce(r *wire.ProduceRequest) wire.ErrorCode
}

// parkedFetch is a Fetch the broker holds until data arrives (a long poll,
// as fetch.max.wait.ms does), so that idle members cost nothing per tick.
type parkedFetch struct {
	pkt *wire.Packet
	// wake is the tick steady production next appends to one of its
	// partitions (math.MaxInt for none), when ProduceSteady answers it.
	wake int
}

// New is the leader of every partition of the world laid out as layout,
// each log with records input records.
func New(e *env.Env, layout *topo.Layout, records int, senders Senders, txns Transactions) *Broker {
	b := &Broker{env: e, layout: layout, senders: senders, txns: txns, nextWake: math.MaxInt}
	b.clock = Clock{through: e.Now(), upto: -1}
	ins, outs := layout.Inputs(), layout.Outputs()
	b.logs = make([]*Log, len(ins)+len(outs))
	for i, tp := range ins {
		b.logs[i] = NewLog(tp, layout)
	}
	for i, tp := range outs {
		b.logs[len(ins)+i] = NewLog(tp, layout)
	}
	for _, tp := range ins {
		b.Append(tp, records)
	}
	return b
}

// Fetch answers a Fetch, or holds it until data arrives: the answer, or
// nil when it parked the request.
func (b *Broker) Fetch(p *wire.Packet) *wire.Packet {
	a := b.answerFetch(p)
	if a == nil {
		wake := b.wakeOf(p)
		b.parked = append(b.parked, parkedFetch{pkt: p, wake: wake})
		b.nextWake = min(b.nextWake, wake)
	}
	return a
}

// answerHeld answers a held Fetch (answerFetch) as data arrives: the
// answer, or nil when there is still none for it. The sender's request
// timeout, reserved when it sent the fetch, finds a fetch still held
// when it fires and waits on; so an answer lost after that would leave the
// member waiting for ever, and the sender is told (Senders.HeldFetchLost).
// (Kafka's broker answers a Fetch within fetch.max.wait.ms, below
// request.timeout.ms, so its client's one request timeout always comes
// after the answer; kgrepl holds a Fetch until data arrives.)
func (b *Broker) answerHeld(p *wire.Packet) *wire.Packet {
	a := b.answerFetch(p)
	if a != nil && a.Lost {
		b.senders.HeldFetchLost(p.From, p.FromInc, p.Body.(*wire.FetchRequest).ID, p.TimerAt)
	}
	return a
}

// answerFetch reads up to Max records, partition by partition in the order
// asked, and answers; it returns the answer, or nil (and sends nothing)
// when no asked partition has a record. A partition's plain upstream
// records from its position on are one entry, a run (wire.Record.Count),
// read without a loop over them; any other record is an entry of its own,
// as Kafka's Fetcher hands the FetchCollector record batches.
//
// With env.Env.SetPerRecordForTest (tests only) it answers one entry per
// record instead, as before runs: the property test runs each world both
// ways and checks they agree tick by tick.
func (b *Broker) answerFetch(p *wire.Packet) *wire.Packet {
	r := p.Body.(*wire.FetchRequest)
	// Gathered in the broker's scratch array, which then becomes the
	// answer's (from the free lists: the trace keeps no bodies, the member
	// copies them), the recycled answer's array the next scratch: most
	// Fetches find nothing and are held, and an answer of T2's copied a
	// record on each of a member's 100 partitions. An array on the stack
	// grew on the heap past 8 entries: a Fetch answering a record on each
	// of 100 partitions made five arrays, a fifth of what T2's world
	// allocated.
	recs := b.recBuf[:0]
	n := 0 // records gathered
	for i, tp := range r.Partitions {
		tpi, known := fetchSlot(r, i)
		if tpi < 0 || verifySlots {
			tpi, known = b.numberChecked(tp, tpi, known)
		}
		off := r.Offsets[i]
		// The log's end, read once (nothing is appended while a Fetch is
		// answered); a partition with nothing past the position (most of a
		// Fetch's, most of the time) is passed at once, a steady one
		// without reading its log (Broker.steadyEnd: T2 answers Fetches
		// of 100 partitions from 100,000 logs, each read a cache miss).
		hw, steady := b.steadyEnd(tpi)
		if steady && off >= hw {
			continue
		}
		if steady && known && off >= 0 {
			// A log with an open steady segment holds only plain
			// upstream records (CellLog.toRecs refuses any other while
			// one is open), so the run from the position to the end is
			// read without the log (whose first read is a cache miss), as
			// plainRun would read it.
			if k := min(hw-off, r.Max-n); k > 0 && !b.env.PerRecord() {
				// Written field by field into the entry appended zeroed:
				// a Record literal was built on the stack and copied in,
				// a copy that stalled on the stores just made (store
				// forwarding), a third of answerFetch's time in T1.
				recs = append(recs, wire.Record{})
				e := &recs[len(recs)-1]
				e.TP, e.Offset, e.Named, e.TPI, e.Count = tp, off, true, int32(tpi+1), k
				n += k
			} else {
				for ; off < hw && n < r.Max; off++ {
					recs = append(recs, wire.Record{TP: tp, Offset: off, Named: true, TPI: int32(tpi + 1)})
					n++
				}
			}
			if n >= r.Max {
				break
			}
			continue
		}
		l := b.logNumbered(tpi, known)
		if !steady {
			hw = l.HW()
		}
		if off >= hw {
			continue
		}
		// The plain upstream records from the position on are one entry
		// (the log knows where they run; a run of one is today's entry).
		if k := l.Cells.plainRun(off, r.Max-n, hw); k > 0 && !b.env.PerRecord() {
			recs = append(recs, wire.Record{TP: tp, Offset: off, Named: true, TPI: int32(tpi + 1), Count: k})
			n += k
			off += k
		}
		for ; off < hw && n < r.Max; off++ {
			if l.Cells.IsData(off) {
				f := wire.Record{TP: tp, Offset: off, Named: true, TPI: int32(tpi + 1)}
				if !l.Cells.named(off) {
					f.Value, f.Named = l.Cells.At(off).Value, false
				}
				recs = append(recs, f)
				n++
			}
		}
		if n >= r.Max {
			break
		}
	}
	b.recBuf = recs
	if len(recs) == 0 {
		return nil
	}
	resp := b.env.NewFetchResponse()
	if resp.ID = r.ID; cap(resp.Records) > 0 {
		resp.Records, b.recBuf = recs, resp.Records[:0]
	} else {
		// A new answer (none recycled yet, or a test's world keeping its
		// packets): copied at its size, the scratch kept.
		resp.Records = append(resp.Records, recs...)
	}
	return b.env.ReplyText(p, wire.None, b.env.Trace().FetchAnswer(recs), resp)
}

// answerParked retries parked fetches that wait on tp; fetches whose
// process is gone are dropped.
func (b *Broker) answerParked(tp wire.TopicPartition) {
	keep := b.parked[:0]
	for _, pf := range b.parked {
		r := pf.pkt.Body.(*wire.FetchRequest)
		if !b.senders.FetchWaiting(pf.pkt.From, pf.pkt.FromInc, r.ID) {
			b.env.DropHeldFetch(pf.pkt)
			continue
		}
		wants := false
		for _, t := range r.Partitions {
			if t == tp {
				wants = true
			}
		}
		if wants && b.answerHeld(pf.pkt) != nil {
			continue
		}
		keep = append(keep, pf)
	}
	clear(b.parked[len(keep):])
	b.parked = keep
}

// Produce is the partition leader writing a batch: one record, or a run
// of invoices (ProduceRequest.SrcCount). With a PID it checks the epoch and
// the batch's sequence numbers against the last five batches, as Kafka
// 4.0's UnifiedLog.analyzeAndValidateProducerState does: a batch with the
// first and last sequence numbers of one kept, in the same epoch, is a
// duplicate answered with that batch's offset (ProducerStateEntry.
// findDuplicateBatch); any other is checked by ProducerAppendInfo.
// checkSequence: in the entry's epoch its first sequence number must be
// the one after the last kept batch's last, else OUT_OF_ORDER_SEQUENCE_NUMBER
// (a sequence older than the kept batches included: Kafka's broker no
// longer answers DUPLICATE_SEQUENCE_NUMBER); in a newer epoch it must be
// 0. One case on purpose not as Kafka: Kafka takes any first sequence
// from a producer it has no state for (NO_PRODUCER_EPOCH: its state may
// have been deleted with the log's head), which in Kafka is a batch 0
// written or expired, since a connection delivers in order; kgrepl loses
// packets one by one, so a first batch overtaken by a later one would
// leave a gap, and the later one is refused as out of order, as a
// connection's order would have kept it behind. A producer with no
// in-flight limit (ProduceRequest.NoInFlightLimit: the page's world,
// ClientConfig.MaxInFlight 0) may retry a batch the five kept no longer
// hold, and would be refused forever: it is answered
// DUPLICATE_SEQUENCE_NUMBER, which its client takes as written, as
// kgrepl did before it followed Kafka 4.0 here. It answers once, and
// returns the answer.
func (b *Broker) Produce(p *wire.Packet) *wire.Packet {
	r := p.Body.(*wire.ProduceRequest)
	var l *Log
	li := int(r.TPI) - 1 // the request's partition number, when it carries one
	byNumber := li >= 0 && li < len(b.logs)
	if byNumber {
		l = b.logs[li]
	} else {
		l = b.Log(r.TP)
	}
	resp := b.env.NewProduceResponse()
	resp.ID, resp.Seq, resp.Offset = r.ID, r.Seq, -1
	count := r.Count()
	if r.PID >= 0 {
		e := l.producer(r.PID)
		if e != nil && r.Epoch < e.epoch {
			return b.env.Reply(p, wire.InvalidProducerEpoch, fmt.Sprintf("epoch %d < %d", r.Epoch, e.epoch), resp)
		}
		if r.Txn {
			if code := b.txns.CheckProduce(r); code != wire.None {
				return b.env.Reply(p, code, "", resp)
			}
		}
		if e != nil && r.Epoch == e.epoch && e.nb > 0 {
			last := e.batches[e.nb-1].last
			for _, kept := range e.batches[:e.nb] {
				if kept.seq == r.Seq && kept.last == r.LastSeq() {
					resp.Offset, resp.Dup = kept.offset, true
					if count > 1 {
						return b.env.Reply(p, wire.None, fmt.Sprintf("%s seq %d..%d already at offsets %d..%d: not written again", r.ValueIn(b.layout), r.Seq, r.LastSeq(), kept.offset, kept.offset+count-1), resp)
					}
					return b.env.Reply(p, wire.None, fmt.Sprintf("%s seq %d already at offset %d: not written again", r.ValueIn(b.layout), r.Seq, kept.offset), resp)
				}
			}
			if r.Seq <= last && r.NoInFlightLimit {
				// A producer with no in-flight limit (the page's world)
				// may retry a batch older than the five kept: answered as
				// kgrepl always did, not as Kafka 4.0 (see above).
				return b.env.Reply(p, wire.DuplicateSequenceNumber, fmt.Sprintf("seq %d older than the last %d kept", r.Seq, idempotenceWindow), resp)
			}
			if r.Seq != last+1 {
				return b.env.Reply(p, wire.OutOfOrderSequenceNumber, fmt.Sprintf("seq %d, expected %d", r.Seq, last+1), resp)
			}
		} else if r.Seq != 0 && (e == nil || r.Epoch > e.epoch) {
			return b.env.Reply(p, wire.OutOfOrderSequenceNumber, fmt.Sprintf("seq %d, expected 0", r.Seq), resp)
		}
		if e == nil || r.Epoch > e.epoch {
			e = &producerEntry{epoch: r.Epoch}
			l.setProducer(r.PID, e)
		}
		mark := NotTransactional
		if r.Txn {
			mark = TxnOpen
		}
		// Field by field: a composite literal is built on the stack and
		// copied whole in wider loads than its stores (store forwarding).
		var c Cell
		c.Producer, c.PID, c.Epoch, c.Seq, c.Txn, c.Tick = r.Producer, r.PID, r.Epoch, r.Seq, mark, b.env.Now()
		off := l.appendProduced(r, &c, &e.wr)
		if e.nb == idempotenceWindow {
			// Slide the window (a clone has its own entries).
			e.nb = copy(e.batches[:], e.batches[1:])
		}
		e.batches[e.nb] = batchRecord{seq: r.Seq, last: r.LastSeq(), offset: off}
		e.nb++
		resp.Offset = off
	} else {
		var c Cell
		c.Producer, c.PID, c.Seq, c.Tick = r.Producer, -1, -1, b.env.Now()
		resp.Offset = l.appendProduced(r, &c, nil)
	}
	if b.senders.Displaced(p.From, p.FromInc, p.Proc) {
		b.ZombieWrites += count
	}
	if count > 1 {
		// A batch's produced event and answer ("%s written to %s at
		// offsets %d..%d", "%s at offsets %d..%d"): one text kept as a
		// run of sources (trace.ProducedBatch), spelled when read.
		return b.env.ReplyText(p, wire.None, b.env.Trace().ProducedBatch(r, resp.Offset, p.Text), resp)
	}
	// The produced event and the answer's text ("%s written to %s at
	// offset %d", "%s at offset %d"), kept once when the answer can read
	// the event's (trace: texts.packetText). An invoice's cell names its source
	// when the log keeps it as a reference: the event is then the cell's
	// place alone.
	named := false
	if r.HasSrc && byNumber {
		part, off, ok := l.Cells.SourceRef(resp.Offset)
		named = ok && part == int(r.SrcTPI)-1 && off == r.SrcOffset
	}
	return b.env.ReplyText(p, wire.None, b.env.Trace().Produced(r, resp.Offset, named), resp)
}

// appendProduced writes r's record to l as cell *v (its value and source
// r's; v is not changed); a span's writer is looked up from h when it
// holds it (nil: no hint), which then holds it. The cell goes down the
// calls by pointer: 112 bytes, copied at each call.
func (l *Log) appendProduced(r *wire.ProduceRequest, v *Cell, h *writerHint) int {
	if len(r.Runs) > 0 {
		// A batch of several runs (linger.ms): one span whose sources are
		// its runs (CellLog.appendRuns), its cells' sequence numbers on
		// from the batch's base; else, when a run's source is out of a
		// span's reach, each run as a batch of one run is kept (a span,
		// or a cell for a run of one): memory per run, never per record.
		off := l.opening(v)
		if l.Cells.appendRuns(v, r.Runs, h) {
			return off
		}
		c := *v
		for _, run := range r.Runs {
			l.appendRunOf(c, run, h)
			if c.Seq >= 0 {
				c.Seq += int(run.Count)
			}
		}
		return off
	}
	if r.SrcCount > 1 {
		// A batch of invoices: one span (CellLog.appendRun), its cells'
		// sequence numbers from the batch's base; a cell each when its
		// source is out of a span's reach.
		off := l.opening(v)
		if part, ok := l.Cells.names.Input().SlotCached(r.Src, r.SrcTPI-1, nil); ok && r.Named && r.SrcEnd <= topo.MaxRefOffset {
			l.Cells.appendRun(v, part, r.SrcOffset, r.SrcEnd, r.SrcCount, h)
			return off
		}
		c, k := *v, 0
		for src := range batchSources(l.Cells.names, r) {
			if c.Seq >= 0 && k > 0 {
				c.Seq++
			}
			l.appendInvoice(c, r.Src, src, int(r.SrcTPI)-1)
			k++
		}
		return off
	}
	c := *v
	if r.Named {
		// srcTPI is src's tpIndex, which numbers the input partitions as
		// topo.InputIndex.slot does: a hint appendInvoice checks.
		return l.appendInvoice(c, r.Src, r.SrcOffset, int(r.SrcTPI)-1)
	}
	c.Value, c.Source = r.Value, r.Source
	return l.append(c)
}

// appendRunOf appends the invoices of run, one run of a batch's sources,
// as cells from c (its writer, first sequence number, transaction state
// and tick): one span for more than one (CellLog.appendRun, its writer
// looked up from h), a cell each when their source is out of a span's
// reach.
func (l *Log) appendRunOf(c Cell, run wire.SrcRun, h *writerHint) {
	slot := int(run.Part)
	if slot < 0 || slot >= len(l.Cells.names.Inputs()) {
		panic(fmt.Sprintf("sim: a batch to %s names input partition %d; the world numbers %d (0 to %d)",
			l.Cells.tp, slot, len(l.Cells.names.Inputs()), len(l.Cells.names.Inputs())-1))
	}
	if run.Count > 1 && run.First >= 0 {
		l.Cells.appendRun(&c, slot, int(run.First), int(run.Last), int(run.Count), h)
		return
	}
	src := l.Cells.names.Input().At(slot)
	k := 0
	for off := range runSources(l.Cells.names, l.Cells.tp, src, run) {
		if c.Seq >= 0 && k > 0 {
			c.Seq++
		}
		l.appendInvoice(c, src, off, slot)
		k++
	}
}

// runSources ranges over the offsets of the source records of run (of
// input partition src), for
// output partition tp: from its first to its last, those the partitioner
// sends to tp.
func runSources(layout *topo.Layout, tp, src wire.TopicPartition, run wire.SrcRun) iter.Seq[int] {
	return func(yield func(int) bool) {
		first, last := int(run.First), int(run.Last)
		if last-first+1 == int(run.Count) {
			for off := first; off <= last; off++ {
				if !yield(off) {
					return
				}
			}
			return
		}
		part, slot := layout.Partitioner(src), outputIndex(layout, tp)
		for off := first; off <= last; off++ {
			if part.Slot(off) == slot && !yield(off) {
				return
			}
		}
	}
}

// batchSources ranges over the offsets of the source records of r, a
// batch of invoices (ProduceRequest.SrcCount): from its first to its last,
// those the partitioner sends to r's partition.
func batchSources(layout *topo.Layout, r *wire.ProduceRequest) iter.Seq[int] {
	return func(yield func(int) bool) {
		if r.Consecutive() {
			for off := r.SrcOffset; off <= r.SrcEnd; off++ {
				if !yield(off) {
					return
				}
			}
			return
		}
		part, slot := layout.Partitioner(r.Src), outputIndex(layout, r.TP)
		for off := r.SrcOffset; off <= r.SrcEnd; off++ {
			if part.Slot(off) == slot && !yield(off) {
				return
			}
		}
	}
}

// outputIndex is tp's index among the output partitions, -1 for none.
func outputIndex(layout *topo.Layout, tp wire.TopicPartition) int {
	if i, ok := layout.Number(tp); ok && i >= len(layout.Inputs()) {
		return i - len(layout.Inputs())
	}
	return -1
}

// FetchOutstanding reports whether fetch id of client's process inc is held at the broker (a
// long poll) or its answer is on the wire.
func (b *Broker) FetchOutstanding(client string, inc int, id int) bool {
	for _, pf := range b.parked {
		if r, ok := pf.pkt.Body.(*wire.FetchRequest); ok && pf.pkt.From == client && pf.pkt.FromInc == inc && r.ID == id {
			return true
		}
	}
	for _, p := range b.env.Sending() {
		if p.Type != wire.Fetch {
			continue
		}
		switch body := p.Body.(type) {
		case *wire.FetchRequest:
			if p.From == client && p.FromInc == inc && body.ID == id {
				return true
			}
		case *wire.FetchResponse:
			if p.To == client && p.ToInc == inc && body.ID == id {
				return true
			}
		}
	}
	return false
}

// Log is partition tp's log, nil if the world has no such partition.
// Every log is in logs, by its number: no map to hash a TopicPartition into,
// and none for Clone to rebuild.
func (b *Broker) Log(tp wire.TopicPartition) *Log {
	l, _ := b.logIndexed(tp)
	return l
}

// logIndexed is Log with the log's number (tpIndex), -1 with no log.
func (b *Broker) logIndexed(tp wire.TopicPartition) (*Log, int) {
	if i, ok := b.layout.Number(tp); ok && i < len(b.logs) {
		return b.logs[i], i
	}
	return nil, -1
}

// logNumbered is the log numbered i as Layout.Number answered (i, ok) for
// its partition: logIndexed without the lookup.
func (b *Broker) logNumbered(i int, ok bool) *Log {
	if ok && i < len(b.logs) {
		return b.logs[i]
	}
	return nil
}

// topicRun numbers partitions as topo.Layout.Number does, looking their
// topic up once for a run of partitions of one topic: a Fetch lists a
// member's partitions topic by topic (T2's 100 are ten topics' runs of
// ten), and the lookup of each partition's topic (a map past eight input
// topics) was a tenth of what answering a Fetch cost.
type topicRun struct {
	topic string
	span  topo.Span
	input bool // topic is an input topic (span is its); else Number answers
	valid bool
}

// topicRuns is the last topics a broker's Fetches asked for, each a
// topicRun: T1's member asks for the same partition of each of ten
// topics, one partition a topic, so a topicRun per Fetch looked each
// topic up in the layout's map (2% of T1). A topic is found by its
// string's place first (store.SameStr: a member asks with the layout's
// strings), from the last found (T2's members ask for runs of ten
// partitions of a topic) and then the ones after it (a Fetch asks for
// its topics in the same order each time); one not among them replaces
// the oldest. The zero topicRuns holds none.
type topicRuns struct {
	runs [16]topicRun
	last int // where the search starts: the last found
	add  int // the next to replace
}

func (t *topicRuns) number(l *topo.Layout, tp wire.TopicPartition) (int, bool) {
	for k := 0; k < len(t.runs); k++ {
		i := (t.last + k) % len(t.runs)
		if r := &t.runs[i]; r.valid && store.SameStr(r.topic, tp.Topic) {
			t.last = i
			return r.number(l, tp)
		}
	}
	r := &t.runs[t.add]
	*r = topicRun{}
	t.last, t.add = t.add, (t.add+1)%len(t.runs)
	return r.number(l, tp)
}

func (r *topicRun) number(l *topo.Layout, tp wire.TopicPartition) (int, bool) {
	if !r.valid || r.topic != tp.Topic {
		r.span, r.input = l.Span(tp.Topic)
		r.topic, r.valid = tp.Topic, true
	}
	if !r.input {
		return l.Number(tp)
	}
	return r.span.At + tp.Partition, tp.Partition >= 0 && tp.Partition < r.span.N
}

// InvoiceSource is the input record the invoice at offset off of the log
// numbered part was made from (trace.Sources: the trace keeps a produced
// event as the invoice's place).
func (b *Broker) InvoiceSource(part, off uint64) (wire.TopicPartition, int, bool) {
	if part >= uint64(len(b.logs)) || b.logs[part] == nil || off >= uint64(b.logs[part].Cells.Len()) {
		return wire.TopicPartition{}, 0, false
	}
	src, srcOff, ok := b.logs[part].Cells.SourceRef(int(off))
	if !ok || src < 0 || src >= len(b.layout.Inputs()) {
		return wire.TopicPartition{}, 0, false
	}
	return b.layout.Inputs()[src], srcOff, true
}

// Logs lists every log, by its partition's number: the input partitions'
// in sorted order, then the output's.
func (b *Broker) Logs() []*Log { return b.logs }

// Append adds n records of the upstream producer to input partition tp
// and answers the fetches held for it.
func (b *Broker) Append(tp wire.TopicPartition, n int) {
	b.Log(tp).AppendUpstream(n, b.env.Now())
	if n > 0 && len(b.parked) > 0 {
		b.answerParked(tp)
		if b.perTick == nil {
			b.rewake()
		}
	}
}

// WriteMarkers writes a transaction's COMMIT or ABORT marker to each of
// the partitions r names.
func (b *Broker) WriteMarkers(r *wire.WriteTxnMarkersRequest) {
	for _, tp := range r.Partitions {
		b.Log(tp).WriteMarker(r.PID, r.Epoch, r.Commit, b.env.Now())
	}
}

// OpenTransactions counts the output partitions with a transaction open
// (its LSO held below its high watermark).
func (b *Broker) OpenTransactions() int {
	n := 0
	for _, l := range b.logs[len(b.layout.Inputs()):] {
		if len(l.openTxn) > 0 {
			n++
		}
	}
	return n
}

// Bufs is where a world's copies, made one after another in the storage of
// the one before (sim.Reuser), keep the logs they copy: the logs
// themselves and their producer entries.
type Bufs struct {
	logs  []Log
	prods []ProducerBufs
}

// Clone is a copy of b for a world whose environment is e and whose
// senders and transaction coordinator are the copy's: every log copied
// (sharing its chunks, CellLog), the held fetches remapped by re to the
// copies of the packets on the wire. spare is a finished copy whose
// storage the copy may take (nil for none); bufs keeps the logs' storage
// for the next copy, and keep says whether it should grow for it.
func (b *Broker) Clone(e *env.Env, re func(*wire.Packet) *wire.Packet, senders Senders, txns Transactions, spare *Broker, bufs *Bufs, keep bool) *Broker {
	var spareLogs []*Log
	n := spare
	if n == nil {
		n = new(Broker)
	} else {
		spareLogs = spare.logs
	}
	*n = Broker{env: e, layout: b.layout, senders: senders, txns: txns, ZombieWrites: b.ZombieWrites,
		clock: b.clock, nextWake: b.nextWake, perTick: b.perTick.clone(), hints: b.hints}
	n.parked = make([]parkedFetch, len(b.parked))
	for i, pf := range b.parked {
		n.parked[i] = parkedFetch{pkt: re(pf.pkt), wake: pf.wake}
	}
	// Every log is in logs (the input partitions and the output's), found
	// by its number: one pass copies them, no map to rebuild.
	if b.steadies != nil {
		// One array for every log's steady production, each reading the
		// copy's clock, its segments shared (append-only) with capacity cut.
		n.steadies = make([]logSteady, len(b.steadies))
		for i, st := range b.steadies {
			st.segs, st.clock = st.segs[:len(st.segs):len(st.segs)], &n.clock
			n.steadies[i] = st
		}
	}
	n.logs = store.ReuseBuf(spareLogs, len(b.logs))
	bufs.logs = store.ReuseBuf(bufs.logs, len(b.logs))
	if len(bufs.prods) < len(b.logs) && keep {
		bufs.prods = make([]ProducerBufs, len(b.logs))
	}
	for i, l := range b.logs {
		c := &bufs.logs[i]
		var none ProducerBufs
		buf := &none
		if i < len(bufs.prods) {
			buf = &bufs.prods[i]
		}
		l.CloneInto(c, buf)
		if l.Cells.st != nil {
			c.Cells.st = &n.steadies[i]
		}
		n.logs[i] = c
	}
	return n
}
