package sim

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Cause is why a subscribed input partition's records could not be
// consumed during a tick (Available: they could, or nobody subscribes to
// it).
type Cause uint8

const (
	Available Cause = iota
	// CauseRebalance: the pause meter counts it this tick (a rebalance is
	// under way and no member consumes it).
	CauseRebalance
	// CauseOwnerDown: the member that holds it is not consuming it:
	// crashed, closed, replaced by a restart whose new process does not
	// consume it yet, a static member away, out of the group after a poll
	// timeout, a zombie; or no member holds it and every process that
	// subscribes to its topic is down that way.
	CauseOwnerDown
	// CauseUnassigned: no member holds it (revoked, not yet reassigned)
	// while a running process subscribes to its topic.
	CauseUnassigned
	// CauseStopped: the member that holds it stopped with a fatal error
	// (fenced: UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, a fenced
	// producer, ...); or no member holds it and every process that
	// subscribes to its topic is down, one of them stopped that way.
	CauseStopped
	numCauses
)

// CauseCounts counts partition-ticks (or partitions) by cause, indexed by
// Cause.
type CauseCounts [numCauses]int

// Causes lists the causes of unavailability in the order views show them.
var Causes = []Cause{CauseRebalance, CauseOwnerDown, CauseUnassigned, CauseStopped}

// String names a cause as metrics --json keys it.
func (c Cause) String() string {
	switch c {
	case CauseRebalance:
		return "rebalance"
	case CauseOwnerDown:
		return "owner_down"
	case CauseUnassigned:
		return "unassigned"
	case CauseStopped:
		return "stopped"
	}
	return "available"
}

// Unavailability counts, tick by tick, the subscribed input partitions
// whose records could not be consumed, each partition-tick once, under one
// cause. A partition is subscribed while a member of the group or some
// client's newest process (running or not) subscribes to its topic: a
// group whose every member has died still owes its partitions a
// consumer. It is unavailable when no running process of the group that
// is in the group and not a zombie fetches it (the pause meter's test).
// Its cause, first that applies:
//
//  1. rebalance: the pause meter counts it this tick. So the rebalance
//     cause equals the pause meter, and the total is at least the meter.
//  2. if a member of the group holds it (its assignment, or a consumer
//     group member's partitions pending revocation): stopped when that
//     member's process stopped with a fatal error, else owner down.
//  3. if no member holds it: unassigned while a running process (not a
//     zombie) subscribes to its topic; else stopped when one of the
//     processes that subscribe to it stopped with a fatal error; else
//     owner down.
//
// It also keeps the most records a partition fell behind (lag: log end
// minus committed offset, as kafka-consumer-groups.sh --describe shows
// it), sampled at tick 0 and at the end of every tick, and the first tick
// it was reached.
//
// It runs at the end of every tick, after the pause meter. What it
// classifies changes only with the group protocol's packets, a member's
// life (start, crash, close, fatal error, poll timeout) and rebalances, so
// it classifies again only on a tick with one of those (or the tick after
// a packet, when it is delivered) and otherwise counts the partitions of
// the last classification again: steady traffic (fetches, produces,
// commits, records processed) costs it a look at the tick's packets and
// events. TestPropertyUnavailability checks it against the definition
// above at every tick of random worlds.
type Unavailability struct {
	// Total is the partition-ticks counted, ByCause split by cause
	// (ByCause[Available] stays 0); Total is their sum.
	Total   int
	ByCause CauseCounts
	// MaxLag is the most records an input partition fell behind, on
	// partition MaxLagPartition, first at tick MaxLagTick.
	MaxLag          int
	MaxLagPartition TopicPartition
	MaxLagTick      int

	// The time lag (TimeLag reads it): each input partition's committed
	// offset at the last look (0 for none, as the record lag reads it),
	// the offsets' Version then, and the most time lag of the spans that
	// ended since (lagEnded: ticks, partition, tick; lagEndedTick -1 for
	// none).
	lagSeen    []int
	lagVersion uint64
	// lagm keeps the most lag ready without a look at every partition
	// (lagmax.go), from the first steady rate on (nil before: without
	// steady production a sample is rare, after a user's produce).
	lagm *lagMax
	// touched is scratch for the partitions whose committed offset was
	// written in the tick, without lagm (this world's own: a clone
	// starts without).
	touched      []int32
	seen         []uint64 // sortOnce's bitset for touched (this world's own too)
	lagEnded     int
	lagEndedTP   TopicPartition
	lagEndedTick int

	now    []Cause        // each input partition's cause in the last tick counted (index: the world's input order)
	counts [numCauses]int // how many partitions of now have each cause
	stops  []fatalStop    // the processes that stopped with a fatal error, oldest first
	events int            // events read so far
	sent   bool           // the last tick sent a packet that may change what is consumed
	meter  bool           // the pause meter counted the last tick
	off    []int32        // the input indexes of now that are not Available
	ref    []bool         // scratch: subscribed marks, by input index (false between uses)
	spans  []topo.Span    // scratch: the subscribed input topics
	owners []ownerRef     // scratch: the member holding each input partition
	// rebal: now is the pause meter's list named rebal (scratch.pausedGen)
	// all under CauseRebalance, and nothing else off; 0 otherwise.
	rebal uint64
}

// fatalStop is a process that stopped with a fatal error, and why.
type fatalStop struct {
	Client string
	Inc    int
	Reason string // as the trace says it: "UNRELEASED_INSTANCE_ID on ConsumerGroupHeartbeat"
}

// ownerRef is the group member holding a partition (inc 0: none).
type ownerRef struct {
	client string
	inc    int
}

func (u *Unavailability) init(w *World) {
	u.now = make([]Cause, len(w.layout.Inputs()))
	u.counts[Available] = len(u.now)
	u.sent = true // the first tick classifies
	u.MaxLagTick = -1
	u.sampleLag(w)
	u.lagSeen = make([]int, len(u.now))
	u.lagEndedTick = -1
	u.lookTimeLag(w)
}

// Now lists each input partition's cause in the last tick counted, in the
// world's input order (Layout().Inputs()); Available for one consumed or
// not subscribed.
func (u *Unavailability) Now() []Cause { return store.Copy(u.now) }

// Unavailable counts the partitions unavailable in the last tick counted.
func (u *Unavailability) Unavailable() int {
	return len(u.now) - u.counts[Available]
}

// NowCounts counts the partitions of each cause in the last tick counted.
func (u *Unavailability) NowCounts() CauseCounts { return u.counts }

func (u *Unavailability) clone() Unavailability {
	n := *u
	n.now = store.Copy(u.now)
	n.stops = store.Copy(u.stops)
	n.lagSeen = store.Copy(u.lagSeen)
	n.lagm = u.lagm.clone()
	n.touched, n.seen = nil, nil
	n.off = store.Copy(u.off)
	n.ref, n.spans, n.owners = nil, nil, nil
	return n
}

// account counts the tick that just ran; paused is what the pause meter
// counted in it, as input indexes in ascending order (counted: it counted
// this tick at all); appended: steady
// production appended records in it, so the lag is sampled as after an
// input.
func (u *Unavailability) account(w *World, paused []int32, counted, appended bool) {
	dirty := counted || u.meter || u.sent
	u.meter = counted
	u.sent = false
	for _, p := range w.env.Sending() {
		if !steadyPacket(p) {
			u.sent = true
			break
		}
	}
	dirty = dirty || u.sent
	input := false
	for i, n := u.events, w.Events.Len(); ; i++ {
		// Most of a tick's events are steady traffic's: passed by their
		// kinds' numbers, not their names.
		if i = w.Events.NextNotIn(i, steadyKinds); i >= n {
			break
		}
		switch w.Events.KindAt(i) {
		case EvInput:
			input = true
		case EvFenced:
			dirty = true
			u.noteStop(w, i)
		default:
			dirty = true
		}
	}
	u.events = w.Events.Len()
	if dirty {
		u.classify(w, paused, counted)
	}
	if n := len(u.now) - u.counts[Available]; n > 0 {
		for _, c := range Causes {
			u.ByCause[c] += u.counts[c]
		}
		u.Total += n
	}
	var touched []int32
	if u.lagm != nil {
		touched = u.lagm.sync(w)
	} else {
		u.touched = sortOnce(w.Group.Offsets.TakeTouched(u.touched[:0]), &u.seen)
		touched = u.touched
	}
	if input || appended {
		u.sampleLag(w)
	}
	if u.lagVersion != w.Group.Offsets.Version() {
		// The first look reads every partition and starts the offsets'
		// journal; the later ones read only the partitions written
		// since, in the same order: without steady production (no lagm)
		// too, where a look at 100,000 partitions at every tick with a
		// commit was a tenth of a classic roll's cost.
		if w.Group.Offsets.JournalSlots() {
			u.lookTimeLagAt(w, touched)
		} else {
			u.lookTimeLag(w)
		}
	}
}

// steadyKinds are the events that change nothing of who consumes what
// (account): steady traffic's.
var steadyKinds = trace.KindSetOf(EvPolled, EvProcessed, EvCommitted, EvProduced, EvSideEffect, EvTxnState, EvProducer, EvUnstableOffset)

// steadyPacket reports whether p is steady traffic, which changes nothing
// of who consumes what: a fetch, a produce, a commit or a transaction's
// exchange answered without error, a consumer-protocol heartbeat that
// carries no new assignment.
func steadyPacket(p *Packet) bool {
	if p.Error != None {
		return false
	}
	switch p.Type {
	case Fetch, Produce, OffsetCommit, TxnOffsetCommit, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers:
		return true
	case ConsumerGroupHeartbeat:
		if !p.Response {
			return true
		}
		r, ok := p.Body.(*wire.ConsumerGroupHeartbeatResponse)
		return ok && !r.HasAssignment
	}
	return false
}

// noteStop keeps the process that event i says stopped with a fatal error
// ("C3 stops: UNRELEASED_INSTANCE_ID on ConsumerGroupHeartbeat", or "C3
// (process 2) stops: ..." for one replaced since). Fatal errors come from
// answers and timers, inside a tick, so a process named by its client
// alone is the client's newest at the end of that tick.
func (u *Unavailability) noteStop(w *World, i int) {
	e := w.Events.At(i)
	who, why, ok := strings.Cut(e.Text, " stops: ")
	if !ok {
		return
	}
	client, inc := who, 0
	if c, rest, ok := strings.Cut(who, " (process "); ok {
		client = c
		inc, _ = strconv.Atoi(strings.TrimSuffix(rest, ")"))
	} else if m := w.current[client]; m != nil {
		inc = m.Inc
	}
	u.stops = append(u.stops, fatalStop{Client: client, Inc: inc, Reason: why})
}

// stopOf is why client's process inc stopped with a fatal error, if it did.
func (u *Unavailability) stopOf(client string, inc int) (string, bool) {
	for i := len(u.stops) - 1; i >= 0; i-- {
		if s := u.stops[i]; s.Inc == inc && s.Client == client {
			return s.Reason, true
		}
	}
	return "", false
}

// classify sets each input partition's cause for the tick that just ran.
// Only the subscribed partitions no process fetches have a cause other
// than Available: it resets those of the last classification (off) and
// looks at the unconsumed partitions of the subscribed topics
// (consumedSet), so a tick of a rebalance costs the partitions it pauses,
// not all of them.
func (u *Unavailability) classify(w *World, paused []int32, counted bool) {
	inputs := w.layout.Inputs()
	n := len(inputs)
	if cap(u.ref) < n {
		u.ref = make([]bool, n)
	}
	subscribed := u.ref[:n] // false everywhere between calls
	spans := u.spans[:0]
	// Subscribed topics, marked at their first partition's index, until
	// every input topic is.
	mark := func(topics []string) bool {
		for _, t := range topics {
			if in, ok := w.layout.Span(t); ok && !subscribed[in.At] {
				subscribed[in.At] = true
				if spans = append(spans, in); len(spans) == len(w.Topo.Inputs) {
					return true
				}
			}
		}
		return false
	}
	all := false
	for gm := range w.Group.AllMembers() {
		if all = mark(gm.Topics); all {
			break
		}
	}
	for _, c := range w.clients {
		if all || mark(w.current[c].Topics) {
			break
		}
	}
	for _, in := range spans {
		subscribed[in.At] = false
	}
	u.spans = spans
	slices.SortFunc(spans, func(a, b topo.Span) int { return a.At - b.At }) // the world's input order
	w.scratch.consumed.update(&w.processTable, w.layout)
	if sc := &w.scratch; counted && len(paused) > 0 && len(paused) == len(sc.pausedIdx) && &paused[0] == &sc.pausedIdx[0] &&
		sc.pausedGen != 0 && sc.pausedFrom == sc.consumed.gen && slices.Equal(spans, sc.pausedSpans) {
		// paused is the unconsumed partitions of these very topics, of
		// the consumed set as it is: every one is the rebalance's. An
		// eager rebalance pauses every partition for hundreds of ticks,
		// the same list tick after tick: then nothing changes.
		if u.rebal == sc.pausedGen {
			return
		}
		for _, i := range u.off {
			u.now[i] = Available
		}
		for _, i := range paused {
			u.now[i] = CauseRebalance
		}
		u.off = append(u.off[:0], paused...)
		u.counts = CauseCounts{}
		u.counts[CauseRebalance], u.counts[Available] = len(paused), n-len(paused)
		u.rebal = sc.pausedGen
		return
	}
	u.rebal = 0
	for _, i := range u.off {
		u.now[i] = Available
	}
	u.off = u.off[:0]
	u.counts = CauseCounts{}
	var owners []ownerRef // made when a partition held by nobody consuming it needs its owner
	k := 0                // the cursor in paused (ascending input indexes)
	for _, in := range spans {
		w.scratch.consumed.unconsumed(in, func(i int) {
			tp := inputs[i]
			var c Cause
			// paused lists a subset of these partitions, in the same order
			if counted && k < len(paused) && paused[k] == int32(i) {
				c = CauseRebalance
				k++
			} else {
				if owners == nil {
					u.owners = ownersOf(w, u.owners)
					owners = u.owners
				}
				c = u.causeOf(w, tp, owners[i])
			}
			u.now[i] = c
			u.off = append(u.off, int32(i))
			u.counts[c]++
		})
	}
	u.counts[Available] = n - len(u.off)
}

// ownersOf lists the member holding each input partition, by input index,
// in dst's array when it has the room.
func ownersOf(w *World, dst []ownerRef) []ownerRef {
	n := len(w.layout.Inputs())
	if cap(dst) < n {
		dst = make([]ownerRef, n)
	}
	owners := dst[:n]
	clear(owners)
	hold := func(gm GroupMember, tps []TopicPartition) {
		for _, tp := range tps {
			if in, ok := w.layout.Span(tp.Topic); ok {
				if i, ok := in.Index(tp.Partition); ok {
					owners[i] = ownerRef{client: gm.ClientID, inc: gm.Inc}
				}
			}
		}
	}
	for gm := range w.Group.AllMembers() {
		hold(gm, gm.Assignment)
		hold(gm, gm.Revoking)
	}
	return owners
}

// causeOf is why tp, subscribed and not consumed, outside the pause
// meter's count, could not be consumed; o is the member holding it.
func (u *Unavailability) causeOf(w *World, tp TopicPartition, o ownerRef) Cause {
	if o.inc > 0 {
		if m := w.process(o.client, o.inc); m != nil && !m.Alive {
			if _, fatal := u.stopOf(o.client, o.inc); fatal {
				return CauseStopped
			}
		}
		return CauseOwnerDown
	}
	stopped := false
	for _, c := range w.clients {
		m := w.current[c]
		if !subscribes(m.Topics, tp.Topic) {
			continue
		}
		if m.Alive && !m.Zombie {
			return CauseUnassigned
		}
		if _, fatal := u.stopOf(m.Client, m.Inc); fatal && !m.Alive {
			stopped = true
		}
	}
	if stopped {
		return CauseStopped
	}
	return CauseOwnerDown
}

func subscribes(topics []string, topic string) bool {
	for _, t := range topics {
		if t == topic {
			return true
		}
	}
	return false
}

// followSteady starts keeping the most lag ready (lagMax), at the first
// steady rate; touch notes input partitions whose high watermark moved
// other than by steady production's clock, or whose rate changed.
func (u *Unavailability) followSteady(w *World) {
	if u.lagm == nil && w.broker.ClosedForm() {
		w.Group.Offsets.JournalSlots()
		u.lagm = newLagMax(w)
	}
}

func (u *Unavailability) touch(w *World, tps []TopicPartition) {
	if u.lagm == nil {
		return
	}
	for _, tp := range tps {
		if i, ok := w.layout.Input().Slot(tp, nil); ok {
			u.lagm.touch(int32(i))
		}
	}
}

// sampleLag reads every input partition's lag now and keeps the most.
func (u *Unavailability) sampleLag(w *World) {
	if u.lagm != nil {
		u.lagm.sync(w)
		u.lagm.settle(w)
		lag, at, ok := u.lagm.most(w.broker.SteadyClock())
		if ok && (int(lag) > u.MaxLag || u.MaxLagTick < 0) {
			u.MaxLag, u.MaxLagPartition, u.MaxLagTick = int(lag), w.layout.Inputs()[at], w.Tick
		}
		return
	}
	for i, tp := range w.layout.Inputs() {
		lag := w.broker.Logs()[i].HW()
		if rec, ok := w.Group.Offsets.CommittedAt(i); ok {
			lag -= rec
		}
		if lag > u.MaxLag || u.MaxLagTick < 0 {
			u.MaxLag, u.MaxLagPartition, u.MaxLagTick = lag, tp, w.Tick
		}
	}
}

// The time lag of an input partition at the end of tick t is the age, in
// ticks, of the oldest record the group has not consumed: t minus the tick
// the record at its committed offset was appended (the committed offset, as
// the record lag reads it: kafka-consumer-groups.sh's CURRENT-OFFSET, 0
// when none), or 0 when the committed offset is at the log end. Records
// preloaded at the world's start were appended at tick 0. TimeLag is its
// most over the ticks sampled (tick 0 and the end of every tick), over the
// input partitions, and the first tick and partition (in the world's
// input order) it was reached at.
//
// While a partition's committed offset stays put its time lag never falls
// (0 while it is at the log end, then the age of one record, growing a
// tick a tick), so its most over that span is at the span's last tick. The
// observer therefore looks only when a committed offset was written (the
// offsets' Version moved: a commit, a transaction's COMMIT marker): the
// span of each partition whose offset moved ended the tick before, at the
// age its old record had then; the spans still open end now, and TimeLag
// reads them when asked. A tick without a commit costs one comparison.
// TestPropertyTimeLag checks it against the definition at every tick of
// random worlds.

// lookTimeLag ends the span of each input partition whose committed
// offset moved since the last look (at the tick before this one), and
// notes the offsets as they are now.
func (u *Unavailability) lookTimeLag(w *World) {
	u.lagVersion = w.Group.Offsets.Version()
	logs := w.broker.Logs()
	for i, tp := range w.layout.Inputs() {
		c, _ := w.Group.Offsets.CommittedAt(i)
		if c == u.lagSeen[i] {
			continue
		}
		if old := u.lagSeen[i]; old >= 0 && old < logs[i].HW() {
			if at := logs[i].Cells.TickAt(old); at <= w.Tick-1 {
				u.endLagSpan(w.Tick-1-at, tp, w.Tick-1)
			}
		}
		u.lagSeen[i] = c
	}
}

// lookTimeLagAt is lookTimeLag reading only the partitions touched (by
// input number, sorted, each once): the others' committed offsets were
// not written since the last look.
func (u *Unavailability) lookTimeLagAt(w *World, touched []int32) {
	u.lagVersion = w.Group.Offsets.Version()
	logs, inputs := w.broker.Logs(), w.layout.Inputs()
	for _, k := range touched {
		i := int(k)
		c, _ := w.Group.Offsets.CommittedAt(i)
		if c == u.lagSeen[i] {
			continue
		}
		if old := u.lagSeen[i]; old >= 0 {
			// A steady log's end and the tick of a record in its open
			// segment are read from the leader's array of steady
			// productions, not from the log (a cache miss each: T2's
			// auto-commits write 100 partitions' offsets every tick).
			hw, steady := w.broker.SteadyEnd(i)
			if !steady {
				hw = logs[i].HW()
			}
			if old < hw {
				at, ok := w.broker.SteadyTickAt(i, old)
				if !ok {
					at = logs[i].Cells.TickAt(old)
				}
				if at <= w.Tick-1 {
					u.endLagSpan(w.Tick-1-at, inputs[i], w.Tick-1)
				}
			}
		}
		u.lagSeen[i] = c
	}
}

// endLagSpan keeps a span's time lag when it is the most so far (a later
// tick, or a later partition at the same tick, must exceed it).
func (u *Unavailability) endLagSpan(ticks int, tp TopicPartition, tick int) {
	if ticks > u.lagEnded || u.lagEndedTick < 0 {
		u.lagEnded, u.lagEndedTP, u.lagEndedTick = ticks, tp, tick
	}
}

// TimeLag is the most time lag so far (see above), in ticks, the
// partition and the first tick it was reached at; ok is false for a world
// without input partitions.
func (u *Unavailability) TimeLag(w *World) (ticks int, tp TopicPartition, tick int, ok bool) {
	ticks, tp, tick = u.lagEnded, u.lagEndedTP, u.lagEndedTick
	if len(u.lagSeen) == 0 {
		return 0, TopicPartition{}, 0, false
	}
	if tick < 0 {
		// Nothing ended yet: every partition's time lag was 0 at tick 0.
		ticks, tp, tick = 0, w.layout.Inputs()[0], 0
	}
	logs := w.broker.Logs()
	for i, in := range w.layout.Inputs() {
		c, _ := w.Group.Offsets.CommittedAt(i)
		if c < 0 || c >= logs[i].HW() {
			continue
		}
		if age := w.Tick - logs[i].Cells.TickAt(c); age > ticks {
			ticks, tp, tick = age, in, w.Tick
		}
	}
	return ticks, tp, tick, true
}
