package sim

import (
	"fmt"
	"slices"
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
		startStableConsumerGroup(w, n, nil)
		return nil
	}
	// The group's assignor is the one its members vote for
	// (ClassicGroup.selectProtocol); members whose lists share none could
	// not all have been admitted (INCONSISTENT_GROUP_PROTOCOL).
	protocol, err := startProtocol(w, memberClients(n))
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
	startClassicGroup(w, ms, joins, a.Name(), owned)
	return nil
}

// startClassicGroup puts a starting classic group in place: the members'
// JoinGroups as the coordinator would have stored them, the assignor the
// group chose, each member's share (owned, in ms's order), the first the
// leader.
func startClassicGroup(w *World, ms []*Member, joins []*wire.JoinGroupRequest, assignor string, owned [][]TopicPartition) {
	w.Group.StartClassic(joins, assignor, owned)
	for i, m := range ms {
		m.StartClassicStable(owned[i], joins[0].MemberID)
	}
	w.touchAll()           // a starting world's members, put in place
	w.trace.ForgetEvents() // the initial state is given, not something that happened
}

// startProtocol is the assignor a starting classic group of clients
// runs: the vote over their assignor lists. Only clients named in a
// per-client setting can list other assignors than the defaults, so a
// world of 100000 members reads every member's config only when some
// member's list differs.
func startProtocol(w *World, clients []string) (string, error) {
	lists := [][]string{w.Cfg.Client.Assignors()}
	who := []string{"the default"}
	seen := map[string]bool{}
	var members map[string]bool // made only when some client has its own list
	for _, o := range w.Cfg.Overrides {
		if o.Key != "partition.assignment.strategy" {
			continue
		}
		if members == nil {
			members = make(map[string]bool, len(clients))
			for _, c := range clients {
				members[c] = true
			}
		}
		if seen[o.Client] || !members[o.Client] {
			continue
		}
		seen[o.Client] = true
		lists, who = append(lists, w.Cfg.ForClient(o.Client).Assignors()), append(who, o.Client)
	}
	if len(seen) == len(clients) {
		lists, who = lists[1:], who[1:] // every member has its own
	}
	if len(lists) == 1 {
		return lists[0][0], nil
	}
	// The vote over the distinct lists is not the vote over the members:
	// count each member.
	var votes [][]string
	for _, c := range clients {
		votes = append(votes, w.Cfg.ForClient(c).Assignors())
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
//
// given, when not nil, is the group's assignment (NewStarted), member i's
// in given[i-1], which becomes the target of epoch 1 in place of the
// server-side assignor's.
func startStableConsumerGroup(w *World, n int, given []StartMember) {
	var ms []*Member
	var starts []coord.StartMember
	for i := 1; i <= n; i++ {
		client := "C" + strconv.Itoa(i)
		if given != nil {
			client = given[i-1].Client
		}
		m := w.newProcess(client)
		m.MemberID = w.env.IssueMemberID(m.Client)
		ms = append(ms, m)
		st := coord.StartMember{MemberID: m.MemberID, ClientID: m.Client, InstanceID: m.Cfg.InstanceID, Inc: m.Inc,
			Topics: m.Topics, RebalanceTimeout: m.Cfg.MaxPollInterval, RemoteAssignor: m.Cfg.RemoteAssignor,
			Classic: !m.Consumer(), Assignors: m.Cfg.Assignors(), SessionTimeout: m.Cfg.SessionTimeout}
		if given != nil {
			st.Target = wire.SortedCopy(given[i-1].Owned)
		}
		starts = append(starts, st)
		startProducer(w, m)
	}
	if given != nil {
		w.Group.StartConsumerAssigned(starts)
	} else {
		w.Group.StartConsumer(starts)
	}
	for _, m := range ms {
		m.StartConsumerStable(w.Group.StartMemberStable(m.MemberID), w.coordCfg.ConsumerHeartbeatInterval)
	}
	w.touchAll()           // a starting world's members, put in place
	w.trace.ForgetEvents() // the initial state is given, not something that happened
}

// StartMember is a member a world starts with, and the partitions it owns
// then (NewStarted).
type StartMember struct {
	Client string
	Owned  []TopicPartition
}

// NewStarted makes a world at tick 0 whose group starts as given, where
// New shares the partitions out with the assignor: Stable, generation (a
// consumer group: group epoch and every member epoch) 1, each member
// owning the partitions given, every producer initialised, nothing
// consumed yet. It is how a group read from kafka-consumer-groups.sh
// --describe starts (kernel: new --from-describe). The members start in
// the order given (the first leads a classic group); the group's type
// follows their group.protocol, as New's does, and a consumer group's
// target of epoch 1 is the given assignment, with the server-side
// assignor the members ask for named as the one that computed it. t.Members
// is ignored: the members are those given.
func NewStarted(t Topology, cfg Config, members []StartMember) (*World, error) {
	t.Members = 0
	w, err := New(t, cfg)
	if err != nil {
		return nil, err
	}
	clients := make([]string, len(members))
	owner := map[TopicPartition]string{}
	for i, sm := range members {
		if err := checkClientID(sm.Client); err != nil {
			return nil, fmt.Errorf("start: %v", err)
		}
		if _, dup := w.current[sm.Client]; dup || slices.Contains(clients[:i], sm.Client) {
			return nil, fmt.Errorf("start: %s is given twice", sm.Client)
		}
		clients[i] = sm.Client
		for _, tp := range sm.Owned {
			if _, ok := w.layout.Input().Slot(tp, nil); !ok {
				return nil, fmt.Errorf("start: %s owns %s, which is not an input partition of the world (input topics: %s)",
					sm.Client, tp, strings.Join(w.layout.InputTopics(), ","))
			}
			if o, dup := owner[tp]; dup {
				return nil, fmt.Errorf("start: %s is owned by %s and by %s: a partition has one owner in a group", tp, o, sm.Client)
			}
			owner[tp] = sm.Client
		}
	}
	if err := checkStartIDs(&w.Cfg, clients); err != nil {
		return nil, err
	}
	w.Topo.Members = len(members)
	if len(members) == 0 {
		return w, nil
	}
	consumer := false
	for _, c := range clients {
		consumer = consumer || w.Cfg.ForClient(c).GroupProtocol == string(ConsumerGroup)
	}
	if consumer {
		startStableConsumerGroup(w, len(members), members)
		return w, nil
	}
	// The assignor the group runs is the members' vote over their lists,
	// as New's: a describe output names it, and the lists set for the
	// members must elect it (the caller sets them so).
	protocol, err := startProtocol(w, clients)
	if err != nil {
		return nil, fmt.Errorf("start: %v", err)
	}
	var ms []*Member
	var joins []*wire.JoinGroupRequest
	owned := make([][]TopicPartition, len(members))
	for i, sm := range members {
		m := w.newProcess(sm.Client)
		m.MemberID = w.env.IssueMemberID(m.Client)
		m.Generation = 1
		ms = append(ms, m)
		joins = append(joins, m.JoinRequest())
		owned[i] = wire.SortedCopy(sm.Owned)
		startProducer(w, m)
	}
	startClassicGroup(w, ms, joins, protocol, owned)
	return w, nil
}

// memberClients are the client ids of the members New starts: C1..Cn.
func memberClients(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "C" + strconv.Itoa(i+1)
	}
	return out
}

// checkStartIDs refuses a start in which two members would hold one
// group.instance.id, or one transactional.id: Kafka never lets two
// members hold one instance id (the later fences the earlier), nor two
// producers one transactional id (the later's InitProducerId fences the
// earlier), so no Stable group of Kafka's starts that way. Only clients
// named in a per-client setting can differ from the defaults, so the
// defaults are expanded once for the rest.
func checkStartIDs(cfg *Config, clients []string) error {
	named := map[string]bool{}
	for _, o := range cfg.Overrides {
		named[o.Client] = true
	}
	seen := map[[2]string]string{}
	for _, c := range clients {
		cc := cfg.Client
		if named[c] {
			cc = cfg.ForClient(c)
		} else {
			expandIDs(&cc, c)
		}
		for _, kv := range [][2]string{{"group.instance.id", cc.InstanceID}, {"transactional.id", cc.TransactionalID}} {
			if kv[1] == "" {
				continue
			}
			first, dup := seen[kv]
			if !dup {
				seen[kv] = c
				continue
			}
			if kv[0] == "group.instance.id" {
				return fmt.Errorf("%s and %s would start with one group.instance.id, %s: Kafka never lets two members hold one "+
					"(the one that joins later fences the other: FENCED_INSTANCE_ID 82); give each member its own: "+
					"set group.instance.id per-member (each member's client id), or set Cn.group.instance.id ID", first, c, kv[1])
			}
			return fmt.Errorf("%s and %s would start with one transactional.id, %s: two producers with one transactional id "+
				"fence each other (the later InitProducerId bumps the epoch: PRODUCER_FENCED 90); give each member its own: "+
				"set transactional.id per-member (tx- and its client id), or set Cn.transactional.id ID", first, c, kv[1])
		}
	}
	return nil
}
