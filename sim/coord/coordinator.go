// Package coord is B1's group coordinator (Kafka's GroupCoordinator and
// GroupMetadataManager): the group's members, states, generations and
// epochs under both group protocols (the classic JoinGroup/SyncGroup with
// a client-side leader, KIP-848's ConsumerGroupHeartbeat with a
// server-side assignor), online migration between them, and the offsets
// store both use (OffsetMetadataManager: commits, fetches, transactional
// offsets, __consumer_offsets). It is handed an env.Env, never the World.
package coord

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Config is the broker's group settings, in ticks where Kafka counts
// milliseconds. The World keeps them with the rest of its settings and the
// coordinator reads them as they change.
type Config struct {
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms. 0
	// (kgrepl's default) keeps SPEC §3's rule: JoinGroups that reach an
	// empty group in one tick are answered in one generation.
	InitialRebalanceDelay int
	// The broker's group.consumer.heartbeat.interval.ms and
	// group.consumer.session.timeout.ms. Kafka's defaults are 5 s and
	// 45 s. The interval, 5/45 of a session, is 2 ticks: the smallest
	// interval at which a heartbeat is answered (a 2-tick round trip)
	// before the next is due. The session is 9 ticks, not the classic 6,
	// so that, as with Kafka's defaults, one lost heartbeat does not fence
	// a member: the client waits request.timeout.ms (5) for the answer,
	// then resends after the retry backoff (1 tick), so the coordinator
	// hears the resend interval + request timeout + backoff = 8 ticks
	// after the heartbeat before the lost one; the session must outlast
	// that. Kafka: 5 + 30 + 0.1 s of 45 s; 9 ticks also keeps Kafka's
	// (interval + request timeout) / session = 35/45 = 7/9. With 6 a lost
	// heartbeat always fenced.
	ConsumerHeartbeatInterval int
	ConsumerSessionTimeout    int
	// MigrationPolicy is group.consumer.migration.policy: disabled,
	// upgrade, downgrade or bidirectional (Kafka's default).
	MigrationPolicy string
}

// Mutations lists the deliberate bugs a test can switch on, to prove that
// a checker (the invariants, the explorer) catches them.
type Mutations struct {
	// CommitOffsetsBeforeMarker makes TxnOffsetCommit commit the offsets
	// at once instead of leaving them pending until the COMMIT marker: a
	// crash before the marker then loses the batch.
	CommitOffsetsBeforeMarker bool
}

// Processes is what the coordinator may learn of a member's process beyond
// its requests. kgrepl's classic heartbeats are implicit (the seed's
// simplification: a live member is heard every tick), so at the places
// Kafka's coordinator would have received or missed a heartbeat it asks
// instead; the World answers (sim/heartbeat.go), and nothing else crosses
// from the clients to the coordinator but packets.
type Processes interface {
	// Alive: client's process inc runs.
	Alive(client string, inc int) bool
	// GoesBy: it runs and goes by memberID.
	GoesBy(client string, inc int, memberID string) bool
	// InGroupAs: it runs, goes by memberID and is not out of the group
	// (a static member past max.poll.interval.ms keeps its id, but its
	// heartbeat thread stopped).
	InGroupAs(client string, inc int, memberID string) bool
	// Heartbeating: it runs, goes by memberID and its classic heartbeat
	// thread sends heartbeats (AbstractCoordinator.HeartbeatThread: in
	// COMPLETING_REBALANCE or STABLE).
	Heartbeating(client string, inc int, memberID string) bool
}

// StartClassic makes the group a world starts with under the classic
// protocol: every member of joins (their JoinGroups, as the coordinator
// would have stored them), Stable in generation 1, the first the leader,
// each with its share of the plan (assignments, in joins' order, kept as
// given: the members' own lists), the assignor named. No transition or
// event: the world starts here.
func (g *Group) StartClassic(joins []*wire.JoinGroupRequest, assignor string, assignments [][]wire.TopicPartition) {
	for i, r := range joins {
		gm := g.addMember(r, 0)
		gm.Joined = false
		gm.Assignment = assignments[i]
	}
	g.Generation = 1
	g.Assignor = assignor
	g.State = Stable
	g.Leader = joins[0].MemberID
}

// StartMember is a member a world's consumer group starts with.
type StartMember struct {
	MemberID, ClientID, InstanceID string
	Inc                            int
	Topics                         []string
	RebalanceTimeout               int
	// RemoteAssignor is group.remote.assignor, for a consumer-protocol
	// member; a classic member (Classic) names its client-side Assignor
	// and its own SessionTimeout.
	RemoteAssignor string
	Classic        bool
	Assignor       string
	SessionTimeout int
}

// StartConsumer makes the group a world starts with when some member
// speaks the consumer protocol: every member at group epoch 1 with the
// target the server-side assignor computes, the group Stable. Each member
// then takes its target with StartMemberStable, in the world's order, as
// its process starts heartbeating.
func (g *Group) StartConsumer(ms []StartMember) {
	g.Type = ConsumerGroup
	for _, s := range ms {
		gm := &GroupMember{MemberID: s.MemberID, ClientID: s.ClientID, InstanceID: s.InstanceID, Inc: s.Inc,
			Topics: store.Copy(s.Topics), Strategy: s.RemoteAssignor, RebalanceTimeout: s.RebalanceTimeout,
			SessionTimeout: g.cfg.ConsumerSessionTimeout, MemberState: "STABLE", silentSince: -1}
		if s.Classic {
			gm.ClassicMember = true
			gm.Strategy, gm.Protocols = s.Assignor, []string{s.Assignor}
			gm.SessionTimeout = s.SessionTimeout
		}
		g.putMember(gm)
		if gm.InstanceID != "" {
			store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
		}
	}
	g.GroupEpoch = 1
	g.updateTargetAssignment(g.members[ms[len(ms)-1].MemberID])
	g.State = Stable
}

// StartMemberStable moves a member of the group StartConsumer made to its
// target at epoch 1 and returns its assignment; a consumer-protocol
// member's session starts.
func (g *Group) StartMemberStable(memberID string) []wire.TopicPartition {
	gm := g.members[memberID]
	gm.MemberEpoch, gm.PreviousMemberEpoch = 1, 0
	gm.Assignment = store.Copy(gm.Target)
	if !gm.ClassicMember {
		g.scheduleConsumerSessionTimeout(gm)
	}
	return gm.Assignment
}

// Tick ends the coordinator's part of a tick: a classic join round whose
// members have all joined completes here, so JoinGroups that arrive in one
// tick are answered in one generation; the consumer group's classic
// members are heard or fall silent.
func (g *Group) Tick() { g.tick() }

// HeartbeatStopped: the process going by member id id stopped sending
// classic heartbeats (sim/heartbeat.go).
func (g *Group) HeartbeatStopped(id string) { g.heartbeatStopped(id) }

// HeartbeatStarted: the process going by member id id sends classic
// heartbeats again.
func (g *Group) HeartbeatStarted(id string) { g.heartbeatStarted(id) }

// MemberIDDropped: a live process goes by another member id now; the one
// it dropped is heard no more.
func (g *Group) MemberIDDropped(id string) { g.memberIDDropped(id) }

// AllowProtocol records that a member now also supports strategy (a
// setting changed for a live member: kgrepl's stand-in for the first
// bounce of an assignor upgrade).
func (g *Group) AllowProtocol(memberID, strategy string) { g.allowProtocol(memberID, strategy) }

// CompleteTxnOffsets is the marker in __consumer_offsets: pending offsets
// of pid become committed (COMMIT) or are dropped (ABORT).
func (g *Group) CompleteTxnOffsets(pid int64, commit bool) { g.completeTxnOffsets(pid, commit) }

// CommittedOffset is tp's committed offset (false when none).
func (g *Group) CommittedOffset(tp wire.TopicPartition) (int, bool) {
	c, ok := g.offsets.get(tp)
	return c.Offset, ok
}

// CommittedAt is the committed offset of the input partition numbered i
// (false when none).
func (g *Group) CommittedAt(i int) (int, bool) {
	c, ok := g.offsets.atSlot(i)
	return c.Offset, ok
}

// EachCommitted calls yield for every committed offset, until it returns
// false.
func (g *Group) EachCommitted(yield func(tp wire.TopicPartition, offset int) bool) {
	for tp, c := range g.offsets.all {
		if !yield(tp, c.Offset) {
			return
		}
	}
}

// Settled reports whether a consumer group's members have all reached
// their target, acknowledged it, with nothing left to revoke or be
// released (a classic group: true).
func (g *Group) Settled() bool { return g.Type != ConsumerGroup || g.consumerSettled() }

// CheckCounts reports whether the counts the group keeps as it changes
// (the classic members of a consumer group) are what a walk over its
// members finds.
func (g *Group) CheckCounts() error {
	classic := 0
	for _, gm := range g.members {
		if gm.ClassicMember {
			classic++
		}
	}
	if classic != g.numClassic {
		return fmt.Errorf("%d classic members counted, %d in the group", g.numClassic, classic)
	}
	return nil
}
