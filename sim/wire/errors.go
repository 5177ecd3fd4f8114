package wire

// ErrorCode is a Kafka protocol error, named and numbered as Kafka does.
type ErrorCode int

// Kafka's error codes (org.apache.kafka.common.protocol.Errors) that the
// simulation can answer.
const (
	None                      ErrorCode = 0
	IllegalGeneration         ErrorCode = 22
	InconsistentGroupProtocol ErrorCode = 23
	UnknownMemberID           ErrorCode = 25
	RebalanceInProgress       ErrorCode = 27
	OutOfOrderSequenceNumber  ErrorCode = 45
	DuplicateSequenceNumber   ErrorCode = 46
	InvalidProducerEpoch      ErrorCode = 47
	InvalidTxnState           ErrorCode = 48
	InvalidProducerIDMapping  ErrorCode = 49
	ConcurrentTransactions    ErrorCode = 51
	GroupMaxSizeReached       ErrorCode = 81
	FencedInstanceID          ErrorCode = 82
	GroupIDNotFound           ErrorCode = 69
	UnstableOffsetCommit      ErrorCode = 88
	ProducerFenced            ErrorCode = 90
	// The consumer protocol's (KIP-848) errors.
	FencedMemberEpoch    ErrorCode = 110 // the member's epoch is behind: it must rejoin with epoch 0
	UnreleasedInstanceID ErrorCode = 111 // a static member's instance id is still held by another member
	UnsupportedAssignor  ErrorCode = 112 // group.remote.assignor names no assignor the broker has
	StaleMemberEpoch     ErrorCode = 113 // a commit carries an epoch the member has since left behind
	TransactionAbortable ErrorCode = 120
)

var errorNames = map[ErrorCode]string{
	None:                      "NONE",
	IllegalGeneration:         "ILLEGAL_GENERATION",
	InconsistentGroupProtocol: "INCONSISTENT_GROUP_PROTOCOL",
	UnknownMemberID:           "UNKNOWN_MEMBER_ID",
	RebalanceInProgress:       "REBALANCE_IN_PROGRESS",
	OutOfOrderSequenceNumber:  "OUT_OF_ORDER_SEQUENCE_NUMBER",
	DuplicateSequenceNumber:   "DUPLICATE_SEQUENCE_NUMBER",
	InvalidProducerEpoch:      "INVALID_PRODUCER_EPOCH",
	InvalidTxnState:           "INVALID_TXN_STATE",
	InvalidProducerIDMapping:  "INVALID_PRODUCER_ID_MAPPING",
	ConcurrentTransactions:    "CONCURRENT_TRANSACTIONS",
	GroupMaxSizeReached:       "GROUP_MAX_SIZE_REACHED",
	FencedInstanceID:          "FENCED_INSTANCE_ID",
	GroupIDNotFound:           "GROUP_ID_NOT_FOUND",
	UnstableOffsetCommit:      "UNSTABLE_OFFSET_COMMIT",
	ProducerFenced:            "PRODUCER_FENCED",
	FencedMemberEpoch:         "FENCED_MEMBER_EPOCH",
	UnreleasedInstanceID:      "UNRELEASED_INSTANCE_ID",
	UnsupportedAssignor:       "UNSUPPORTED_ASSIGNOR",
	StaleMemberEpoch:          "STALE_MEMBER_EPOCH",
	TransactionAbortable:      "TRANSACTION_ABORTABLE",
}

// String is Kafka's name for the error, e.g. ILLEGAL_GENERATION.
func (e ErrorCode) String() string {
	if n, ok := errorNames[e]; ok {
		return n
	}
	return "UNKNOWN_SERVER_ERROR"
}
