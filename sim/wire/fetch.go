package wire

// The Fetch API's bodies.

// FetchRequest is a Fetch: the partitions to read from, each from its
// position, at most Max records in all.
type FetchRequest struct {
	ID         int
	Partitions []TopicPartition
	Offsets    []int
	Max        int
	FreeEpoch  uint64 // the free lists' (sim/env)
}

// FetchResponse answers a Fetch with the records read.
type FetchResponse struct {
	ID        int
	Records   []Record
	FreeEpoch uint64 // the free lists' (sim/env)
}

// Record is one record a Fetch returned. A record whose value is its own
// name (every input record: the world spells it from TP and Offset) is
// Named and keeps no Value, so that the hot path (fetch, process, produce
// its invoice) never spells it.
type Record struct {
	TP     TopicPartition
	Offset int
	Value  string // when not Named
	Named  bool   // the value is the record's name (an input record)
	TPI    int32  // the partition's number in the world plus one, 0 when not known
}

// Namer spells an input record's name (o2.3, orders-2.3).
type Namer interface {
	Name(tp TopicPartition, off int) string
	AppendName(b []byte, tp TopicPartition, off int) []byte
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
