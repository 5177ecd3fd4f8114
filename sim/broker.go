package sim

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// parkedFetch is a Fetch the broker holds until data arrives (a long poll,
// as fetch.max.wait.ms does), so that idle members cost nothing per tick.
type parkedFetch struct {
	pkt *Packet
}

func (w *World) handleFetch(p *Packet) {
	switch a := w.answerFetch(p); {
	case a == nil:
		w.parked = append(w.parked, parkedFetch{pkt: p})
		w.armFetchTimeout(p)
	case a.Lost:
		w.armFetchTimeout(p)
	}
}

// armFetchTimeout sets the request timeout poll reserved for Fetch request
// p, when the fetch may go unanswered: the request or its answer is lost,
// or the broker holds it (a long poll). An answer sent at once is
// delivered the tick after the request was (before the timeout's tick:
// deliveries come before timers in a Step), and once the member has read
// it (or dropped it as stale) it is never fetching that fetch again (only
// poll starts a fetch, with a new number): the timeout would do nothing.
func (w *World) armFetchTimeout(p *Packet) {
	r := p.Body.(*wire.FetchRequest)
	w.env.Push(wire.Timer{Owner: wire.OwnerClient, At: p.TimerAt, Seq: p.TimerSeq, Kind: tmFetchTimeout, Client: p.From, Inc: p.FromInc, Proc: p.Proc, Key: r.ID})
}

// answerFetch reads up to Max records, partition by partition in the order
// asked, and answers; it returns the answer, or nil (and sends nothing)
// when no asked partition has a record.
func (w *World) answerFetch(p *Packet) *Packet {
	r := p.Body.(*wire.FetchRequest)
	// Gathered on the stack, then copied into the answer's array (from
	// the free lists: the trace keeps no bodies, the member copies them).
	var small [8]wire.Record
	recs := small[:0]
	for i, tp := range r.Partitions {
		l, tpi := w.logIndexed(tp)
		for off := r.Offsets[i]; off < l.HW() && len(recs) < r.Max; off++ {
			if l.Cells.IsData(off) {
				f := wire.Record{TP: tp, Offset: off, Named: true, TPI: int32(tpi + 1)}
				if !l.Cells.named(off) {
					f.Value, f.Named = l.Cells.At(off).Value, false
				}
				recs = append(recs, f)
			}
		}
		if len(recs) >= r.Max {
			break
		}
	}
	if len(recs) == 0 {
		return nil
	}
	resp := w.env.NewFetchResponse()
	resp.ID, resp.Records = r.ID, append(resp.Records, recs...)
	return w.replyText(p, None, w.trace.FetchAnswer(recs), resp)
}

// answerParked retries parked fetches that wait on tp; fetches whose
// process is gone are dropped.
func (w *World) answerParked(tp TopicPartition) {
	keep := w.parked[:0]
	for _, pf := range w.parked {
		m := w.process(pf.pkt.From, pf.pkt.FromInc)
		r := pf.pkt.Body.(*wire.FetchRequest)
		if m == nil || !m.Alive || m.fetchID != r.ID || m.loop != LoopFetching {
			continue
		}
		wants := false
		for _, t := range r.Partitions {
			if t == tp {
				wants = true
			}
		}
		if wants && w.answerFetch(pf.pkt) != nil {
			continue
		}
		keep = append(keep, pf)
	}
	w.parked = keep
}

// handleProduce is the partition leader writing one record: with a PID it
// checks the epoch and the sequence against the last five batches. It
// answers once, and returns the answer.
func (w *World) handleProduce(p *Packet) *Packet {
	r := p.Body.(*wire.ProduceRequest)
	var l *PartitionLog
	li := int(r.TPI) - 1 // the request's partition number, when it carries one
	byNumber := li >= 0 && li < len(w.logAt)
	if byNumber {
		l = w.logAt[li]
	} else {
		l = w.logOf(r.TP)
	}
	resp := w.env.NewProduceResponse()
	resp.ID, resp.Seq, resp.Offset = r.ID, r.Seq, -1
	if r.PID >= 0 {
		e := l.producers[r.PID]
		if e != nil && r.Epoch < e.epoch {
			return w.reply(p, InvalidProducerEpoch, fmt.Sprintf("epoch %d < %d", r.Epoch, e.epoch), resp)
		}
		if r.Txn {
			if code := w.Txn.checkProduce(r); code != None {
				return w.reply(p, code, "", resp)
			}
		}
		if e != nil && r.Epoch == e.epoch && len(e.batches) > 0 {
			last := e.batches[len(e.batches)-1].seq
			for _, b := range e.batches {
				if b.seq == r.Seq {
					resp.Offset, resp.Dup = b.offset, true
					return w.reply(p, None, fmt.Sprintf("%s seq %d already at offset %d: not written again", r.ValueIn(w.layout), r.Seq, b.offset), resp)
				}
			}
			if r.Seq <= last {
				return w.reply(p, DuplicateSequenceNumber, fmt.Sprintf("seq %d older than the last %d kept", r.Seq, idempotenceWindow), resp)
			}
			if r.Seq != last+1 {
				return w.reply(p, OutOfOrderSequenceNumber, fmt.Sprintf("seq %d, expected %d", r.Seq, last+1), resp)
			}
		} else if r.Seq != 0 && (e == nil || r.Epoch > e.epoch) {
			return w.reply(p, OutOfOrderSequenceNumber, fmt.Sprintf("seq %d, expected 0", r.Seq), resp)
		}
		if e == nil || r.Epoch > e.epoch {
			e = &producerEntry{epoch: r.Epoch}
			if l.producers == nil {
				l.producers = map[int64]*producerEntry{}
			}
			l.producers[r.PID] = e
		}
		mark := NotTransactional
		if r.Txn {
			mark = TxnOpen
		}
		off := l.appendProduced(r, Cell{Producer: r.Producer, PID: r.PID, Epoch: r.Epoch, Seq: r.Seq, Txn: mark, Tick: w.Tick})
		if len(e.batches) == idempotenceWindow {
			// Slide the window in place (a clone has its own batches), so
			// that a full window never grows its array again.
			e.batches = e.batches[:copy(e.batches, e.batches[1:])]
		}
		e.batches = append(e.batches, batchRecord{seq: r.Seq, offset: off})
		resp.Offset = off
	} else {
		resp.Offset = l.appendProduced(r, Cell{Producer: r.Producer, PID: -1, Seq: -1, Tick: w.Tick})
	}
	if m := w.procOf(p.From, p.FromInc, p.Proc); m != nil && (m.Zombie || m.Phase == PhaseOut || m.superseded) {
		w.ZombieWrites++
	}
	// The produced event and the answer's text ("%s written to %s at
	// offset %d", "%s at offset %d"), kept once when the answer can read
	// the event's (World.packetText). An invoice's cell names its source
	// when the log keeps it as a reference: the event is then the cell's
	// place alone.
	named := false
	if r.HasSrc && byNumber {
		part, off, ok := l.Cells.sourceRef(resp.Offset)
		named = ok && part == int(r.SrcTPI)-1 && off == r.SrcOffset
	}
	return w.replyText(p, None, w.trace.Produced(r, resp.Offset, named), resp)
}

// appendProduced writes r's record to l as cell c (its value and source
// r's).
func (l *PartitionLog) appendProduced(r *wire.ProduceRequest, c Cell) int {
	if r.Named {
		// srcTPI is src's tpIndex, which numbers the input partitions as
		// topo.InputIndex.slot does: a hint appendInvoice checks.
		return l.appendInvoice(c, r.Src, r.SrcOffset, int(r.SrcTPI)-1)
	}
	c.Value, c.Source = r.Value, r.Source
	return l.append(c)
}

// fetchOutstanding reports whether fetch id of m is held at the broker (a
// long poll) or its answer is on the wire.
func (w *World) fetchOutstanding(m *Member, id int) bool {
	for _, pf := range w.parked {
		if r, ok := pf.pkt.Body.(*wire.FetchRequest); ok && pf.pkt.From == m.Client && pf.pkt.FromInc == m.Inc && r.ID == id {
			return true
		}
	}
	for _, p := range w.env.Sending() {
		if p.Type != Fetch {
			continue
		}
		switch b := p.Body.(type) {
		case *wire.FetchRequest:
			if p.From == m.Client && p.FromInc == m.Inc && b.ID == id {
				return true
			}
		case *wire.FetchResponse:
			if p.To == m.Client && p.ToInc == m.Inc && b.ID == id {
				return true
			}
		}
	}
	return false
}
