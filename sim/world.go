package sim

import (
	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/coord"
	"github.com/kgrepl/kgrepl/sim/txncoord"

	"github.com/kgrepl/kgrepl/sim/env"
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
	// Cfg is the world's settings as set: in real time, its durations are
	// milliseconds; the nodes run with them in ticks (Config.Engine and
	// coordCfg).
	Cfg  Config
	Topo Topology
	// coordCfg is Cfg's broker group settings in ticks, which the group
	// coordinator reads (Set keeps it current).
	coordCfg coord.Config

	// reuser is the Reuser that made this world, nil for any other: a copy
	// of this world (a checkpoint of an explorer branch, say) may share its
	// storage, so copying it detaches the Reuser from it (World.clone).
	reuser *Reuser

	// broker is B1 as the leader of every partition: the logs (sim/broker).
	broker *broker.Broker
	// logsView reads them for the views and checks (logs.go).
	logsView
	// layout numbers the partitions and spells input record names;
	// read-only, shared by the nodes and by clones.
	layout *topo.Layout

	Group *Group
	Txn   *txncoord.Coordinator

	// processTable is every process started, each client's newest, and
	// the order they act in.
	processTable
	// host is what the processes see of the world beyond their
	// environment; sources what the trace reads of the broker's logs.
	host    clientHost
	sources invoiceSources

	// env is the nodes' environment: the wire, the timers, the free
	// lists, and which processes act this tick (sim/env).
	env *env.Env
	// trace keeps every packet and every event (sim/trace); Packets and
	// Events are its two logs, for the views.
	trace   *trace.Trace
	Packets *trace.PacketLog // the whole trace, in send order (p.ID is the index)
	Events  *trace.EventLog
	scratch

	// steadyTraffic is the steady upstream producers (traffic.go).
	steadyTraffic

	// meters are the pause meter and the unavailability, accounted each
	// tick (metrics.go).
	meters
	// deploys are the graceful restarts and the roll under way, and the
	// rolls done (deploy.go).
	deploys deploys
	// window is how much of its past the world keeps in detail, and the
	// letting go of the rest (history.go).
	window
	// tallies count what the members' work did (sink.go).
	tallies
	// Mutations are deliberate engine bugs, off unless a test turns them on
	// to prove that a checker (the invariants, the explorer) catches them.
	Mutations Mutations
}

// scratch is the tick loop's buffers, reused from tick to tick; never
// shared with a copy (a copy gets a finished copy's, or none) and never
// kept.
type scratch struct {
	actBuf []*Member
	tpBuf  []TopicPartition
	// pausedIdx is the partitions paused now, as input indexes
	// (pausedIndexes); pausedBuf spells them when the pause meter's
	// entry needs them (pausedSeen.merge).
	pausedIdx []int32
	pausedBuf []TopicPartition
	// pausedGen names pausedIdx's contents (nextGen; 0: none yet), which
	// pausedIndexes computed from the consumed set named pausedFrom and
	// the subscribed input topics pausedSpans: while both stay, so does
	// the list, and the pause meter's merge and the unavailability
	// meter's classification, which saw it already, need no second look
	// at its partitions.
	pausedGen, pausedFrom uint64
	pausedSpans           []topo.Span
	// pausedSeen is the pause entry's partitions as input indexes
	// (PauseMeter.account's merge).
	pausedSeen pausedSeen
	markBuf    []bool
	spanBuf    []topo.Span
	// consumed is the partitions the group's processes fetch, kept from
	// tick to tick (consumed.go): a copy starts with an empty one.
	consumed consumedSet
	// delivered is what Delivery read of the output logs before, to read
	// on from (deliveryCache); a copy shares its original's (share).
	delivered deliveryCache
}

// New makes a world at tick 0.
func New(t Topology, cfg Config) (*World, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if err := checkStartIDs(&cfg, memberClients(t.Members)); err != nil {
		return nil, err
	}
	w := &World{
		Cfg: cfg.clone(), Topo: t, layout: topo.New(t),
		processTable: processTable{current: map[string]*Member{}},
	}
	w.trace = trace.New(w.layout, &w.Tick, &w.sources)
	w.window.ticks = w.Cfg.HistoryWindow()
	w.trace.SetHistory(w.window.ticks)
	w.Packets, w.Events = &w.trace.Packets, &w.trace.Events
	w.env = env.New(&w.Tick, w.trace, w.layout)
	w.Sink.names = w.layout
	w.coordCfg = w.Cfg.EngineCoord()
	w.Group = coord.New(t.Group, w.env, &w.coordCfg, &w.Mutations, &w.processTable)
	w.Txn = txncoord.New(w.env)
	w.broker = broker.New(w.env, w.layout, cfg.RecordsPerPartition, &w.processTable, w.Txn)
	w.connect()
	w.Meter.init()
	if t.Members > 0 {
		if err := startStableGroup(w, t.Members); err != nil {
			return nil, err
		}
	}
	w.Unavail.init(w)
	return w, nil
}

// connect hands the nodes' views of the world (the processes' host, the
// trace's sources) and the world's parts (its logs' view, its window of
// history, its steady traffic) the world's own clock and nodes: at New and
// in a copy.
func (w *World) connect() {
	w.host = clientHost{group: w.Group, broker: w.broker, trace: w.trace, sink: &w.Sink, processed: &w.processed}
	w.sources = invoiceSources{broker: w.broker}
	w.logsView = logsView{layout: w.layout, broker: w.broker, group: w.Group}
	h := &w.window
	h.tick, h.cfg, h.trace, h.broker, h.group = &w.Tick, &w.Cfg, w.trace, w.broker, w.Group
	s := &w.steadyTraffic
	s.tick, s.layout, s.broker, s.window = &w.Tick, w.layout, w.broker, &w.window
}

// newProcess starts a member process for a client (not yet in the group).
func (w *World) newProcess(id string) *Member {
	cc := w.Cfg.Engine(id)
	inc := 1
	if old := w.current[id]; old != nil {
		inc = old.Inc + 1
		old.Supersede()
		w.touch(old)
	}
	m := client.New(w.env, &w.host, id, inc, len(w.procs), cc, w.layout.InputTopics())
	w.add(m)
	w.touch(m)
	return m
}

// touch marks m for the consumed set's next look (consumed.go): the World
// ran it (a packet, a timer, a turn) or acted on it (a command, a
// deploy). Every place that may change what a process fetches marks it.
func (w *World) touch(m *Member) { w.scratch.consumed.touch(m.Proc()) }

// touchAll marks every process: a command that acts on many.
func (w *World) touchAll() { w.scratch.consumed.touchAll() }

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
// and account the pause meter and the unavailability. It reports whether a stop event happened.
func (w *World) Step() (stop bool) {
	w.Tick++
	w.trace.BeginTick()
	w.env.BeginTick()
	for _, p := range w.env.Deliverable() {
		p.Delivered = w.Tick
		w.deliver(p)
		w.env.Recycle(p, &w.processTable)
	}
	w.env.Delivered()
	appended := w.produceSteady()
	for w.env.TimerDue() {
		w.fire(w.env.PopTimer())
	}
	w.Group.Tick()
	w.actMembers()
	w.scratch.consumed.inMeters = true // the meters below look once (consumed.go)
	paused, counted := w.Meter.account(w)
	w.Unavail.account(w, paused, counted, appended)
	w.scratch.consumed.inMeters, w.scratch.consumed.fresh = false, false
	w.LSOHeldTicks += w.broker.OpenTransactions()
	// Between this tick and the next, as a user's input would be.
	w.deploys.advance(w)
	if w.window.ticks > 0 {
		w.forgetHistory()
	}
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
	w.touch(m)
	m.Deliver(p)
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
				w.touch(m)
				m.Act()
			}
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
			// The request timeout poll reserved for the fetch, when it may
			// go unanswered: the request or its answer is lost, or the
			// broker holds it (a long poll). An answer sent at once is
			// delivered the tick after the request was (before the
			// timeout's tick: deliveries come before timers in a Step),
			// and once the member has read it (or dropped it as stale) it
			// never fetches that fetch again (only poll starts a fetch,
			// with a new number): the timeout would do nothing.
			w.env.Push(client.FetchTimeoutTimer(p))
		}
	case Produce:
		if a := w.broker.Produce(p); a.Lost || a.Error == OutOfOrderSequenceNumber {
			// The retry timer sendProduce reserved, when the answer will
			// not settle the request: it or its answer is lost, or the
			// answer is OUT_OF_ORDER_SEQUENCE_NUMBER (the producer keeps
			// the request, onProduceResponse). Any other answer arrives
			// before the timer's tick and removes the request from the
			// producer's unacked requests, so the timer would find nothing
			// to resend; so does a process that is gone.
			w.env.Push(client.ProduceRetryTimer(p))
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

// Layout is the world's partitions, numbered, and the names of its records.
func (w *World) Layout() *topo.Layout { return w.layout }

// Trace is the world's trace: its packets, its events and the texts they
// keep (sim/trace), for the trace package's own tests.
func (w *World) Trace() *trace.Trace { return w.trace }

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
