package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/coord"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The group a world starts with (New with Members > 0): Stable, every
// member holding its share, every producer initialised, nothing consumed
// yet, as if the rebalances that formed it were over.

// startStableGroup builds the default world's group: members C1..Cn, Stable
// in generation 1, every producer initialised, nothing consumed yet.
//
// The group's type follows the protocols the members' own configs give
// them (group.protocol, per client), since a Kafka client's protocol is
// fixed when it starts: all classic, a classic group; otherwise a consumer
// group (see startStableConsumerGroup), whose classic-protocol members, if
// any, are classic members inside it.
func startStableGroup(w *World, n int) error {
	if consumerMembers(w, n) > 0 {
		startStableConsumerGroup(w, n)
		return nil
	}
	// The group's assignor is the one its members vote for
	// (ClassicGroup.selectProtocol); members whose lists share none could
	// not all have been admitted (INCONSISTENT_GROUP_PROTOCOL).
	protocol, err := startProtocol(w, n)
	if err != nil {
		return err
	}
	var ins []assign.Member
	var ms []*Member
	var joins []*wire.JoinGroupRequest
	for i := 1; i <= n; i++ {
		m := w.newProcess("C" + strconv.Itoa(i))
		m.MemberID = w.env.IssueMemberID(m.Client)
		m.Generation = 1
		ms = append(ms, m)
		joins = append(joins, m.JoinRequest())
		ins = append(ins, assign.Member{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID, Topics: m.Topics, Generation: -1})
		startProducer(w, m)
	}
	a, _ := assign.New(protocol, w.Cfg.Client.StickyRules)
	plan := a.Assign(assign.Input{Members: ins, Partitions: w.layout.TopicSizes()})
	owned := make([][]TopicPartition, len(ms))
	for i, m := range ms {
		owned[i] = append([]TopicPartition{}, plan[m.MemberID]...)
	}
	w.Group.StartClassic(joins, a.Name(), owned)
	for i, m := range ms {
		m.StartClassicStable(owned[i], joins[0].MemberID)
	}
	w.trace.ForgetEvents() // the initial state is given, not something that happened
	return nil
}

// startProtocol is the assignor a starting classic group of C1..Cn runs:
// the vote over their assignor lists. Only clients named in a per-client
// setting can list other assignors than the defaults, so a world of 100000
// members reads n configs only when it has that many settings.
func startProtocol(w *World, n int) (string, error) {
	lists := [][]string{w.Cfg.Client.Assignors()}
	who := []string{"the default"}
	seen := map[string]bool{}
	for _, o := range w.Cfg.Overrides {
		if o.Key != "partition.assignment.strategy" || seen[o.Client] || !isMemberClient(o.Client, n) {
			continue
		}
		seen[o.Client] = true
		lists, who = append(lists, w.Cfg.ForClient(o.Client).Assignors()), append(who, o.Client)
	}
	if len(seen) == n {
		lists, who = lists[1:], who[1:] // every member has its own
	}
	if len(lists) == 1 {
		return lists[0][0], nil
	}
	// The vote over the distinct lists is not the vote over the members:
	// count each member.
	var votes [][]string
	for i := 1; i <= n; i++ {
		votes = append(votes, w.Cfg.ForClient("C"+strconv.Itoa(i)).Assignors())
	}
	if p, ok := assign.SelectProtocol(votes); ok {
		return p, nil
	}
	var each []string
	for i, l := range lists {
		each = append(each, who[i]+" "+strings.Join(l, ","))
	}
	return "", fmt.Errorf("the members' partition.assignment.strategy lists share no assignor (%s), so a classic group could not hold them all: Kafka refuses a member that shares none with INCONSISTENT_GROUP_PROTOCOL", strings.Join(each, "; "))
}

// startProducer initialises a starting world's member's producer: a
// producer id for an idempotent one, and a transactional id registered
// with the transaction coordinator for a transactional one.
func startProducer(w *World, m *Member) {
	if m.Cfg.Producer() != ProducerPlain {
		pid := w.Txn.NewPID()
		m.StartProducer(pid)
		if m.Cfg.TransactionalID != "" {
			w.Txn.Register(m.Cfg.TransactionalID, pid, w.Tick).Timeout = m.Cfg.TransactionTimeout
		}
	}
}

// consumerMembers counts the members C1..Cn whose own config gives them
// group.protocol=consumer. Only clients named in a per-client setting can
// differ from the defaults, so a world of 100000 members reads n configs
// only when it has that many settings.
func consumerMembers(w *World, n int) int {
	count := 0
	if w.Cfg.Client.GroupProtocol == string(ConsumerGroup) {
		count = n
	}
	seen := map[string]bool{}
	for _, o := range w.Cfg.Overrides {
		if seen[o.Client] || !isMemberClient(o.Client, n) {
			continue
		}
		seen[o.Client] = true
		own := w.Cfg.ForClient(o.Client).GroupProtocol == string(ConsumerGroup)
		switch {
		case own && w.Cfg.Client.GroupProtocol != string(ConsumerGroup):
			count++
		case !own && w.Cfg.Client.GroupProtocol == string(ConsumerGroup):
			count--
		}
	}
	return count
}

// isMemberClient: client is one of C1..Cn.
func isMemberClient(client string, n int) bool {
	i, err := strconv.Atoi(strings.TrimPrefix(client, "C"))
	return err == nil && i >= 1 && i <= n && client == "C"+strconv.Itoa(i)
}

// startStableConsumerGroup builds the default world's group when some
// member speaks group.protocol=consumer: members C1..Cn at group epoch 1,
// each STABLE at epoch 1 with its share of the target the server-side
// assignor computes, heartbeats and sessions running, nothing consumed yet.
//
// A member whose own config says classic is a classic member of the
// consumer group (GroupMember.ClassicMember), as classicJoinToConsumerGroup
// leaves one: its classic assignor, rebalance and session timeouts; its
// process in the classic protocol at generation 1 (its member epoch), no
// leader. Kafka reaches this state under every
// group.consumer.migration.policy: GroupMetadataManager.classicGroupJoin
// sends a JoinGroup to a non-empty consumer group to
// classicGroupJoinToConsumerGroup without consulting the policy, so the
// group is a consumer group with classic members once the consumer members
// joined first. (The policy decides only the other order, a classic group
// that a consumer member joins: validateOnlineUpgrade.) The policy keeps
// its say afterwards: whether the group goes back to classic when its last
// consumer member leaves (maybeDowngrade).
func startStableConsumerGroup(w *World, n int) {
	var ms []*Member
	var starts []coord.StartMember
	for i := 1; i <= n; i++ {
		m := w.newProcess("C" + strconv.Itoa(i))
		m.MemberID = w.env.IssueMemberID(m.Client)
		ms = append(ms, m)
		starts = append(starts, coord.StartMember{MemberID: m.MemberID, ClientID: m.Client, InstanceID: m.Cfg.InstanceID, Inc: m.Inc,
			Topics: m.Topics, RebalanceTimeout: m.Cfg.MaxPollInterval, RemoteAssignor: m.Cfg.RemoteAssignor,
			Classic: !m.Consumer(), Assignors: m.Cfg.Assignors(), SessionTimeout: m.Cfg.SessionTimeout})
		startProducer(w, m)
	}
	w.Group.StartConsumer(starts)
	for _, m := range ms {
		m.StartConsumerStable(w.Group.StartMemberStable(m.MemberID), w.Cfg.ConsumerHeartbeatInterval)
	}
	w.trace.ForgetEvents() // the initial state is given, not something that happened
}
