package client

import (
	"cmp"
	"math"
	"slices"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// producer is a member's producer client: plain, idempotent (PID and
// sequence numbers) or transactional. Its settings are fixed when it is
// created, as a KafkaProducer's are: when the member's settings change,
// replace closes it and creates another.
type producer struct {
	pid   int64 // -1 until InitProducerId answers (or for a plain producer)
	epoch int
	mode  ProducerMode // enable.idempotence and transactional.id, as created
	txnID string
	// seq is the next sequence number per output partition, by its index
	// in outputTPs; nil until the first (a plain producer numbers
	// nothing).
	seq     []int
	nextID  int // numbers produce requests; a new producer goes on from the old one's, so a retry timer of the old one finds nothing
	sent    int // records this producer has sent
	unacked unackedReqs
	queued  []*wire.ProduceRequest // waiting for AddPartitionsToTxn
	// flight is, per output partition (by its index in outputTPs), its
	// requests in flight; nil until the first request. held are the
	// requests made and not sent because their partition has
	// maxInFlight in flight (gate), in the order they were made.
	// maxInFlight is ClientConfig.MaxInFlight as created (0: no limit).
	flight       []flight
	held         []*wire.ProduceRequest
	maxInFlight  uint32
	initInFlight bool
	txn          clientTxn  // the transaction, when transactional
	endTxnSeq    int        // numbers EndTxn requests, for their request timeout
	coord        coordCalls // InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn and TxnOffsetCommit waiting for answers
	// text is what its next produce's text may refer back to (the trace's),
	// batchText what its next batch of several runs' may.
	text      trace.ProducerText
	batchText trace.BatchText
	// open are the batches open while linger.ms > 0 (lingerAppend), one
	// per output partition, in the order of their first records; empty
	// between a member's turns (drainLinger).
	open []openBatch
	// scratch: the open batches' runs are in the world's arrays
	// (env.HoldRunScratch), given back when they close (closeOpen); else
	// each batch's own.
	scratch bool
	// outs is the producer's work space, one entry per output partition
	// (its index in outputTPs), nil until its first run: its share of
	// the run of input records in hand (produceInvoiceRun; every count 0
	// between runs) and where its open batch is. order lists the output
	// partitions of the run in hand, slots its records' output
	// partitions. None is state: a clone has none (cloneMember) and makes
	// its own.
	outs  []outSlot
	order []int32
	slots []int32 // the partitioner's slots of the run in hand
	// hundreds keeps the partitioner's hash of the hundred of each input
	// partition's last run, a few partitions by their numbers (hundred),
	// nil until the first run.
	hundreds []topo.Hundred
}

// unackedReqs are a producer's produce requests sent and not answered
// yet, in ID order: a few at a time, so a slice, which World.Clone copies
// in one allocation for every member (a map cost two each). IDs only grow
// (nextID), so a new one goes at the end; a retry replaces its request.
type unackedReqs []*wire.ProduceRequest

func (u unackedReqs) find(id int) (int, bool) {
	// Requests are answered, and sent, in ID order: the one asked for is
	// almost always the oldest, or past the newest.
	if n := len(u); n > 0 {
		switch {
		case u[0].ID == id:
			return 0, true
		case u[0].ID > id:
			// older than every request held: answered already (the
			// free lists ask after each answer, HoldsProduce)
			return 0, false
		case u[n-1].ID < id:
			return n, false
		}
	} else {
		return 0, false
	}
	return slices.BinarySearchFunc(u, id, func(r *wire.ProduceRequest, id int) int { return cmp.Compare(r.ID, id) })
}

// get is the request with that ID, or nil.
func (u unackedReqs) get(id int) *wire.ProduceRequest {
	if i, ok := u.find(id); ok {
		return u[i]
	}
	return nil
}

// put adds r, or replaces the request with its ID.
func (u *unackedReqs) put(r *wire.ProduceRequest) {
	if n := len(*u); n == 0 || (*u)[n-1].ID < r.ID {
		*u = append(*u, r) // a new request: the newest ID (the usual case)
		return
	}
	i, ok := u.find(r.ID)
	if ok {
		(*u)[i] = r
		return
	}
	*u = slices.Insert(*u, i, r)
}

// del removes the request with that ID, if there is one.
func (u *unackedReqs) del(id int) {
	if i, ok := u.find(id); ok {
		*u = slices.Delete(*u, i, i+1)
	}
}

// MaxInFlight is max.in.flight.requests.per.connection's default in
// Kafka (ProducerConfig: 5), the most the idempotent producer allows
// (ProducerConfig.postProcessAndValidateIdempotenceConfigs refuses more
// with a ConfigException), and the number of batches a partition leader
// keeps per producer (ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
const MaxInFlight = 5

// flight is one output partition's requests in flight, numbered as they
// are made (wire.ProduceRequest.InFlight): made is the next number,
// settled the first whose answer has not come (every one below it is
// answered), answered the answers that overtook it (bit i: request
// settled+i; bit 0 is never set), held how many of its requests wait in
// producer.held. With no limit (ClientConfig.MaxInFlight 0, the page's
// world) nothing is held.
//
// Kafka's client never has more than max.in.flight.requests.per.connection
// batches of a partition in flight: the Sender drains at most one batch
// a partition into each ProduceRequest (RecordAccumulator.
// drainBatchesForOneNode) and sends a node at most that many requests
// (NetworkClient's InFlightRequests.canSendMore); a partition's further
// batches wait in its deque, in order. A connection answers in order, so
// an answer never overtakes an earlier request's, and a request timeout
// fails every request after it too. kgrepl's packets are lost one by one
// and its answers may come out of order: a request counts as in flight
// from when it is sent until it and every earlier request of its
// partition are answered (settled), so that, as in Kafka, no more than
// max.in.flight.requests.per.connection batches of a partition were sent after the oldest one
// unanswered, and the leader's last five batches (ProducerStateEntry.
// NUM_BATCHES_TO_RETAIN) always hold a retried one that was written.
//
// Simplifications on purpose: the limit is per partition, not per
// connection (kgrepl sends each batch as a Produce of its own, where
// Kafka's one request carries a batch of every partition of the node); a
// held request stays the batch it was made (Kafka's deque batch would
// take later records until batch.size); a retry goes on its own timer,
// where Kafka's Sender resends a partition's failed batches one at a
// time in sequence order (RecordAccumulator.
// shouldStopDrainBatchesForPartition).
type flight struct {
	made, settled, held uint32
	answered            uint8
}

// newProducer is a producer created with cc's producer settings. A
// non-plain one has no PID until initProducerID's InitProducerId answers.
func newProducer(cc ClientConfig) producer {
	return producer{pid: -1, mode: cc.Producer(), txnID: cc.TransactionalID, maxInFlight: uint32(cc.MaxInFlight)}
}

// fire is one of the producer's timers firing: a retry after a backoff
// (InitProducerId, a produce, AddPartitionsToTxn, EndTxn) or an EndTxn's
// request timeout.
func (pr *producer) fire(m *Member, t wire.Timer) {
	switch t.Kind {
	case tmInitPIDRetry:
		pr.initProducerID(m)
	case tmProduceRetry:
		pr.produceRetry(m, t.Key, t.Arg)
	case tmAddPartitionsRetry:
		pr.addPartitionsRetry(m)
	case tmEndTxnTimeout:
		if m.loop.state == LoopTxnEnd && pr.endTxnSeq == t.Key {
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to EndTxn within request.timeout.ms (%d): sending it again", m.Label(), m.Cfg.RequestTimeout)
			pr.endTxn(m, t.Arg == 1)
		}
	case tmCoordCallTimeout:
		pr.fireCall(m, t)
	case tmEndTxnRetry:
		if m.loop.state == LoopTxnEnd {
			pr.endTxn(m, t.Key == 1)
		}
	}
}

// stale reports whether the member's settings ask for a producer
// other than the one it holds (set producer, enable.idempotence,
// transactional.id changed while it runs).
func (pr *producer) stale(m *Member) bool {
	return m.Cfg.Producer() != pr.mode || m.Cfg.TransactionalID != pr.txnID
}

// ready is called inside poll(), between batches, before a Fetch
// goes out. It reports whether the producer can send; it replaces a stale
// producer and starts InitProducerId for one that has no PID yet.
func (pr *producer) ready(m *Member) bool {
	if pr.stale(m) {
		// The application leaves poll() to close its producer: a Fetch
		// still out would bring a batch for a producer that cannot
		// send it yet, so its answer is dropped and asked for again
		// once the new producer is ready.
		m.loop.abandonFetch()
		if len(pr.unacked) > 0 || pr.initInFlight {
			// KafkaProducer.close() returns only once Sender.run's
			// shutdown loop has had every request in flight answered
			// (retries included), InitProducerId too. A produce answer
			// wakes the member, which then comes back here.
			return false
		}
		pr.replace(m)
	}
	if pr.mode == ProducerPlain || pr.pid >= 0 {
		return true
	}
	if !pr.initInFlight {
		pr.initProducerID(m)
	}
	return false
}

// outputSlot picks the invoice partition for an input record, as its
// index in outputTPs: a hash of the key (its value), as the default
// partitioner does (FNV-1a, 32 bits).
func outputSlot(layout *topo.Layout, source string) int {
	h := uint32(topo.FNVBasis)
	for i := 0; i < len(source); i++ {
		h = (h ^ uint32(source[i])) * topo.FNVPrime
	}
	return int(h % uint32(len(layout.Outputs())))
}

// outputSlotOf is outputSlot of a fetched record's value, hashed without
// spelling it when it is the record's name (its partition's part of the
// name hashed once, by the layout, when the record carries its
// partition's number).
func outputSlotOf(layout *topo.Layout, f *wire.Record) int {
	if !f.Named {
		return outputSlot(layout, f.Value)
	}
	return layout.PartitionerOf(f.TP, f.TPI-1).Slot(f.Offset)
}

// produceInvoice sends inv(x) for a processed record: with linger.ms > 0
// a record named by its place goes into its partition's open batch
// (lingerAppend); one whose value is not its name (typed on the page)
// closes the open batches first and goes at once, alone.
func (pr *producer) produceInvoice(m *Member, f wire.Record) {
	out := outputSlotOf(m.env.Layout(), &f)
	if m.Cfg.Linger > 0 {
		if f.Named && f.TPI > 0 && f.Offset <= math.MaxInt32 {
			pr.lingerAppend(m, out, f.TPI, outRun{first: f.Offset, last: f.Offset, count: 1})
			return
		}
		pr.drainLinger(m)
	}
	pr.sendInvoice(m, f, out)
}

// sendInvoice sends inv(x) for record f, to output partition out (its
// index in outputTPs), as a Produce of its own.
func (pr *producer) sendInvoice(m *Member, f wire.Record, out int) {
	req := pr.invoiceRequest(m, out, 1, f.TP, f.Offset, f.TPI, f.Named)
	if !f.Named {
		req.Value, req.Source = "inv("+f.Value+")", f.Value
	}
	pr.sendInvoices(m, req, out, 1)
}

// invoiceRequest is a new Produce of count invoices to output partition
// out (its index in outputTPs), its first source record off of src (tpi
// its number plus one), numbered among the producer's requests; the
// caller says the rest of its sources and sends it (sendInvoices). A
// recycled request's array of runs is kept, empty, for the next batch of
// several runs.
func (pr *producer) invoiceRequest(m *Member, out, count int, src wire.TopicPartition, off int, tpi int32, named bool) *wire.ProduceRequest {
	layout := m.env.Layout()
	pr.nextID++
	pr.sent += count
	// Zero but for its epoch and its runs' array (NewProduceRequest),
	// filled in place, field by field: a composite literal is built
	// whole on the stack (224 bytes, in stores of 1 to 8 bytes) and
	// copied in 16-byte loads, which the processor cannot forward from
	// its store buffer (a stall on about every load, every request).
	req := m.env.NewProduceRequest()
	req.ID, req.TP, req.PID, req.Seq, req.Producer = pr.nextID, layout.Outputs()[out], -1, -1, m.Client
	req.Src, req.SrcOffset, req.HasSrc, req.Named, req.SrcTPI = src, off, true, named, tpi
	req.Runs = req.Runs[:0]
	req.TPI = int32(len(layout.Inputs()) + out + 1) // tpIndex numbers the output's partitions after the inputs', in outputTPs' order
	if pr.flight == nil {
		pr.flight = make([]flight, len(layout.Outputs()))
	}
	f := &pr.flight[out]
	req.InFlight, req.NoInFlightLimit = f.made, pr.maxInFlight == 0
	f.made++
	return req
}

// sendInvoices gives req its producer id, epoch and count sequence
// numbers, and sends it (or queues it behind AddPartitionsToTxn).
func (pr *producer) sendInvoices(m *Member, req *wire.ProduceRequest, out, count int) {
	pr.number(m, req, out, count)
	pr.enqueue(m, req, req.TP)
}

// number gives req, for output partition out (its index in outputTPs),
// the producer id, epoch and n sequence numbers from the next, when the
// producer is idempotent.
func (pr *producer) number(m *Member, req *wire.ProduceRequest, out, n int) {
	if pr.pid >= 0 && pr.mode != ProducerPlain {
		req.PID, req.Epoch = pr.pid, pr.epoch
		if pr.seq == nil {
			pr.seq = make([]int, len(m.env.Layout().Outputs()))
		}
		req.Seq = pr.seq[out]
		pr.seq[out] += n
		req.Txn = pr.mode == ProducerTransactional
	}
}

// enqueue holds req until answered and sends it, or queues it behind
// AddPartitionsToTxn when its partition is not in the transaction yet.
func (pr *producer) enqueue(m *Member, req *wire.ProduceRequest, tp wire.TopicPartition) {
	pr.unacked.put(req)
	if req.Txn && !pr.txn.partitions[tp] {
		pr.queued = append(pr.queued, req)
		if !pr.txn.adding {
			pr.addPartitions(m, tp)
		}
		return
	}
	pr.gate(m, req)
}

// outOf is the index in outputTPs of req's partition.
func outOf(m *Member, req *wire.ProduceRequest) int {
	return int(req.TPI) - len(m.env.Layout().Inputs()) - 1
}

// gate sends req if its partition has fewer than maxInFlight requests
// in flight and none held before it; else holds it until an answer frees
// a place (settle).
func (pr *producer) gate(m *Member, req *wire.ProduceRequest) {
	f := &pr.flight[outOf(m, req)]
	if pr.maxInFlight == 0 || f.held == 0 && req.InFlight-f.settled < pr.maxInFlight {
		pr.sendProduce(m, req)
		return
	}
	f.held++
	pr.held = append(pr.held, req)
}

// settle is req answered for good: its partition's requests in flight
// move past it and every answer that overtook it, and the requests held
// for the places freed go, in the order they were made.
func (pr *producer) settle(m *Member, req *wire.ProduceRequest) {
	pr.unacked.del(req.ID)
	if pr.maxInFlight == 0 {
		return
	}
	out := outOf(m, req)
	f := &pr.flight[out]
	f.answered |= 1 << (req.InFlight - f.settled)
	for f.answered&1 != 0 {
		f.answered >>= 1
		f.settled++
	}
	if f.held == 0 {
		return
	}
	keep := pr.held[:0]
	for i, h := range pr.held {
		if f.held > 0 && outOf(m, h) == out && h.InFlight-f.settled < pr.maxInFlight {
			f.held--
			pr.sendProduce(m, h)
			continue
		}
		keep = append(keep, pr.held[i])
	}
	clear(pr.held[len(keep):])
	pr.held = keep
}

// produceInvoiceRun sends the invoices of input records first ..
// first+count-1 of tp (plain records, named by their offsets; tpi is tp's
// number plus one): each to the output partition the default partitioner
// picks for it (outputSlot), as one batch per output partition, each a
// Produce of its own, in the order of their first records (the order in
// which one Produce a record would first reach each partition, so that a
// transaction adds its partitions in the same order). That is Kafka's producer
// within one linger.ms (5 in Kafka 4.0): RecordAccumulator appends each
// record to its partition's open ProducerBatch and the Sender drains
// every ready batch; a batch carries its base sequence number and record
// count (ProduceRequest.SrcCount), the leader checks it as a whole
// (Broker.Produce), a retry resends it whole (retryProduce), and a
// transaction adds its partition first as for one record. An output
// partition that gets one record of the run gets produceInvoice's very
// request, text for text.
func (pr *producer) produceInvoiceRun(m *Member, tp wire.TopicPartition, tpi int32, first, count int) {
	layout := m.env.Layout()
	outs := len(layout.Outputs())
	if count <= 0 {
		return
	}
	if count == 1 {
		pr.produceInvoice(m, wire.Record{TP: tp, Offset: first, Named: true, TPI: tpi})
		return
	}
	// One pass: each output partition's first and last source and count
	// (its batch is the records between them the partitioner sends it:
	// ProduceRequest.SrcCount), the partitions in the order of their
	// first records, in the producer's arrays (outRuns), every count 0
	// between runs.
	runs, order := pr.outRuns(outs)
	if outs == 1 {
		runs[0].run, order = outRun{first: first, last: first + count - 1, count: count}, append(order, 0)
	} else {
		// The partitioner's slots of the whole run (SlotsFrom hashes a
		// ten's leading digits once, and a hundred's once for the runs of
		// the hundred) into the producer's array, the partition's part of
		// the names hashed once by the layout.
		slots := pr.slotsFor(count)
		layout.PartitionerOf(tp, tpi-1).SlotsFrom(first, slots, pr.hundred(m, tpi))
		for k, o := range slots {
			r := &runs[o].run
			if r.count == 0 {
				r.first = first + k
				order = append(order, o)
			}
			r.last = first + k
			r.count++
		}
	}
	// A batch of several runs carries each as a wire.SrcRun: the
	// partition's number and int32 offsets. A run whose partition's number
	// is not known, or past int32's offsets, goes at once, after the open
	// batches.
	last := first + count - 1
	linger := m.Cfg.Linger > 0 && tpi > 0 && last <= math.MaxInt32
	if m.Cfg.Linger > 0 && !linger {
		pr.drainLinger(m)
	}
	pr.order = order[:0] // its array kept for the next run
	for _, out := range order {
		run := runs[out].run
		runs[out].run = outRun{} // every count 0 for the next run
		if linger {
			// lingerAppend, written out: a call a run otherwise
			// Every record of first..last went to one of the output
			// partitions just now: the run's covered range (SrcRun.From).
			if o := runs[out].open; o > 0 {
				pr.open[o-1].add(tpi, run, first, last)
			} else {
				pr.openFor(m, out).add(tpi, run, first, last)
			}
			continue
		}
		pr.sendRun(m, int(out), tp, tpi, run)
	}
}

// sendRun sends the invoices of run, one run of records of input
// partition src (tpi its number plus one, 0: not known), to output
// partition out (its index in outputTPs) as one Produce: produceInvoice's
// very request for a run of one record, else a batch (SrcCount).
func (pr *producer) sendRun(m *Member, out int, src wire.TopicPartition, tpi int32, run outRun) {
	if run.count == 1 {
		pr.sendInvoice(m, wire.Record{TP: src, Offset: run.first, Named: true, TPI: tpi}, out)
		return
	}
	req := pr.invoiceRequest(m, out, run.count, src, run.first, tpi, true)
	req.SrcCount, req.SrcEnd = run.count, run.last
	pr.sendInvoices(m, req, out, run.count)
}

// outRun is one output partition's share of a run of input records: its
// first and last record and how many (produceInvoiceRun).
type outRun struct{ first, last, count int }

// outSlot is the producer's work space for one output partition (outs):
// its share of the run in hand, and its open batch's place in open plus
// one (0: none open).
type outSlot struct {
	run  outRun
	open int32
}

// slotsFor is the producer's array of slots, made long enough for count.
func (pr *producer) slotsFor(count int) []int32 {
	if cap(pr.slots) < count {
		pr.slots = make([]int32, max(count, 2*cap(pr.slots)))
	}
	return pr.slots[:count]
}

// hundredWays is how many input partitions' hundreds a producer keeps
// (hundreds): a member of up to about that many partitions finds each
// one's there, run after run.
const hundredWays = 64

// hundred is the entry of the world's hundreds for the input partition
// numbered tpi minus one (env.Env.Hundred), else of the producer's:
// picked by a hash of the number, so that a member's partitions (often
// every so many numbers apart) seldom share one; a shared one is only
// hashed anew (topo.Hundred holds what it was hashed from).
func (pr *producer) hundred(m *Member, tpi int32) *topo.Hundred {
	if h := m.env.Hundred(tpi); h != nil {
		return h
	}
	if pr.hundreds == nil {
		pr.hundreds = make([]topo.Hundred, hundredWays)
	}
	return &pr.hundreds[(uint32(tpi)*0x9E3779B1)>>26] // Fibonacci hashing: the top 6 bits, 64 ways
}

// outRuns is outs, one entry per output partition (made the first time),
// and order, empty, for a run of input records.
func (pr *producer) outRuns(outs int) ([]outSlot, []int32) {
	if len(pr.outs) != outs {
		pr.outs = make([]outSlot, outs) // a world's output partitions never change: once
	}
	return pr.outs, pr.order[:0]
}

func (pr *producer) sendProduce(m *Member, req *wire.ProduceRequest) {
	// "inv(o2.3) pid %d epoch %d seq %d (retry)": every produce writes it.
	p := m.env.Packet()
	if req.Count() > 1 {
		// A batch's text: "inv(o0.3..o0.9) pid %d epoch %d seq %d..%d
		// (retry)", its sources kept as a run, spelled when read.
		p.Text = m.env.Trace().ProduceBatch(req, &pr.batchText)
	} else {
		p.Text = m.env.Trace().ProduceRequest(req, &pr.text)
	}
	p.Type, p.Body = wire.Produce, req
	m.send(p)
	// Without an answer by the round trip, retry after retry.backoff.ms.
	// The timer is reserved (its tick and its place among the timers) and
	// set only when the answer will not settle the request (armRetry): in
	// steady traffic it would fire after the answer and do nothing.
	p.TimerAt, p.TimerSeq = m.env.Reserve(m.env.Now() + 2 + m.Cfg.RetryBackoff)
	if p.Lost {
		m.env.Push(ProduceRetryTimer(p))
	}
}

// produceRetry resends a produce still unanswered at that attempt.
func (pr *producer) produceRetry(m *Member, id, attempt int) {
	cur := pr.unacked.get(id)
	if m.Alive && cur != nil && cur.Attempt == attempt {
		pr.retryProduce(m, cur)
	}
}

func (pr *producer) retryProduce(m *Member, req *wire.ProduceRequest) {
	nr := *req
	nr.Attempt++
	nr.FreeEpoch = 0 // a heap object of its own, not from the free lists
	// its runs an array of its own too: the free lists reuse the first
	// request's when they take it back
	nr.Runs = slices.Clone(req.Runs)
	pr.unacked.put(&nr)
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s retries %s (no answer)", m.Label(), nr.ValueIn(m.env.Layout()))
	pr.sendProduce(m, &nr)
}

func (pr *producer) onProduceResponse(m *Member, p *wire.Packet) {
	r := p.Body.(*wire.ProduceResponse)
	req := pr.unacked.get(r.ID)
	if req == nil {
		return
	}
	switch p.Error {
	case wire.None:
	case wire.OutOfOrderSequenceNumber:
		// An earlier sequence has not landed yet: send this one again later.
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmProduceRetry, Client: m.Client, Inc: m.Inc, Key: r.ID, Arg: req.Attempt})
		return
	case wire.DuplicateSequenceNumber:
		// Written before, and out of the leader's last five batches: only
		// a producer with no in-flight limit (the page's world) is answered
		// so; settled as written, as Kafka's Sender.completeBatch does.
	case wire.InvalidProducerEpoch, wire.ProducerFenced:
		// The transaction cannot commit any more; the next call to the
		// transaction coordinator is refused and ends the producer.
		m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s: produce of %s refused with %s: a newer producer epoch exists", m.Label(), req.ValueIn(m.env.Layout()), p.Error)
	}
	pr.settle(m, req)
	pr.checkFlushed(m)
}

// flush waits until every produce is answered, then runs then.
func (pr *producer) flush(m *Member, then cont) {
	if len(pr.unacked) == 0 {
		m.loop.resume(m, then)
		return
	}
	m.loop.state = LoopFlushing
	m.loop.afterFlush = then
}

func (pr *producer) checkFlushed(m *Member) {
	if m.loop.state == LoopFlushing && len(pr.unacked) == 0 {
		then := m.loop.afterFlush
		m.loop.afterFlush = contNone
		m.loop.state = LoopIdle
		m.loop.resume(m, then)
	}
}

// --- transactions, client side ---
