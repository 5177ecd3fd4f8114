package client

import (
	"slices"
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

// Loop is where the application thread stands in its poll loop.
type Loop int

const (
	LoopIdle       Loop = iota // about to call poll()
	LoopFetching               // in poll(): a Fetch in flight or parked at the broker
	LoopProcessing             // processing the batch poll returned
	LoopCommitting             // in commitSync()
	LoopFlushing               // waiting for every produce answer
	LoopInitPID                // waiting for InitProducerId
	LoopTxnOffsets             // in sendOffsetsToTransaction
	LoopTxnEnd                 // in commitTransaction / abortTransaction
	LoopWaiting                // waiting for a retry backoff
)

func (l Loop) String() string {
	return [...]string{"idle", "polling", "processing", "committing", "flushing", "init-producer", "txn-offsets", "txn-end", "backoff"}[l]
}

// Member is one client process: a consumer with its heartbeat thread, and
// the producer that writes its invoices.
type Member struct {
	Client string // C2
	Inc    int    // which process of this client (restart starts the next)
	proc   int    // process number: its index in World.procs
	order  int32  // its place among World.procs in (client, incarnation) order, the order members act in (World.actOrder)
	// superseded: a newer process of the same client exists (World.current
	// holds that one), so this one is a zombie or dead.
	superseded bool
	names      *topo.Layout // the world's, to spell its records (read-only, shared by clones)
	env        *env.Env     // the world's environment
	host       Host         // what it tells or asks the World other than by packets
	Cfg        ClientConfig
	Topics     []string
	Alive      bool
	// Zombie marks a process that runs on after its client was replaced: the
	// old process of a restart caught in a slow record, or a fenced static
	// instance. It finishes what it has in hand and stops at its next poll.
	Zombie bool

	// The group protocol, client side.
	MemberID   string
	Generation int
	Leader     string
	Phase      Phase
	Owned      []wire.TopicPartition // the assignment in force, sorted
	positions  partInts
	processed  partInts
	committed  partInts
	lastJoin   *wire.Packet // the JoinGroup whose answer counts
	rejoin     bool         // send JoinGroup at the next poll
	lost       bool         // its generation is gone: drop every partition at the next poll
	// unjoined: the generation was reset keeping the member id
	// (AbstractCoordinator's MemberState UNJOINED while Phase still says
	// Stable); no heartbeats until the next JoinGroup is answered.
	unjoined bool
	// joinFuture is the ID plus one of the JoinGroup, then the SyncGroup,
	// of the rebalance in flight (AbstractCoordinator.joinFuture), 0 when
	// none: after a reset the client waits for its answer before it sends
	// the next JoinGroup.
	joinFuture int
	revoke     []wire.TopicPartition // cooperative: revoke these at the next poll
	// A JoinGroup answer that arrived outside poll(), handled at the next
	// one (the body is never changed, so clones may share it).
	joinAnswer    *wire.JoinGroupResponse
	joinAnswerErr wire.ErrorCode
	hasJoinAnswer bool
	// Requests counted so that a timeout knows whether its request is
	// still the one outstanding (request.timeout.ms).
	joinSeq, syncSeq, offsetFetchSeq, endTxnSeq int
	joinRetry                                   bool   // send JoinGroup again at the next poll
	joinedGen                                   int    // generation of Owned, sent as sticky user data
	groupProto                                  string // the group's assignor, from the last JoinGroup answer
	// The eager StickyAssignor's memory (StickyAssignor.onAssignment): the
	// last assignment and its generation, sent as subscription user data
	// even after an eager revocation emptied Owned. Replaced, never changed
	// in place.
	stickyPrev []wire.TopicPartition
	stickyGen  int
	hasSticky  bool

	// The application thread.
	loop       Loop
	fetchID    int
	batch      []wire.Record
	batchIdx   int
	workLeft   int
	workedAt   int
	slowNext   bool
	slowNow    bool
	leftPollAt int // tick the application last returned from poll()
	// The max.poll.interval check of the latest stretch outside poll()
	// (armPollTimer): the due tick and sequence number its timer was
	// given and the stretch's start; whether a timer of this process's
	// stands in the queue for it (due no later), and that timer's key.
	pollAt, pollSeq, pollSince int
	pollQueued                 bool
	pollQAt, pollQSeq          int
	rotate                     wire.TopicPartition
	hasRotate                  bool
	nextAuto                   int
	autoArmed                  int // the nextAuto a timer is set for
	crashAfter                 int // crash once this many more records are done; -1 = never
	closing                    bool
	closeNow                   bool // close --now: break out after the record in hand
	afterCommit                cont // what the loop does when commitSync returns
	afterFlush                 cont // what it does once every produce is answered
	commitSeq                  int  // numbers commitSync attempts, so a stale retry timer does nothing
	pendingCommit              commitList
	closeOffs                  map[wire.TopicPartition]int
	revokeOffs                 map[wire.TopicPartition]int
	pendingFetch               bool // an OffsetFetch to retry after UNSTABLE_OFFSET_COMMIT

	prod producer
	txn  clientTxn

	// consumer: the process speaks the consumer group protocol
	// (group.protocol=consumer when it started); cg is that protocol's state.
	consumer bool
	cg       consumerMember

	// ownedSlots' cache: the slots of the Owned list starting at slotsFor
	// (Owned is replaced, never changed in place; a stale entry would only
	// cost lookups, as every slot is checked where it is used).
	slotsFor *wire.TopicPartition
	slots    []int32
	// slotsAscend: slots ascend with Owned (and number every partition),
	// as they do when the input topics are named in order; ownsHint can
	// then search them as numbers.
	slotsAscend bool
}

// groupClient is the group-protocol half of a member, as the poll loop,
// the producer and transactions call it. The subscription state (owned
// partitions, positions, commits) stays on Member; each protocol's client
// keeps its state in Member's fields and is itself stateless.
type groupClient interface {
	// join starts membership once FindCoordinator is answered.
	join(m *Member)
	// receive handles the protocol's own answers and notifications.
	receive(m *Member, p *wire.Packet)
	// poll runs the group work at the start of poll(); handled means
	// poll() stops there, again whether the loop runs again this tick.
	poll(m *Member) (handled, again bool)
	// pollTimeout: max.poll.interval.ms passed outside poll().
	pollTimeout(m *Member, since int)
	// leave is close() leaving the group.
	leave(m *Member)
	// requestFailed reacts to an OffsetCommit refused by the group;
	// unchanged says the member's generation (or member epoch) and member
	// id are still those the request carried.
	requestFailed(m *Member, code wire.ErrorCode, unchanged bool)
	// rebalancing reports whether commits are refused in the client now.
	rebalancing(m *Member) bool
}

// group is the member's group-protocol client.
func (m *Member) group() groupClient {
	if m.consumer {
		return consumerClient{}
	}
	return classicClient{}
}

// GroupProtocol is the group protocol this process speaks.
func (m *Member) GroupProtocol() wire.GroupProtocol {
	if m.consumer {
		return wire.Consumer
	}
	return wire.Classic
}

// ConsumerState is the client's member state under the consumer protocol
// (JOINING, RECONCILING, ACKNOWLEDGING, STABLE, STALE, ...), "" under classic.
func (m *Member) ConsumerState() string { return m.cg.state }

// New starts a process of client (its incarnation inc, its process number
// proc in the world) with config cc, subscribing to topics.
func New(e *env.Env, host Host, client string, inc, proc int, cc ClientConfig, topics []string) *Member {
	m := newMember(client, inc, cc, topics)
	m.env, m.host, m.proc = e, host, proc
	m.names = e.Layout()
	m.useIndex(e.Layout().Input())
	return m
}

func newMember(client string, inc int, cc ClientConfig, topics []string) *Member {
	return &Member{
		Client: client, Inc: inc, Cfg: cc, Topics: append([]string{}, topics...), Alive: true,
		Generation: -1, crashAfter: -1, leftPollAt: -1, workedAt: -1,
		prod: newProducer(cc), consumer: cc.GroupProtocol == string(wire.Consumer),
	}
}

// useIndex gives a new process the world's numbering of its input
// partitions, which its positions, processed and committed offsets are
// kept by.
func (m *Member) useIndex(x *topo.InputIndex) {
	m.positions.useIndex(x)
	m.processed.useIndex(x)
	m.committed.useIndex(x)
}

// ownedSlots is the slot of each partition of Owned (-1 for one the world
// does not number), computed once per Owned list: the auto-commit reads
// its positions and commits its partitions by these numbers.
func (m *Member) ownedSlots() []int32 {
	if len(m.Owned) == 0 {
		return nil
	}
	if m.slotsFor != &m.Owned[0] || len(m.slots) != len(m.Owned) {
		m.slots = m.positions.idx.SlotsOf(make([]int32, 0, len(m.Owned)), m.Owned)
		m.slotsFor = &m.Owned[0]
		m.slotsAscend = m.slots[0] >= 0
		for i := 1; i < len(m.slots) && m.slotsAscend; i++ {
			m.slotsAscend = m.slots[i] > m.slots[i-1]
		}
	}
	return m.slots
}

// Static reports whether the member has a group.instance.id.
func (m *Member) Static() bool { return m.Cfg.InstanceID != "" }

// Loop reports the application thread's state.
func (m *Member) LoopState() Loop { return m.loop }

// Batch lists the records of the batch in hand and how far processing got.
func (m *Member) Batch() (records []string, done int) {
	for _, f := range m.batch {
		records = append(records, f.ValueIn(m.names))
	}
	return records, m.batchIdx
}

// Position is the fetch position on tp (false when not positioned).
func (m *Member) Position(tp wire.TopicPartition) (int, bool) {
	p, ok := m.positions.get(tp)
	return p, ok
}

// Processing reports whether the member has a record in hand, and whether it is slow.
func (m *Member) Processing() (bool, bool) { return m.loop == LoopProcessing, m.slowNow }

// InGroup reports whether the member believes it belongs to the group.
func (m *Member) InGroup() bool {
	return m.Alive && m.MemberID != "" && m.Phase != PhaseOut && m.Phase != PhaseClosed
}

// Settled reports whether the member holds its final assignment: stable,
// nothing to revoke, no rejoin pending, offsets fetched.
func (m *Member) Settled() bool {
	if m.consumer {
		return m.cgSettled()
	}
	return m.Phase == PhaseStable && !m.rejoin && len(m.revoke) == 0 && !m.pendingFetch
}

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

// fetchTimeout: a Fetch neither answered nor held at the broker (a long
// poll the broker holds stands for empty answers to fetches sent again) was
// lost on the way: the fetcher gives up on it and fetches again.
func (m *Member) fetchTimeout(id int) {
	if m.loop != LoopFetching || m.fetchID != id || m.host.FetchOutstanding(m.Client, m.Inc, id) {
		return
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to Fetch within request.timeout.ms (%d): fetching again", m.label(), m.Cfg.RequestTimeout)
	m.abandonFetch()
	m.wakeUp()
}

// receive handles an answer (or a notification) from B1.
func (m *Member) receive(p *wire.Packet) {
	switch p.Type {
	case wire.FindCoordinator:
		if m.Phase == PhaseFinding {
			m.group().join(m)
		}
	case wire.OffsetFetch:
		m.onOffsetFetchResponse(p)
	case wire.OffsetCommit:
		m.onCommitResponse(p)
	case wire.Fetch:
		m.onFetchResponse(p)
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
		m.group().receive(m, p)
	}
}

func (m *Member) sendOffsetFetch(tps []wire.TopicPartition) {
	m.pendingFetch = false
	r := &wire.OffsetFetchRequest{Partitions: append([]wire.TopicPartition{}, tps...)}
	if m.consumer {
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
	m.abandonFetch()
}

func (m *Member) owns(tp wire.TopicPartition) bool {
	i := sort.Search(len(m.Owned), func(i int) bool { return !m.Owned[i].Less(tp) })
	return i < len(m.Owned) && m.Owned[i] == tp
}

// ownsHint is owns for a partition whose slot may be known (hint; -1: not,
// and a wrong one is not trusted): a binary search of Owned's slots when
// they ascend with it, comparing numbers instead of topic names.
func (m *Member) ownsHint(tp wire.TopicPartition, hint int32) bool {
	if k := m.positions.slotOf(tp, hint); k >= 0 && len(m.Owned) > 0 {
		if slots := m.ownedSlots(); m.slotsAscend {
			_, ok := slices.BinarySearch(slots, k)
			return ok
		}
	}
	return m.owns(tp)
}

// inPoll is true while the application thread is inside poll(), where the
// consumer runs rebalances and callbacks.
func (m *Member) inPoll() bool { return m.loop == LoopIdle || m.loop == LoopFetching }

// act runs the application thread for this tick.
func (m *Member) act() {
	for guard := 0; guard < 8 && m.Alive; guard++ {
		switch m.loop {
		case LoopIdle, LoopFetching:
			if !m.poll() {
				return
			}
		case LoopProcessing:
			if m.workedAt == m.env.Now() {
				m.wakeNext() // one tick of work per tick
				return
			}
			m.workedAt = m.env.Now()
			m.work()
			return
		default:
			return // waiting for an answer
		}
	}
}

// poll is one pass of KafkaConsumer.poll(): rebalance work first, then the
// auto-commit, then a Fetch. It reports whether the loop moved on and
// should be run again this tick.
func (m *Member) poll() bool {
	if m.closing {
		m.finishClose()
		return false
	}
	if m.Zombie {
		m.stopZombie() // it finished what it had in hand
		return false
	}
	// The group protocol's work comes first: poll() runs the rebalance
	// before it fetches.
	if handled, again := m.group().poll(m); handled {
		return again
	}
	if !m.producerReady() {
		return false
	}
	if m.loop == LoopFetching {
		return false // a Fetch is already out
	}
	m.maybeAutoCommit()
	req := m.env.NewFetchRequest()
	tps, offs := m.fetchableInto(req.Partitions, req.Offsets)
	if len(tps) == 0 {
		req.Partitions, req.Offsets = tps[:0], offs[:0]
		m.env.UnuseFetchRequest(req)
		return false
	}
	m.fetchID++
	req.ID, req.Partitions, req.Offsets, req.Max = m.fetchID, tps, offs, m.Cfg.MaxPollRecords
	m.loop = LoopFetching
	// "o0@3 o1@5 max 3": every fetch writes it
	text := m.env.Trace().FetchRequest(req.Partitions, req.Offsets, req.Max)
	p := m.env.Packet()
	p.Type, p.Text, p.Body = wire.Fetch, text, req
	m.send(p)
	// The request timeout is reserved and set only when the fetch may go
	// unanswered (armFetchTimeout).
	p.TimerAt, p.TimerSeq = m.env.Reserve(m.env.Now() + m.Cfg.RequestTimeout)
	if p.Lost {
		m.env.Push(FetchTimeoutTimer(p))
	}
	return false
}

// maybeAutoCommit is the auto-commit inside poll(): when the interval has
// passed, commit the positions of every positioned partition (async),
// changed or not, as ConsumerCoordinator.maybeAutoCommitOffsetsAsync does
// with subscriptions.allConsumed(); with nothing positioned no request goes
// out (sendOffsetCommitRequest returns at once on empty offsets). A member
// waiting in a long poll wakes for the auto-commit deadline
// (ConsumerCoordinator.timeToNextPoll), so a timer stands for that.
func (m *Member) maybeAutoCommit() {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional || !m.InGroup() || m.group().rebalancing(m) {
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
	tps, _ := m.fetchableInto(nil, nil)
	return tps
}

// fetchableInto is fetchable appending to dst[:0] (a recycled request's
// array), with each partition's position appended to offs[:0] in the same
// order: the positions are read in the one walk of Owned, by the slots
// ownedSlots numbers them with.
func (m *Member) fetchableInto(dst []wire.TopicPartition, offs []int) ([]wire.TopicPartition, []int) {
	scratch := m.env.PartitionScratch()
	all, offs := (*scratch)[:0], offs[:0]
	slots, at := m.ownedSlots(), 0 // at: getSlot's cursor in positions
	for i, tp := range m.Owned {
		if pos, ok := m.positions.getSlot(tp, m.positions.slotOf(tp, slots[i]), &at); ok && !m.revoking(tp) {
			all, offs = append(all, tp), append(offs, pos)
		}
	}
	*scratch = all
	if len(all) == 0 {
		return dst[:0], offs
	}
	i := 0
	if m.hasRotate && len(all) > 1 {
		i = sort.Search(len(all), func(i int) bool { return m.rotate.Less(all[i]) })
	}
	// both rotated to start after the last partition polled: the
	// positions in place (three reversals), the partitions into dst
	slices.Reverse(offs[:i])
	slices.Reverse(offs[i:])
	slices.Reverse(offs)
	return append(append(dst[:0], all[i:]...), all[:i]...), offs
}

// fetchesHint reports whether fetchable includes an owned partition: it has
// a position and is not being revoked. hint is tp's slot (-1: not known;
// checked before it is trusted).
func (m *Member) fetchesHint(tp wire.TopicPartition, hint int32) bool {
	_, ok := m.positions.getHint(tp, hint)
	return ok && !m.revoking(tp)
}

// dropOwned forgets a partition that was assigned but never positioned.
func (m *Member) dropOwned(tp wire.TopicPartition) {
	var keep []wire.TopicPartition
	for _, t := range m.Owned {
		if t != tp {
			keep = append(keep, t)
		}
	}
	m.Owned = keep
}

func (m *Member) revoking(tp wire.TopicPartition) bool {
	for _, r := range m.revoke {
		if r == tp {
			return true
		}
	}
	return false
}

func (m *Member) abandonFetch() {
	if m.loop == LoopFetching {
		m.fetchID++ // a late answer is ignored
		m.loop = LoopIdle
	}
}

func (m *Member) onFetchResponse(p *wire.Packet) {
	r := p.Body.(*wire.FetchResponse)
	if m.loop != LoopFetching || r.ID != m.fetchID {
		return
	}
	batch := m.batch[:0] // the batch in hand is done: reuse its array
	for _, f := range r.Records {
		k := f.TPI - 1 // tpIndex numbers an input partition by its slot; checked before it is trusted
		if pos, ok := m.positions.getHint(f.TP, k); ok && pos == f.Offset && m.ownsHint(f.TP, k) {
			batch = append(batch, f)
			m.positions.setHint(f.TP, k, f.Offset+1)
		}
	}
	if len(batch) == 0 {
		m.loop = LoopIdle
		return
	}
	m.rotate, m.hasRotate = batch[len(batch)-1].TP, true
	m.batch, m.batchIdx, m.workLeft = batch, 0, 0
	m.workedAt = m.env.Now() // processing starts next tick
	// "%s poll() returned o2.3 o2.4", its Records the batch
	m.env.Trace().Polled(m.who(), batch)
	m.leftPollAt = m.env.Now()
	m.armPollTimer()
	if m.prod.mode == ProducerTransactional {
		m.beginTxn()
	}
	if m.Cfg.Commit == CommitBefore && m.prod.mode != ProducerTransactional {
		m.commitSync(m.fetchPositionList(nil), contProcess)
		return
	}
	m.loop = LoopProcessing
}

// armPollTimer starts the heartbeat thread's max.poll.interval check for the
// stretch outside poll() that began at leftPollAt.
//
// A member polls every few ticks and each check is due
// max.poll.interval.ms later, so nearly every check finds a later stretch
// begun and does nothing (pollTimeout). The check of the latest stretch is
// therefore kept on the member, with the due tick and sequence number
// reserved for it now, and one timer of the process's stands in the queue
// for it, due no later (pollQueued): when it fires for a stretch that is
// over, it is set again under the latest check's key (firePollTimer). So
// the check that may act fires at the very tick and sequence number, among
// the other timers, that a timer set now would, and the queue holds a
// timer or two a member instead of one per poll() of the last
// max.poll.interval.ms. A check due before the standing timer (the setting
// lowered) gets a standing timer of its own, and the old one is dropped
// when it fires; a second stretch begun in the same tick (the same
// leftPollAt) is checked by a timer of its own, as before.
func (m *Member) armPollTimer() {
	at, seq := m.env.Reserve(m.leftPollAt + m.Cfg.MaxPollInterval)
	t := wire.Timer{Owner: wire.OwnerClient, At: at, Seq: seq, Kind: tmPollTimeout, Client: m.Client, Inc: m.Inc, Proc: int32(m.proc + 1), Key: m.leftPollAt}
	if m.pollQueued && m.pollSince == m.leftPollAt || eagerPollTimers {
		m.env.Push(t) // a second check of the same stretch: a timer of its own (m 0)
		return
	}
	m.pollAt, m.pollSeq, m.pollSince = at, seq, m.leftPollAt
	if !m.pollQueued || env.KeyLess(at, seq, m.pollQAt, m.pollQSeq) {
		m.standPollTimer(t)
	}
}

// eagerPollTimers: every check a timer of its own (a test's reference for
// the standing timer, TestPollTimersAsEager); never set otherwise.
var eagerPollTimers = false

// standPollTimer queues t as the timer standing for the latest check (m 1).
func (m *Member) standPollTimer(t wire.Timer) {
	t.Arg = 1
	m.pollQueued, m.pollQAt, m.pollQSeq = true, t.At, t.Seq
	m.env.Push(t)
}

// firePollTimer is a max.poll.interval timer firing: a timer of its own
// (m 0) checks its stretch; the one standing for the latest check (m 1)
// checks it if it is that check's, and is otherwise set again for it. A
// standing timer another replaced does nothing.
func (m *Member) firePollTimer(t wire.Timer) {
	if t.Arg == 1 {
		if !m.pollQueued || t.At != m.pollQAt || t.Seq != m.pollQSeq {
			return
		}
		m.pollQueued = false
		if t.At != m.pollAt || t.Seq != m.pollSeq {
			t.At, t.Seq, t.Key = m.pollAt, m.pollSeq, m.pollSince
			m.standPollTimer(t)
			return
		}
	}
	m.pollTimeout(t.Key)
}

// pollTimeout is the heartbeat thread's check: still outside poll() since
// the stretch that began at since?
func (m *Member) pollTimeout(since int) {
	if !m.Alive || m.leftPollAt != since || m.inPoll() || !m.InGroup() {
		return
	}
	m.group().pollTimeout(m, since)
}

// work spends one tick on the record in hand.
func (m *Member) work() {
	if m.batchIdx >= len(m.batch) {
		m.batchDone()
		return
	}
	f := m.batch[m.batchIdx]
	if m.workLeft == 0 {
		m.workLeft = m.Cfg.ProcessTicks
		m.slowNow = false
		if m.slowNext {
			m.slowNext = false
			m.slowNow = true
			m.workLeft = m.Cfg.SlowTicks
			m.env.Trace().StopEventf(trace.EvSlowStart, m.Client, "%s starts slow record %s (%d ticks)", m.label(), f.ValueIn(m.env.Layout()), m.Cfg.SlowTicks)
		}
	}
	m.workLeft--
	if m.workLeft > 0 {
		m.wakeNext()
		return
	}
	m.slowNow = false
	m.processed.setHint(f.TP, f.TPI-1, f.Offset+1)
	m.batchIdx++
	m.host.CountProcessed()
	// "%s processed o2.3", its Records the record
	m.env.Trace().Processed(m.who(), &f)
	m.host.SideEffect(m.who(), f)
	m.produceInvoice(f)
	if m.crashAfter > 0 {
		m.crashAfter--
		if m.crashAfter == 0 {
			m.crash(true)
			return
		}
	}
	if m.closing && m.closeNow {
		m.batch = m.batch[:m.batchIdx] // the rest of the batch is left unprocessed
		m.finishClose()
		return
	}
	if m.batchIdx < len(m.batch) {
		m.wakeNext()
		return
	}
	m.batchDone()
}

// batchDone runs the end of one loop iteration: commit as the mode says,
// then back to poll().
func (m *Member) batchDone() {
	m.batch, m.batchIdx = m.batch[:0], 0
	switch {
	case m.prod.mode == ProducerTransactional:
		m.commitTxn(m.processedPositions(), contBackToPoll)
	case m.Cfg.Commit == CommitAfter:
		m.flush(contCommitBatch)
	default:
		m.backToPoll()
	}
}

func (m *Member) backToPoll() {
	m.loop = LoopIdle
	m.wakeUp()
}

// commitPositions is what a commit on revocation or close commits: the
// processed positions for commit-after, the fetch positions for auto.
func (m *Member) commitPositions() map[wire.TopicPartition]int {
	if m.Cfg.Commit == CommitAuto {
		return m.fetchPositions()
	}
	return m.processedPositions()
}

// anyPositioned reports whether fetchPositions would be non-empty.
func (m *Member) anyPositioned() bool {
	for _, tp := range m.Owned {
		if _, ok := m.positions.get(tp); ok {
			return true
		}
	}
	return false
}

// commitList is what one OffsetCommit commits: parallel lists in
// partition order, the partitions' slots hints (or nil). Never changed once
// built: a request and a clone may share it.
type commitList struct {
	tps   []wire.TopicPartition
	slots []int32
	offs  []int
}

// listOf is offs as a commitList (the order sendCommit gave a map).
func listOf(offs map[wire.TopicPartition]int) commitList {
	l := commitList{tps: sortedKeys(offs)}
	for _, tp := range l.tps {
		l.offs = append(l.offs, offs[tp])
	}
	return l
}

// fetchPositionList is fetchPositions as a commitList (what listOf makes
// of the map), without the map; the positions are appended to offs[:0].
func (m *Member) fetchPositionList(offs []int) commitList {
	return m.positionList(&m.positions, offs)
}

// processedPositionList is processedPositions as a commitList, without the
// map.
func (m *Member) processedPositionList() commitList {
	return m.positionList(&m.processed, nil)
}

// positionList lists every owned partition with a position, in partition
// order, with its value in from (positions or processed; one without a
// value there is left out), appended to offs[:0]. Owned is usually sorted
// already, so the map and sort are only a fallback. When Owned is strictly
// in order and every owned partition is listed (the steady state), the
// partition list is Owned itself and the slots ownedSlots, capped: both
// are replaced, never changed in place, so the request may keep them.
func (m *Member) positionList(from *partInts, offs []int) commitList {
	offs = offs[:0]
	slots := m.ownedSlots()
	inOrder, all := true, true
	var tps []wire.TopicPartition       // the listed partitions, made at the first one left out
	at, atFrom, prev := 0, 0, int32(-1) // cursors in positions and from; the slot of Owned[i-1] if checked
	for i, tp := range m.Owned {
		k := m.positions.slotOf(tp, slots[i])
		v, ok := m.positions.getSlot(tp, k, &at)
		if ok && i > 0 {
			if k >= 0 && prev >= 0 {
				inOrder = inOrder && prev < k // slots are in (topic, partition) order
			} else if !m.Owned[i-1].Less(tp) {
				inOrder = false // unsorted or repeated
			}
		}
		prev = k
		if ok && from != &m.positions {
			v, ok = from.getSlot(tp, k, &atFrom)
		}
		if !ok {
			if all {
				tps, all = append(make([]wire.TopicPartition, 0, len(m.Owned)), m.Owned[:i]...), false
			}
			continue
		}
		offs = append(offs, v)
		if !all {
			tps = append(tps, tp)
		}
	}
	if inOrder && all {
		n := len(m.Owned)
		return commitList{m.Owned[:n:n], slots[:n:n], offs}
	}
	if inOrder {
		// The check above compared neighbours in Owned; those listed
		// (gathered in the one walk, not looked up again) must be in
		// order among themselves.
		for j := 1; j < len(tps) && inOrder; j++ {
			inOrder = tps[j-1].Less(tps[j])
		}
		if inOrder {
			return commitList{tps: tps, offs: offs}
		}
	}
	var mp map[wire.TopicPartition]int
	if from == &m.positions {
		mp = m.fetchPositions()
	} else {
		mp = m.processedPositions()
	}
	l := listOf(mp)
	l.offs = append(offs[:0], l.offs...)
	return l
}

func (m *Member) fetchPositions() map[wire.TopicPartition]int {
	out := map[wire.TopicPartition]int{}
	for _, tp := range m.Owned {
		if p, ok := m.positions.get(tp); ok {
			out[tp] = p
		}
	}
	return out
}

// processedPositions is what commit-after and transactions commit: the
// next record to process on each partition this assignment has positioned
// (one still waiting for its committed offset has nothing to commit yet).
func (m *Member) processedPositions() map[wire.TopicPartition]int {
	out := map[wire.TopicPartition]int{}
	for _, tp := range m.Owned {
		if _, positioned := m.positions.get(tp); !positioned {
			continue
		}
		if p, ok := m.processed.get(tp); ok {
			out[tp] = p
		}
	}
	return out
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
		m.resume(then)
		return
	}
	m.loop = LoopCommitting
	m.afterCommit = then
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
	case m.group().rebalancing(m):
		why = "commitSync during its own rebalance: RebalanceInProgressException, nothing sent"
	case m.Phase == PhaseOut || m.lost || m.unjoined:
		why = "commitSync while not part of an active group (its generation was reset): CommitFailedException, nothing sent"
	default:
		return false
	}
	m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: %s", m.label(), why)
	m.afterCommit = then
	m.pendingCommit = commitList{}
	m.commitSeq++ // no retry
	m.commitThrew()
	then, m.afterCommit = m.afterCommit, contNone
	m.resume(then)
	return true
}

func (m *Member) sendSyncCommit() {
	if m.commitRefusedLocally(m.afterCommit) {
		return
	}
	m.commitSeq++
	m.sendCommitList(m.pendingCommit, true, m.syncAutoCommit())
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + 2 + m.Cfg.RetryBackoff, Kind: tmCommitRetry, Client: m.Client, Inc: m.Inc, Key: m.commitSeq})
}

// commitRetry resends a commitSync that got no answer.
func (m *Member) commitRetry(seq int) {
	if m.Alive && m.loop == LoopCommitting && m.commitSeq == seq {
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
	text := m.env.Trace().CommitRequest(req.Partitions, req.Slots, req.Offsets, m.consumer, m.Generation, wire.OrDash(m.MemberID))
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
		m.onCommitBeforeRevoke(p)
		return
	}
	if p.Error != wire.None {
		// Taken before requestFailed resets the generation: the response
		// handler compares the generation it sent with the member's at the
		// time the answer arrives.
		unchanged := m.sentInGeneration(req)
		what, thrown := m.commitRefusal(req.Auto, p.Error, unchanged)
		m.env.Trace().Eventf(trace.EvCommitFailed, m.Client, "%s: %s", m.label(), what)
		m.group().requestFailed(m, p.Error, unchanged)
		if thrown {
			m.commitThrew()
		}
	}
	if r.Sync && m.loop == LoopCommitting {
		then := m.afterCommit
		m.afterCommit, m.pendingCommit = contNone, commitList{}
		m.commitSeq++ // no retry of an answered commit
		m.resume(then)
	}
}

// syncAutoCommit: a blocking commit under auto-commit is the client's own
// (onJoinPrepare before a rejoin, or close()), not the application's.
func (m *Member) syncAutoCommit() wire.AutoCommit {
	if m.Cfg.Commit != CommitAuto || m.prod.mode == ProducerTransactional {
		return wire.AutoNone
	}
	switch m.afterCommit {
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
// invokeCompletedOffsetCommitCallbacks).
func (m *Member) commitRefusal(auto wire.AutoCommit, code wire.ErrorCode, unchanged bool) (string, bool) {
	if (auto == wire.AutoInterval || auto == wire.AutoRejoin) && !m.consumer && code == wire.FencedInstanceID && unchanged {
		return "asynchronous auto-commit refused with " + code.String() + ": the next poll() throws FencedInstanceIdException", false
	}
	switch auto {
	case wire.AutoInterval:
		return "asynchronous auto-commit refused with " + code.String() + ": logged as a warning, nothing thrown", false
	case wire.AutoRejoin:
		return "auto-commit before rejoining refused with " + code.String() + ": logged, the rejoin goes on", false
	case wire.AutoClose:
		return "auto-commit in close() refused with " + code.String() + ": logged as a warning, close() goes on", false
	}
	return "OffsetCommit refused with " + code.String() + ": " + m.commitSyncException(code, unchanged), true
}

// commitSyncException is what commitSync throws for a refused commit. The
// classic client (ConsumerCoordinator.OffsetCommitResponseHandler.handle):
// REBALANCE_IN_PROGRESS is RebalanceInProgressException (and a rejoin);
// UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION and FENCED_INSTANCE_ID are
// RebalanceInProgressException when the member has moved to another
// generation since it sent the commit and is rejoining, else
// FENCED_INSTANCE_ID is FencedInstanceIdException (fatal) and the other two
// CommitFailedException. The consumer protocol's client
// (CommitRequestManager.commitSyncExceptionForError) throws
// CommitFailedException for all of them (STALE_MEMBER_EPOCH included).
func (m *Member) commitSyncException(code wire.ErrorCode, unchanged bool) string {
	if m.consumer {
		return "CommitFailedException"
	}
	switch {
	case code == wire.RebalanceInProgress, !unchanged && m.Phase == PhaseJoining:
		return "RebalanceInProgressException"
	case code == wire.FencedInstanceID && unchanged:
		return "FencedInstanceIdException"
	}
	return "CommitFailedException"
}

// sentInGeneration: the member's generation and member id are still the
// ones the commit carried (CoordinatorResponseHandler.generationUnchanged).
func (m *Member) sentInGeneration(req *wire.OffsetCommitRequest) bool {
	return req.Generation == m.Generation && req.MemberID == m.MemberID
}

// commitThrew is commitSync throwing. Before the batch was processed
// (commit before), the loop skips the batch and seeks back, so the records
// are read (and committed first) again by whoever owns them next.
func (m *Member) commitThrew() {
	if m.afterCommit != contProcess {
		return
	}
	for i := len(m.batch) - 1; i >= 0; i-- {
		f := m.batch[i]
		if _, ok := m.positions.get(f.TP); ok {
			m.positions.set(f.TP, f.Offset)
		}
	}
	m.batch, m.batchIdx = nil, 0
	m.afterCommit = contBackToPoll
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
	m.loop = LoopIdle
	m.env.Unwake(m.proc)
	m.host.ProcessStopped(m.Client, m.Inc)
}

func (m *Member) fatal(why string) {
	m.env.Trace().Eventf(trace.EvFenced, m.Client, "%s stops: %s", m.label(), why)
	m.die()
}

func (m *Member) stopZombie() {
	m.env.Trace().Eventf(trace.EvZombie, m.Client, "%s stops: it has no place in the group", m.label())
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

// finishClose is close(): the record in hand is done; commit as the mode
// says, LeaveGroup unless static, stop.
func (m *Member) finishClose() {
	m.abandonFetch()
	switch {
	case m.prod.mode == ProducerTransactional && m.txn.open:
		m.commitTxn(m.processedPositions(), contCloseDone)
	case m.InGroup() && m.commitNeeded(m.commitPositions()):
		m.closeOffs = m.commitPositions()
		m.flush(contCommitClose)
	default:
		m.flush(contCloseDone)
	}
}

func (m *Member) closeDone() {
	if m.InGroup() {
		m.group().leave(m)
	}
	m.env.Trace().Eventf(trace.EvClosed, m.Client, "%s closed", m.Client)
	m.die()
}

// cont is what the application thread does when a blocking call returns
// (commitSync, flush, commitTransaction). Continuations are data, not
// closures, so that a World can be copied.
type cont int

const (
	contNone         cont = iota
	contIdle              // back inside poll(): the loop goes on
	contProcess           // start processing the batch in hand (commit before)
	contBackToPoll        // the end of a loop iteration
	contRevokeDone        // cooperative revocation committed: revoke, rejoin
	contCloseDone         // close(): LeaveGroup and stop
	contCommitBatch       // flushed: commitSync the processed positions, then back to poll
	contCommitClose       // flushed: commitSync what close() commits, then stop
	contEndTxnCommit      // flushed: EndTxn(COMMIT)
	contEndTxnAbort       // flushed: EndTxn(ABORT)
	// consumer protocol: onPartitionsRevoked committed; the reconciliation goes on
	contConsumerRevokeDone
)

func (m *Member) resume(c cont) {
	switch c {
	case contIdle:
		m.loop = LoopIdle
		m.wakeUp()
	case contProcess:
		m.loop = LoopProcessing
		m.wakeUp()
	case contBackToPoll:
		m.backToPoll()
	case contRevokeDone:
		m.revokeOffs = nil // onCommitResponse recorded what was committed
		m.loop = LoopIdle
		m.wakeUp()
	case contCloseDone:
		m.closeDone()
	case contCommitBatch:
		m.commitSync(m.processedPositionList(), contBackToPoll)
	case contCommitClose:
		offs := m.closeOffs
		m.closeOffs = nil
		m.commitSync(listOf(offs), contCloseDone)
	case contEndTxnCommit:
		m.endTxn(true)
	case contEndTxnAbort:
		m.endTxn(false)
	case contConsumerRevokeDone:
		m.revokeOffs = nil
		m.loop = LoopIdle
		m.cgListenerDone()
		m.wakeUp()
	}
}

// epochWord names what commits carry: the generation (classic) or the
// member epoch (consumer).
func (m *Member) epochWord() string {
	if m.consumer {
		return "epoch"
	}
	return "gen"
}

// memberBufs are the arrays World.Clone copies its members' small slices
// into, one per kind, rather than one allocation per slice (cutInto).
type memberBufs struct {
	ints    []partInt
	batch   []wire.Record
	seqs    []int
	unacked []*wire.ProduceRequest
}

func (m *Member) cloneInto(n *Member, bufs *memberBufs) {
	*n = *m
	// Owned is replaced, never changed in place (commits share it too):
	// shared, and with it the slots computed for it (ownedSlots). So is
	// Topics (a JoinGroup carries it; a restart hands it on). The batch's
	// array is reused for the next batch: copied.
	n.revoke, n.batch = store.Copy(m.revoke), store.CutInto(&bufs.batch, m.batch)
	n.positions, n.processed, n.committed = m.positions.cloneIn(&bufs.ints), m.processed.cloneIn(&bufs.ints), m.committed.cloneIn(&bufs.ints)
	n.closeOffs, n.revokeOffs = store.CopyMap(m.closeOffs), store.CopyMap(m.revokeOffs) // pendingCommit is never changed in place: shared
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
		m.firePollTimer(t)
	case tmHeartbeat:
		m.heartbeatTimer(t.Key, t.Arg == 1)
	case tmRevokeCommit:
		m.revokeCommitTimer(t.Key, t.Arg == 1)
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
	case tmJoinTimeout:
		m.joinTimeout(t.Key)
	case tmSyncTimeout:
		m.syncTimeout(t.Key)
	case tmFetchTimeout:
		m.fetchTimeout(t.Key)
	case tmOffsetFetchTimeout:
		if m.Phase == PhaseFetchingOffsets && !m.pendingFetch && m.offsetFetchSeq == t.Key {
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to OffsetFetch within request.timeout.ms (%d): asking again", m.label(), m.Cfg.RequestTimeout)
			m.sendOffsetFetch(t.Partitions)
		}
	case tmEndTxnTimeout:
		if m.loop == LoopTxnEnd && m.endTxnSeq == t.Key {
			m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to EndTxn within request.timeout.ms (%d): sending it again", m.label(), m.Cfg.RequestTimeout)
			m.endTxn(t.Arg == 1)
		}
	case tmEndTxnRetry:
		if m.loop == LoopTxnEnd {
			m.endTxn(t.Key == 1)
		}
	case tmAutoCommit:
		if m.nextAuto == t.Key && m.inPoll() {
			m.maybeAutoCommit()
		}
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

func sortedKeys(m map[wire.TopicPartition]int) []wire.TopicPartition {
	ks := make([]wire.TopicPartition, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	wire.SortPartitions(ks)
	return ks
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
