package broker

import (
	"fmt"
	"math"
	"slices"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Steady production in closed form. An input partition's steady upstream
// producer (sim/traffic.go) appends Rate.Due records by each tick; rather
// than a tick run per partition per tick, its log keeps one segment, "from
// offset F, the producer's records from its k-th on, started at tick S at
// rate R", whose end and whose records' ticks are computed from the
// steady clock (how far production has gone). A user's append, a new rate
// and a stop close the segment where it stands; the first two open the
// next one (CellLog.appendUpstream, Log.setSteady). So steady traffic
// costs nothing per tick per partition: the leader only wakes, at the
// tick a record arrives for it, a Fetch it holds (Broker.ProduceSteady).

// Rate is Records records every Ticks ticks (both at least 1), kept as
// the exact fraction the user gave, reduced (sim.NewRate).
type Rate struct {
	Records int64
	Ticks   int64
}

// String spells the rate as the kernel's syntax takes it: "2/tick",
// "1/10ticks".
func (r Rate) String() string {
	if r.Ticks == 1 {
		return fmt.Sprintf("%d/tick", r.Records)
	}
	return fmt.Sprintf("%d/%dticks", r.Records, r.Ticks)
}

// Due is how many records a producer at this rate has appended n ticks
// after it started: ceil(Records x n / Ticks), so the first arrive at the
// first tick after the start and the rest follow evenly (1/10ticks
// appends at ticks 1, 11, 21, ... after the start; 3/2ticks 2, 1, 2, 1).
func (r Rate) Due(n int) int64 {
	if n <= 0 {
		return 0
	}
	return (r.Records*int64(n) + r.Ticks - 1) / r.Ticks
}

// TickOf is the tick, counted from the start, at which a producer at this
// rate appends its record j (from 0): the first n with Due(n) > j, that
// is floor(j x Ticks / Records) + 1.
func (r Rate) TickOf(j int64) int {
	return int(j*r.Ticks/r.Records) + 1
}

// AppendsAt reports whether a producer at this rate appends a record n
// ticks after it started.
func (r Rate) AppendsAt(n int) bool { return n > 0 && r.Due(n) > r.Due(n-1) }

// steadySeg is a run of a steady producer's records in closed form: from
// offset first on, the producer's records sent0, sent0+1, ... of a
// producer started at tick since at rate (record j appended at since +
// rate.TickOf(j)). It ends where the next run starts, or, while it is its
// log's open segment (the last run), at what the producer has sent by
// the steady clock. Never changed once appended (clones share it).
type steadySeg struct {
	rate  Rate
	sent0 int64
	since int32
}

// tickOf is the tick of the segment's record at offset i, the segment
// starting at offset first.
func (s steadySeg) tickOf(first, i int) int32 {
	return s.since + int32(s.rate.TickOf(s.sent0+int64(i-first)))
}

// sentBy is how many records the segment's producer has sent by tick t.
func (s steadySeg) sentBy(t int) int64 { return s.rate.Due(t - int(s.since)) }

// logSteady is a log's steady production: its segments (append-only:
// copies share them, capacity cut), whether the last is open, the clock
// it reads and the log's number (which the clock reads while the leader
// wakes held fetches). A log that never had a rate keeps none
// (CellLog.st nil, 8 bytes a log); the leader keeps them all in one array
// (Broker.steadies), made at the first rate, which a copy copies in one
// allocation.
//
// cur is the open segment, segs' last while open, and n0 the log's cell
// count when it opened (which stays so while it is open: an append closes
// it first), kept here too so that the log's end (CellLog.Len), read for
// every partition of every Fetch, is read from this array alone
// (Broker.steadyEnd) without going to the log or to segs.
type logSteady struct {
	open  bool
	num   int32
	n0    int32
	clock *Clock
	cur   steadySeg
	segs  []steadySeg
}

// end is the end of the log whose open segment this is (st.open):
// CellLog.Len.
func (st *logSteady) end() int { return int(st.n0) + st.openCount() }

// steadyEnd is the end (Log.HW) of the log numbered num when it has
// steady production, read from Broker.steadies alone; false without.
func (b *Broker) steadyEnd(num int) (int, bool) {
	if uint(num) >= uint(len(b.steadies)) || !b.steadies[num].open {
		return 0, false
	}
	// st.end(), with the division of Rate.Due kept from the last read:
	// a Fetch's partitions mostly share their producers' rate and start
	// (T2's 100,000 all do), so one answers for the rest.
	st := &b.steadies[num]
	n := b.due.of(st.cur.rate, st.clock.at(st.num)-int(st.cur.since)) - st.cur.sent0
	if n > math.MaxInt32 {
		panic("sim: a steady segment holds more than 2^31 records (the kernel bounds a world's records)")
	}
	return int(st.n0) + int(n), true
}

// dueMemo is the last Rate.Due steadyEnd computed (the zero value none:
// an open segment's rate has Ticks at least 1).
type dueMemo struct {
	rate Rate
	n    int
	due  int64
}

func (m *dueMemo) of(r Rate, n int) int64 {
	if r != m.rate || n != m.n {
		m.rate, m.n, m.due = r, n, r.Due(n)
	}
	return m.due
}

// Clock is how far steady production has gone: every record due by tick
// Through is in the logs. While the leader wakes the Fetches it holds at
// the start of tick Through+1 (Broker.ProduceSteady), partition by
// partition in number order as the producers appended them one by one,
// the logs numbered up to upto are at Through+1 already (-1: none).
type Clock struct {
	through int
	upto    int
}

// at is the tick steady production has reached in the log numbered num.
func (k *Clock) at(num int32) int {
	if k == nil {
		return 0
	}
	if int(num) <= k.upto {
		return k.through + 1
	}
	return k.through
}

// openCount is how many records the open segment holds now (0 without
// one).
func (c *CellLog) openCount() int {
	if c.st == nil || !c.st.open {
		return 0
	}
	return c.st.openCount()
}

// openCount is how many records the open segment holds now.
func (st *logSteady) openCount() int {
	n := st.cur.sentBy(st.clock.at(st.num)) - st.cur.sent0
	if n > math.MaxInt32 {
		panic("sim: a steady segment holds more than 2^31 records (the kernel bounds a world's records)")
	}
	return int(n)
}

// closeSeg ends the open segment where it stands (its records become part
// of n) and returns it (ok false without one).
func (c *CellLog) closeSeg() (s steadySeg, sent int64, ok bool) {
	if c.st == nil || !c.st.open {
		return steadySeg{}, 0, false
	}
	s = c.st.cur
	k := c.openCount()
	c.n += k
	store.Int32Of(c.n, "input offset")
	c.st.open = false
	return s, s.sent0 + int64(k), true
}

// openSeg starts a segment at offset n for a producer started at tick
// since at rate that has sent sent records.
func (c *CellLog) openSeg(rate Rate, since int, sent int64) {
	c.runs.Append(tickRun{first: store.Int32Of(c.n, "input offset"), tick: -1 - store.Int32Of(len(c.st.segs), "steady segments")})
	c.st.cur = steadySeg{rate: rate, sent0: sent, since: store.Int32Of(since, "tick")}
	c.st.n0 = int32(c.n) // checked above
	c.st.segs = append(c.st.segs, c.st.cur)
	c.st.open = true
}

// setSteady makes the log's upstream producer steady at rate from tick
// since on (its records from since+1), counted from 0: a rate it had is
// ended where it stands. st is where the log keeps it.
func (l *Log) setSteady(st *logSteady, rate Rate, since int) {
	if l.Cells.inRecs {
		panic("sim: steady production on " + l.TP.String() + ", which holds cells other than upstream records")
	}
	l.Cells.closeSeg()
	l.Cells.st = st
	l.Cells.openSeg(rate, since, 0)
}

// Steady reports whether the log has steady production.
func (l *Log) Steady() bool { return l.Cells.st != nil && l.Cells.st.open }

// openSeg is the log's open segment, if it has one.
func (l *Log) openSeg() (steadySeg, bool) {
	if !l.Steady() {
		return steadySeg{}, false
	}
	return l.Cells.st.cur, true
}

// nextTick is the tick of the next record the segment's producer appends
// after tick t.
func (s steadySeg) nextTick(t int) int { return int(s.since) + s.rate.TickOf(s.sentBy(t)) }

// steadyAppendsAt reports whether the steady producer of the log numbered
// num appends at tick t, read from Broker.steadies alone (the log itself
// not read: a cache miss each); false without one.
func (b *Broker) steadyAppendsAt(num, t int) bool {
	if uint(num) >= uint(len(b.steadies)) || !b.steadies[num].open {
		return false
	}
	s := &b.steadies[num].cur
	return s.rate.AppendsAt(t - int(s.since))
}

// SetSteady makes each of tps' upstream producer steady at rate from
// tick since (Log.setSteady); StopSteady ends it. Both are inputs between
// ticks; the held Fetches' wake ticks are set again once for all.
func (b *Broker) SetSteady(tps []wire.TopicPartition, rate Rate, since int) {
	for _, tp := range tps {
		if b.perTick != nil {
			b.perTick.set(b, tp, rate, since)
			continue
		}
		l, num := b.logIndexed(tp)
		if b.steadies == nil {
			b.steadies = make([]logSteady, len(b.layout.Inputs()))
		}
		st := &b.steadies[num]
		st.clock, st.num = &b.clock, int32(num)
		l.setSteady(st, rate, since)
	}
	b.rewake()
}

// StopSteady ends each of tps' steady production where it stands.
func (b *Broker) StopSteady(tps []wire.TopicPartition) {
	for _, tp := range tps {
		if b.perTick != nil {
			b.perTick.stop(tp)
			continue
		}
		b.Log(tp).Cells.closeSeg()
	}
	b.rewake()
}

// ProduceSteady moves steady production to tick now, at the start of the
// tick (after the deliveries, so the answers to fetches held for these
// records are sent this tick and delivered the next, as any answer). The
// records are there by the clock; what costs is only waking the Fetches
// held for them, at the tick their first record arrives, in the order the
// producers appended (by partition number), each answer reading the logs
// before its partition at now and the rest at now-1, as one append after
// another left them.
func (b *Broker) ProduceSteady(now int) {
	if b.perTick != nil {
		b.perTick.produce(b, now)
		b.clock.through = now
		return
	}
	if b.nextWake > now {
		b.clock.through = now
		return
	}
	// The held Fetches a record arrives for now, as (partition number,
	// place in parked) pairs: answered partition by partition in number
	// order, each partition's in the order they were held, as one
	// answerParked per appended partition would, without looking at every
	// held Fetch per appended partition.
	wakes := b.wakeBuf[:0]
	var run topicRun
	for k, pf := range b.parked {
		if pf.wake > now {
			continue
		}
		r := pf.pkt.Body.(*wire.FetchRequest)
		for j, tp := range r.Partitions {
			i, ok := fetchSlot(r, j)
			if i < 0 {
				i, ok = run.number(b.layout, tp)
			}
			if ok && b.steadyAppendsAt(i, now) {
				wakes = append(wakes, newWakePair(i, k))
			}
		}
	}
	b.wakeBuf = wakes
	if len(wakes) > 0 {
		// The first answerParked drops every held Fetch its process no
		// longer waits for.
		b.dropUnwaited(wakes)
		b.sortWakes(wakes) // by partition number, then place
		answered := false
		for _, w := range wakes {
			if w.at() < 0 {
				continue
			}
			pf := &b.parked[w.at()]
			if pf.pkt == nil {
				continue
			}
			b.clock.upto = w.num()
			if b.answerHeld(pf.pkt) != nil {
				pf.pkt, answered = nil, true
			}
		}
		if answered {
			keep := b.parked[:0]
			for _, pf := range b.parked {
				if pf.pkt != nil {
					keep = append(keep, pf)
				}
			}
			clear(b.parked[len(keep):])
			b.parked = keep
		}
	}
	b.clock.through, b.clock.upto = now, -1
	// A held Fetch not woken now keeps its wake tick (no record arrived
	// for it between the tick its wake was set and its wake); the ones
	// woken and still held wait for their next record.
	b.nextWake = math.MaxInt
	for i := range b.parked {
		pf := &b.parked[i]
		if pf.wake <= now {
			pf.wake = b.wakeOf(pf.pkt)
		}
		b.nextWake = min(b.nextWake, pf.wake)
	}
}

// wakePair is a held Fetch (its place in Broker.parked, at) woken by a
// record steady production appends to the partition numbered num: num in
// the high 32 bits, at+1 in the low (0 for a Fetch dropped since), so
// that the pairs sort as integers, by partition number, then place (a
// tick of 1 record/s on 100,000 partitions wakes 100,000 pairs at once).
type wakePair uint64

func newWakePair(num, at int) wakePair { return wakePair(uint64(num)<<32 | uint64(uint32(at+1))) }
func (w wakePair) num() int            { return int(w >> 32) }
func (w wakePair) at() int             { return int(uint32(w)) - 1 }

// sortWakes sorts wakes in ascending order, as slices.Sort does. Many
// (a tick of 1 record/s on 100,000 partitions wakes 100,000 pairs at
// once, and a comparison sort of them was a tenth of that tick) are
// sorted by their digits, least significant first, eleven bits at a time
// in each half (a partition's number, its place): one pass counts every
// digit, then one pass a digit moves the pairs, passing over a digit
// every pair has alike; ties are equal pairs, so the order is the one
// slices.Sort gives.
func (b *Broker) sortWakes(wakes []wakePair) {
	if len(wakes) < 1024 {
		slices.Sort(wakes)
		return
	}
	if cap(b.wakeTmp) < len(wakes) {
		b.wakeTmp = make([]wakePair, len(wakes))
	}
	if b.wakeCounts == nil {
		b.wakeCounts = new([len(wakeDigits)][1 << 11]int32)
	}
	c := b.wakeCounts
	clear(c[:])
	for _, w := range wakes {
		c[0][w&0x7ff]++
		c[1][w>>11&0x7ff]++
		c[2][w>>22&0x3ff]++
		c[3][w>>32&0x7ff]++
		c[4][w>>43&0x7ff]++
		c[5][w>>54&0x3ff]++
	}
	src, dst := wakes, b.wakeTmp[:len(wakes)]
	for d, dig := range wakeDigits {
		mask := wakePair(1)<<dig.bits - 1
		count := c[d][:mask+1]
		if int(count[src[0]>>dig.shift&mask]) == len(src) {
			continue // one digit for all
		}
		sum := int32(0)
		for i, n := range count {
			count[i] = sum
			sum += n
		}
		for _, w := range src {
			k := w >> dig.shift & mask
			dst[count[k]] = w
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &wakes[0] {
		copy(wakes, src)
	}
}

// wakeDigits are sortWakes' digits, least significant first: the low
// half (a place) and the high (a partition's number) in three each.
var wakeDigits = [...]struct{ shift, bits uint }{{0, 11}, {11, 11}, {22, 10}, {32, 11}, {43, 11}, {54, 10}}

// dropUnwaited drops the held Fetches whose process no longer waits for
// them, renumbering wakes' places in parked (-1 for a dropped one).
func (b *Broker) dropUnwaited(wakes []wakePair) {
	var moved []int32 // old place -> new, made at the first drop
	keep := b.parked[:0]
	for k, pf := range b.parked {
		r := pf.pkt.Body.(*wire.FetchRequest)
		if !b.senders.FetchWaiting(pf.pkt.From, pf.pkt.FromInc, r.ID) {
			if moved == nil {
				moved = make([]int32, len(b.parked))
				for j := range k {
					moved[j] = int32(j)
				}
			}
			moved[k] = -1
			b.env.DropHeldFetch(pf.pkt)
			continue
		}
		if moved != nil {
			moved[k] = int32(len(keep))
		}
		keep = append(keep, pf)
	}
	if moved == nil {
		return
	}
	clear(b.parked[len(keep):])
	b.parked = keep
	for i, w := range wakes {
		wakes[i] = newWakePair(w.num(), int(moved[w.at()]))
	}
}

// wakeOf is the tick a held Fetch is next answered by steady production:
// the first record after steady production's tick on one of its
// partitions.
func (b *Broker) wakeOf(p *wire.Packet) int {
	wake := math.MaxInt
	var run topicRun
	r := p.Body.(*wire.FetchRequest)
	for j, tp := range r.Partitions {
		i, ok := fetchSlot(r, j)
		if i < 0 {
			i, ok = run.number(b.layout, tp)
		}
		if ok && uint(i) < uint(len(b.steadies)) && b.steadies[i].open {
			wake = min(wake, b.steadies[i].cur.nextTick(b.clock.through))
		}
	}
	return wake
}

// rewake sets the wake tick of every held Fetch, and the next of them.
func (b *Broker) rewake() {
	b.nextWake = math.MaxInt
	for i := range b.parked {
		pf := &b.parked[i]
		pf.wake = b.wakeOf(pf.pkt)
		b.nextWake = min(b.nextWake, pf.wake)
	}
}

// SteadyClock is the tick steady production has reached.
func (b *Broker) SteadyClock() int { return b.clock.through }

// perTickProducers is the test-only path that appends every steady
// producer's records tick by tick, as a tick run per partition per tick
// (PerTickForTest): the oracle the closed form is checked against.
type perTickProducers struct {
	ps []perTickProducer
}

type perTickProducer struct {
	tp    wire.TopicPartition
	num   int
	rate  Rate
	since int
	sent  int64
}

// ClosedForm reports whether b keeps steady production in closed form
// (always, but for PerTickForTest's oracle).
func (b *Broker) ClosedForm() bool { return b.perTick == nil }

// PerTickForTest makes b append its steady producers' records tick by
// tick (tests only: before any rate is set).
func (b *Broker) PerTickForTest() { b.perTick = &perTickProducers{} }

func (p *perTickProducers) set(b *Broker, tp wire.TopicPartition, rate Rate, since int) {
	p.stop(tp)
	_, num := b.logIndexed(tp)
	p.ps = append(p.ps, perTickProducer{tp: tp, num: num, rate: rate, since: since})
	slices.SortStableFunc(p.ps, func(a, c perTickProducer) int { return a.num - c.num })
}

func (p *perTickProducers) stop(tp wire.TopicPartition) {
	p.ps = slices.DeleteFunc(p.ps, func(q perTickProducer) bool { return q.tp == tp })
}

func (p *perTickProducers) produce(b *Broker, now int) {
	for i := range p.ps {
		q := &p.ps[i]
		due := q.rate.Due(now - q.since)
		if n := due - q.sent; n > 0 {
			b.Append(q.tp, int(n))
			q.sent = due
		}
	}
}

func (p *perTickProducers) clone() *perTickProducers {
	if p == nil {
		return nil
	}
	return &perTickProducers{ps: slices.Clone(p.ps)}
}

// SteadyEnd is Log.HW of the log numbered num when it has steady
// production (steadyEnd), read from Broker.steadies alone; false without.
func (b *Broker) SteadyEnd(num int) (int, bool) { return b.steadyEnd(num) }

// SteadyTickAt is CellLog.TickAt(i) of the log numbered num when i is in
// its open steady segment (from the offset it opened at to the end), read
// from Broker.steadies alone; false otherwise (the log knows it).
func (b *Broker) SteadyTickAt(num, i int) (int, bool) {
	if uint(num) >= uint(len(b.steadies)) || !b.steadies[num].open {
		return 0, false
	}
	st := &b.steadies[num]
	if i < int(st.n0) || i >= st.end() {
		return 0, false
	}
	return int(st.cur.tickOf(int(st.n0), i)), true
}

// SteadyBase is Log.SteadyBase of the input log numbered num, read from
// Broker.steadies alone while it has steady production (its cell count is
// n0 then: an append closes the segment first), as steadyEnd reads its
// end: the lag meter reads it for every partition whose committed offset
// was written (T2's auto-commits: 100,000 partitions every 5 s), and the
// log's first read was a cache miss each.
func (b *Broker) SteadyBase(num int) (base int64, rate Rate, since int, ok bool) {
	if uint(num) < uint(len(b.steadies)) && b.steadies[num].open {
		st := &b.steadies[num]
		return int64(st.n0) - st.cur.sent0, st.cur.rate, int(st.cur.since), true
	}
	return b.logs[num].SteadyBase()
}

// SteadyBase is the log's high watermark as a function of steady
// production's tick t: base + rate.Due(t - since) while it has steady
// production (ok), else base, the high watermark, for every t.
func (l *Log) SteadyBase() (base int64, rate Rate, since int, ok bool) {
	s, ok := l.openSeg()
	if !ok {
		return int64(l.HW()), Rate{}, 0, false
	}
	return int64(l.Cells.n) - s.sent0, s.rate, int(s.since), true
}
