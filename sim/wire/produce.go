package wire

import "strconv"

// The Produce API's bodies.

// ProduceRequest is a Produce of one record (an invoice).
type ProduceRequest struct {
	ID       int // the producer's own number for the record, to match answers
	TP       TopicPartition
	Value    string // "" when Named: ValueIn spells it
	Source   string // "" when Named: SourceIn spells it
	PID      int64
	Epoch    int
	Seq      int
	Txn      bool
	Producer string
	Attempt  int
	// InFlight numbers the request among its producer's requests to TP,
	// from 0 in the order they are made (and sent): the producer's
	// in-flight limit per partition counts by it (client: producer.gate).
	// Set when the request is made, never changed; a retry keeps it.
	InFlight uint32
	// NoInFlightLimit: the producer has no in-flight limit (the page's
	// world: ClientConfig.MaxInFlight 0), so a retry may be older than
	// the leader's kept batches (broker.Produce answers it
	// DUPLICATE_SEQUENCE_NUMBER, as before kgrepl followed Kafka 4.0).
	NoInFlightLimit bool
	// Src/SrcOffset: the input record Source names, so that the trace keeps
	// the value as a record reference; HasSrc false for none.
	Src       TopicPartition
	SrcOffset int
	HasSrc    bool
	// Named says Source is the name of input record SrcOffset of Src and
	// Value is inv(Source): neither is spelled on the hot path.
	Named bool
	// SrcTPI and TPI are the world's numbers of Src and of TP plus one (0:
	// not known), so that the trace's texts and the leader's log lookup do
	// not look them up again.
	SrcTPI, TPI int32
	// SrcCount and SrcEnd, for a batch of more than one invoice
	// (SrcCount > 1; Kafka's ProducerBatch: one per partition per send,
	// base sequence Seq, SrcCount records): its records are the invoices
	// of the records of Src from SrcOffset to SrcEnd that the default
	// partitioner sends to TP (topo.Partitioner: the output partition of
	// an input record is a function of its name), SrcCount of them, in
	// offset order; every record from SrcOffset to SrcEnd when SrcCount is
	// their number. 0 and 0 for one record. Never changed once sent: a
	// retry resends the same batch.
	SrcCount, SrcEnd int
	// Runs, for a batch whose sources are records of more than one run
	// (linger.ms > 0: Kafka's RecordAccumulator appends every record for
	// the partition to its open ProducerBatch, whatever its source): each
	// run as Src/SrcOffset/SrcEnd/SrcCount describe one, in the order the
	// records were appended; SrcCount is then their records in all, and
	// Src, SrcOffset, SrcTPI and SrcEnd are the first run's. Empty for a
	// request of one run (every request when linger.ms is 0; it may keep
	// a recycled request's array). Never changed once sent; a retry
	// resends a copy of its own.
	Runs      []SrcRun
	FreeEpoch uint64 // the free lists' (sim/env)
}

// SrcRun is one run of a batch's sources (ProduceRequest.Runs): the
// invoices of the records of the input partition numbered Part (the
// layout's numbering, topo.InputIndex: a batch of several runs is made
// only of partitions the world numbers) from First to Last that the
// default partitioner sends to the request's partition, Count of them
// (every one when Count is Last-First+1).
//
// From and To (From <= First, Last <= To) are the input range the run was
// cut from: the producer processed every record of Part from From to To
// in one go and sent each to its output partition (producer's
// produceInvoiceRun), so the records of the range the partitioner sends
// to the request's partition are exactly the run's. The broker's fold
// trusts it (broker.levelFold: where two runs' ranges meet, no record
// between them is asked of the partitioner); From = First and To = Last
// claim nothing past the run. 24 bytes, no pointer: a batch's
// runs are copied into its request and read again by the broker.
type SrcRun struct {
	Part        int32
	First, Last int32
	Count       int32
	From, To    int32
}

// Spell is the run as a batch's value spells it: o0.3..o0.9, with
// ": n" when it holds n of the records between, or the record's name
// alone for a run of one.
func (run SrcRun) Spell(names Namer) string {
	tp := names.InputAt(int(run.Part))
	if run.Count == 1 {
		return names.Name(tp, int(run.First))
	}
	s := names.Name(tp, int(run.First)) + ".." + names.Name(tp, int(run.Last))
	if run.Last-run.First+1 != run.Count {
		s += ": " + strconv.Itoa(int(run.Count))
	}
	return s
}

// Count is the number of records the request carries: a batch's, or 1.
func (r *ProduceRequest) Count() int {
	if r.SrcCount > 1 {
		return r.SrcCount
	}
	return 1
}

// Consecutive reports whether a batch of one run's sources are every
// record from its first to its last (or the request is of one record).
func (r *ProduceRequest) Consecutive() bool {
	return r.SrcCount <= 1 || r.SrcEnd-r.SrcOffset+1 == r.SrcCount
}

// SrcLast is the offset of the request's last source record: a batch's
// last (its first run's, for a batch of several runs), else SrcOffset.
func (r *ProduceRequest) SrcLast() int {
	if r.SrcCount > 1 {
		return r.SrcEnd
	}
	return r.SrcOffset
}

// LastSeq is the sequence number of the request's last record.
func (r *ProduceRequest) LastSeq() int { return r.Seq + r.Count() - 1 }

// SourceIn is the record the invoice is for.
func (r *ProduceRequest) SourceIn(names Namer) string {
	if r.Named {
		return names.Name(r.Src, r.SrcOffset)
	}
	return r.Source
}

// ValueIn is the record's value, inv(source).
//
// A batch of invoices spells its sources as a run: inv(o0.3..o0.502)
// when they are every record from the first to the last, else
// inv(o0.3..o0.502: 167), the count of those the batch holds.
//
// A batch of several runs (Runs) spells each so, one record as its name,
// separated by commas: inv(o0.3..o0.9, o1.4..o1.12: 3, o2.5).
func (r *ProduceRequest) ValueIn(names Namer) string {
	if len(r.Runs) > 0 {
		s := "inv("
		for i, run := range r.Runs {
			if i > 0 {
				s += ", "
			}
			s += run.Spell(names)
		}
		return s + ")"
	}
	if n := r.SrcCount; n > 1 {
		first, last := r.SrcOffset, r.SrcEnd
		s := "inv(" + names.Name(r.Src, first) + ".." + names.Name(r.Src, last)
		if last-first+1 != n {
			s += ": " + strconv.Itoa(n)
		}
		return s + ")"
	}
	if r.Named {
		return "inv(" + r.SourceIn(names) + ")"
	}
	return r.Value
}

// ProduceResponse answers a Produce.
type ProduceResponse struct {
	ID        int
	Seq       int
	Offset    int
	Dup       bool   // the leader had this sequence already: not written again
	FreeEpoch uint64 // the free lists' (sim/env)
}
