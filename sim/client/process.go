package client

import (
	"sort"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Phase is where a member stands in the group protocol, as the client sees it.
type Phase int

const (
	PhaseFinding         Phase = iota // FindCoordinator in flight
	PhaseJoining                      // JoinGroup sent, waiting for the answer
	PhaseSyncing                      // SyncGroup sent
	PhaseFetchingOffsets              // OffsetFetch for new partitions in flight
	PhaseStable                       // member of the generation, with its assignment
	PhaseOut                          // not in the group: left after a poll timeout or found itself removed
	PhaseClosed                       // closed or crashed
)

func (p Phase) String() string {
	return [...]string{"FindingCoordinator", "Joining", "Syncing", "FetchingOffsets", "Stable", "OutOfGroup", "Closed"}[p]
}

// Member is one client process: a consumer with its heartbeat thread, and
// the producer that writes its invoices.
type Member struct {
	Client string // C2
	Inc    int    // which process of this client (restart starts the next)
	proc   int    // process number: its index in World.procs
	// superseded: a newer process of the same client exists (World.current
	// holds that one), so this one is a zombie or dead.
	superseded bool
	env        *env.Env // the world's environment
	host       Host     // what it tells or asks the World other than by packets
	Cfg        ClientConfig
	Alive      bool
	// Zombie marks a process that runs on after its client was replaced: the
	// old process of a restart caught in a slow record, or a fenced static
	// instance. It finishes what it has in hand and stops at its next poll.
	Zombie bool

	subscription // the topics, the assignment, positions and offsets

	// The group protocol, client side: the member id and the generation
	// (classic) or member epoch (consumer) the group last gave, where the
	// member stands, and the protocol's own half.
	MemberID   string
	Generation int
	Phase      Phase
	group      membership

	loop pollLoop // the application thread

	commits commits // committing offsets, and fetching the committed ones

	prod producer // the producer of the invoices, with its transaction
}

// GroupProtocol is the group protocol this process speaks.
func (m *Member) GroupProtocol() wire.GroupProtocol { return m.group.protocol() }

// ConsumerState is the client's member state under the consumer protocol
// (JOINING, RECONCILING, ACKNOWLEDGING, STABLE, STALE, ...), "" under classic.
func (m *Member) ConsumerState() string {
	if c, ok := m.group.(*consumerMember); ok {
		return c.state
	}
	return ""
}

// New starts a process of client (its incarnation inc, its process number
// proc in the world) with config cc, subscribing to topics.
func New(e *env.Env, host Host, client string, inc, proc int, cc ClientConfig, topics []string) *Member {
	m := newMember(client, inc, cc, topics)
	m.env, m.host, m.proc = e, host, proc
	m.useIndex(e.Layout().Input())
	return m
}

func newMember(client string, inc int, cc ClientConfig, topics []string) *Member {
	return &Member{
		Client: client, Inc: inc, Cfg: cc, Alive: true,
		Generation: -1, loop: pollLoop{crashAfter: -1, leftPollAt: -1, workedAt: -1},
		prod: newProducer(cc), group: newMembership(cc),
		subscription: subscription{Topics: append([]string{}, topics...)},
	}
}

// Static reports whether the member has a group.instance.id.
func (m *Member) Static() bool { return m.Cfg.InstanceID != "" }

// Loop reports the application thread's state.
func (m *Member) LoopState() Loop { return m.loop.state }

// Batch lists the records of the batch in hand and how far processing got.
func (m *Member) Batch() (records []string, done int) {
	for _, f := range m.loop.batch {
		records = append(records, f.ValueIn(m.env.Layout()))
	}
	return records, m.loop.batchIdx
}

// Processing reports whether the member has a record in hand, and whether it is slow.
func (m *Member) Processing() (bool, bool) { return m.loop.state == LoopProcessing, m.loop.slowNow }

// InGroup reports whether the member believes it belongs to the group.
func (m *Member) InGroup() bool {
	return m.Alive && m.MemberID != "" && m.Phase != PhaseOut && m.Phase != PhaseClosed
}

// Settled reports whether the member holds its final assignment: stable,
// nothing to revoke, no rejoin pending, offsets fetched.
func (m *Member) Settled() bool { return m.group.settled(m) }

func (m *Member) send(p *wire.Packet) *wire.Packet {
	p.From, p.FromInc, p.Proc = m.Client, m.Inc, int32(m.proc+1)
	if p.To == "" {
		p.To = wire.Broker
	}
	m.env.Send(p)
	return p
}

// start begins a new process: find the coordinator, then join.
func (m *Member) start() {
	m.Phase = PhaseFinding
	m.commits.nextAuto = m.env.Now() + m.Cfg.AutoCommitInterval
	m.send(&wire.Packet{Type: wire.FindCoordinator, Summary: "group " + m.host.GroupID()})
	if m.prod.mode != ProducerPlain {
		m.prod.initProducerID(m)
	}
	m.env.Trace().Eventf(trace.EvStarted, m.Client, "%s started (process %d)", m.Client, m.Inc)
}

// receive handles an answer (or a notification) from B1.
func (m *Member) receive(p *wire.Packet) {
	switch p.Type {
	case wire.FindCoordinator:
		if m.Phase == PhaseFinding {
			m.group.join(m)
		}
	case wire.OffsetFetch:
		m.commits.onOffsetFetchResponse(m, p)
	case wire.OffsetCommit:
		m.commits.onCommitResponse(m, p)
	case wire.Fetch:
		m.loop.onFetchResponse(m, p)
	case wire.Produce:
		m.prod.onProduceResponse(m, p)
	case wire.InitProducerID:
		m.prod.onInitPIDResponse(m, p)
	case wire.AddPartitionsToTxn:
		m.prod.onAddPartitionsResponse(m, p)
	case wire.AddOffsetsToTxn:
		m.prod.onAddOffsetsResponse(m, p)
	case wire.TxnOffsetCommit:
		m.prod.onTxnOffsetCommitResponse(m, p)
	case wire.EndTxn:
		m.prod.onEndTxnResponse(m, p)
	default:
		m.group.receive(m, p)
	}
}

// fetchable lists owned, positioned partitions, starting after the last
// partition the previous poll read from (the fetcher's rotation). The list
// is gathered in the world's scratch buffer and copied once, rotated, at
// its exact size (the Fetch request keeps it).
func (m *Member) fetchable() []wire.TopicPartition {
	tps, _ := m.fetchableInto(m.env.PartitionScratch(), nil, nil)
	return tps
}

// Crash stops the process at once (or, with after, it has just finished the
// records it was allowed).
func (m *Member) crash(stop bool) {
	if !m.Alive {
		return
	}
	if stop {
		m.env.Trace().StopEventf(trace.EvCrash, m.Client, "%s crashes", m.Client)
	} else {
		m.env.Trace().Eventf(trace.EvCrash, m.Client, "%s crashes", m.Client)
	}
	m.die()
}

func (m *Member) die() {
	m.Alive = false
	m.Phase = PhaseClosed
	m.loop.state = LoopIdle
	m.env.Unwake(m.proc)
	m.host.ProcessStopped(m.Client, m.Inc)
}

func (m *Member) fatal(why string) {
	m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s stops: %s", m.label(), why)
	m.die()
}

// label names the member in narration: the client id, with the process
// number when a newer process of the same client exists (a zombie).
func (m *Member) label() string { return m.who().String() }

// who is the member as the trace names it: its client id, and its process
// number when a newer process of the same client exists.
func (m *Member) who() trace.Label {
	if m.superseded {
		return trace.Label{Client: m.Client, Process: m.Inc}
	}
	return trace.Label{Client: m.Client}
}

// epochWord names what commits carry: the generation (classic) or the
// member epoch (consumer: memberEpochs).
func epochWord(memberEpochs bool) string {
	if memberEpochs {
		return "epoch"
	}
	return "gen"
}

// memberBufs are the arrays World.Clone copies its members' small slices
// into, one per kind, rather than one allocation per slice (cutInto).
type memberBufs struct {
	ints      []partInt
	batch     []wire.Record
	seqs      []int
	unacked   []*wire.ProduceRequest
	classics  []classicMember  // room counted: the pointers handed out stay valid
	consumers []consumerMember // the same
}

// classic is the next classicMember of the array.
func (b *memberBufs) classic() *classicMember {
	b.classics = b.classics[:len(b.classics)+1]
	return &b.classics[len(b.classics)-1]
}

// consumer is the next consumerMember of the array.
func (b *memberBufs) consumer() *consumerMember {
	b.consumers = b.consumers[:len(b.consumers)+1]
	return &b.consumers[len(b.consumers)-1]
}

func (m *Member) cloneInto(n *Member, bufs *memberBufs) {
	*n = *m
	// Owned is replaced, never changed in place (commits share it too):
	// shared, and with it the slots computed for it (ownedSlots). So is
	// Topics (a JoinGroup carries it; a restart hands it on). The batch's
	// array is reused for the next batch: copied.
	n.pendingRevocation, n.loop.batch = store.Copy(m.pendingRevocation), store.CutInto(&bufs.batch, m.loop.batch)
	n.positions, n.processed, n.committed = m.positions.cloneIn(&bufs.ints), m.processed.cloneIn(&bufs.ints), m.committed.cloneIn(&bufs.ints)
	n.loop.closeOffs = store.CopyMap(m.loop.closeOffs) // pendingCommit is never changed in place: shared
	n.prod.seq = store.CutInto(&bufs.seqs, m.prod.seq)
	n.prod.unacked = store.CutInto(&bufs.unacked, m.prod.unacked) // the requests themselves are never changed
	n.prod.queued = store.Copy(m.prod.queued)
	n.prod.txn.partitions = store.CopyMap(m.prod.txn.partitions)
	n.prod.txn.offs = store.CopyMap(m.prod.txn.offs)
}

// A client process's timers (wire.OwnerClient).
const (
	tmPollTimeout        uint8 = iota // outside poll() since Key (Arg 1: the one standing for the process's latest check, armPollTimer)
	tmOffsetFetchRetry                // asks for Partitions again
	tmInitPIDRetry                    // sends InitProducerId again
	tmProduceRetry                    // resends produce Key at attempt Arg
	tmAddPartitionsRetry              // asks AddPartitionsToTxn again
	tmCommitRetry                     // resends commitSync attempt Key
	tmAutoCommit                      // poll() returns empty and is called again at Key
	tmEndTxnRetry                     // sends EndTxn again (Key: 1 = COMMIT)
	tmJoinTimeout                     // JoinGroup number Key unanswered
	tmSyncTimeout                     // SyncGroup number Key unanswered
	tmFetchTimeout                    // Fetch Key unanswered
	tmOffsetFetchTimeout              // OffsetFetch number Key unanswered (Partitions)
	tmEndTxnTimeout                   // EndTxn number Key unanswered (Arg 1: COMMIT)
	tmHeartbeat                       // ConsumerGroupHeartbeat timer number Key (Arg 1: request timeout)
	tmRevokeCommit                    // auto-commit before revocation attempt Key (Arg 1: request timeout, 0: retry)
)

// fire is one of this process's timers firing.
func (m *Member) fire(t wire.Timer) {
	switch t.Kind {
	case tmPollTimeout:
		m.loop.firePollTimer(m, t)
	case tmFetchTimeout:
		m.loop.fetchTimeout(m, t.Key)
	case tmOffsetFetchRetry, tmOffsetFetchTimeout, tmCommitRetry, tmAutoCommit:
		m.commits.fire(m, t)
	case tmInitPIDRetry, tmProduceRetry, tmAddPartitionsRetry, tmEndTxnTimeout, tmEndTxnRetry:
		m.prod.fire(m, t)
	default:
		m.group.fire(m, t) // the group protocol's own timers
	}
}

// wakeUp lets a member act again this tick (an answer arrived, the loop moved on).
func (m *Member) wakeUp() {
	if m.Alive {
		m.env.Wake(m.proc)
	}
}

// wakeNext lets a member act next tick (it is in the middle of a record).
func (m *Member) wakeNext() {
	if m.Alive {
		m.env.WakeNext(m.proc)
	}
}

func planSummary(layout *topo.Layout, plan assign.Assignment, members []assign.Member) string {
	ids := make([]string, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.MemberID)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = wire.ClientOf(id) + " " + layout.PartList(plan[id])
	}
	return strings.Join(parts, " · ")
}
