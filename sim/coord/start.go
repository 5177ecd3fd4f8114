package coord

// The group a world starts with: already Stable, its members holding their
// assignments, as if the rebalances that formed it were over. No
// transition or event: the world starts here.

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/reconcile"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// StartClassic makes the group a world starts with under the classic
// protocol: every member of joins (their JoinGroups, as the coordinator
// would have stored them), Stable in generation 1, the first the leader,
// each with its share of the plan (assignments, in joins' order, kept as
// given: the members' own lists), the assignor named.
func (c *Coordinator) StartClassic(joins []*wire.JoinGroupRequest, assignor string, assignments [][]wire.TopicPartition) {
	g := c.group.(*ClassicGroup)
	for i, r := range joins {
		gm := g.addMember(r)
		gm.Joined = false
		gm.Assignment = assignments[i]
	}
	g.generation = 1
	g.protocol = assignor
	g.state = Stable
	g.leader = joins[0].MemberID
}

// StartMember is a member a world's consumer group starts with.
type StartMember struct {
	MemberID, ClientID, InstanceID string
	Inc                            int
	Topics                         []string
	RebalanceTimeout               int
	// RemoteAssignor is group.remote.assignor, for a consumer-protocol
	// member; a classic member (Classic) lists its client-side Assignors
	// and has its own SessionTimeout.
	RemoteAssignor string
	Classic        bool
	Assignors      []string
	SessionTimeout int
	// Target is the member's assignment when StartConsumerAssigned gives
	// the group's (an imported group's), instead of the assignor's.
	Target []wire.TopicPartition
}

// StartConsumer makes the group a world starts with when some member
// speaks the consumer protocol: every member at group epoch 1 with the
// target the server-side assignor computes, the group Stable. Each member
// then takes its target with StartMemberStable, in the world's order, as
// its process starts heartbeating.
func (c *Coordinator) StartConsumer(ms []StartMember) { c.startConsumer(ms, false) }

// StartConsumerAssigned is StartConsumer with each member's target given
// (StartMember.Target): a group started as kafka-consumer-groups.sh
// described it, at group epoch 1 with the target of epoch 1 and the
// server-side assignor the members ask for, not what that assignor would
// compute. Its next target starts from these (TargetAssignmentBuilder
// keeps what it can).
func (c *Coordinator) StartConsumerAssigned(ms []StartMember) { c.startConsumer(ms, true) }

func (c *Coordinator) startConsumer(ms []StartMember, given bool) {
	g := newConsumerGroup(c.group.(*ClassicGroup).groupBase)
	c.group = g
	for _, s := range ms {
		gm := &ConsumerMember{MemberID: s.MemberID, ClientID: s.ClientID, InstanceID: s.InstanceID, Inc: s.Inc,
			Topics: store.Copy(s.Topics), Strategy: s.RemoteAssignor, RebalanceTimeout: s.RebalanceTimeout,
			MemberState: reconcile.Stable.String()}
		if s.Classic {
			gm.Strategy = s.Assignors[0]
			gm.classic = &classicInConsumer{silentSince: -1,
				ClassicMemberMetadata: ClassicMemberMetadata{Protocols: s.Assignors, SessionTimeout: s.SessionTimeout}}
		}
		g.putMember(gm)
		if gm.InstanceID != "" {
			store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
		}
	}
	g.groupEpoch = 1
	if given {
		for _, s := range ms {
			g.members.get(s.MemberID).Target = store.Copy(s.Target)
		}
		g.assignmentEpoch, g.assignor = g.groupEpoch, g.preferredAssignor()
	} else {
		g.updateTargetAssignment(g.members.get(ms[len(ms)-1].MemberID))
	}
	g.state = Stable
}

// StartMemberStable moves a member of the group StartConsumer made to its
// target at epoch 1 and returns its assignment; a consumer-protocol
// member's session starts.
func (c *Coordinator) StartMemberStable(memberID string) []wire.TopicPartition {
	g := c.group.(*ConsumerGroup)
	gm := g.members.get(memberID)
	gm.MemberEpoch, gm.PreviousMemberEpoch = 1, 0
	gm.Assignment = store.Copy(gm.Target)
	if gm.classic == nil {
		g.scheduleSessionTimeout(gm)
	}
	return gm.Assignment
}
