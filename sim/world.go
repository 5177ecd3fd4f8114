package sim

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/coord"
	"github.com/kgrepl/kgrepl/sim/txncoord"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TopicSpec is one topic and its partition count.
type TopicSpec = topo.TopicSpec

// Topology is the shape of a world.
type Topology = topo.Topology

// DefaultTopology is the seed's world (SPEC §2).
func DefaultTopology() Topology { return topo.Default() }

// World is the whole simulation: one broker, one group, its members, the
// logs and the packets between them. It is a pure state machine: Step
// advances one tick, commands are applied between ticks, and the same inputs
// give the same trace byte for byte.
type World struct {
	Tick int
	Cfg  Config
	Topo Topology

	// reuser is the Reuser that made this world, nil for any other: a copy
	// of this world (a checkpoint of an explorer branch, say) may share its
	// storage, so copying it detaches the Reuser from it (World.clone).
	reuser *Reuser

	// broker is B1 as the leader of every partition: the logs (sim/broker).
	broker *broker.Broker
	// layout numbers the partitions and spells input record names;
	// read-only, shared by the nodes and by clones.
	layout *topo.Layout

	Group *Group
	Txn   *txncoord.Coordinator

	procs []*Member // every process ever started, in start order
	// orderStale: a process started since the processes' order fields
	// were set (World.actOrder).
	orderStale bool
	// order is each process's place in (client, incarnation) order, by
	// process number (actOrder sets it anew when a process started).
	order   []int32
	current map[string]*Member // client id -> its newest process
	clients []string           // client ids in Kafka's string order

	// env is the nodes' environment: the wire, the timers, the free
	// lists, and which processes act this tick (sim/env).
	env *env.Env
	// trace keeps every packet and every event (sim/trace); Packets and
	// Events are its two logs, for the views.
	trace   *trace.Trace
	Packets *trace.PacketLog // the whole trace, in send order (p.ID is the index)
	Events  *trace.EventLog
	// Scratch buffers of the tick loop, reused from tick to tick; never
	// shared with a clone (Clone leaves them nil) and never kept.
	actBuf    []*Member
	tpBuf     []TopicPartition
	pausedBuf []TopicPartition
	markBuf   []bool

	Meter PauseMeter
	// Sink counts calls of the external side effect per input record (a
	// stand-in for a database write outside the transaction).
	Sink      SinkCounts
	processed int
	// LSOHeldTicks adds up, over output partitions, the ticks during which
	// an open transaction held the LSO below the high watermark (a
	// read_committed reader saw nothing past it).
	LSOHeldTicks int
	// Mutations are deliberate engine bugs, off unless a test turns them on
	// to prove that a checker (the invariants, the explorer) catches them.
	Mutations Mutations
}

// New makes a world at tick 0.
func New(t Topology, cfg Config) (*World, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	w := &World{
		Cfg: cfg.clone(), Topo: t, layout: topo.New(t),
		current: map[string]*Member{},
	}
	w.trace = trace.New(w.layout, &w.Tick, w)
	w.Packets, w.Events = &w.trace.Packets, &w.trace.Events
	w.env = env.New(&w.Tick, w.trace, w.layout)
	w.Sink.names = w.layout
	w.Group = coord.New(t.Group, w.env, &w.Cfg.Config, &w.Mutations, w)
	w.Txn = txncoord.New(w.env)
	w.broker = broker.New(w.env, w.layout, cfg.RecordsPerPartition, w, w.Txn)
	w.Meter.init()
	if t.Members > 0 {
		w.startStableGroup(t.Members)
	}
	return w, nil
}

// startStableGroup builds the default world's group: members C1..Cn, Stable
// in generation 1, every producer initialised, nothing consumed yet.
//
// The group's type follows the protocols the members' own configs give
// them (group.protocol, per client), since a Kafka client's protocol is
// fixed when it starts: all classic, a classic group; otherwise a consumer
// group (see startStableConsumerGroup), whose classic-protocol members, if
// any, are classic members inside it.
func (w *World) startStableGroup(n int) {
	if w.consumerMembers(n) > 0 {
		w.startStableConsumerGroup(n)
		return
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
		w.startProducer(m)
	}
	a, _ := assign.New(w.Cfg.Client.Assignor, w.Cfg.Client.StickyRules)
	plan := a.Assign(assign.Input{Members: ins, Partitions: w.layout.TopicSizes()})
	owned := make([][]TopicPartition, len(ms))
	for i, m := range ms {
		owned[i] = append([]TopicPartition{}, plan[m.MemberID]...)
	}
	w.Group.StartClassic(joins, a.Name(), owned)
	for i, m := range ms {
		m.StartClassicStable(owned[i], w.Group.Leader)
	}
	w.trace.ForgetEvents() // the initial state is given, not something that happened
}

// startProducer initialises a starting world's member's producer: a
// producer id for an idempotent one, and a transactional id registered
// with the transaction coordinator for a transactional one.
func (w *World) startProducer(m *Member) {
	if m.Cfg.Producer() != ProducerPlain {
		pid := w.Txn.NewPID()
		m.StartProducer(pid)
		if m.Cfg.TransactionalID != "" {
			w.Txn.Register(m.Cfg.TransactionalID, pid, w.Tick).Timeout = m.Cfg.TransactionTimeout
		}
	}
}

// newProcess starts a member process for a client (not yet in the group).
func (w *World) newProcess(id string) *Member {
	cc := w.Cfg.ForClient(id)
	inc := 1
	if old := w.current[id]; old != nil {
		inc = old.Inc + 1
		old.Supersede()
	}
	m := client.New(w.env, w, id, inc, len(w.procs), cc, w.layout.InputTopics())
	w.procs = append(w.procs, m)
	w.order = append(w.order, 0)
	w.orderStale = true
	if w.current[id] == nil {
		// Insert in place: sorting the whole list for every new id made
		// `new --members 100000` quadratic in sorts (21 s).
		i := sort.SearchStrings(w.clients, id)
		w.clients = append(w.clients, "")
		copy(w.clients[i+1:], w.clients[i:])
		w.clients[i] = id
	}
	w.current[id] = m
	return m
}

// RecordName names input record offset off of tp: o2.3 in the default
// world, t1-0.3 elsewhere.
func (w *World) RecordName(tp TopicPartition, off int) string { return w.layout.Name(tp, off) }

// IsRecord reports whether name is an input record that exists (o2.3, orders-2.3).
func (w *World) IsRecord(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return false
	}
	off, err := strconv.Atoi(name[i+1:])
	if err != nil || off < 0 {
		return false
	}
	tp, err := w.ParsePartition(name[:i])
	if err != nil || w.layout.Partitions(tp.Topic) == 0 {
		return false
	}
	for _, t := range w.layout.Inputs() {
		if t == tp {
			return off < w.broker.Log(tp).HW()
		}
	}
	return false
}

// InputPartitions lists the input partitions, sorted.
func (w *World) InputPartitions() []TopicPartition { return w.layout.Inputs() }

// OutputPartitions lists the output partitions.
func (w *World) OutputPartitions() []TopicPartition { return w.layout.Outputs() }

// Log returns a partition's log.
func (w *World) Log(tp TopicPartition) *PartitionLog { return w.broker.Log(tp) }

// Short reports whether records have the seed's short names.
func (w *World) Short() bool { return w.layout.Short() }

// Clients lists every client id that ever ran, in Kafka's string order.
func (w *World) Clients() []string { return w.clients }

// Member returns a client's newest process, or nil.
func (w *World) Member(client string) *Member { return w.current[client] }

// Processes lists every process ever started, in start order.
func (w *World) Processes() []*Member { return w.procs }

// InFlight lists the packets on the wire now: sent this tick (or by a
// command since), delivered next tick; copies, as the trace gives them.
func (w *World) InFlight() []*Packet {
	sending := w.env.Sending()
	out := make([]*Packet, len(sending))
	for i, p := range sending {
		out[i] = w.Packets.At(p.ID)
	}
	return out
}

// Drop adds a rule that loses the next matching packet(s).
func (w *World) Drop(r DropRule) { w.env.Drop(r) }

// PendingDrops lists the drop rules not yet used up.
func (w *World) PendingDrops() []DropRule { return w.env.PendingDrops() }

// Step advances the world one tick: deliver last tick's packets, fire due
// timers, let the coordinator finish a join round, let busy members act,
// and account the pause meter. It reports whether a stop event happened.
func (w *World) Step() (stop bool) {
	w.Tick++
	w.trace.BeginTick()
	w.env.BeginTick()
	for _, p := range w.env.Deliverable() {
		p.Delivered = w.Tick
		w.deliver(p)
		w.env.Recycle(p, (*producers)(w))
	}
	w.env.Delivered()
	for w.env.TimerDue() {
		w.fire(w.env.PopTimer())
	}
	w.Group.Tick()
	w.actMembers()
	w.Meter.account(w)
	w.LSOHeldTicks += w.broker.OpenTransactions()
	return w.trace.Stopped()
}

func (w *World) deliver(p *Packet) {
	if p.To == Broker {
		w.brokerReceive(p)
		return
	}
	m := w.procOf(p.To, p.ToInc, p.Proc)
	if m == nil || !m.Alive {
		return // the process is gone: nobody reads the answer
	}
	m.Deliver(p)
}

func (w *World) process(client string, inc int) *Member {
	// Usually the client's current process: incarnations count up per
	// client (newProcess), so it is the only one with that number.
	if m := w.current[client]; m != nil && m.Inc == inc {
		return m
	}
	for i := len(w.procs) - 1; i >= 0; i-- {
		if w.procs[i].Client == client && w.procs[i].Inc == inc {
			return w.procs[i]
		}
	}
	return nil
}

// procOf is process(client, inc), found by its process number proc (plus
// one; 0 when not known) when that is the one: a packet knows the process
// at its member end.
func (w *World) procOf(client string, inc int, proc int32) *Member {
	if m := w.procHint(client, inc, proc); m != nil {
		return m
	}
	return w.process(client, inc)
}

// procHint is the process numbered proc (its index plus one) if that is
// client's incarnation inc, else nil: a number carried is checked before
// it is trusted.
func (w *World) procHint(client string, inc int, proc int32) *Member {
	if i := int(proc) - 1; i >= 0 && i < len(w.procs) {
		if m := w.procs[i]; m.Inc == inc && store.SameStr(m.Client, client) {
			return m
		}
	}
	return nil
}

func (w *World) actMembers() {
	// New wake-ups while acting wait for the next pass; a few passes let a
	// member act on what another did in the same tick without looping forever.
	for pass := 0; pass < 8 && w.env.Woken(); pass++ {
		ms := env.AppendWoken(w.env, w.actBuf[:0], w.procs)
		w.actBuf = ms
		// (client, incarnation) names one process: members act in that
		// order (a total order), not in process-number order.
		w.actOrder(ms)
		for _, m := range ms {
			if m.Alive {
				m.Act()
			}
		}
	}
}

// actOrder sorts ms in (client, incarnation) order, by each process's
// place in that order among all processes (Member.order): set anew, in
// one sort, the first time it is needed after a process started (a join
// or a restart: rare); a tick's list is then usually in order already.
func (w *World) actOrder(ms []*Member) {
	if w.orderStale {
		all := slices.Clone(w.procs)
		slices.SortFunc(all, func(a, b *Member) int {
			if c := strings.Compare(a.Client, b.Client); c != 0 {
				return c
			}
			return a.Inc - b.Inc
		})
		for i, m := range all {
			w.order[m.Proc()] = int32(i)
		}
		w.orderStale = false
	}
	for i := 1; i < len(ms); i++ {
		if w.order[ms[i-1].Proc()] > w.order[ms[i].Proc()] {
			slices.SortFunc(ms, func(a, b *Member) int { return int(w.order[a.Proc()]) - int(w.order[b.Proc()]) })
			return
		}
	}
}

// brokerReceive routes a request to the part of B1 that answers it.
func (w *World) brokerReceive(p *Packet) {
	switch p.Type {
	case FindCoordinator:
		w.env.Reply(p, None, "coordinator B1", nil)
	case JoinGroup, SyncGroup, LeaveGroup, OffsetCommit, OffsetFetch, ConsumerGroupHeartbeat:
		w.Group.Receive(p)
	case Fetch:
		if a := w.broker.Fetch(p); a == nil || a.Lost {
			w.armFetchTimeout(p)
		}
	case Produce:
		if a := w.broker.Produce(p); a.Lost || a.Error == OutOfOrderSequenceNumber {
			w.armRetry(p)
		}
	case InitProducerID, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn:
		w.Txn.Receive(p)
	case TxnOffsetCommit:
		// The producer-epoch fence first (the transaction coordinator
		// answers itself when it fails), then KIP-447's group fence.
		r := p.Body.(*wire.TxnOffsetCommitRequest)
		if w.Txn.ProducerEntry(p, r.TransactionalID, r.PID, r.Epoch) != nil {
			w.Group.ReceiveTxnOffsetCommit(p)
		}
	case WriteTxnMarkers:
		if p.Response {
			w.Txn.MarkersWritten(p)
		} else {
			w.writeMarkers(p)
		}
	}
}

// SideEffect calls the external sink for a processed record (client.Host).
func (w *World) SideEffect(who trace.Label, f wire.Record) {
	if n := w.Sink.inc(f.TP, f.TPI-1, f.Offset); n > 1 {
		w.trace.Eventf(EvSideEffect, who.Client, "external sink called again for %s (%d times): not covered by any transaction", f.ValueIn(w.layout), n)
	}
}

// CountProcessed counts a record processed (client.Host).
func (w *World) CountProcessed() { w.processed++ }

// GroupID is the group every process joins (client.Host).
func (w *World) GroupID() string { return w.Group.ID }

// FetchOutstanding reports whether a process's fetch is held at the
// broker or its answer on the wire (client.Host).
func (w *World) FetchOutstanding(client string, inc int, id int) bool {
	return w.broker.FetchOutstanding(client, inc, id)
}

// consumerMembers counts the members C1..Cn whose own config gives them
// group.protocol=consumer. Only clients named in a per-client setting can
// differ from the defaults, so a world of 100000 members reads n configs
// only when it has that many settings.
func (w *World) consumerMembers(n int) int {
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
func (w *World) startStableConsumerGroup(n int) {
	var ms []*Member
	var starts []coord.StartMember
	for i := 1; i <= n; i++ {
		m := w.newProcess("C" + strconv.Itoa(i))
		m.MemberID = w.env.IssueMemberID(m.Client)
		ms = append(ms, m)
		starts = append(starts, coord.StartMember{MemberID: m.MemberID, ClientID: m.Client, InstanceID: m.Cfg.InstanceID, Inc: m.Inc,
			Topics: m.Topics, RebalanceTimeout: m.Cfg.MaxPollInterval, RemoteAssignor: m.Cfg.RemoteAssignor,
			Classic: !m.Consumer(), Assignor: m.Cfg.Assignor, SessionTimeout: m.Cfg.SessionTimeout})
		w.startProducer(m)
	}
	w.Group.StartConsumer(starts)
	for _, m := range ms {
		m.StartConsumerStable(w.Group.StartMemberStable(m.MemberID), w.Cfg.ConsumerHeartbeatInterval)
	}
	w.trace.ForgetEvents() // the initial state is given, not something that happened
}

// Layout is the world's partitions, numbered, and the names of its records.
func (w *World) Layout() *topo.Layout { return w.layout }

// Trace is the world's trace: its packets, its events and the texts they
// keep (sim/trace), for the trace package's own tests.
func (w *World) Trace() *trace.Trace { return w.trace }

// ShortName is o2 for orders-2 in the default world, else the full name.
func (w *World) ShortName(tp TopicPartition) string { return w.layout.ShortName(tp) }

// ParsePartition reads "orders-2", or "o2" in the default world.
func (w *World) ParsePartition(s string) (TopicPartition, error) { return w.layout.ParsePartition(s) }

// PartitionNames lists every partition by its full name, inputs then outputs.
func (w *World) PartitionNames() []string { return w.layout.PartitionNames() }

// producers is the World as env.Recycle asks it whether a producer still
// holds a Produce request's body (env.ProduceHolder).
type producers World

// HoldsProduce reports whether the producer that sent Produce request q
// still holds its body r (its unacked requests), so that it is not
// recycled.
func (ps *producers) HoldsProduce(q *Packet, r *wire.ProduceRequest) bool {
	w := (*World)(ps)
	m := w.procOf(q.From, q.FromInc, q.Proc)
	return m == nil || m.HoldsProduce(r)
}

// writeMarkers is B1 as a partition leader writing a transaction's COMMIT
// or ABORT markers, and as the group coordinator completing its offsets.
func (w *World) writeMarkers(p *Packet) {
	r := p.Body.(*wire.WriteTxnMarkersRequest)
	w.broker.WriteMarkers(r)
	if r.Offsets {
		w.Group.CompleteTxnOffsets(r.PID, r.Commit)
	}
	w.env.Reply(p, None, "", r)
}

// InvoiceSource is the input record the invoice at offset off of the log
// numbered part was made from (trace.Sources: the trace keeps a produced
// event as the invoice's place).
func (w *World) InvoiceSource(part, off uint64) (TopicPartition, int, bool) {
	return w.broker.InvoiceSource(part, off)
}

// ZombieWrites counts records written to an output partition by a process
// that had lost its place (replaced by a restart, or out of the group)
// when the write landed.
func (w *World) ZombieWrites() int { return w.broker.ZombieWrites }

// FetchWaiting reports whether client's process inc still waits for its
// fetch fetchID (broker.Senders: a fetch held for a process gone, or
// past it, gets no answer).
func (w *World) FetchWaiting(client string, inc int, fetchID int) bool {
	m := w.process(client, inc)
	return m != nil && m.FetchWaiting(fetchID)
}

// Displaced reports whether a producer's process has lost its place: a
// zombie, out of the group, or replaced by a newer process of its client
// (broker.Senders: its writes are counted as a zombie's).
func (w *World) Displaced(client string, inc int, proc int32) bool {
	m := w.procOf(client, inc, proc)
	return m != nil && m.Displaced()
}

// armFetchTimeout sets the request timeout poll reserved for Fetch request
// p, when the fetch may go unanswered: the request or its answer is lost,
// or the broker holds it (a long poll). An answer sent at once is
// delivered the tick after the request was (before the timeout's tick:
// deliveries come before timers in a Step), and once the member has read
// it (or dropped it as stale) it is never fetching that fetch again (only
// poll starts a fetch, with a new number): the timeout would do nothing.
func (w *World) armFetchTimeout(p *Packet) {
	w.env.Push(client.FetchTimeoutTimer(p))
}

// armRetry sets the retry timer sendProduce reserved for Produce request
// p, when its answer will not settle it: the request or its answer is
// lost, or the answer is OUT_OF_ORDER_SEQUENCE_NUMBER (the producer keeps
// the request, onProduceResponse). Any other answer is delivered the tick
// after the request was (before the timer's tick: deliveries come before
// timers in a Step) and removes the request from unacked, so the timer
// would find nothing to resend; so does a process that is gone.
func (w *World) armRetry(p *Packet) {
	w.env.Push(client.ProduceRetryTimer(p))
}
