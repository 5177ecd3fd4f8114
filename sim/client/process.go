package client

import (
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Member is one client process: a consumer and the producer that writes
// its invoices, made of parts as Kafka's clients are. Besides who it is
// (client id, process number, config, alive or not), it owns:
//
//   - its subscription state (subscription, embedded: Kafka's
//     SubscriptionState): the topics, the assignment (Owned), fetch
//     positions, processed and committed offsets, and the assign / revoke
//     / lose changes both group protocols make;
//   - its place in the group: what the group last gave it (MemberID,
//     Generation, Phase) and group, the protocol's own half behind the
//     membership interface (classicMember: ConsumerCoordinator;
//     consumerMember: ConsumerMembershipManager);
//   - loop, the application thread: KafkaConsumer.poll() and the
//     consume-process-produce loop around it;
//   - commits: commitSync, the auto-commit, the OffsetFetch of committed
//     offsets;
//   - prod, the producer (KafkaProducer), with its transaction.
//
// The parts' methods take the process (m) for what they share: sending,
// waking, the trace, and each other.
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
	// StoppedBy names the fatal error that stopped the process ("": none),
	// as the views show it.
	StoppedBy string
	// Ended says how the process ended, as the views show it: "crashed",
	// "closed", "stopped for the restart" ("" while it runs, or when a
	// fatal error, StoppedBy, stopped it). Kept on the process, since a
	// world that keeps a window of its past (history.ms) lets the events
	// that said it go.
	Ended string
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

	loop    pollLoop // the application thread
	commits commits  // committing offsets, and fetching the committed ones
	prod    producer // the producer of the invoices, with its transaction
}

// New starts a process of client (its incarnation inc, its process number
// proc in the world) with config cc, subscribing to topics.
func New(e *env.Env, host Host, client string, inc, proc int, cc ClientConfig, topics []string) *Member {
	m := newProcess(cc)
	m.Client, m.Inc, m.proc, m.env, m.host, m.Cfg, m.Alive = client, inc, proc, e, host, cc, true
	m.Generation, m.loop = -1, pollLoop{crashAfter: -1, leftPollAt: -1, workedAt: -1}
	m.prod, m.Topics = newProducer(cc), append([]string{}, topics...)
	m.useIndex(e.Layout().Input())
	return m
}

// send sends a request (to B1 unless p names another node).
func (m *Member) send(p *wire.Packet) *wire.Packet {
	p.From, p.FromInc, p.Proc = m.Client, m.Inc, int32(m.proc+1)
	if p.To == "" {
		p.To = wire.Broker
	}
	m.env.Send(p)
	return p
}

// Start begins the process: FindCoordinator, then it joins.
func (m *Member) Start() {
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

// Crash stops the process at once; stop makes it a stop event (a crash
// after N records, which every form of run halts at).
func (m *Member) Crash(stop bool) {
	if !m.Alive {
		return
	}
	if stop {
		m.env.Trace().StopEventf(trace.EvCrash, m.Client, "%s crashes", m.Client)
	} else {
		m.env.Trace().Eventf(trace.EvCrash, m.Client, "%s crashes", m.Client)
	}
	m.Ended = "crashed"
	m.Stop()
}

// Stop ends the process without a word (a restart replaces it; Crash,
// close() and a fatal error end here too).
func (m *Member) Stop() {
	// a batch still open dies with the process (the RecordAccumulator's
	// contents are in its memory); the turn's ends send them first
	// (drainLinger), so none is open here but for a stop inside a turn
	m.prod.closeOpen(m)
	m.Alive = false
	m.Phase = PhaseClosed
	m.loop.state = LoopIdle
	m.env.Unwake(m.proc)
	m.host.ProcessStopped(m.Client, m.Inc)
}

// fatal stops the process on an error the application cannot go on from.
func (m *Member) fatal(why string) {
	m.StoppedBy = why
	m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s stops: %s", m.Label(), why)
	m.Stop()
}

// Label names the process in narration ("C2", or "C2 (process 1)" when a
// newer process of C2 exists: a zombie).
func (m *Member) Label() string { return m.who().String() }

// who is the member as the trace names it: its client id, and its process
// number when a newer process of the same client exists.
func (m *Member) who() trace.Label {
	if m.superseded {
		return trace.Label{Client: m.Client, Process: m.Inc}
	}
	return trace.Label{Client: m.Client}
}

// A client process's timers (wire.OwnerClient).
const (
	tmPollTimeout        uint8 = iota // outside poll() since Key (Arg 1: the one standing for the process's latest check, armPollTimer)
	tmOffsetFetchRetry                // OffsetFetch number Key answered to be retried: asks for the partitions still initializing
	tmInitPIDRetry                    // sends InitProducerId again
	tmProduceRetry                    // resends produce Key at attempt Arg
	tmAddPartitionsRetry              // asks AddPartitionsToTxn again
	tmCommitRetry                     // resends commitSync attempt Key
	tmAutoCommit                      // poll() returns empty and is called again at Key
	tmEndTxnRetry                     // sends EndTxn again (Key: 1 = COMMIT)
	tmJoinTimeout                     // JoinGroup number Key unanswered
	tmSyncTimeout                     // SyncGroup number Key unanswered
	tmFetchTimeout                    // Fetch Key unanswered
	tmOffsetFetchTimeout              // OffsetFetch number Key unanswered: asks for the partitions still initializing
	tmEndTxnTimeout                   // EndTxn number Key unanswered (Arg 1: COMMIT)
	tmHeartbeat                       // ConsumerGroupHeartbeat timer number Key (Arg 1: request timeout)
	tmRevokeCommit                    // auto-commit before reconciling attempt Key (Arg 1: request timeout, 0: retry)
	tmAutoCommitTimeout               // consumer protocol: auto-commit number Key unanswered
	tmCoordCallTimeout                // a coordinator call (coordcall.go) of kind Arg, number Key, unanswered
)

// Fire is one of the process's timers firing: each kind goes to the part
// that set it.
func (m *Member) Fire(t wire.Timer) {
	switch t.Kind {
	case tmPollTimeout:
		m.loop.firePollTimer(m, t)
	case tmFetchTimeout:
		m.loop.fetchTimeout(m, t.Key)
	case tmOffsetFetchRetry, tmOffsetFetchTimeout, tmCommitRetry, tmAutoCommit, tmAutoCommitTimeout:
		m.commits.fire(m, t)
	case tmInitPIDRetry, tmProduceRetry, tmAddPartitionsRetry, tmEndTxnTimeout, tmEndTxnRetry, tmCoordCallTimeout:
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
