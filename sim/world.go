package sim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// TopicSpec is one topic and its partition count.
type TopicSpec struct {
	Name       string
	Partitions int
}

// Topology is the shape of a world.
type Topology struct {
	Inputs  []TopicSpec
	Output  TopicSpec
	Members int // members C1..Cn at tick 0, Stable in generation 1
	Group   string
}

// DefaultTopology is the seed's world (SPEC §2).
func DefaultTopology() Topology {
	return Topology{
		Inputs:  []TopicSpec{{"orders", 3}, {"payments", 3}},
		Output:  TopicSpec{"invoices", 1},
		Members: 1,
		Group:   "billing",
	}
}

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

	logAt     []*PartitionLog  // every log, by tpIndex (indexLogs); a clone has its own
	inputTPs  []TopicPartition // sorted
	inputAt   topicSpans       // where each input topic's partitions 0..n-1 are in inputTPs; read-only, shared by clones
	outputTPs []TopicPartition
	topicSize map[string]int
	short     bool         // the default topics: records are named o2.3, p0.1
	records   *recordNames // spells and reads input record names; read-only, shared by the logs, the sink and clones

	Group *Group
	Txn   *TxnCoordinator

	procs []*Member // every process ever started, in start order
	// orderStale: a process started since the processes' order fields
	// were set (World.actOrder).
	orderStale bool
	current    map[string]*Member // client id -> its newest process
	clients    []string           // client ids in Kafka's string order
	memberSeq  map[string]int     // client id -> member ids issued so far

	inflight []*Packet // sent last tick, delivered this tick
	sending  []*Packet // sent this tick
	Packets  PacketLog // the whole trace, in send order (p.ID is the index)
	Events   EventLog
	texts    textArena // the trace's and the events' texts (text.go)
	parties  parties   // the names packets and events refer to by number
	// memberIDs: member ids as encMemberID reads them, by the strings a
	// tick passes it (a member's MemberID, a commit's) again and again.
	memberIDs strCache[string, memberIDRef]
	scratch   []byte // where the next text is encoded; private to this world
	// keep, when a test sets it, keeps every packet sent by ID, body
	// included: the trace keeps no bodies.
	keep    map[int]*Packet
	free    *freeLists // delivered packets and bodies for reuse (freelist.go); never shared with a clone
	drops   []DropRule
	timers  timerQueue
	wake    procSet // members to act this tick
	busy    procSet // members with work for the next tick
	parked  []parkedFetch
	nextPID int64
	// Scratch buffers of the tick loop, reused from tick to tick; never
	// shared with a clone (Clone leaves them nil) and never kept.
	actBuf    []*Member
	tpBuf     []TopicPartition
	pausedBuf []TopicPartition
	markBuf   []bool

	Meter PauseMeter
	// Sink counts calls of the external side effect per input record (a
	// stand-in for a database write outside the transaction).
	Sink SinkCounts
	// stopped is set when a stop event happens during the current tick.
	stopped   bool
	processed int
	// LSOHeldTicks adds up, over output partitions, the ticks during which
	// an open transaction held the LSO below the high watermark (a
	// read_committed reader saw nothing past it).
	LSOHeldTicks int
	// ZombieWrites counts records written to an output partition by a
	// process that had lost its place (replaced by a restart, or out of the
	// group) when the write landed.
	ZombieWrites int
	// Mutations are deliberate engine bugs, off unless a test turns them on
	// to prove that a checker (the invariants, the explorer) catches them.
	Mutations Mutations
}

// Mutations lists the deliberate bugs a test can switch on.
type Mutations struct {
	// CommitOffsetsBeforeMarker makes TxnOffsetCommit commit the offsets at
	// once instead of leaving them pending until the COMMIT marker: a crash
	// before the marker then loses the batch.
	CommitOffsetsBeforeMarker bool
}

// New makes a world at tick 0.
func New(topo Topology, cfg Config) (*World, error) {
	if err := topo.validate(); err != nil {
		return nil, err
	}
	w := &World{
		Cfg: cfg.clone(), Topo: topo,
		topicSize: map[string]int{},
		current:   map[string]*Member{}, memberSeq: map[string]int{},
		free:    newFreeLists(),
		nextPID: 1000, records: &recordNames{},
	}
	w.Packets.w, w.Events.w = w, w
	logs := map[TopicPartition]*PartitionLog{}
	w.short = true
	for _, t := range topo.Inputs {
		if t.Name != "orders" && t.Name != "payments" {
			w.short = false
		}
	}
	for _, t := range topo.Inputs {
		w.topicSize[t.Name] = t.Partitions
		for p := 0; p < t.Partitions; p++ {
			tp := TopicPartition{Topic: t.Name, Partition: p}
			logs[tp] = newLog(tp, w.records)
			w.inputTPs = append(w.inputTPs, tp)
		}
	}
	assign.SortPartitions(w.inputTPs)
	inputAt := make(map[string]span, len(topo.Inputs))
	for i := len(w.inputTPs) - 1; i >= 0; i-- {
		inputAt[w.inputTPs[i].Topic] = span{at: i, n: w.topicSize[w.inputTPs[i].Topic]}
	}
	w.inputAt = newTopicSpans(topo.Inputs, inputAt)
	*w.records = recordNames{short: w.short, index: inputIndex{at: w.inputAt, tps: w.inputTPs}}
	w.Sink.names = w.records
	w.topicSize[topo.Output.Name] = topo.Output.Partitions
	for p := 0; p < topo.Output.Partitions; p++ {
		tp := TopicPartition{Topic: topo.Output.Name, Partition: p}
		logs[tp] = newLog(tp, w.records)
		w.outputTPs = append(w.outputTPs, tp)
	}
	w.indexLogs(logs)
	for _, tp := range w.inputTPs {
		w.appendInput(tp, cfg.RecordsPerPartition, false)
	}
	w.Group = newGroup(topo.Group)
	w.Group.offsets.index = w.records.index
	w.Group.OffsetsLog.index = w.records.index
	w.Txn = newTxnCoordinator()
	w.Meter.init()
	if topo.Members > 0 {
		w.startStableGroup(topo.Members)
	}
	return w, nil
}

func (t Topology) validate() error {
	if len(t.Inputs) == 0 {
		return fmt.Errorf("a world needs at least one input topic")
	}
	seen := map[string]bool{}
	all := append(append([]TopicSpec{}, t.Inputs...), t.Output)
	for _, s := range all {
		if !validName(s.Name) || strings.HasPrefix(s.Name, "__") {
			return fmt.Errorf("topic %q: a name of letters, digits, '.', '_' and '-' (not starting with __)", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("topic %q is named twice", s.Name)
		}
		seen[s.Name] = true
		if s.Partitions < 1 || s.Partitions > 1_000_000 {
			return fmt.Errorf("topic %s: %d partitions (allowed: 1 to 1000000)", s.Name, s.Partitions)
		}
	}
	if t.Members < 0 || t.Members > 100_000 {
		return fmt.Errorf("--members %d (allowed: 0 to 100000)", t.Members)
	}
	return nil
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
	g := w.Group
	var ins []assign.Member
	var ms []*Member
	for i := 1; i <= n; i++ {
		m := w.newProcess("C" + strconv.Itoa(i))
		m.MemberID = w.issueMemberID(m.Client)
		m.Generation = 1
		ms = append(ms, m)
		gm := g.addMember(m.joinRequest(), 0)
		gm.Joined = false
		ins = append(ins, assign.Member{MemberID: m.MemberID, InstanceID: m.Cfg.InstanceID, Topics: m.Topics, Generation: -1})
		if m.Cfg.Producer() != ProducerPlain {
			m.prod.pid, m.prod.epoch = w.newPID(), 0
			m.prod.mode, m.prod.txnID = m.Cfg.Producer(), m.Cfg.TransactionalID
			if m.Cfg.TransactionalID != "" {
				w.Txn.register(m.Cfg.TransactionalID, m.prod.pid, w.Tick).Timeout = m.Cfg.TransactionTimeout
			}
		}
	}
	a, _ := assign.New(w.Cfg.Client.Assignor, w.Cfg.Client.StickyRules)
	plan := a.Assign(assign.Input{Members: ins, Partitions: w.topicSize})
	g.Generation = 1
	g.Assignor = a.Name()
	g.State = Stable // the world starts here; no transition happened

	g.Leader = ms[0].MemberID
	for _, m := range ms {
		m.Phase = PhaseStable
		m.Leader = g.Leader
		m.nextAuto = m.Cfg.AutoCommitInterval
		m.Owned = append([]TopicPartition{}, plan[m.MemberID]...)
		g.members[m.MemberID].Assignment = m.Owned
		for _, tp := range m.Owned {
			m.positions.set(tp, 0)
			m.processed.set(tp, 0)
		}
		w.wakeUp(m)
	}
	w.Events.recs = eventRecs{} // the initial state is given, not something that happened
}

// newProcess starts a member process for a client (not yet in the group).
func (w *World) newProcess(client string) *Member {
	cc := w.Cfg.ForClient(client)
	inc := 1
	if old := w.current[client]; old != nil {
		inc = old.Inc + 1
		old.superseded = true
	}
	m := newMember(client, inc, cc, w.topicNames())
	m.useIndex(&w.records.index)
	m.proc = len(w.procs)
	w.procs = append(w.procs, m)
	w.orderStale = true
	if w.current[client] == nil {
		// Insert in place: sorting the whole list for every new client made
		// `new --members 100000` quadratic in sorts (21 s).
		i := sort.SearchStrings(w.clients, client)
		w.clients = append(w.clients, "")
		copy(w.clients[i+1:], w.clients[i:])
		w.clients[i] = client
	}
	w.current[client] = m
	return m
}

func (w *World) issueMemberID(client string) string {
	w.memberSeq[client]++
	return client + "-" + strconv.Itoa(w.memberSeq[client])
}

func (w *World) newPID() int64 {
	p := w.nextPID
	w.nextPID++
	return p
}

func (w *World) topicNames() []string {
	var ts []string
	for _, t := range w.Topo.Inputs {
		ts = append(ts, t.Name)
	}
	return ts
}

// RecordName names input record offset off of tp: o2.3 in the default
// world, t1-0.3 elsewhere.
func (w *World) RecordName(tp TopicPartition, off int) string { return w.records.name(tp, off) }

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
	if err != nil || w.topicSize[tp.Topic] == 0 {
		return false
	}
	for _, t := range w.inputTPs {
		if t == tp {
			return off < w.logOf(tp).HW()
		}
	}
	return false
}

// ShortName is o2 for orders-2 in the default world, else the full name.
func (w *World) ShortName(tp TopicPartition) string {
	if w.short {
		return tp.Topic[:1] + strconv.Itoa(tp.Partition)
	}
	return tp.String()
}

// span is where a topic's partitions 0..n-1 lie in inputTPs, one after
// another from index at.
type span struct{ at, n int }

// topicSpans finds an input topic's span: by a scan of a short list when
// the world has a few input topics (the default world has two; a string
// compare, usually of different lengths, is cheaper than hashing the
// name), by the map when it has more.
type topicSpans struct {
	few []namedSpan
	m   map[string]span
}

type namedSpan struct {
	name string
	s    span
}

// fewTopics is the most input topics scanned rather than hashed.
const fewTopics = 8

func newTopicSpans(inputs []TopicSpec, m map[string]span) topicSpans {
	if len(m) > fewTopics {
		return topicSpans{m: m}
	}
	t := topicSpans{few: make([]namedSpan, 0, len(m))}
	for _, in := range inputs {
		if s, ok := m[in.Name]; ok && !t.has(in.Name) {
			t.few = append(t.few, namedSpan{in.Name, s})
		}
	}
	return t
}

func (t topicSpans) has(topic string) bool {
	_, ok := t.get(topic)
	return ok
}

func (t topicSpans) get(topic string) (span, bool) {
	if t.m != nil {
		s, ok := t.m[topic]
		return s, ok
	}
	for _, n := range t.few {
		if n.name == topic {
			return n.s, true
		}
	}
	return span{}, false
}

// index is partition p's index in inputTPs (ok false when the topic has no
// partition p).
func (s span) index(p int) (int, bool) { return s.at + p, p >= 0 && p < s.n }

// appendShortName appends ShortName(tp) to b.
func (w *World) appendShortName(b []byte, tp TopicPartition) []byte {
	if w.short {
		b = append(b, tp.Topic[0])
	} else {
		b = append(b, tp.Topic...)
		b = append(b, '-')
	}
	return strconv.AppendInt(b, int64(tp.Partition), 10)
}

// ParsePartition reads "orders-2", or "o2" in the default world.
func (w *World) ParsePartition(s string) (TopicPartition, error) {
	if w.short && len(s) >= 2 && (s[0] == 'o' || s[0] == 'p') {
		if n, err := strconv.Atoi(s[1:]); err == nil {
			topic := "orders"
			if s[0] == 'p' {
				topic = "payments"
			}
			tp := TopicPartition{Topic: topic, Partition: n}
			if _, ok := w.tpIndex(tp); ok {
				return tp, nil
			}
		}
	}
	i := strings.LastIndexByte(s, '-')
	if i > 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil {
			tp := TopicPartition{Topic: s[:i], Partition: n}
			if _, ok := w.tpIndex(tp); ok {
				return tp, nil
			}
		}
	}
	return TopicPartition{}, fmt.Errorf("no partition %q (partitions: %s)", s, strings.Join(w.PartitionNames(), " "))
}

// PartitionNames lists every partition by its full name, inputs then outputs.
func (w *World) PartitionNames() []string {
	var out []string
	for _, tp := range w.inputTPs {
		out = append(out, tp.String())
	}
	for _, tp := range w.outputTPs {
		out = append(out, tp.String())
	}
	return out
}

// InputPartitions lists the input partitions, sorted.
func (w *World) InputPartitions() []TopicPartition { return w.inputTPs }

// OutputPartitions lists the output partitions.
func (w *World) OutputPartitions() []TopicPartition { return w.outputTPs }

// Log returns a partition's log.
func (w *World) Log(tp TopicPartition) *PartitionLog { return w.logOf(tp) }

// logOf is partition tp's log, nil if the world has no such partition.
// Every log is in logAt, by tpIndex: no map to hash a TopicPartition into,
// and none for Clone to rebuild.
func (w *World) logOf(tp TopicPartition) *PartitionLog {
	l, _ := w.logIndexed(tp)
	return l
}

// logIndexed is logOf with the log's number (tpIndex), -1 with no log.
func (w *World) logIndexed(tp TopicPartition) (*PartitionLog, int) {
	if i, ok := w.tpIndex(tp); ok && i < len(w.logAt) {
		return w.logAt[i], i
	}
	return nil, -1
}

// indexLogs fills logAt from New's logs: by tpIndex, the input partitions
// in inputTPs order, then the output's.
func (w *World) indexLogs(logs map[TopicPartition]*PartitionLog) {
	w.logAt = make([]*PartitionLog, len(w.inputTPs)+len(w.outputTPs))
	for tp, l := range logs {
		if i, ok := w.tpIndex(tp); ok {
			w.logAt[i] = l
		}
	}
}

// Short reports whether records have the seed's short names.
func (w *World) Short() bool { return w.short }

// Clients lists every client id that ever ran, in Kafka's string order.
func (w *World) Clients() []string { return w.clients }

// Member returns a client's newest process, or nil.
func (w *World) Member(client string) *Member { return w.current[client] }

// Processes lists every process ever started, in start order.
func (w *World) Processes() []*Member { return w.procs }

func (w *World) appendInput(tp TopicPartition, n int, wake bool) {
	w.logOf(tp).appendUpstream(n, w.Tick)
	if wake && n > 0 {
		w.answerParked(tp)
	}
}

// event records a rare event, its text formatted now and kept as it is.
// The frequent ones encode their arguments (eventEnc).
func (w *World) event(kind EventKind, member, format string, args ...any) {
	w.eventText(kind, member, fmt.Sprintf(format, args...))
}

// eventText records an event whose text is already built.
func (w *World) eventText(kind EventKind, member, text string) {
	w.Events.add(kind, member, w.addText(encLit(w.scratch[:0], text)), 0)
}

// eventEnc records an event whose text is encoded in b (text.go; usually
// w.scratch, without its tEnd); records, if at > 0, are the record tokens
// from b[at:] on (Event.Records): a label and a phrase come first, so at is
// a few bytes.
func (w *World) eventEnc(kind EventKind, member string, b []byte, at int) {
	if at >= 1<<16 {
		panic("sim: an event's records start past its first 64 KB")
	}
	w.Events.add(kind, member, w.addText(b), uint16(max(at, 0)))
}

// appendPartition appends tp as TopicPartition.String spells it (orders-2).
// The hot paths build their texts with appends into a buffer on the stack,
// so that the string is the one allocation, of exactly its size (Sprintf
// boxes every argument).
func appendPartition(b []byte, tp TopicPartition) []byte {
	b = append(b, tp.Topic...)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(tp.Partition), 10)
}

func (w *World) stopEvent(kind EventKind, member, format string, args ...any) {
	w.event(kind, member, format, args...)
	w.Events.recs.Last().kind |= evStop
	w.stopped = true
}

// send puts a packet on the wire; it is delivered next tick unless a drop
// rule loses it.
func (w *World) send(p *Packet) {
	p.ID = w.Packets.Len()
	p.Sent = w.Tick
	p.Delivered = -1
	for i := range w.drops {
		if w.drops[i].matches(p) {
			p.Lost = true
			if w.drops[i].Count--; w.drops[i].Count == 0 {
				// Used up: every packet sent is checked against each rule
				// kept, so a used rule goes (a clone has its own copy).
				w.drops = append(w.drops[:i], w.drops[i+1:]...)
			}
			break
		}
	}
	w.Packets.record(p)
	if w.keep != nil {
		w.keep[p.ID] = p
	}
	if !p.Lost {
		w.sending = append(w.sending, p)
	}
}

// InFlight lists the packets on the wire now: sent this tick (or by a
// command since), delivered next tick; copies, as the trace gives them.
func (w *World) InFlight() []*Packet {
	out := make([]*Packet, len(w.sending))
	for i, p := range w.sending {
		out[i] = w.Packets.At(p.ID)
	}
	return out
}

// Drop adds a rule that loses the next matching packet(s).
func (w *World) Drop(r DropRule) {
	if r.Count <= 0 {
		r.Count = 1
	}
	w.drops = append(w.drops, r)
}

// PendingDrops lists the drop rules not yet used up.
func (w *World) PendingDrops() []DropRule {
	var out []DropRule
	for _, r := range w.drops {
		if r.Count > 0 {
			out = append(out, r)
		}
	}
	return out
}

// wakeUp lets a member act again this tick (an answer arrived, the loop moved on).
func (w *World) wakeUp(m *Member) {
	if m.Alive {
		w.wake.add(m.proc)
	}
}

// wakeNext lets a member act next tick (it is in the middle of a record).
func (w *World) wakeNext(m *Member) {
	if m.Alive {
		w.busy.add(m.proc)
	}
}

// Step advances the world one tick: deliver last tick's packets, fire due
// timers, let the coordinator finish a join round, let busy members act,
// and account the pause meter. It reports whether a stop event happened.
func (w *World) Step() (stop bool) {
	w.Tick++
	w.stopped = false
	// The two lists trade their arrays every tick (the one delivered last
	// tick is empty): sending allocates nothing in steady traffic.
	w.inflight, w.sending = w.sending, w.inflight[:0]
	w.wake.addAll(&w.busy)
	w.busy.clear() // in place: a clone has its own sets (World.Clone)
	for _, p := range w.inflight {
		p.Delivered = w.Tick
		w.deliver(p)
		w.recycle(p)
	}
	clear(w.inflight) // the delivered packets are garbage unless someone holds them
	w.inflight = w.inflight[:0]
	w.fireTimers()
	w.Group.tick(w)
	w.actMembers()
	w.Meter.account(w)
	for _, l := range w.logAt[len(w.inputTPs):] { // the output partitions'
		if len(l.openTxn) > 0 {
			w.LSOHeldTicks++
		}
	}
	return w.stopped
}

func (w *World) deliver(p *Packet) {
	if p.To == Broker {
		w.brokerReceive(p)
		return
	}
	m := w.procOf(p.To, p.ToInc, p.proc)
	if m == nil || !m.Alive {
		return // the process is gone: nobody reads the answer
	}
	m.receive(w, p)
	w.wakeUp(m)
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
		if m := w.procs[i]; m.Inc == inc && sameStr(m.Client, client) {
			return m
		}
	}
	return nil
}

func (w *World) actMembers() {
	// New wake-ups while acting wait for the next pass; a few passes let a
	// member act on what another did in the same tick without looping forever.
	for pass := 0; pass < 8 && w.wake.len() > 0; pass++ {
		ms := w.wake.appendMembers(w.actBuf[:0], w.procs)
		w.actBuf = ms
		w.wake.clear()
		// (client, incarnation) names one process: members act in that
		// order (a total order), not in process-number order.
		w.actOrder(ms)
		for _, m := range ms {
			if m.Alive {
				m.act(w)
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
			m.order = int32(i)
		}
		w.orderStale = false
	}
	for i := 1; i < len(ms); i++ {
		if ms[i-1].order > ms[i].order {
			slices.SortFunc(ms, func(a, b *Member) int { return int(a.order) - int(b.order) })
			return
		}
	}
}

// brokerReceive routes a request to the part of B1 that answers it.
func (w *World) brokerReceive(p *Packet) {
	switch p.Type {
	case FindCoordinator:
		w.reply(p, None, "coordinator B1", nil)
	case JoinGroup, SyncGroup, LeaveGroup, OffsetCommit, OffsetFetch, ConsumerGroupHeartbeat:
		w.Group.receive(w, p)
	case Fetch:
		w.handleFetch(p)
	case Produce:
		if a := w.handleProduce(p); a.Lost || a.Error == OutOfOrderSequenceNumber {
			w.armRetry(p)
		}
	case InitProducerID, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn:
		w.Txn.receive(w, p)
	case TxnOffsetCommit:
		w.Group.receiveTxnOffsetCommit(w, p)
	case WriteTxnMarkers:
		if p.Response {
			w.Txn.onMarkersWritten(w, p)
		} else {
			w.writeMarkers(p)
		}
	}
}

// reply answers a request, and returns the answer.
func (w *World) reply(req *Packet, code ErrorCode, summary string, body any) *Packet {
	p := w.packet()
	p.From, p.To, p.ToInc, p.Type, p.Response, p.proc = Broker, req.From, req.FromInc, req.Type, true, req.proc
	p.Error, p.Summary, p.Body, p.Req = code, summary, body, req
	w.send(p)
	return p
}

// replyText answers a request with a summary encoded in the arena, and
// returns the answer.
func (w *World) replyText(req *Packet, code ErrorCode, text textRef, body any) *Packet {
	p := w.packet()
	p.From, p.To, p.ToInc, p.Type, p.Response, p.proc = Broker, req.From, req.FromInc, req.Type, true, req.proc
	p.Error, p.text, p.Body, p.Req = code, text, body, req
	w.send(p)
	return p
}

// Invoke marks the external side effect for an input record.
func (w *World) sideEffect(m *Member, f fetched) {
	if n := w.Sink.inc(f.TP, f.tpi-1, f.Offset); n > 1 {
		w.event(EvSideEffect, m.Client, "external sink called again for %s (%d times): not covered by any transaction", f.value(), n)
	}
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
	g := w.Group
	g.Type = ConsumerGroup
	var ms []*Member
	for i := 1; i <= n; i++ {
		m := w.newProcess("C" + strconv.Itoa(i))
		m.MemberID = w.issueMemberID(m.Client)
		ms = append(ms, m)
		gm := &GroupMember{MemberID: m.MemberID, ClientID: m.Client, InstanceID: m.Cfg.InstanceID, Inc: m.Inc,
			Topics: cp(m.Topics), Strategy: m.Cfg.RemoteAssignor, RebalanceTimeout: m.Cfg.MaxPollInterval,
			SessionTimeout: w.Cfg.ConsumerSessionTimeout, MemberState: "STABLE", silentSince: -1}
		if !m.consumer {
			gm.ClassicMember = true
			gm.Strategy, gm.Protocols = m.Cfg.Assignor, []string{m.Cfg.Assignor}
			gm.SessionTimeout = m.Cfg.SessionTimeout
		}
		g.putMember(gm)
		if gm.InstanceID != "" {
			putMap(&g.static, gm.InstanceID, gm.MemberID)
		}
		if m.Cfg.Producer() != ProducerPlain {
			m.prod.pid, m.prod.epoch = w.newPID(), 0
			m.prod.mode, m.prod.txnID = m.Cfg.Producer(), m.Cfg.TransactionalID
			if m.Cfg.TransactionalID != "" {
				w.Txn.register(m.Cfg.TransactionalID, m.prod.pid, w.Tick).Timeout = m.Cfg.TransactionTimeout
			}
		}
	}
	g.GroupEpoch = 1
	last := g.members[ms[len(ms)-1].MemberID]
	g.updateTargetAssignment(w, last)
	g.State = Stable // the world starts here; no transition happened
	for _, m := range ms {
		gm := g.members[m.MemberID]
		gm.MemberEpoch, gm.PreviousMemberEpoch = 1, 0
		gm.Assignment = cp(gm.Target)
		m.Generation = 1
		m.Phase = PhaseStable
		m.nextAuto = m.Cfg.AutoCommitInterval
		m.Owned = sortedTPs(gm.Assignment)
		for _, tp := range m.Owned {
			m.positions.set(tp, 0)
			m.processed.set(tp, 0)
		}
		if m.consumer {
			m.cg.state = cgStable
			m.cg.sentOwned, m.cg.ownedSent = cp(m.Owned), true
			g.scheduleConsumerSessionTimeout(w, gm)
			m.cg.interval = max(w.Cfg.ConsumerHeartbeatInterval, 1)
			m.armHeartbeat(w, m.cg.interval)
		}
		// A live classic member needs no timer: its heartbeats are
		// implicit (see group_migration.go) and a dead process is timed
		// from when it stopped.
		w.wakeUp(m)
	}
	w.Events.recs = eventRecs{} // the initial state is given, not something that happened
}
