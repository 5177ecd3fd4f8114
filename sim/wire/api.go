package wire

// API is a Kafka request type, by its protocol name.
type API string

const (
	FindCoordinator       API = "FindCoordinator"
	JoinGroup             API = "JoinGroup"
	SyncGroup             API = "SyncGroup"
	RebalanceNotification API = "RebalanceNotification" // the heartbeat answer REBALANCE_IN_PROGRESS, drawn as its own packet
	LeaveGroup            API = "LeaveGroup"
	OffsetCommit          API = "OffsetCommit"
	OffsetFetch           API = "OffsetFetch"
	Fetch                 API = "Fetch"
	Produce               API = "Produce"
	InitProducerID        API = "InitProducerId"
	AddPartitionsToTxn    API = "AddPartitionsToTxn"
	AddOffsetsToTxn       API = "AddOffsetsToTxn"
	TxnOffsetCommit       API = "TxnOffsetCommit"
	EndTxn                API = "EndTxn"
	WriteTxnMarkers       API = "WriteTxnMarkers"
	// ConsumerGroupHeartbeat is the consumer protocol's one group request
	// (KIP-848): join, heartbeat, acknowledge an assignment, leave.
	ConsumerGroupHeartbeat API = "ConsumerGroupHeartbeat"
)

// APIs lists every packet type, for help and completion.
var APIs = []API{FindCoordinator, JoinGroup, SyncGroup, RebalanceNotification, LeaveGroup, OffsetCommit,
	OffsetFetch, Fetch, Produce, InitProducerID, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn, WriteTxnMarkers, ConsumerGroupHeartbeat}

// Broker is the one broker: group coordinator, transaction coordinator and
// leader of every partition.
const Broker = "B1"

// GroupProtocol is a group protocol: a client's group.protocol, and the
// type of the group the coordinator keeps (Kafka's Group.GroupType).
type GroupProtocol string

const (
	// Classic is JoinGroup/SyncGroup with a client-side leader.
	Classic GroupProtocol = "classic"
	// Consumer is KIP-848's ConsumerGroupHeartbeat, server-side assignor.
	Consumer GroupProtocol = "consumer"
)
