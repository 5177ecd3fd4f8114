package sim

import (
	"cmp"
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
	e.Partitions = w.scratch.pausedSeen.merge(w.layout, e, paused, &w.scratch.pausedBuf)
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
}

// merge is mergePartitions(e.Partitions, the input partitions at indexes
// idx), those spelled in *buf (a scratch list) only when some are new.
func (s *pausedSeen) merge(layout *topo.Layout, e *PauseEntry, idx []int32, buf *[]TopicPartition) []TopicPartition {
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
		s.valid = false
		var tc topo.TopicCache
		for _, tp := range e.Partitions {
			i, ok := layout.Input().Slot(tp, &tc)
			if !ok {
				return mergePartitions(e.Partitions, spell()) // not an input partition: by name
			}
			s.bits[i>>6] |= 1 << (i & 63)
		}
		s.inc, s.gen, s.list, s.n, s.valid = e.Incarnation, e.Generation, first(e.Partitions), len(e.Partitions), true
	}
	missing := false
	for _, i := range idx {
		if s.bits[i>>6]&(1<<(i&63)) == 0 {
			missing = true
			break
		}
	}
	if !missing {
		return e.Partitions
	}
	out := mergePartitions(e.Partitions, spell())
	for _, i := range idx {
		s.bits[i>>6] |= 1 << (i & 63)
	}
	out = sharedInputs(layout, out)
	s.list, s.n = first(out), len(out)
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
	idx := s.pausedIdx[:0]
	for _, in := range spans {
		s.consumed.unconsumed(in, func(i int) { idx = append(idx, int32(i)) })
	}
	s.pausedIdx = idx
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

// ReadRecord is one record as the audit reader returns it.
type ReadRecord struct {
	Partition TopicPartition
	Offset    int
	Value     string
	Source    string
	Aborted   bool
	Open      bool
}

// ReadTopic is the audit reader: the topic from offset 0 at an isolation
// level. read_committed stops at the LSO and skips aborted records;
// read_uncommitted reads to the high watermark and sees them.
func (w *World) ReadTopic(topic, isolation string) []ReadRecord {
	var out []ReadRecord
	for _, tp := range append(append([]TopicPartition{}, w.layout.Inputs()...), w.layout.Outputs()...) {
		if tp.Topic != topic {
			continue
		}
		l := w.broker.Log(tp)
		for i, c := range l.Cells.All() {
			if !c.IsData() {
				continue
			}
			if isolation == "read_committed" && !l.ReadCommitted(i) {
				continue
			}
			out = append(out, ReadRecord{Partition: tp, Offset: i, Value: c.Value, Source: c.Source,
				Aborted: c.Txn == TxnAborted, Open: c.Txn == TxnOpen})
		}
	}
	return out
}

// Counts are the delivery counters as a reader at one isolation level sees invoices.
type Counts struct {
	Duplicates     int      // invoices beyond the first per input record
	Lost           int      // input records before the committed offset with no invoice
	DuplicateNames []string // input records with more than one invoice
	LostNames      []string
	// HeldBack counts records whose committed invoice a read_committed reader
	// cannot see yet because it lies past the LSO; they are not lost.
	HeldBack      int
	HeldBackNames []string
}

// Delivery computes duplicates and lost records at an isolation level.
// The explorer asks it at the end of every branch, so it reads the output
// logs in place (what ReadTopic of the output topic returns) as runs of
// the input records their invoices name (CellLog.Runs: a batch's, kept as
// one span, read as its runs), and merges the runs of each input
// partition in offset order: a stretch of offsets that no run begins or
// ends in is judged as a whole when it can be (covered once by a run of
// every record, or by one filtered run of each output partition: no
// duplicate, nothing lost), record by record only where its runs do not
// say (a stretch some output partitions' filtered runs miss, or one that
// is lost or written twice: names to report). Its cost is per run, not
// per input record: it allocates its runs and the names it reports.
func (w *World) Delivery(isolation string) Counts {
	inputs, outputs := w.layout.Inputs(), w.layout.Outputs()
	if len(outputs) > maxGap {
		return deliveryPerRecord(w, isolation)
	}
	committed := isolation == "read_committed"
	var runs []deliveryRun
	var odd map[string]int // sources that are no input record's name
	ch := deliveryChains{w: w, open: make([]deliveryRun, len(inputs)), outs: len(outputs)}
	for p := range ch.open {
		ch.open[p].hi = -1
	}
	for slot, tp := range outputs {
		l := w.broker.Log(tp)
		lso, hw := l.LSO(), l.HW()
		cut := hw // read_uncommitted: every cell is visible, none to split
		if committed {
			cut = lso
		}
		for r := range l.Cells.Runs(cut, hw) {
			visible := !committed || r.I < lso && r.Txn != TxnAborted && r.Txn != TxnOpen
			heldBack := committed && r.I >= lso && (r.Txn == TxnCommitted || r.Txn == NotTransactional)
			switch {
			case !visible && !heldBack:
			case !r.OK && visible: // cells of one source (CellRun)
				if odd == nil {
					odd = map[string]int{}
				}
				odd[l.Cells.At(r.I).Source] += r.N
			case !r.OK: // held back, and no input record's: nothing is looked up by it
			default:
				runs = ch.add(runs, deliveryRun{part: int32(r.Part), lo: int32(r.First), hi: int32(r.Last), slot: -1, held: !visible},
					r.Filtered, r.N, slot)
			}
		}
		runs = ch.flush(runs)
	}
	var c Counts
	for s, n := range odd {
		if n > 1 {
			c.Duplicates += n - 1
			c.DuplicateNames = append(c.DuplicateNames, s)
		}
	}
	// The runs by partition and first offset, and by partition and last
	// offset: a merge of the two walks each partition's offsets.
	slices.SortFunc(runs, func(a, b deliveryRun) int { return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.lo, b.lo)) })
	ends := slices.Clone(runs)
	slices.SortFunc(ends, func(a, b deliveryRun) int { return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.hi, b.hi)) })
	m := deliveryMerge{w: w, c: &c, fV: make([]int32, len(outputs)), fH: make([]int32, len(outputs))}
	for p, tp := range inputs {
		n := 0
		for n < len(runs) && int(runs[n].part) == p {
			n++
		}
		limit := 0 // lost below it: the committed offset, within the log
		if rec, ok := w.Group.Offsets.CommittedOffset(tp); ok {
			limit = min(rec, w.broker.Log(tp).HW())
		}
		m.partition(tp, runs[:n], ends[:n], limit)
		runs, ends = runs[n:], ends[n:]
	}
	sort.Strings(c.DuplicateNames)
	return c
}

// deliveryRun is a run of invoices as Delivery merges it: of records lo
// to hi of the input partition numbered part, every one (slot -1) or
// those the partitioner sends to output partition slot; held when a
// read_committed reader cannot see them yet (past the LSO), else visible.
type deliveryRun struct {
	part, lo, hi, slot int32
	held               bool
}

// deliveryChains joins the runs of one output log (partition slot) of
// each input partition into longer ones as Delivery reads them: an
// output partition's runs of an input partition are its share of the
// batches that partition's records went out in, one after the other, so
// a run of slot's records from lo to hi followed by one from hi' > hi on
// are one run from lo on when no record between them is slot's (the
// partitioner says, for each record between: at most maxGap of them
// asked; a gap longer is left as it is). A run of one record of slot's
// is one of its filtered runs too; so is any run with a single output
// partition. open is the run being joined for each input partition
// (hi < lo: none), in the log being read.
type deliveryChains struct {
	w     *World
	open  []deliveryRun
	parts []topo.Partitioner // by input partition, made when first asked
	made  []bool
	outs  int
	buf   []int32 // Slots' scratch
}

const maxGap = 1 << 12

func (ch *deliveryChains) partitioner(p int) topo.Partitioner {
	if ch.parts == nil {
		ch.parts, ch.made = make([]topo.Partitioner, len(ch.open)), make([]bool, len(ch.open))
	}
	if !ch.made[p] {
		ch.parts[p], ch.made[p] = ch.w.layout.Partitioner(ch.w.layout.Inputs()[p]), true
	}
	return ch.parts[p]
}

// add adds run r (n records, filtered or every one of its range) of
// output partition slot to runs, joined to the open run of its input
// partition when it can be.
func (ch *deliveryChains) add(runs []deliveryRun, r deliveryRun, filtered bool, n, slot int) []deliveryRun {
	p := int(r.part)
	switch {
	case filtered:
		r.slot = int32(slot)
	case ch.outs == 1 || n == 1 && ch.partitioner(p).Slot(int(r.lo)) == slot:
		r.slot = int32(slot) // every record of its range is slot's
	default:
		return append(runs, r) // a run of records of other partitions too: as it is
	}
	o := &ch.open[p]
	if o.hi >= o.lo && o.held == r.held && r.lo > o.hi && ch.noneBetween(p, int(o.hi)+1, int(r.lo), slot) {
		o.hi = r.hi
		return runs
	}
	if o.hi >= o.lo {
		runs = append(runs, *o)
	}
	*o = r
	return runs
}

// noneBetween reports whether no record of input partition p from offset
// from to to-1 goes to output partition slot, asking at most maxGap.
func (ch *deliveryChains) noneBetween(p, from, to, slot int) bool {
	if from >= to || ch.outs == 1 { // one output partition: every record between is slot's
		return from >= to
	}
	if to-from > maxGap {
		return false
	}
	ch.buf = slices.Grow(ch.buf[:0], to-from)[:to-from]
	ch.partitioner(p).Slots(from, ch.buf)
	return !slices.Contains(ch.buf, int32(slot))
}

// flush adds the open runs to runs, at the end of a log.
func (ch *deliveryChains) flush(runs []deliveryRun) []deliveryRun {
	for p := range ch.open {
		if o := &ch.open[p]; o.hi >= o.lo {
			runs = append(runs, *o)
			*o = deliveryRun{hi: -1}
		}
	}
	return runs
}

// deliveryMerge is Delivery's walk of one input partition's offsets at a
// time: the visible and held runs over the stretch it is at, unfiltered
// (uV, uH) and filtered by output partition (fV, fH, back to zeros after
// each partition), with how many output partitions have a visible
// filtered run (geV1) and two or more (geV2), and how many filtered runs
// are open (nF).
type deliveryMerge struct {
	w              *World
	c              *Counts
	uV, uH         int
	fV, fH         []int32
	geV1, geV2, nF int
}

func (m *deliveryMerge) apply(r deliveryRun, d int32) {
	switch {
	case r.slot < 0 && r.held:
		m.uH += int(d)
	case r.slot < 0:
		m.uV += int(d)
	case r.held:
		m.fH[r.slot] += d
		m.nF += int(d)
	default:
		was := m.fV[r.slot]
		m.fV[r.slot] += d
		m.nF += int(d)
		now := m.fV[r.slot]
		if was < 1 && now >= 1 {
			m.geV1++
		} else if was >= 1 && now < 1 {
			m.geV1--
		}
		if was < 2 && now >= 2 {
			m.geV2++
		} else if was >= 2 && now < 2 {
			m.geV2--
		}
	}
}

// partition walks input partition tp: its runs by first offset
// (starts) and by last (ends), offsets below limit lost when no invoice
// of theirs is seen.
func (m *deliveryMerge) partition(tp TopicPartition, starts, ends []deliveryRun, limit int) {
	const none = int(^uint(0) >> 1)
	pos, si, ei := 0, 0, 0
	for {
		next := none
		if si < len(starts) {
			next = int(starts[si].lo)
		}
		if ei < len(ends) && int(ends[ei].hi)+1 < next {
			next = int(ends[ei].hi) + 1
		}
		if next == none {
			m.stretch(tp, pos, limit-1, limit)
			return
		}
		if pos < next {
			m.stretch(tp, pos, next-1, limit)
		}
		pos = next
		for si < len(starts) && int(starts[si].lo) == pos {
			m.apply(starts[si], 1)
			si++
		}
		for ei < len(ends) && int(ends[ei].hi)+1 == pos {
			m.apply(ends[ei], -1)
			ei++
		}
	}
}

// stretch judges offsets x to y of input partition tp, over which the
// runs are the same: whole when they say, else record by record.
func (m *deliveryMerge) stretch(tp TopicPartition, x, y, limit int) {
	if x > y {
		return
	}
	outs := len(m.fV)
	noDup := m.uV == 0 && m.geV2 == 0 || m.uV == 1 && m.geV1 == 0
	lostTo := min(y, limit-1)
	allSeen := m.uV >= 1 || outs > 0 && m.geV1 == outs
	if noDup && (lostTo < x || allSeen) {
		return
	}
	to := y
	if noDup {
		to = lostTo
	}
	var part topo.Partitioner
	if m.nF > 0 {
		part = m.w.layout.Partitioner(tp)
	}
	for off := x; off <= to; off++ {
		v, h := m.uV, m.uH
		if m.nF > 0 {
			s := part.Slot(off)
			v, h = v+int(m.fV[s]), h+int(m.fH[s])
		}
		switch {
		case v > 1:
			m.c.Duplicates += v - 1
			m.c.DuplicateNames = append(m.c.DuplicateNames, m.w.layout.Name(tp, off))
		case v == 0 && off <= lostTo && h > 0:
			m.c.HeldBack++
			m.c.HeldBackNames = append(m.c.HeldBackNames, m.w.layout.Name(tp, off))
		case v == 0 && off <= lostTo:
			m.c.Lost++
			m.c.LostNames = append(m.c.LostNames, m.w.layout.Name(tp, off))
		}
	}
}

// Processed counts records the members have processed.
func (w *World) Processed() int { return w.processed }

// Lag is the log end minus the committed offset, per input partition.
func (w *World) Lag(tp TopicPartition) int {
	hw := w.broker.Log(tp).HW()
	if rec, ok := w.Group.Offsets.CommittedOffset(tp); ok {
		return hw - rec
	}
	return hw
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

// inputsCommitted reports whether no input partition lags (Lag is 0 for
// each), reading each by its slot: its log is logAt[i], its commit the
// offset table's slot i.
func (w *World) inputsCommitted() bool {
	for i := range w.layout.Inputs() {
		lag := w.broker.Logs()[i].HW()
		if rec, ok := w.Group.Offsets.CommittedAt(i); ok {
			lag -= rec
		}
		if lag != 0 {
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
