package wire

// The transaction APIs' bodies (KIP-98), TxnOffsetCommit's aside
// (offsets.go).

// InitProducerIDRequest is an InitProducerId.
type InitProducerIDRequest struct {
	TransactionalID string
	Timeout         int
	Call            int // the producer's number of it, kept when sent again (client.coordCall)
}

// InitProducerIDResponse answers an InitProducerId.
type InitProducerIDResponse struct {
	PID   int64
	Epoch int
}

// AddPartitionsToTxnRequest is an AddPartitionsToTxn.
type AddPartitionsToTxnRequest struct {
	TransactionalID string
	PID             int64
	Epoch           int
	Partitions      []TopicPartition
	Call            int // the producer's number of it, kept when sent again (client.coordCall)
}

// AddOffsetsToTxnRequest is an AddOffsetsToTxn.
type AddOffsetsToTxnRequest struct {
	TransactionalID string
	PID             int64
	Epoch           int
	Group           string
	Call            int // the producer's number of it, kept when sent again (client.coordCall)
}

// EndTxnRequest is an EndTxn (COMMIT or ABORT).
type EndTxnRequest struct {
	TransactionalID string
	PID             int64
	Epoch           int
	Commit          bool
}

// WriteTxnMarkersRequest is a WriteTxnMarkers: the transaction coordinator
// asks the partition leaders (and the group coordinator) to write markers.
type WriteTxnMarkersRequest struct {
	PID        int64
	Epoch      int
	Commit     bool
	Partitions []TopicPartition
	Offsets    bool // also __consumer_offsets for the group
	TxnID      string
}
