package sim

import (
	"math/bits"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// PauseEntry is what one rebalance (the one that formed Generation) paused.
type PauseEntry struct {
	Generation int
	// Incarnation is the group's (Group.Incarnation): a group made anew
	// numbers its rebalances from 1 again.
	Incarnation    int
	Partitions     []TopicPartition // sorted
	PartitionTicks int
	FirstTick      int
	LastTick       int
}

// meters are what the world accounts each tick of the partitions nobody
// consumes (World.Step): the World holds them, their fields are the
// World's.
type meters struct {
	Meter PauseMeter
	// Unavail counts the partition-ticks nobody could consume, by cause,
	// beside the pause meter, and the most records a partition fell
	// behind (sim/unavailability.go).
	Unavail Unavailability
}

// PauseMeter adds up paused partitions × ticks: during a rebalance, a
// subscribed partition that no member is consuming counts one per tick.
type PauseMeter struct {
	Total   int
	Entries []PauseEntry // one per rebalance, in (incarnation, generation) order
	active  bool
	// Series is the running total after each tick (index = tick), for charts.
	Series PauseSeries
}

func (pm *PauseMeter) init() {
	pm.Series = PauseSeries{}
	pm.Series.add(0)
}

// Active reports whether a rebalance is under way.
func (pm *PauseMeter) Active() bool { return pm.active }

// account counts the tick that just ran, and returns the partitions it
// counted as paused, as input indexes in ascending order (the world's
// scratch list, valid until the next call), and whether it counted the
// tick at all (a rebalance was under way).
func (pm *PauseMeter) account(w *World) (paused []int32, counted bool) {
	defer func() { pm.Series.add(pm.Total) }()
	g := w.Group
	if !pm.active {
		// A classic rebalance starts with PreparingRebalance; a consumer
		// group's with a group epoch bump, which moves it to Assigning or
		// Reconciling until every member reached its target.
		if s := g.State(); s != PreparingRebalance && s != CompletingRebalance && s != Assigning && s != Reconciling {
			return nil, false
		}
		pm.active = true
	}
	if w.GroupSettled() {
		pm.active = false
		return nil, false
	}
	// a classic group's pauses count by the generation the rebalance
	// forms, a consumer group's by group epoch
	gen := g.Epoch()
	if g.State() == PreparingRebalance {
		gen++
	}
	paused = w.scratch.pausedIndexes(w)
	e := pm.entry(g.Incarnation, gen, w.Tick)
	// e.Partitions is the set of partitions the rebalance paused so far,
	// sorted: paused is sorted the same way (the world's input order), so
	// one merge adds those it lacks when there are any (an eager rebalance
	// pauses all 100,000 partitions of a world tick after tick: a search
	// of each, or a sort, every tick cost milliseconds); whether there are
	// is asked of e's partitions as input indexes (pausedSeen), by number,
	// and paused is spelled as partitions only then.
	e.Partitions = w.scratch.pausedSeen.merge(w.layout, e, paused, w.scratch.pausedGen, &w.scratch.pausedBuf)
	e.PartitionTicks += len(paused)
	e.LastTick = w.Tick
	pm.Total += len(paused)
	return paused, true
}

// pausedSeen is a pause entry's partitions as a bitset of input indexes,
// kept from tick to tick in the world's scratch: a tick of a rebalance
// asks whether its paused partitions are all in the entry already (most
// ticks: they are) by number, not by a walk of the entry's list comparing
// topic names. It describes the entry (incarnation, generation) whose
// Partitions list it last saw (its array and length): any other list is
// read anew, once.
type pausedSeen struct {
	inc, gen int
	list     *TopicPartition // &Partitions[0], nil when empty
	n        int
	valid    bool
	bits     []uint64
	// allIn is the paused list (scratch.pausedGen) last found all in
	// bits, 0 for none: the same list again needs no look.
	allIn uint64
}

// merge is mergePartitions(e.Partitions, the input partitions at indexes
// idx), those spelled in *buf (a scratch list) only when some are new;
// idxGen names idx's contents (scratch.pausedGen; 0: unknown).
func (s *pausedSeen) merge(layout *topo.Layout, e *PauseEntry, idx []int32, idxGen uint64, buf *[]TopicPartition) []TopicPartition {
	spell := func() []TopicPartition {
		paused, inputs := (*buf)[:0], layout.Inputs()
		for _, i := range idx {
			paused = append(paused, inputs[i])
		}
		*buf = paused
		return paused
	}
	if !s.valid || s.inc != e.Incarnation || s.gen != e.Generation || s.list != first(e.Partitions) || s.n != len(e.Partitions) {
		words := (len(layout.Inputs()) + 63) / 64
		s.bits = slices.Grow(s.bits[:0], words)[:words]
		clear(s.bits)
		s.valid, s.allIn = false, 0
		var tc topo.TopicCache
		for _, tp := range e.Partitions {
			i, ok := layout.Input().Slot(tp, &tc)
			if !ok || s.bits[i>>6]&(1<<(i&63)) != 0 {
				// not an input partition, or one listed twice: by name
				return mergePartitions(e.Partitions, spell())
			}
			s.bits[i>>6] |= 1 << (i & 63)
		}
		s.inc, s.gen, s.list, s.n, s.valid = e.Incarnation, e.Generation, first(e.Partitions), len(e.Partitions), true
	}
	if idxGen != 0 && s.allIn == idxGen {
		return e.Partitions
	}
	added := 0
	for _, i := range idx {
		if s.bits[i>>6]&(1<<(i&63)) == 0 {
			s.bits[i>>6] |= 1 << (i & 63)
			added++
		}
	}
	if added == 0 {
		s.allIn = idxGen
		return e.Partitions
	}
	// bits is now the union, and e.Partitions was its input partitions
	// (sorted, once each): the union is the inputs at its bits, in the
	// layout's order, which is (topic, partition) order. Spelled from
	// them, not merged by name (an eager rebalance's entry grows a
	// member's partitions at a time to 100,000: a merge comparing topic
	// names at each was 4% of a classic roll).
	inputs := layout.Inputs()
	out := inputs // an eager rebalance's entry: the layout's own (sharedInputs)
	if n := len(e.Partitions) + added; n < len(inputs) {
		out = make([]TopicPartition, 0, n)
		for w, x := range s.bits {
			for x != 0 {
				out = append(out, inputs[w<<6+bits.TrailingZeros64(x)])
				x &= x - 1
			}
		}
	}
	s.list, s.n, s.allIn = first(out), len(out), idxGen
	return out
}

// sharedInputs is out, or the layout's own list of input partitions when
// out holds every one of them: an eager rebalance pauses every partition,
// and its entry, kept for the world's life, would otherwise be a list of
// its own (100,000 partitions: 2.4 MB a rebalance, T2's classic roll one
// a restart). Entries' lists are never written in place (mergePartitions
// makes a new one), so sharing the layout's is safe.
func sharedInputs(layout *topo.Layout, out []TopicPartition) []TopicPartition {
	if in := layout.Inputs(); len(out) == len(in) && len(in) > 0 && &out[0] != &in[0] && slices.Equal(out, in) {
		return in
	}
	return out
}

// first is &l[0], nil for an empty l.
func first(l []TopicPartition) *TopicPartition {
	if len(l) == 0 {
		return nil
	}
	return &l[0]
}

// mergePartitions is the union of have and add, both sorted by
// (topic, partition) without repeats: have itself when add holds nothing
// new, else a new list.
func mergePartitions(have, add []TopicPartition) []TopicPartition {
	missing, i := 0, 0
	for _, tp := range add {
		for i < len(have) && have[i].Less(tp) {
			i++
		}
		if i == len(have) || have[i] != tp {
			missing++
		}
	}
	if missing == 0 {
		return have
	}
	out := make([]TopicPartition, 0, len(have)+missing)
	i = 0
	for _, tp := range add {
		for i < len(have) && have[i].Less(tp) {
			out = append(out, have[i])
			i++
		}
		if i < len(have) && have[i] == tp {
			i++
		}
		out = append(out, tp)
	}
	return append(out, have[i:]...)
}

func (pm *PauseMeter) entry(inc, gen, tick int) *PauseEntry {
	for i := range pm.Entries {
		if pm.Entries[i].Incarnation == inc && pm.Entries[i].Generation == gen {
			return &pm.Entries[i]
		}
	}
	pm.Entries = append(pm.Entries, PauseEntry{Generation: gen, Incarnation: inc, FirstTick: tick, LastTick: tick, Partitions: []TopicPartition{}})
	sort.Slice(pm.Entries, func(i, j int) bool {
		a, b := pm.Entries[i], pm.Entries[j]
		return a.Incarnation < b.Incarnation || (a.Incarnation == b.Incarnation && a.Generation < b.Generation)
	})
	for i := range pm.Entries {
		if pm.Entries[i].Incarnation == inc && pm.Entries[i].Generation == gen {
			return &pm.Entries[i]
		}
	}
	return nil
}

// PausedPartitions lists the subscribed partitions no live member of the
// group is consuming now.
func (w *World) PausedPartitions() []TopicPartition {
	paused := w.scratch.pausedIndexes(w)
	if len(paused) == 0 {
		return nil
	}
	out := make([]TopicPartition, len(paused))
	for k, i := range paused {
		out[k] = w.layout.Inputs()[i]
	}
	return out
}

// pausedIndexes is w's PausedPartitions as input indexes, ascending, in
// its scratch list (s is &w.scratch, whose buffers it owns), valid until
// the next call. It runs
// every tick while a rebalance is under way (PauseMeter.account), so it
// marks subscribed topics (at their first partition's index) and consumed
// partitions in scratch slices indexed like inputTPs instead of building
// sets, and asks fetchable's question without its list.
func (s *scratch) pausedIndexes(w *World) []int32 {
	n := len(w.layout.Inputs())
	if cap(s.markBuf) < n {
		s.markBuf = make([]bool, n)
	}
	subscribed := s.markBuf[:n] // false everywhere between calls
	spans := s.spanBuf[:0]
	anySub := false // a subscribed topic, input or not
members:
	for gm := range w.Group.AllMembers() {
		for _, t := range gm.Topics {
			anySub = true
			if in, ok := w.layout.Span(t); ok && !subscribed[in.At] {
				subscribed[in.At] = true
				if spans = append(spans, in); len(spans) == len(w.Topo.Inputs) {
					break members // all of them
				}
			}
		}
	}
	for _, in := range spans {
		subscribed[in.At] = false
	}
	s.spanBuf = spans
	if !anySub {
		return nil
	}
	slices.SortFunc(spans, func(a, b topo.Span) int { return a.At - b.At }) // the world's input order
	s.consumed.update(&w.processTable, w.layout)
	if s.pausedGen != 0 && s.pausedFrom == s.consumed.gen && slices.Equal(spans, s.pausedSpans) {
		// Nobody's fetch set moved and the same topics are subscribed:
		// the list is the last one (an eager rebalance pauses all
		// 100,000 partitions for hundreds of ticks: a pass over them
		// each tick was a tenth of a classic roll's cost).
		return s.pausedIdx
	}
	idx := s.pausedIdx[:0]
	for _, in := range spans {
		s.consumed.unconsumed(in, func(i int) { idx = append(idx, int32(i)) })
	}
	s.pausedIdx = idx
	s.pausedGen, s.pausedFrom = nextGen(), s.consumed.gen
	s.pausedSpans = append(s.pausedSpans[:0], spans...)
	return idx
}

// GroupSettled is `run until stable`'s condition: the coordinator is Stable,
// no JoinGroup is in flight, and every member is alive and holds its final
// assignment with its offsets fetched.
func (w *World) GroupSettled() bool {
	g := w.Group
	if g.Type() == ConsumerGroup {
		return w.consumerGroupSettled()
	}
	if s := g.State(); s != Stable && s != Empty {
		return false
	}
	for _, p := range w.env.Sending() {
		if p.Type == JoinGroup || p.Type == SyncGroup || p.Type == OffsetFetch || p.Type == FindCoordinator || p.Type == RebalanceNotification {
			return false
		}
	}
	for _, m := range w.current {
		if m.Alive && !m.Zombie && m.Joining() {
			return false
		}
	}
	for gm := range g.AllMembers() {
		m := w.process(gm.ClientID, gm.Inc)
		if m == nil || !m.Alive || m.MemberID != gm.MemberID || !m.Settled() || !slices.Equal(m.Owned, gm.Assignment) {
			return false
		}
	}
	return true
}

// CaughtUp reports whether the group has consumed and committed every
// input record, no transaction is open, no produce is unanswered and every
// live member is back in poll().
func (w *World) CaughtUp() bool {
	if !w.inputsCommitted() {
		return false
	}
	for _, l := range w.broker.Logs() { // every log (Clone copies them from there)
		if l.HasOpenTxn() {
			return false
		}
	}
	for _, m := range w.procs {
		if m.Alive && m.Unsettled() {
			return false
		}
	}
	return true
}

// consumerGroupSettled is `run until stable` for a consumer group: every
// member STABLE at the group epoch with current == target and nothing
// pending revocation, every live process of the group settled with exactly
// what the coordinator says it owns, no coordinator lookup or OffsetFetch
// in flight.
func (w *World) consumerGroupSettled() bool {
	g := w.Group
	if s := g.State(); (s != Stable && s != Empty) || !g.Settled() {
		return false
	}
	for _, p := range w.env.Sending() {
		if p.Type == OffsetFetch || p.Type == FindCoordinator || p.Type == JoinGroup || p.Type == SyncGroup {
			return false
		}
	}
	for _, m := range w.current {
		if m.Alive && !m.Zombie && (m.Phase == PhaseFinding || m.Phase == PhaseJoining || m.Phase == PhaseOut || (m.Consumer() && !m.Settled())) {
			return false
		}
	}
	for gm := range g.AllMembers() {
		if gm.MemberEpoch < 0 {
			continue // a static member away (epoch -2) holds its partitions until it returns
		}
		m := w.process(gm.ClientID, gm.Inc)
		if m == nil || !m.Alive || m.MemberID != gm.MemberID || !m.Settled() || !slices.Equal(m.Owned, wire.SortedView(gm.Assignment)) {
			return false
		}
	}
	return true
}
