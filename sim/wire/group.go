package wire

// The classic group protocol's bodies: JoinGroup, SyncGroup, LeaveGroup
// (and the heartbeat answer kgrepl draws as a RebalanceNotification).

// Member is one member of a JoinGroup answer's member list, as the leader's
// assignor reads it: its subscription and what it claims to own.
type Member struct {
	MemberID   string
	InstanceID string // group.instance.id; "" for a dynamic member
	Topics     []string
	// Owned is what the member owns now: the cooperative protocol's
	// ownedPartitions, or the eager StickyAssignor's previous assignment
	// (its user data).
	Owned []TopicPartition
	// Generation is the generation Owned is from (-1: none), as the sticky
	// assignors' user data carries it.
	Generation int
}

// JoinGroupRequest is a JoinGroup.
type JoinGroupRequest struct {
	MemberID   string
	Client     string
	Inc        int
	InstanceID string
	Topics     []string
	// Protocols are the member's assignors in its order of preference,
	// one JoinGroupRequestProtocol each (ConsumerCoordinator.metadata).
	Protocols        []string
	RebalanceTimeout int
	SessionTimeout   int
	Owned            []TopicPartition // cooperative: what it owns; sticky user data otherwise
	OwnedGen         int
}

// JoinGroupResponse answers a JoinGroup.
type JoinGroupResponse struct {
	MemberID   string
	Generation int
	Leader     string
	Protocol   string
	Members    []Member // only for the leader
}

// Assignment is an assignor's plan: member id to its partitions.
type Assignment map[string][]TopicPartition

// SyncGroupRequest is a SyncGroup.
type SyncGroupRequest struct {
	MemberID   string
	Generation int
	InstanceID string
	Plan       Assignment // only from the leader
}

// SyncGroupResponse answers a SyncGroup.
type SyncGroupResponse struct {
	Assignment []TopicPartition
}

// LeaveGroupRequest is a LeaveGroup; a RebalanceNotification of
// UNKNOWN_MEMBER_ID carries one to name the member it is about.
type LeaveGroupRequest struct {
	MemberID, InstanceID string
}

// First is the assignor the member lists first: the protocol a consumer
// group answers a classic member with (classicGroupJoinToConsumerGroup).
func (r *JoinGroupRequest) First() string {
	if len(r.Protocols) == 0 {
		return ""
	}
	return r.Protocols[0]
}
