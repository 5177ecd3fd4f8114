package wire

// The Fetch API's bodies.

// FetchRequest is a Fetch: the partitions to read from, each from its
// position, at most Max records in all.
type FetchRequest struct {
	ID         int
	Partitions []TopicPartition
	Offsets    []int
	// Slots numbers each partition among the world's input partitions
	// (topo.InputIndex, as Layout.Number does), checked by the member
	// against the world's numbering, -1 when not known; none: not given.
	// The leader reads a partition's log and steady production by it
	// without looking its topic up (T2's Fetches of 100 partitions are
	// looked at four times each: answered when they arrive, their wake
	// tick, woken, answered).
	Slots     []int32
	Max       int
	FreeEpoch uint64 // the free lists' (sim/env)
}

// FetchResponse answers a Fetch with the records read.
type FetchResponse struct {
	ID        int
	Records   []Record
	FreeEpoch uint64 // the free lists' (sim/env)
}

// Record is one entry of a Fetch answer or of a batch: one record, or a
// run of Count records (Count > 1) that follow each other in partition TP
// from Offset, every one a plain upstream input record (Named: the
// upstream producer's, no producer id, not transactional, data). A record
// whose value is its own name (every input record: the world spells it
// from TP and Offset) is Named and keeps no Value, so that the hot path
// (fetch, process, produce its invoice) never spells it. A run is what
// lets steady traffic cost per fetch and per batch, not per record: the
// broker answers a partition's plain records as one entry (Kafka's
// FetchResponse carries record batches, not records), and the member
// processes as much of it as a tick allows.
type Record struct {
	TP     TopicPartition
	Offset int
	Value  string // when not Named
	Named  bool   // the value is the record's name (an input record)
	TPI    int32  // the partition's number in the world plus one, 0 when not known
	Count  int    // records in the entry: 0 or 1 for one record, more for a run (Named, from Offset on)
}

// Len is the number of records the entry holds (Count, one for 0).
func (r *Record) Len() int { return max(r.Count, 1) }

// End is the offset past the entry's last record.
func (r *Record) End() int { return r.Offset + r.Len() }

// Namer spells an input record's name (o2.3, orders-2.3).
type Namer interface {
	Name(tp TopicPartition, off int) string
	AppendName(b []byte, tp TopicPartition, off int) []byte
	// InputAt is the input partition numbered i (SrcRun.Part).
	InputAt(i int) TopicPartition
}

// ValueIn is the record's value, spelled by names when it is its name.
func (r *Record) ValueIn(names Namer) string {
	if r.Named {
		return names.Name(r.TP, r.Offset)
	}
	return r.Value
}

// AppendValueIn appends the record's value to b.
func (r *Record) AppendValueIn(b []byte, names Namer) []byte {
	if r.Named {
		return names.AppendName(b, r.TP, r.Offset)
	}
	return append(b, r.Value...)
}
