package wire

// The offset APIs' bodies: OffsetCommit, OffsetFetch, TxnOffsetCommit.

// AutoCommit says which of the client's own auto-commits an OffsetCommit
// is; AutoNone is the application's commitSync.
type AutoCommit uint8

const (
	AutoNone     AutoCommit = iota
	AutoInterval            // inside poll(), every auto.commit.interval.ms (async)
	AutoRejoin              // classic onJoinPrepare: before rejoining
	AutoClose               // close(): maybeAutoCommitOffsetsSync
)

// OffsetCommitRequest is an OffsetCommit.
type OffsetCommitRequest struct {
	MemberID   string
	Generation int
	InstanceID string
	Partitions []TopicPartition
	Offsets    []int
	Sync       bool
	// BeforeReconcile: the consumer protocol's auto-commit before a
	// reconciliation.
	BeforeReconcile bool
	// Auto: which of the client's own auto-commits this is (AutoNone: the
	// application's commitSync); a refused auto-commit is logged, not thrown.
	Auto AutoCommit
	// Slots: each partition's number in the world (its input slot), as
	// the member knows it, or nil; only hints, checked where used. Kafka's
	// request has no such field: it spares the coordinator a lookup.
	Slots     []int32
	FreeEpoch uint64 // the free lists' (sim/env)
}

// OffsetCommitResponse answers an OffsetCommit.
type OffsetCommitResponse struct {
	Partitions []TopicPartition
	Offsets    []int
	Sync       bool
	Slots      []int32 // the request's
	FreeEpoch  uint64  // the free lists' (sim/env)
}

// OffsetFetchRequest is an OffsetFetch.
type OffsetFetchRequest struct {
	// ID numbers the client's OffsetFetch requests: an answer to one
	// since replaced by another is dropped.
	ID         int
	Partitions []TopicPartition
	// A consumer-protocol client's member id and epoch (OffsetFetch v9+);
	// HasMember false: not sent (null and -1 in Kafka), as a classic client.
	MemberID    string
	MemberEpoch int
	HasMember   bool
}

// OffsetFetchResponse answers an OffsetFetch.
type OffsetFetchResponse struct {
	Partitions []TopicPartition
	Offsets    []int // -1: no committed offset
}

// TxnOffsetCommitRequest is a TxnOffsetCommit: a transaction's offsets,
// pending until its marker.
type TxnOffsetCommitRequest struct {
	TransactionalID string
	Group           string
	PID             int64
	Epoch           int
	MemberID        string
	Generation      int
	InstanceID      string
	Partitions      []TopicPartition
	Offsets         []int
	Call            int // the producer's number of it, kept when sent again (client.coordCall)
}
