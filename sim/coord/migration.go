package coord

// Online migration between the two kinds of group (KIP-848's upgrade and
// downgrade paths, group.consumer.migration.policy), as Kafka's
// GroupMetadataManager does it: a classic group whose first
// consumer-protocol member joins becomes a consumer group
// (convertToConsumerGroup, ConsumerGroup.fromClassicGroup); its classic
// members stay, as classic members inside the consumer group
// (consumer_classic.go), until they leave; when the last consumer-protocol
// member leaves a group of classic members, it becomes a classic group
// again (validateOnlineDowngradeWithFencedMember, convertToClassicGroup,
// ClassicGroup.fromConsumerGroup) and rebalances. An empty group of one
// kind is deleted and made anew as the other kind (recreate).

import (
	"sort"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/reconcile"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// MigrationPolicies are group.consumer.migration.policy's values.
var MigrationPolicies = []string{"disabled", "upgrade", "downgrade", "bidirectional"}

func (c *Coordinator) upgradeEnabled() bool {
	return c.cfg.MigrationPolicy == "upgrade" || c.cfg.MigrationPolicy == "bidirectional"
}

func (c *Coordinator) downgradeEnabled() bool {
	return c.cfg.MigrationPolicy == "downgrade" || c.cfg.MigrationPolicy == "bidirectional"
}

// recreate is Kafka deleting the group id's empty group and creating a new
// one of type t in its place (ConsumerGroup's and ClassicGroup's
// constructors): generation, epochs, leader and assignor start again; the
// offsets (committed and pending) stay. The group is empty, so it has no
// members and no static ones; the member ids a static rejoin fenced are
// forgotten too (a new group answers them UNKNOWN_MEMBER_ID).
func (c *Coordinator) recreate(t GroupType) {
	b := c.newBase()
	if t == wire.Consumer {
		c.group = newConsumerGroup(b)
	} else {
		c.group = newClassicGroup(b)
	}
	c.Incarnation++
}

// becomeConsumerGroup turns an empty classic group into a consumer group:
// GroupMetadataManager.getOrMaybeCreateConsumerGroup deletes the empty
// classic group (maybeDeleteEmptyClassicGroup: a GroupMetadata tombstone)
// and creates a new ConsumerGroup with the same id, at group epoch 0 (the
// joining member then bumps it to 1). Committed offsets are records of
// their own, which the tombstone leaves alone: they stay.
func (c *Coordinator) becomeConsumerGroup() {
	from := c.group.Epoch()
	c.recreate(wire.Consumer)
	if from == 0 {
		// No generation ever formed: in Kafka there is no group yet to
		// delete (kgrepl's world starts with an empty classic group).
		c.env.Trace().Eventf(trace.EvGroupState, "", "group %s is created as a consumer group (group.protocol=consumer)", c.id)
		return
	}
	c.env.Trace().Eventf(trace.EvGroupState, "", "group %s (classic, empty, generation %d) is deleted and made anew as a consumer group at group epoch 0 (group.protocol=consumer); its committed offsets stay", c.id, from)
}

// becomeClassicGroup: an empty consumer group becomes a classic group when
// a classic member joins: GroupMetadataManager.classicGroupJoinToClassicGroup
// deletes it (maybeDeleteEmptyConsumerGroup: tombstones for its epoch,
// assignments and subscriptions) and getOrMaybeCreateClassicGroup makes a
// new ClassicGroup at generation 0. The committed offsets stay.
func (c *Coordinator) becomeClassicGroup() {
	from := c.group.Epoch()
	c.recreate(wire.Classic)
	c.env.Trace().Eventf(trace.EvGroupState, "", "group %s (consumer, empty, group epoch %d) is deleted and made anew as a classic group at generation 0 (group.protocol=classic); its committed offsets stay", c.id, from)
}

// fromClassicGroup is GroupMetadataManager.convertToConsumerGroup and
// ConsumerGroup.fromClassicGroup: JoinGroups and SyncGroups waiting at the
// classic group are answered REBALANCE_IN_PROGRESS; every classic member
// becomes a classic member of a consumer group at the generation as its
// epoch, STABLE, owning its classic assignment, which is also the target.
func fromClassicGroup(cg *ClassicGroup) *ConsumerGroup {
	g := newConsumerGroup(cg.groupBase)
	for _, cm := range cg.members.list() {
		if cm.joinPkt != nil {
			g.env.Reply(cm.joinPkt, wire.RebalanceInProgress, "the group is becoming a consumer group", nil)
		}
		if cm.syncPkt != nil {
			g.env.Reply(cm.syncPkt, wire.RebalanceInProgress, "the group is becoming a consumer group", nil)
		}
		// completeAllJoinFutures, completeAllSyncFutures: answered, even
		// if the conversion is discarded.
		cm.joinPkt, cm.syncPkt, cm.Joined, cm.pendingSync = nil, nil, false, false
		gm := &ConsumerMember{MemberID: cm.MemberID, ClientID: cm.ClientID, InstanceID: cm.InstanceID, Inc: cm.Inc,
			Topics: cm.Topics, Strategy: cm.Strategy, RebalanceTimeout: cm.RebalanceTimeout, Assignment: cm.Assignment,
			MemberEpoch: cg.generation, PreviousMemberEpoch: cg.generation, MemberState: reconcile.Stable.String(),
			Target:  store.Copy(cm.Assignment),
			classic: &classicInConsumer{ClassicMemberMetadata: cm.ClassicMemberMetadata, silentSince: cm.silentSince}}
		g.putMember(gm)
		// convertToConsumerGroup starts every member's session from now
		// (scheduleConsumerGroupSessionTimeout with its classic
		// session.timeout.ms), whatever its classic session was, a process
		// already gone included; each heartbeat restarts it
		// (classicGroupHeartbeatToConsumerGroup). A member heard now
		// heartbeats every tick, so its session never runs out while it is
		// heard (ConsumerGroup.tick); one not heard is fenced a session
		// timeout from now.
		if g.classic().heard(gm) {
			gm.classic.silentSince, gm.sessionTimer = -1, 0
		} else {
			g.classic().silentFromNow(gm)
		}
	}
	g.groupEpoch, g.assignmentEpoch = cg.generation, cg.generation
	// kgrepl shows the classic protocol as the assignor until the first
	// target assignment names the server-side one.
	g.assignor = cg.protocol
	// A new group object in Kafka: it starts in the state it computes, no
	// transition of the old one.
	g.state = g.computeState()
	g.env.Trace().Eventf(trace.EvGroupState, "", "group %s (classic, %s, generation %d) is converted to a consumer group at group epoch %d (%s); its %d classic members stay",
		g.c.id, cg.state, cg.generation, g.groupEpoch, g.state, g.members.len())
	return g
}

// maybeDowngrade is validateOnlineDowngradeWithFencedMember and
// convertToClassicGroup: when the member leaving is the last one speaking
// the consumer protocol, the others classic (and no more than
// group.max.size of them), the group becomes a classic group at the group
// epoch as its generation, each member with its target assignment, and
// rebalances. It reports whether it converted the group (the leaving
// member is then gone, and g is no longer the group id's).
func (g *ConsumerGroup) maybeDowngrade(leaving *ConsumerMember, why string) bool {
	if !g.c.downgradeEnabled() || g.members.len() <= 1 || g.members.len()-1 > g.cfg.ClassicMaxSize {
		return false
	}
	for _, gm := range g.members.byID {
		if gm != leaving && gm.classic == nil {
			return false
		}
	}
	g.dropMember(leaving.MemberID)
	if leaving.InstanceID != "" && g.static[leaving.InstanceID] == leaving.MemberID {
		delete(g.static, leaving.InstanceID)
	}
	g.env.Trace().Eventf(trace.EvRemoved, leaving.ClientID, "coordinator removes %s: %s", leaving.MemberID, why)
	cg := fromConsumerGroup(g, g.groupEpoch, nil)
	g.c.group = cg
	g.env.Trace().Eventf(trace.EvGroupState, "", "group %s is converted back to a classic group at generation %d: every member left speaks the classic protocol", g.c.id, cg.generation)
	cg.prepareRebalance("downgrade from consumer to classic")
	return true
}

// downgradeWithReplacedMember is validateOnlineDowngradeWithReplacedMember:
// a classic instance that replaced replaced (now in the group in its
// place) leaves only classic members, replaced spoke the consumer
// protocol, the policy allows downgrades, and the group has no more than
// group.max.size members.
func (g classicMembers) downgradeWithReplacedMember(replaced *ConsumerMember) bool {
	return replaced.classic == nil && g.numClassic == g.members.len() && g.c.downgradeEnabled() &&
		g.members.len() <= g.cfg.ClassicMaxSize
}

// fromConsumerGroup is ClassicGroup.fromConsumerGroup: every member (all
// classic) becomes a classic member with its target assignment (or the one
// targets names for it: a joiner takes the target of the member it
// replaced), generation the generation, the group Stable, the first member
// id the leader (Kafka's is the first member its map yields: effectively
// arbitrary; kgrepl's is the first in member-id order). Every member's
// session restarts now (rescheduleClassicGroupMemberHeartbeat).
func fromConsumerGroup(g *ConsumerGroup, generation int, targets map[string][]wire.TopicPartition) *ClassicGroup {
	cg := newClassicGroup(g.groupBase)
	ids := make([]string, 0, g.members.len())
	for id := range g.members.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids { // in id order: the session timers armed here fire in the order they are armed
		gm := g.members.get(id)
		target, ok := targets[id]
		if !ok {
			target = gm.Target
		}
		cm := &ClassicMember{MemberID: gm.MemberID, ClientID: gm.ClientID, InstanceID: gm.InstanceID, Inc: gm.Inc,
			Topics: gm.Topics, Strategy: gm.Strategy, ClassicMemberMetadata: gm.classic.ClassicMemberMetadata,
			RebalanceTimeout: gm.RebalanceTimeout, Assignment: store.Copy(target)}
		cg.members.put(cm.MemberID, cm)
		// convertToClassicGroup reschedules every member's heartbeat
		// (rescheduleClassicGroupMemberHeartbeat): the session runs from
		// now. One whose heartbeat thread runs (client.Member.Heartbeats) keeps
		// it going every tick; one that sends none (joining, reset, or
		// gone) is removed a session timeout from now, unless a JoinGroup
		// or SyncGroup of it waits (sessionExpiry).
		if cg.hearsFrom(cm) {
			cm.silentSince = -1
		} else {
			cg.silentFromNow(cm)
		}
	}
	cg.generation = generation
	cg.leader = ids[0]
	cg.protocol = cg.selectProtocol()
	cg.state = Stable
	return cg
}
