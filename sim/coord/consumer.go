package coord

// The consumer group (KIP-848; Kafka's group/modern/consumer/ConsumerGroup):
// its members with their epochs and targets, its group and assignment
// epochs, its state. What it does with a ConsumerGroupHeartbeat is in
// consumer_heartbeat.go; its classic members (online migration) in
// consumer_classic.go.

import (
	"fmt"
	"slices"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/reconcile"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// ConsumerMember is the coordinator's record of one consumer group member
// (Kafka's ConsumerGroupMember). Its slices (Topics, Assignment, Target,
// Revoking) are replaced, never changed in place: a world's copy shares
// them.
type ConsumerMember struct {
	MemberID, ClientID, InstanceID string
	Inc                            int
	Topics                         []string
	// Strategy is the server-side assignor a consumer-protocol member
	// names (group.remote.assignor); a classic member's client-side
	// assignor, which does not vote for the group's.
	Strategy         string
	RebalanceTimeout int
	// Assignment is the member's current assignment (assigned and
	// acknowledged).
	Assignment []wire.TopicPartition
	// MemberEpoch is the epoch of the member's current assignment;
	// PreviousMemberEpoch the one before (a heartbeat carrying it is still
	// accepted when it owns what the current assignment says:
	// GroupMetadataManager.throwIfMemberEpochIsInvalid).
	MemberEpoch, PreviousMemberEpoch int
	// MemberState is sim/reconcile's state: STABLE, UNREVOKED_PARTITIONS,
	// UNRELEASED_PARTITIONS or UNKNOWN (Kafka's MemberState).
	MemberState string
	// Target is the member's share of the group's target assignment.
	Target []wire.TopicPartition
	// Revoking lists what the member must still revoke before it moves to
	// the next epoch (ConsumerGroupMember.partitionsPendingRevocation).
	Revoking []wire.TopicPartition
	// The session and rebalance timers in force (numbered by
	// groupBase.nextTimer; a timer that fires with another number was
	// cancelled).
	sessionTimer, rebalanceTimer int
	// classic is set for a member that speaks the classic protocol inside
	// the consumer group (online migration;
	// ConsumerGroupMember.classicMemberMetadata).
	classic *classicInConsumer
}

// classicInConsumer is what the coordinator keeps of a classic member
// inside a consumer group beyond a ConsumerMember's fields.
type classicInConsumer struct {
	ClassicMemberMetadata
	// silentSince is the tick the member was last heard (kgrepl's
	// implicit heartbeat), or -1 while it is heard every tick.
	silentSince int
	// notified: the change the member was last told to rejoin for.
	notified string
	// Its join and sync timers in force (0 when none), as Kafka's
	// consumerGroupJoinKey and consumerGroupSyncKey timers.
	joinTimer, syncTimer int
}

// ClassicMember reports whether the member speaks the classic protocol
// (ConsumerGroupMember.useClassicProtocol).
func (m *ConsumerMember) ClassicMember() bool { return m.classic != nil }

// copyAs is the member under a new member id and process, at epoch 0 with
// no timer running, its subscription, assignment, target, pending
// revocation and state kept: a static member's new instance taking its
// place (ConsumerGroupMember.Builder(member, newMemberId)).
func (m *ConsumerMember) copyAs(memberID, client string, inc int) *ConsumerMember {
	n := *m
	n.MemberID, n.ClientID, n.Inc = memberID, client, inc
	n.MemberEpoch, n.PreviousMemberEpoch = 0, 0
	n.Topics, n.Assignment, n.Target, n.Revoking = store.Copy(m.Topics), store.Copy(m.Assignment), store.Copy(m.Target), store.Copy(m.Revoking)
	n.sessionTimer, n.rebalanceTimer = 0, 0
	if m.classic != nil {
		c := *m.classic
		n.classic = &c
	}
	return &n
}

// ConsumerGroup is a consumer group on B1.
type ConsumerGroup struct {
	groupBase
	members memberSet[ConsumerMember]
	// groupEpoch is bumped on every change of membership or
	// subscriptions (ConsumerGroup.groupEpoch); assignmentEpoch is the
	// epoch of the target assignment, below groupEpoch while Assigning.
	groupEpoch, assignmentEpoch int
	// assignor is the server-side assignor that computed the target.
	assignor string
	// numClassic counts the members that speak the classic protocol
	// (ConsumerGroup.numClassicProtocolMembers): every change of the
	// members goes through putMember and dropMember, every change of a
	// member's protocol through setClassic.
	numClassic int
}

func newConsumerGroup(b groupBase) *ConsumerGroup {
	return &ConsumerGroup{groupBase: b, members: newMemberSet[ConsumerMember]()}
}

func (g *ConsumerGroup) Type() GroupType { return wire.Consumer }
func (g *ConsumerGroup) Epoch() int      { return g.groupEpoch }

// transition moves the group to state s.
func (g *ConsumerGroup) transition(s GroupState, reason string) {
	g.groupBase.transition(wire.Consumer, s, reason)
}

// current reports whether the group is still the group id's: a downgrade
// replaces it with a classic group in the middle of what it was doing.
func (g *ConsumerGroup) current() bool { return g.c.group == g }

// Describe is the group as ConsumerGroupDescribe answers it.
func (g *ConsumerGroup) Describe() Description {
	d := Description{ID: g.c.id, Type: wire.Consumer, State: g.state, GroupEpoch: g.groupEpoch, Epoch: g.groupEpoch,
		AssignmentEpoch: g.assignmentEpoch, Assignor: g.assignor}
	for m := range g.described {
		d.Members = append(d.Members, m)
	}
	return d
}

func (g *ConsumerGroup) hasMember(id string) bool { return g.members.get(id) != nil }

func (g *ConsumerGroup) described(yield func(DescribedMember) bool) {
	for _, gm := range g.members.list() {
		d := DescribedMember{MemberID: gm.MemberID, ClientID: gm.ClientID, InstanceID: gm.InstanceID,
			Inc: gm.Inc, Topics: gm.Topics, Strategy: gm.Strategy, Assignment: gm.Assignment, MemberEpoch: gm.MemberEpoch,
			PreviousMemberEpoch: gm.PreviousMemberEpoch, MemberState: gm.MemberState, Target: gm.Target, Revoking: gm.Revoking,
			ClassicMember: gm.ClassicMember()}
		if gm.classic != nil {
			d.Protocols, d.Owned, d.OwnedGen = gm.classic.Protocols, gm.classic.Owned, gm.classic.OwnedGen
		}
		if !yield(d) {
			return
		}
	}
}

func consumerMemberIDs(ms []*ConsumerMember) string {
	return memberIDs(ms, func(m *ConsumerMember) string { return m.MemberID })
}

// validateOffsetCommit is ConsumerGroup.validateOffsetCommit (also for
// TxnOffsetCommit): a commit with a negative epoch is accepted while the
// group is empty (an admin client or a consumer without group management);
// otherwise the member must exist (UNKNOWN_MEMBER_ID) and carry its current
// epoch exactly (STALE_MEMBER_EPOCH; ILLEGAL_GENERATION for a classic member
// inside a consumer group, and for any member's TxnOffsetCommit:
// OffsetMetadataManager.validateTransactionalOffsetCommit turns
// StaleMemberEpochException into ILLEGAL_GENERATION). Kafka answers
// FENCED_MEMBER_EPOCH only to heartbeats.
func (g *ConsumerGroup) validateOffsetCommit(memberID, _ string, epoch int, txn bool) wire.ErrorCode {
	if epoch < 0 && g.members.len() == 0 {
		return wire.None
	}
	gm := g.members.get(memberID)
	if gm == nil {
		return wire.UnknownMemberID
	}
	if epoch != gm.MemberEpoch {
		if gm.ClassicMember() || txn {
			return wire.IllegalGeneration
		}
		return wire.StaleMemberEpoch
	}
	return wire.None
}

// validateOffsetFetch is ConsumerGroup.validateOffsetFetch: a
// consumer-protocol client sends its member id and epoch (OffsetFetch v9+);
// an unknown member is UNKNOWN_MEMBER_ID, another epoch STALE_MEMBER_EPOCH
// (ILLEGAL_GENERATION for a classic member).
func (g *ConsumerGroup) validateOffsetFetch(memberID string, epoch int) wire.ErrorCode {
	gm := g.members.get(memberID)
	switch {
	case gm == nil:
		return wire.UnknownMemberID
	case epoch == gm.MemberEpoch:
		return wire.None
	case gm.ClassicMember():
		return wire.IllegalGeneration
	}
	return wire.StaleMemberEpoch
}

// tick: a consumer group has no join round to complete. Classic members
// inside it are heard implicitly (kgrepl's heartbeat shortcut): one whose
// process is gone or goes by another member id falls silent now, and is
// fenced once silent for its session timeout.
func (g *ConsumerGroup) tick() {
	if g.numClassic == 0 {
		return
	}
	for _, gm := range g.members.list() {
		if gm.classic == nil {
			continue
		}
		if g.classic().heard(gm) {
			// Its heartbeat restarts the session
			// (classicGroupHeartbeatToConsumerGroup:
			// scheduleConsumerGroupSessionTimeout); heard every tick, the
			// session in force is no longer timed.
			gm.classic.silentSince, gm.sessionTimer = -1, 0
			continue
		}
		if gm.classic.silentSince < 0 {
			gm.classic.silentSince = g.env.Now()
		}
		if g.env.Now()-gm.classic.silentSince >= gm.classic.SessionTimeout {
			g.fenceMember(gm, fmt.Sprintf("session timeout (%d ticks of silence)", g.env.Now()-gm.classic.silentSince))
			if !g.current() {
				return // downgraded: the classic group has the members now
			}
		}
	}
}

// updateState is ConsumerGroup.maybeUpdateGroupState.
func (g *ConsumerGroup) updateState() {
	if s := g.computeState(); s != g.state {
		g.transition(s, fmt.Sprintf("group epoch %d, assignment epoch %d", g.groupEpoch, g.assignmentEpoch))
	}
}

// computeState is the state ConsumerGroup.maybeUpdateGroupState computes.
func (g *ConsumerGroup) computeState() GroupState {
	s := Stable
	switch {
	case g.members.len() == 0:
		s = Empty
	case g.groupEpoch > g.assignmentEpoch:
		s = Assigning
	default:
		for _, gm := range g.members.list() {
			if gm.MemberState != reconcile.Stable.String() || gm.MemberEpoch != g.assignmentEpoch {
				s = Reconciling
				break
			}
		}
	}
	return s
}

// settled: every member is STABLE at the group epoch with its whole
// target, nothing pending revocation.
func (g *ConsumerGroup) settled() bool {
	if g.groupEpoch != g.assignmentEpoch && g.members.len() > 0 {
		return false
	}
	for _, gm := range g.members.byID {
		if gm.MemberState != reconcile.Stable.String() || gm.MemberEpoch != g.groupEpoch || len(gm.Revoking) > 0 ||
			!samePartitions(gm.Assignment, gm.Target) {
			return false
		}
	}
	return true
}

// samePartitions reports whether a and b hold the same partitions: at once when
// they are one list, as a member's assignment and its target are once it
// reconciled to it (sim/reconcile hands the target back), where the world
// asks every tick of a roll for every member (a sortedness check and a
// comparison of 100 partitions each, at 1,000 members).
func samePartitions(a, b []wire.TopicPartition) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(wire.SortedView(a), wire.SortedView(b))
}

// putMember puts gm in the members, new or in place of the member with
// its id, keeping numClassic.
func (g *ConsumerGroup) putMember(gm *ConsumerMember) {
	if old := g.members.get(gm.MemberID); old != nil && old.ClassicMember() {
		g.numClassic--
	}
	if gm.ClassicMember() {
		g.numClassic++
	}
	g.members.put(gm.MemberID, gm)
}

// dropMember removes the member with id, keeping numClassic.
func (g *ConsumerGroup) dropMember(id string) {
	if old := g.members.get(id); old != nil && old.ClassicMember() {
		g.numClassic--
	}
	g.members.drop(id)
}

// setClassic makes gm a classic member (keeping the classic metadata it
// has), keeping numClassic when gm is in the members (a member not in
// them yet is counted by putMember).
func (g *ConsumerGroup) setClassic(gm *ConsumerMember) {
	if gm.classic != nil {
		return
	}
	gm.classic = &classicInConsumer{silentSince: -1}
	if g.members.get(gm.MemberID) == gm {
		g.numClassic++
	}
}

// checkCounts reports whether the count of classic members the group keeps
// is what a walk over its members finds.
func (g *ConsumerGroup) checkCounts() error {
	classic := 0
	for _, gm := range g.members.byID {
		if gm.ClassicMember() {
			classic++
		}
	}
	if classic != g.numClassic {
		return fmt.Errorf("%d classic members counted, %d in the group", g.numClassic, classic)
	}
	return nil
}

// clone copies the group for a world's copy, its members into bufs.
func (g *ConsumerGroup) clone(b groupBase, dst *ConsumerGroup, bufs *Bufs) *ConsumerGroup {
	var members map[string]*ConsumerMember
	if dst == nil {
		dst = new(ConsumerGroup)
	} else {
		members = dst.members.byID
	}
	*dst = *g
	dst.groupBase = b
	dst.members, bufs.consumer = g.members.clone(members, bufs.consumer, func(c, gm *ConsumerMember) string {
		// Topics, Assignment, Target and Revoking are shared: each is
		// replaced, never changed in place (see ConsumerMember).
		*c = *gm
		if gm.classic != nil {
			cc := *gm.classic
			c.classic = &cc
		}
		return c.MemberID
	})
	return dst
}
