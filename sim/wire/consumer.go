package wire

// The consumer group protocol's one API (KIP-848): ConsumerGroupHeartbeat.

// The member epochs a leaving member sends (ConsumerGroupHeartbeatRequest).
const (
	LeaveGroupMemberEpoch       = -1 // leave the group
	LeaveGroupStaticMemberEpoch = -2 // a static member leaves for now and will come back
)

// ConsumerGroupHeartbeatRequest is a ConsumerGroupHeartbeat. Optional
// fields are absent when unchanged since the previous heartbeat
// (ConsumerHeartbeatRequestManager's SentFields): RebalanceTimeout -1,
// Topics nil with TopicsSent false, Owned with OwnedSent false, Assignor "".
type ConsumerGroupHeartbeatRequest struct {
	MemberID, InstanceID string
	Client               string
	Inc                  int
	MemberEpoch          int
	RebalanceTimeout     int
	Topics               []string
	TopicsSent           bool
	Owned                []TopicPartition
	OwnedSent            bool
	Assignor             string // group.remote.assignor
}

// ConsumerGroupHeartbeatResponse answers it. Assignment is set
// (HasAssignment) only when Kafka sends it: on a full request or when the
// member's assignment changed.
type ConsumerGroupHeartbeatResponse struct {
	MemberID      string
	MemberEpoch   int
	Interval      int
	Assignment    []TopicPartition
	HasAssignment bool
}
