package wire

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
	FreeEpoch   uint64 // the free lists' (sim/env)
}

// SourceIn is the record the invoice is for.
func (r *ProduceRequest) SourceIn(names Namer) string {
	if r.Named {
		return names.Name(r.Src, r.SrcOffset)
	}
	return r.Source
}

// ValueIn is the record's value, inv(source).
func (r *ProduceRequest) ValueIn(names Namer) string {
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
