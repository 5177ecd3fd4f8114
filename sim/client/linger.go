package client

import "github.com/kgrepl/kgrepl/sim/wire"

// A producer's linger.ms: the batches it keeps open a tick, one per output
// partition, and sends when the tick's work is done (Kafka's
// RecordAccumulator and the Sender's drain).

// openBatch is an output partition's open batch (Kafka's ProducerBatch
// in the RecordAccumulator): its partition's index in outputTPs, its
// records, and its sources as runs, in the order they were appended.
type openBatch struct {
	out   int32
	count int
	runs  []wire.SrcRun
}

// add appends run, records of the input partition numbered tpi-1 (tpi >
// 0, offsets within int32), to b: its fields written in place
// (lingerAppend says why). from..to is the input range the run was cut
// from (wire.SrcRun.From): every record of it went to one of the output
// partitions, so none outside the run to b's.
func (b *openBatch) add(tpi int32, run outRun, from, to int) {
	n := len(b.runs)
	if n < cap(b.runs) {
		b.runs = b.runs[:n+1]
	} else {
		b.runs = append(b.runs, wire.SrcRun{})
	}
	r := &b.runs[n]
	r.Part, r.First, r.Last, r.Count = tpi-1, int32(run.first), int32(run.last), int32(run.count)
	r.From, r.To = int32(from), int32(to)
	b.count += run.count
}

// lingerAppend adds the invoices of run, records of src (tpi its number
// plus one), for output partition out (its index in outputTPs), to that
// partition's open batch, opening one if there is none: Kafka's
// RecordAccumulator.append, which appends a record to its partition's
// last ProducerBatch whatever the record it is the invoice of, so that
// records of several input partitions share one batch.
//
// kgrepl's linger is simpler than Kafka's: Kafka's Sender sends a batch
// once it is ready (RecordAccumulator.ready: linger.ms since it was
// created, or full at batch.size, or a flush) and drains one ready batch
// a partition (RecordAccumulator.drain); kgrepl sends every open batch at
// the end of the member's turn in the tick, or before any other request
// the member sends (a commit, a transaction call, a close) and before a
// crash it is due (drainLinger). So any linger.ms > 0 gathers what one
// member processes in one tick (which, in real time, is at most a tick of
// tick.ms: 5 ms, Kafka's linger.ms); a batch never waits for the next
// tick, and batch.size (16 KB in Kafka) is not modelled: a batch holds
// what the tick gives it.
//
// The run's fields are written in place, in the batch's array: a
// wire.SrcRun made on the stack and appended was stored in 8-byte words
// and read back in 16-byte ones, which the processor cannot forward from
// its store buffer (T1: a stall on about every run, 3-5% of the CPU).
func (pr *producer) lingerAppend(m *Member, out int, tpi int32, run outRun) {
	if out < len(pr.outs) && pr.outs[out].open > 0 {
		pr.open[pr.outs[out].open-1].add(tpi, run, run.first, run.last) // open already: openFor's first answer, here without a call
		return
	}
	pr.openFor(m, int32(out)).add(tpi, run, run.first, run.last)
}

// openFor is output partition out's open batch, opened (at the end of
// the order) when there is none: found by its entry in outs, not by a
// scan of the open batches.
func (pr *producer) openFor(m *Member, out int32) *openBatch {
	if pr.outs == nil {
		pr.outRuns(len(m.env.Layout().Outputs())) // a record alone (produceInvoice) may come first
	}
	slot := &pr.outs[out]
	if slot.open > 0 {
		return &pr.open[slot.open-1]
	}
	n := len(pr.open)
	if n < cap(pr.open) {
		pr.open = pr.open[:n+1] // its runs' array is reused
	} else {
		pr.open = append(pr.open, openBatch{})
	}
	if n == 0 {
		pr.scratch = m.env.HoldRunScratch(m.proc)
	}
	b := &pr.open[n]
	b.out, b.count = out, 0
	if pr.scratch {
		b.runs = m.env.RunScratch(out)
	} else {
		b.runs = b.runs[:0]
	}
	slot.open = int32(n + 1)
	return b
}

// drainLinger sends every open batch, in the order of their first
// records (the order in which linger.ms 0 would first send to each
// partition, so that a transaction adds its partitions in the same
// order), each as one Produce (sendBatch); none are left open.
func (pr *producer) drainLinger(m *Member) {
	if len(pr.open) == 0 {
		return
	}
	for i := range pr.open {
		pr.sendBatch(m, &pr.open[i])
	}
	pr.closeOpen(m)
}

// closeOpen forgets the open batches (sent, or lost with the process),
// giving the world's arrays of runs back if they held their runs.
func (pr *producer) closeOpen(m *Member) {
	for i := range pr.open {
		b := &pr.open[i]
		pr.outs[b.out].open = 0
		if pr.scratch {
			m.env.ReturnRunScratch(b.out, b.runs)
			b.runs = nil
		}
	}
	if pr.scratch {
		m.env.ReleaseRunScratch(m.proc)
		pr.scratch = false
	}
	pr.open = pr.open[:0]
}

// sendBatch sends open batch b (its count records, whose sources are its
// runs) to its output partition: a batch of one run as linger.ms 0 sends it
// (sendRun); else one Produce whose sources are the runs
// (ProduceRequest.Runs), with one base sequence number and the count, as
// Kafka's ProducerBatch: the leader checks it whole (Broker.Produce), a
// retry resends it whole, a fence refuses it whole.
//
// The runs gathered in the world's arrays (producer.scratch, the usual
// case) are copied into the request's, in one pass; a batch with an
// array of its own gives it to the request as it is and keeps the
// recycled request's (empty) for its next runs: a swap, not a copy. The
// recycled request's array is free (the free lists hand a request back
// once nothing holds it, HoldsProduce), and the batch's array was the
// producer's alone.
func (pr *producer) sendBatch(m *Member, b *openBatch) {
	out := int(b.out)
	first := &b.runs[0]
	src := m.env.Layout().Input().At(int(first.Part))
	if len(b.runs) == 1 {
		pr.sendRun(m, out, src, first.Part+1, outRun{first: int(first.First), last: int(first.Last), count: int(first.Count)})
		return
	}
	req := pr.invoiceRequest(m, out, b.count, src, int(first.First), first.Part+1, true)
	req.SrcCount, req.SrcEnd = b.count, int(first.Last)
	if pr.scratch {
		req.Runs = append(req.Runs, b.runs...) // one copy, in order, from the world's arrays
	} else {
		req.Runs, b.runs = b.runs, req.Runs[:0]
	}
	pr.sendInvoices(m, req, out, b.count)
}
