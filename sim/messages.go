package sim

import "github.com/kgrepl/kgrepl/sim/assign"

// Request and response bodies. A body is never changed once sent.

type joinReq struct {
	MemberID         string
	Client           string
	Inc              int
	InstanceID       string
	Topics           []string
	Strategy         string
	RebalanceTimeout int
	SessionTimeout   int
	Owned            []TopicPartition // cooperative: what it owns; sticky user data otherwise
	OwnedGen         int
}

type joinResp struct {
	MemberID   string
	Generation int
	Leader     string
	Protocol   string
	Members    []assign.Member // only for the leader
}

type syncReq struct {
	MemberID   string
	Generation int
	InstanceID string
	Plan       assign.Assignment // only from the leader
}

type syncResp struct {
	Assignment []TopicPartition
}

type leaveReq struct {
	MemberID, InstanceID string
}

type commitReq struct {
	MemberID   string
	Generation int
	InstanceID string
	Partitions []TopicPartition
	Offsets    []int
	Sync       bool
	// BeforeRevoke: the consumer protocol's auto-commit before revocation.
	BeforeRevoke bool
	// Auto: which of the client's own auto-commits this is (autoNone: the
	// application's commitSync); a refused auto-commit is logged, not thrown.
	Auto autoCommit
	// Slots: each partition's number in the world (inputIndex.slot), as
	// the member knows it, or nil; only hints, checked where used. Kafka's
	// request has no such field: it spares the coordinator a lookup.
	Slots []int32
	epoch uint64 // freelist.go
}

type commitResp struct {
	Partitions []TopicPartition
	Offsets    []int
	Sync       bool
	Slots      []int32 // the request's
	epoch      uint64  // freelist.go
}

type offsetFetchReq struct {
	Partitions []TopicPartition
	// A consumer-protocol client's member id and epoch (OffsetFetch v9+);
	// HasMember false: not sent (null and -1 in Kafka), as a classic client.
	MemberID    string
	MemberEpoch int
	HasMember   bool
}

type offsetFetchResp struct {
	Partitions []TopicPartition
	Offsets    []int // -1: no committed offset
}

type fetchReq struct {
	ID         int
	Partitions []TopicPartition
	Offsets    []int
	Max        int
	epoch      uint64 // freelist.go
}

type fetchResp struct {
	ID      int
	Records []fetched
	epoch   uint64 // freelist.go
}

type produceReq struct {
	ID       int // the producer's own number for the record, to match answers
	TP       TopicPartition
	Value    string // "" when names is set: value() spells it
	Source   string // "" when names is set: source() spells it
	PID      int64
	Epoch    int
	Seq      int
	Txn      bool
	Producer string
	Attempt  int
	// src/srcOff: the input record Source names, so that the trace keeps
	// the value as a record reference (encValue); hasSrc false for none.
	src    TopicPartition
	srcOff int
	hasSrc bool
	// names, when set, says Source is the name of input record srcOff of
	// src and Value is inv(Source): neither is spelled on the hot path.
	names *recordNames
	// srcTPI and tpi are World.tpIndex of src and of TP plus one (0: not
	// known), so that the trace's texts and the leader's log lookup do not
	// look them up again.
	srcTPI, tpi int32
	epoch       uint64 // freelist.go
}

// source is the record the invoice is for.
func (r *produceReq) source() string {
	if r.names != nil {
		return r.names.name(r.src, r.srcOff)
	}
	return r.Source
}

// value is the record's value, inv(source).
func (r *produceReq) value() string {
	if r.names != nil {
		return "inv(" + r.source() + ")"
	}
	return r.Value
}

type produceResp struct {
	ID     int
	Seq    int
	Offset int
	Dup    bool   // the leader had this sequence already: not written again
	epoch  uint64 // freelist.go
}

type initPIDReq struct {
	TransactionalID string
	Timeout         int
}

type initPIDResp struct {
	PID   int64
	Epoch int
}

type addPartitionsReq struct {
	TransactionalID string
	PID             int64
	Epoch           int
	Partitions      []TopicPartition
}

type addOffsetsReq struct {
	TransactionalID string
	PID             int64
	Epoch           int
	Group           string
}

type txnOffsetCommitReq struct {
	TransactionalID string
	Group           string
	PID             int64
	Epoch           int
	MemberID        string
	Generation      int
	InstanceID      string
	Partitions      []TopicPartition
	Offsets         []int
}

type endTxnReq struct {
	TransactionalID string
	PID             int64
	Epoch           int
	Commit          bool
}

type markerReq struct {
	PID        int64
	Epoch      int
	Commit     bool
	Partitions []TopicPartition
	Offsets    bool // also __consumer_offsets for the group
	TxnID      string
}
