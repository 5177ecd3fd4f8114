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

	// Requests counted so that a timeout knows whether its request is
	// still the one outstanding (request.timeout.ms).
	offsetFetchSeq, endTxnSeq int

	loop pollLoop // the application thread

	// The commits (until they have a part of their own).
	nextAuto      int
	autoArmed     int // the nextAuto a timer is set for
	commitSeq     int // numbers commitSync attempts, so a stale retry timer does nothing
	pendingCommit commitList
	pendingFetch  bool // an OffsetFetch to retry after UNSTABLE_OFFSET_COMMIT

	prod producer
	txn  clientTxn
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
	m.nextAuto = m.env.Now() + m.Cfg.AutoCommitInterval
	m.send(&wire.Packet{Type: wire.FindCoordinator, Summary: "group " + m.host.GroupID()})
	if m.prod.mode != ProducerPlain {
		m.initProducer()
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
		m.onOffsetFetchResponse(p)
	case wire.OffsetCommit:
		m.onCommitResponse(p)
	case wire.Fetch:
		m.loop.onFetchResponse(m, p)
	case wire.Produce:
		m.onProduceResponse(p)
	case wire.InitProducerID:
		m.onInitPIDResponse(p)
	case wire.AddPartitionsToTxn:
		m.onAddPartitionsResponse(p)
	case wire.AddOffsetsToTxn:
		m.onAddOffsetsResponse(p)
	case wire.TxnOffsetCommit:
		m.onTxnOffsetCommitResponse(p)
	case wire.EndTxn:
		m.onEndTxnResponse(p)
	default:
		m.group.receive(m, p)
	}
}

func (m *Member) sendOffsetFetch(tps []wire.TopicPartition) {
	m.pendingFetch = false
	r := &wire.OffsetFetchRequest{Partitions: append([]wire.TopicPartition{}, tps...)}
	if m.group.memberEpochs() {
		// The AsyncKafkaConsumer's OffsetFetch carries the member id and
		// epoch (CommitRequestManager.OffsetFetchRequestState, v9+).
		r.MemberID, r.MemberEpoch, r.HasMember = m.MemberID, m.Generation, true
	}
	m.send(&wire.Packet{Type: wire.OffsetFetch, Summary: m.env.Layout().PartList(tps), Body: r})
	m.offsetFetchSeq++
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmOffsetFetchTimeout, Client: m.Client, Inc: m.Inc, Key: m.offsetFetchSeq, Partitions: append([]wire.TopicPartition{}, tps...)})
}

func (m *Member) onOffsetFetchResponse(p *wire.Packet) {
	if m.Phase != PhaseFetchingOffsets {
		return
	}
	r := p.Body.(*wire.OffsetFetchResponse)
	if p.Error == wire.UnstableOffsetCommit {
		// A transaction is still committing offsets for one of these: ask again.
		m.pendingFetch = true
		m.env.Trace().Eventf(trace.EvUnstableOffset, m.Client, "%s: OffsetFetch answered UNSTABLE_OFFSET_COMMIT, asking again in %d", m.Client, m.Cfg.RetryBackoff)
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RetryBackoff, Kind: tmOffsetFetchRetry, Client: m.Client, Inc: m.Inc, Partitions: r.Partitions})
		return
	}
	if p.Error == wire.StaleMemberEpoch || p.Error == wire.UnknownMemberID {
		// CommitRequestManager.OffsetFetchRequestState fails the fetch
		// without a retry; OffsetsRequestManager keeps the error for the
		// next poll() to throw (cachedUpdatePositionsException), and the
		// partitions, still initializing, are fetched again after that.
		// kgrepl asks again after the retry backoff (ConsumerRetryBackoff), by
		// when the member normally knows its new epoch from its heartbeat.
		m.pendingFetch = true
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: OffsetFetch answered %s, asking again", m.label(), p.Error)
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + ConsumerRetryBackoff, Kind: tmOffsetFetchRetry, Client: m.Client, Inc: m.Inc, Partitions: r.Partitions})
		return
	}
	for i, tp := range r.Partitions {
		off := r.Offsets[i]
		if off < 0 {
			off = 0 // auto.offset.reset=earliest
		}
		if !m.owns(tp) {
			continue
		}
		m.positions.set(tp, off)
		m.processed.set(tp, off)
		m.committed.set(tp, r.Offsets[i])
	}
	m.Phase = PhaseStable
	// A long poll already waiting at the broker does not name the new
	// partitions: ask again with them (the fetcher adds them next round).
	m.loop.abandonFetch()
}

// maybeAutoCommit is the auto-commit inside poll(): when the interval has
// passed, commit the positions of every positioned partition (async),
// changed or not, as ConsumerCoordinator.maybeAutoCommitOffsetsAsync does
// with subscriptions.allConsumed(); with nothing positioned no request goes
// out (sendOffsetCommitRequest returns at once on empty offsets). A member
// waiting in a long poll wakes for the auto-commit deadline
// (ConsumerCoordinator.timeToNextPoll), so a timer stands for that.
func (m *Member) maybeAutoCommit() {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional || !m.InGroup() || m.group.rebalancing(m) {
		return
	}
	if m.env.Now() >= m.nextAuto {
		req := m.env.NewCommitRequest()
		l := m.fetchPositionList(req.Offsets)
		if req.Partitions, req.Slots, req.Offsets = l.tps, l.slots, l.offs; len(req.Partitions) > 0 {
			req.Auto = wire.AutoInterval
			m.sendCommitReq(req)
		} else {
			m.env.UnuseCommitRequest(req)
		}
		m.nextAuto = m.env.Now() + m.Cfg.AutoCommitInterval
	}
	if m.autoArmed != m.nextAuto && m.anyPositioned() {
		m.autoArmed = m.nextAuto
		m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.nextAuto, Kind: tmAutoCommit, Client: m.Client, Inc: m.Inc, Key: m.nextAuto})
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

// commitPositions is what a commit on revocation or close commits: the
// processed positions for commit-after, the fetch positions for auto.
func (m *Member) commitPositions() map[wire.TopicPartition]int {
	if m.Cfg.Commit == CommitAuto {
		return m.fetchPositions()
	}
	return m.processedPositions()
}

func (m *Member) commitNeeded(offs map[wire.TopicPartition]int) bool {
	if m.Cfg.Commit == CommitBefore || m.prod.mode == ProducerTransactional {
		return false
	}
	for tp, o := range offs {
		if c, ok := m.committed.get(tp); !ok || c != o {
			return true
		}
	}
	return false
}

// commitSync sends an OffsetCommit of offs (kept in pendingCommit) and
// blocks the loop until it is answered. An attempt with no answer by the
// round trip plus retry.backoff.ms is sent again (the coordinator applies
// it idempotently).
func (m *Member) commitSync(offs commitList, then cont) {
	if len(offs.tps) == 0 {
		m.loop.resume(m, then)
		return
	}
	m.loop.state = LoopCommitting
	m.loop.afterCommit = then
	m.pendingCommit = offs
	m.sendSyncCommit()
}

// commitRefusedLocally is ConsumerCoordinator.sendOffsetCommitRequest
// finding no stable generation (AbstractCoordinator.generationIfStable is
// null): the commit fails in the client and no request goes out. During
// the member's own rebalance it is RebalanceInProgressException; after the
// generation was reset (AbstractCoordinator.maybeLeaveGroup ->
// resetGenerationOnLeaveGroup on a poll timeout, or
// resetGenerationOnResponseError after UNKNOWN_MEMBER_ID or
// ILLEGAL_GENERATION) it is CommitFailedException. It reports whether the
// commit was refused (the loop has then moved on).
func (m *Member) commitRefusedLocally(then cont) bool {
	var why string
	switch {
	case m.group.rebalancing(m):
		why = "commitSync during its own rebalance: RebalanceInProgressException, nothing sent"
	case m.Phase == PhaseOut || m.group.generationReset():
		why = "commitSync while not part of an active group (its generation was reset): CommitFailedException, nothing sent"
	default:
		return false
	}
	m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: %s", m.label(), why)
	m.loop.afterCommit = then
	m.pendingCommit = commitList{}
	m.commitSeq++ // no retry
	m.loop.commitThrew(m)
	then, m.loop.afterCommit = m.loop.afterCommit, contNone
	m.loop.resume(m, then)
	return true
}

func (m *Member) sendSyncCommit() {
	if m.commitRefusedLocally(m.loop.afterCommit) {
		return
	}
	m.commitSeq++
	m.sendCommitList(m.pendingCommit, true, m.syncAutoCommit())
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + 2 + m.Cfg.RetryBackoff, Kind: tmCommitRetry, Client: m.Client, Inc: m.Inc, Key: m.commitSeq})
}

// commitRetry resends a commitSync that got no answer.
func (m *Member) commitRetry(seq int) {
	if m.Alive && m.loop.state == LoopCommitting && m.commitSeq == seq {
		m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to OffsetCommit, sending it again", m.label())
		m.sendSyncCommit()
	}
}

// sendCommitList sends an OffsetCommit of l; the request keeps its
// partitions and slots, and copies the offsets into its own array (from
// the free list).
func (m *Member) sendCommitList(l commitList, sync bool, auto wire.AutoCommit) {
	req := m.env.NewCommitRequest()
	req.Sync, req.Auto, req.Partitions, req.Slots = sync, auto, l.tps, l.slots
	req.Offsets = append(req.Offsets, l.offs...)
	m.sendCommitReq(req)
}

// sendCommitReq fills in the member's side of an OffsetCommit whose
// partitions (in partition order), slots (hints, or nil) and offsets are
// set, and sends it; the request keeps its slices.
func (m *Member) sendCommitReq(req *wire.OffsetCommitRequest) {
	req.MemberID, req.Generation, req.InstanceID = m.MemberID, m.Generation, m.Cfg.InstanceID
	// "o0@3 o1@5, gen 2, C1-1": every commit writes it
	text := m.env.Trace().CommitRequest(req.Partitions, req.Slots, req.Offsets, m.group.memberEpochs(), m.Generation, wire.OrDash(m.MemberID))
	p := m.env.Packet()
	p.Type, p.Text, p.Body = wire.OffsetCommit, text, req
	m.send(p)
}

func (m *Member) onCommitResponse(p *wire.Packet) {
	r := p.Body.(*wire.OffsetCommitResponse)
	if p.Error == wire.None {
		at := 0
		for i, tp := range r.Partitions {
			m.committed.setSlot(tp, m.committed.slotOf(tp, topo.SlotAt(r.Slots, i)), r.Offsets[i], &at)
		}
	}
	req := p.Req.Body.(*wire.OffsetCommitRequest)
	if req.BeforeRevoke {
		m.group.receive(m, p) // the consumer protocol's commit before revoking
		return
	}
	if p.Error != wire.None {
		// Taken before requestFailed resets the generation: the response
		// handler compares the generation it sent with the member's at the
		// time the answer arrives.
		unchanged := m.sentInGeneration(req)
		what, thrown := m.commitRefusal(req.Auto, p.Error, unchanged)
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: %s", m.label(), what)
		m.group.onCommitRefused(m, p.Error, unchanged)
		if thrown {
			m.loop.commitThrew(m)
		}
	}
	if r.Sync && m.loop.state == LoopCommitting {
		then := m.loop.afterCommit
		m.loop.afterCommit, m.pendingCommit = contNone, commitList{}
		m.commitSeq++ // no retry of an answered commit
		m.loop.resume(m, then)
	}
}

// syncAutoCommit: a blocking commit under auto-commit is the client's own
// (onJoinPrepare before a rejoin, or close()), not the application's.
func (m *Member) syncAutoCommit() wire.AutoCommit {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional {
		return wire.AutoNone
	}
	switch m.loop.afterCommit {
	case contIdle:
		return wire.AutoRejoin
	case contCloseDone:
		return wire.AutoClose
	}
	return wire.AutoNone
}

// commitRefusal says what the client does with an OffsetCommit the
// coordinator refused with code (auto says which commit it was; unchanged
// is sentInGeneration), and whether the application sees an exception. Only the application's commitSync throws. The client's own
// auto-commits log the failure and go on: ConsumerCoordinator's
// autoCommitOffsetsAsync callback ("Asynchronous auto-commit of offsets ...
// failed", a warning; the consumer protocol's CommitRequestManager
// autoCommitCallback alike), onJoinPrepare ("... Will continue to join
// group", an error) and maybeAutoCommitOffsetsSync in close() ("consistent
// with async auto-commit failures, we do not propagate the exception"; the
// consumer protocol's AsyncKafkaConsumer close alike). Either way the
// response handler has already reset the generation or asked for a rejoin
// (requestFailed). kgrepl's errors here are all non-retriable, so no
// auto-commit is retried after the backoff. kgrepl has no application
// commitAsync (whose callback gets the same exceptions commitSync throws).
//
// One refusal of an asynchronous auto-commit reaches the application: a
// classic client fenced by FENCED_INSTANCE_ID in the generation it sent
// (ConsumerCoordinator.doCommitOffsetsAsync sets asyncCommitFenced, and
// the next poll() throws FencedInstanceIdException from
// invokeCompletedOffsetCommitCallbacks). The membership says which
// (commitException).
func (m *Member) commitRefusal(auto wire.AutoCommit, code wire.ErrorCode, unchanged bool) (string, bool) {
	sync, async := m.group.commitException(m, code, unchanged)
	if (auto == wire.AutoInterval || auto == wire.AutoRejoin) && async != "" {
		return "asynchronous auto-commit refused with " + code.String() + ": the next poll() throws " + async, false
	}
	switch auto {
	case wire.AutoInterval:
		return "asynchronous auto-commit refused with " + code.String() + ": logged as a warning, nothing thrown", false
	case wire.AutoRejoin:
		return "auto-commit before rejoining refused with " + code.String() + ": logged, the rejoin goes on", false
	case wire.AutoClose:
		return "auto-commit in close() refused with " + code.String() + ": logged as a warning, close() goes on", false
	}
	return "OffsetCommit refused with " + code.String() + ": " + sync, true
}

// sentInGeneration: the member's generation and member id are still the
// ones the commit carried (CoordinatorResponseHandler.generationUnchanged).
func (m *Member) sentInGeneration(req *wire.OffsetCommitRequest) bool {
	return req.Generation == m.Generation && req.MemberID == m.MemberID
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
// member epoch (consumer).
func (m *Member) epochWord() string {
	if m.group.memberEpochs() {
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
	n.txn.partitions = store.CopyMap(m.txn.partitions)
	n.txn.offs = store.CopyMap(m.txn.offs)
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
	case tmOffsetFetchRetry:
		if m.Phase == PhaseFetchingOffsets && m.pendingFetch {
			m.sendOffsetFetch(t.Partitions)
		}
	case tmInitPIDRetry:
		m.initProducer()
	case tmProduceRetry:
		m.produceRetry(t.Key, t.Arg)
	case tmAddPartitionsRetry:
		m.addPartitionsRetry()
	case tmCommitRetry:
		m.commitRetry(t.Key)
	case tmFetchTimeout:
		m.loop.fetchTimeout(m, t.Key)
	case tmOffsetFetchTimeout:
		if m.Phase == PhaseFetchingOffsets && !m.pendingFetch && m.offsetFetchSeq == t.Key {
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to OffsetFetch within request.timeout.ms (%d): asking again", m.label(), m.Cfg.RequestTimeout)
			m.sendOffsetFetch(t.Partitions)
		}
	case tmEndTxnTimeout:
		if m.loop.state == LoopTxnEnd && m.endTxnSeq == t.Key {
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to EndTxn within request.timeout.ms (%d): sending it again", m.label(), m.Cfg.RequestTimeout)
			m.endTxn(t.Arg == 1)
		}
	case tmEndTxnRetry:
		if m.loop.state == LoopTxnEnd {
			m.endTxn(t.Key == 1)
		}
	case tmAutoCommit:
		if m.nextAuto == t.Key && m.loop.inPoll() {
			m.maybeAutoCommit()
		}
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
