package sim

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// Steady production (SPEC §3a): an upstream producer that keeps appending
// to an input partition as time passes, at a rate, beside the page's
// finite backlog (records.per.partition, and `produce TOPIC-P N`). A rate
// is part of the world's state, set by an input (ProduceRate), so a copy,
// a replay, back, fork, save and load all produce exactly the same records
// at the same ticks.

// Rate is Records records every Ticks ticks (both at least 1), kept as the
// exact fraction the user gave, reduced: 2 records a tick, 1 every 10
// ticks, 3 every 7. A rate in records per second (real time) is converted
// to ticks once, by RatePerSecond. The partition leader keeps a steady
// producer's records in closed form from it (sim/broker/steady.go: Due,
// TickOf).
type Rate struct {
	Records int64
	Ticks   int64
}

// String spells the rate as the kernel's syntax takes it: "2/tick",
// "1/10ticks".
func (r Rate) String() string { return broker.Rate(r).String() }

// Due is how many records a producer at this rate has appended n ticks
// after it started: ceil(Records x n / Ticks), so the first arrive at the
// first tick after the start and the rest follow evenly (1/10ticks
// appends at ticks 1, 11, 21, ... after the start; 3/2ticks 2, 1, 2, 1).
func (r Rate) Due(n int) int64 { return broker.Rate(r).Due(n) }

// MaxRateTerm bounds each term of a rate: a rate's records and ticks, and
// a world's sum of rates, stay far from overflowing the int64 arithmetic
// that schedules them (Rate.Due multiplies a term by a tick count of at
// most 10^7, the kernel's clock limit).
const MaxRateTerm = 1_000_000_000

// NewRate is records every ticks ticks, reduced; refused (naming the rule)
// when either is below 1 or past MaxRateTerm.
func NewRate(records, ticks int64) (Rate, error) {
	if records < 1 {
		return Rate{}, fmt.Errorf("a rate's records must be at least 1, not %d (produce --stop ends steady production)", records)
	}
	if ticks < 1 {
		return Rate{}, fmt.Errorf("a rate's period must be at least 1 tick, not %d", ticks)
	}
	if records > MaxRateTerm || ticks > MaxRateTerm {
		return Rate{}, fmt.Errorf("a rate of %d records every %d ticks is out of range (each at most %d)", records, ticks, MaxRateTerm)
	}
	g := gcd(records, ticks)
	return Rate{Records: records / g, Ticks: ticks / g}, nil
}

// RatePerSecond is the one place a rate in records per second becomes a
// rate in ticks: with a tick of tickMS milliseconds, r records a second
// are r x tickMS records every 1,000 ticks, exactly (no rounding: the
// schedule spreads them evenly, Rate.Due). Real time (set time ms,
// tick.ms) calls it for `produce --rate R/s`; RatePer for R/m, R/h, R/ms.
func RatePerSecond(r, tickMS int64) (Rate, error) { return RatePer(r, 1000, tickMS) }

// RatePer is r records every periodMS milliseconds, with a tick of tickMS
// milliseconds: r x tickMS records every periodMS ticks, exactly.
func RatePer(r, periodMS, tickMS int64) (Rate, error) {
	if tickMS < 1 {
		return Rate{}, fmt.Errorf("tick.ms must be at least 1, not %d", tickMS)
	}
	if r < 1 {
		return Rate{}, fmt.Errorf("a rate must be at least 1 record, not %d (produce --stop ends steady production)", r)
	}
	if r > MaxRateTerm/tickMS {
		return Rate{}, fmt.Errorf("a rate of %d records every %d ms is out of range (at most %d with tick.ms %d)", r, periodMS, MaxRateTerm/tickMS, tickMS)
	}
	return NewRate(r*tickMS, periodMS)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// SteadyProducer is one input partition's steady upstream producer.
type SteadyProducer struct {
	TP    TopicPartition
	Rate  Rate
	Since int   // the tick it started at (its first records come at Since+1)
	Sent  int64 // records it appended so far (SteadyProducers: Rate.Due since Since)
}

// steadyProducers are a world's steady producers, in the order of their
// partitions' numbers (the world's sorted input order), Sent not kept
// (the leader's logs hold their records in closed form). A slice of
// values: World.clone copies it.
type steadyProducers []SteadyProducer

// steadyGroup is a rate and a start that steady producers share: they
// append at the same ticks. A world has as many as it had rates set, not
// one per partition, so produceSteady's question "did any producer append
// this tick?" costs one Rate.AppendsAt a group.
type steadyGroup struct {
	rate  Rate
	since int
}

// groupsOf lists the distinct (rate, start) of steady, in first-seen order.
func groupsOf(steady steadyProducers) []steadyGroup {
	var out []steadyGroup
	for _, p := range steady {
		g := steadyGroup{p.Rate, p.Since}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// steadyTraffic is a world's steady production: its producers and the
// work done by those stopped, with what it reads of the world (its clock,
// its partitions, the leader that holds the records, the window of history
// that keeps their detail), which World.connect hands it. The World holds
// one: its methods are the World's.
type steadyTraffic struct {
	// steady is the steady upstream producers, in input partition order.
	steady steadyProducers
	// steadyGroups are steady's distinct rates and starts (groupsOf).
	steadyGroups []steadyGroup
	// steadyDone is the work of steady producers that were stopped or
	// given a new rate, up to then (SteadyWorkAfter counts it with the
	// current producers').
	steadyDone SteadyWork

	tick   *int
	layout *topo.Layout
	broker *broker.Broker
	window *window
}

// ProduceRate starts steady production at rate on each of tps (input
// partitions): from the next tick on, each gets rate's records as time
// passes. A partition that already has a rate gets the new one, counted
// from now. Nothing changes when it returns an error.
func (w *World) ProduceRate(tps []TopicPartition, rate Rate) error {
	if err := w.checkInputs("produce --rate "+rate.String(), tps); err != nil {
		return err
	}
	rate, err := NewRate(rate.Records, rate.Ticks)
	if err != nil {
		return fmt.Errorf("produce --rate: %v", err)
	}
	sum, named := new(big.Int), w.inputSet(tps)
	for _, p := range w.steady {
		if !named(p.TP) {
			sum.Add(sum, perTickCeil(p.Rate))
		}
	}
	sum.Add(sum, new(big.Int).Mul(perTickCeil(rate), big.NewInt(int64(len(tps)))))
	if sum.Cmp(big.NewInt(MaxRateTerm)) > 0 {
		return fmt.Errorf("produce --rate %s: the world's steady producers would append up to %s records a tick (at most %d)", rate, sum, MaxRateTerm)
	}
	w.retireSteady(named)
	w.steady = w.withRate(tps, rate)
	w.steadyGroups = groupsOf(w.steady)
	w.broker.SetSteady(tps, broker.Rate(rate), w.Tick)
	w.Unavail.followSteady(w)
	w.Unavail.touch(w, tps)
	w.trace.Eventf(EvInput, "", "steady production of %s on %s from tick %d", rateWords(rate), partitionList(tps), w.Tick+1)
	return nil
}

// StopRate ends steady production on each of tps; a partition without a
// rate is refused, naming those that have one.
func (w *World) StopRate(tps []TopicPartition) error {
	if err := w.checkInputs("produce --stop", tps); err != nil {
		return err
	}
	has := make([]TopicPartition, len(w.steady))
	for i, p := range w.steady {
		has[i] = p.TP
	}
	steady := w.inputSet(has)
	for _, tp := range tps {
		if !steady(tp) {
			return fmt.Errorf("produce --stop %s: no steady production on %s (%s)", tp, tp, w.steadyList())
		}
	}
	keep, named := make(steadyProducers, 0, len(w.steady)), w.inputSet(tps)
	w.retireSteady(named)
	for _, p := range w.steady {
		if !named(p.TP) {
			keep = append(keep, p)
		}
	}
	w.steady = keep
	w.steadyGroups = groupsOf(w.steady)
	w.broker.StopSteady(tps)
	w.Unavail.touch(w, tps)
	w.trace.Eventf(EvInput, "", "steady production on %s stops", partitionList(tps))
	return nil
}

// SteadyProducers lists the steady producers, in partition order (a copy).
func (s *steadyTraffic) SteadyProducers() []SteadyProducer {
	out := append([]SteadyProducer(nil), s.steady...)
	for i := range out {
		out[i].Sent = out[i].Rate.Due(s.broker.SteadyClock() - out[i].Since)
	}
	return out
}

// InputRecordsAfter is how many input records the world holds after n
// more ticks: what it holds now plus what its steady producers append
// meanwhile (exact, as a big number: no overflow).
func (s *steadyTraffic) InputRecordsAfter(n int) *big.Int { return s.recordsAfter(s.steady, n) }

func (s *steadyTraffic) recordsAfter(steady steadyProducers, n int) *big.Int {
	// In 128 bits (hi, lo), a producer's count in 64 where it fits: a
	// world of 100,000 producers is summed before every step and run
	// (kernel's record limit).
	// Every term is at least 0 (a high watermark; what a producer sends
	// from the clock on).
	var hi, lo uint64
	add := func(v int64) {
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(v), 0)
		hi += carry
	}
	big128 := func() *big.Int {
		t := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
		return t.Add(t, new(big.Int).SetUint64(lo))
	}
	for _, l := range s.broker.Logs()[:len(s.layout.Inputs())] {
		add(int64(l.HW()))
	}
	var over *big.Int // producers whose count passes 64 bits
	clock := s.broker.SteadyClock()
	for _, p := range steady {
		sent := p.Rate.Due(clock - p.Since)
		at := int64(*s.tick + n - p.Since)
		if at <= (math.MaxInt64-p.Rate.Ticks)/p.Rate.Records {
			add(p.Rate.Due(int(at)) - sent)
			continue
		}
		due := new(big.Int).Mul(big.NewInt(p.Rate.Records), big.NewInt(at))
		due.Add(due, big.NewInt(p.Rate.Ticks-1))
		due.Quo(due, big.NewInt(p.Rate.Ticks))
		if over == nil {
			over = new(big.Int)
		}
		over.Add(over, due.Sub(due, big.NewInt(sent)))
	}
	total := big128()
	if over != nil {
		total.Add(total, over)
	}
	return total
}

// withRate is the steady producers with rate set on tps from now: a new
// list (the world's is not changed), in partition order.
func (s *steadyTraffic) withRate(tps []TopicPartition, rate Rate) steadyProducers {
	out, named := make(steadyProducers, 0, len(s.steady)+len(tps)), s.inputSet(tps)
	for _, p := range s.steady {
		if !named(p.TP) {
			out = append(out, p)
		}
	}
	for _, tp := range tps {
		out = append(out, SteadyProducer{TP: tp, Rate: rate, Since: *s.tick})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := s.layout.Input().Slot(out[i].TP, nil)
		b, _ := s.layout.Input().Slot(out[j].TP, nil)
		return a < b
	})
	return out
}

// SteadyWork is what steady production appends, counted as the kernel's
// estimate of a world's memory counts it (kernel/worldcost.go): what a
// world's history keeps as steady traffic flows depends on how many runs
// of records arrive and how they spread over the output, not on how many
// records there are.
type SteadyWork struct {
	// Records is the records appended.
	Records int64
	// Runs is the (partition, tick) pairs with an append: a partition's
	// records of one tick are one run, fetched, processed and committed
	// as one (at most: a member behind takes several ticks' at once).
	Runs int64
	// Spread is the sum over those runs of min(its records, the output's
	// partitions): the invoices of one run go to that many output
	// partitions, so at linger.ms 0 (a Produce per output partition a
	// run) that many Produce requests.
	Spread int64
}

func (s *SteadyWork) add(t SteadyWork) {
	s.Records = satAdd(s.Records, t.Records)
	s.Runs = satAdd(s.Runs, t.Runs)
	s.Spread = satAdd(s.Spread, t.Spread)
}

// satAdd adds two counts at least 0, stopping at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// satMul multiplies two counts at least 0, stopping at math.MaxInt64.
func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// workOf is what a producer at rate appends in its first n ticks, to a
// world of outs output partitions, in closed form: with R records every
// T ticks, a tick appends floor or ceil of R/T records; below one a tick
// (R < T) every append is one record, so the runs are the records (Due);
// otherwise every tick appends, and a tick's min(records, outs) is
// Due(n) in all when ceil(R/T) <= outs and n x outs when floor(R/T) >=
// outs, which between them cover every case.
func workOf(rate Rate, n int, outs int) SteadyWork {
	if n <= 0 {
		return SteadyWork{}
	}
	var due int64
	if int64(n) <= (math.MaxInt64-rate.Ticks)/rate.Records {
		due = rate.Due(n)
	} else {
		due = math.MaxInt64
	}
	runs := min(int64(n), due)
	return SteadyWork{Records: due, Runs: runs, Spread: min(due, satMul(runs, int64(outs)))}
}

// SteadyWorkAfter is the work of the world's steady production from its
// start to n more ticks from now: that of producers stopped or given a
// new rate, up to then, and that of the current ones from their start to
// tick Tick+n (what they appended so far included).
func (s *steadyTraffic) SteadyWorkAfter(n int) SteadyWork {
	return s.steadyWork(s.steady, s.steadyDone, n)
}

// SteadyWorkKept is the part of SteadyWorkAfter(n) the world keeps in
// detail at tick Tick+n: all of it when it keeps its whole history
// (Config.HistoryTicks 0), otherwise each current producer's work of its
// last HistoryTicks ticks (history.go lets the older go), as workOf counts
// a producer's first ticks (a rate appends the same in any ticks as
// long, give or take a run). The work of producers stopped or given a new
// rate is counted whole: when it was done is not kept, and it cannot be
// more than the window held while they ran. A world whose window narrowed
// as it ran holds what it wrote before until the window has passed the
// switch: the ticks since the oldest of it count too (keptSpan).
func (s *steadyTraffic) SteadyWorkKept(n int) SteadyWork {
	return s.SteadyWorkWindow(n, s.window.keptSpan())
}

// SteadyWorkWindow is SteadyWorkKept as it would be with history.ms h
// ticks (0: the whole history), for advice on a window that fits.
func (s *steadyTraffic) SteadyWorkWindow(n, h int) SteadyWork {
	return s.steadyKept(s.steady, s.steadyDone, n, h)
}

// SteadyWorkKeptRate is SteadyWorkKept as it would be were rate set on
// tps now, as SteadyWorkAfterRate is SteadyWorkAfter.
func (s *steadyTraffic) SteadyWorkKeptRate(tps []TopicPartition, rate Rate, n int) SteadyWork {
	if s.window.HistoryWindow() <= 0 {
		return s.SteadyWorkAfterRate(tps, rate, n)
	}
	done, named := s.steadyDone, s.inputSet(tps)
	clock, outs, h := s.broker.SteadyClock(), len(s.layout.Outputs()), s.window.keptSpan()
	for _, p := range s.steady {
		if named(p.TP) {
			done.add(workOf(p.Rate, min(clock-p.Since, h), outs))
		}
	}
	return s.steadyKept(s.withRate(tps, rate), done, n, h)
}

func (s *steadyTraffic) steadyKept(steady steadyProducers, done SteadyWork, n, h int) SteadyWork {
	if h <= 0 {
		return s.steadyWork(steady, done, n)
	}
	t, outs := done, len(s.layout.Outputs())
	for _, p := range steady {
		t.add(workOf(p.Rate, min(*s.tick+n-p.Since, h), outs))
	}
	return t
}

// SteadyWorkAfterRate is SteadyWorkAfter as it would be were rate set on
// tps now (ProduceRate), for a check before it is: the producers it
// replaces count up to now.
func (s *steadyTraffic) SteadyWorkAfterRate(tps []TopicPartition, rate Rate, n int) SteadyWork {
	done, named := s.steadyDone, s.inputSet(tps)
	clock, outs := s.broker.SteadyClock(), len(s.layout.Outputs())
	for _, p := range s.steady {
		if named(p.TP) {
			done.add(workOf(p.Rate, clock-p.Since, outs))
		}
	}
	return s.steadyWork(s.withRate(tps, rate), done, n)
}

func (s *steadyTraffic) steadyWork(steady steadyProducers, done SteadyWork, n int) SteadyWork {
	t, outs := done, len(s.layout.Outputs())
	for _, p := range steady {
		t.add(workOf(p.Rate, *s.tick+n-p.Since, outs))
	}
	return t
}

// retireSteady adds to steadyDone the work so far of the producers on the
// partitions named, before they stop or take a new rate.
func (s *steadyTraffic) retireSteady(named func(TopicPartition) bool) {
	clock, outs := s.broker.SteadyClock(), len(s.layout.Outputs())
	for _, p := range s.steady {
		if named(p.TP) {
			s.steadyDone.add(workOf(p.Rate, clock-p.Since, outs))
		}
	}
}

// produceSteady moves steady production to this tick, at its start
// (after the deliveries, so the answers to fetches held for these records
// are sent this tick and delivered the next, as any answer): the leader's
// logs hold the records in closed form (sim/broker/steady.go), so this
// only wakes the fetches held for them. It reports whether any producer
// appended a record this tick (the lag moved: Unavailability samples it,
// as it does after a user's produce), asked of each rate and start the
// producers share, not of each partition.
func (s *steadyTraffic) produceSteady() (appended bool) {
	for _, g := range s.steadyGroups {
		if broker.Rate(g.rate).AppendsAt(*s.tick - g.since) {
			appended = true
			break
		}
	}
	s.broker.ProduceSteady(*s.tick)
	return appended
}

// checkInputs refuses a list naming no partition, one that is not an input
// partition, or one twice.
func (s *steadyTraffic) checkInputs(cmd string, tps []TopicPartition) error {
	if len(tps) == 0 {
		return fmt.Errorf("%s: no partition given", cmd)
	}
	seen := make([]bool, len(s.layout.Inputs()))
	for _, tp := range tps {
		i, ok := s.layout.Input().Slot(tp, nil)
		if !ok {
			return fmt.Errorf("%s: %s is not an input partition (input topics: %s)", cmd, tp, strings.Join(s.layout.InputTopics(), ", "))
		}
		if seen[i] {
			return fmt.Errorf("%s: %s is named twice", cmd, tp)
		}
		seen[i] = true
	}
	return nil
}

// inputSet is membership in tps, input partitions, by their numbers (a
// command may name 100,000 partitions: no scan of the list per lookup).
func (s *steadyTraffic) inputSet(tps []TopicPartition) func(TopicPartition) bool {
	in := make([]bool, len(s.layout.Inputs()))
	for _, tp := range tps {
		if i, ok := s.layout.Input().Slot(tp, nil); ok {
			in[i] = true
		}
	}
	return func(tp TopicPartition) bool {
		i, ok := s.layout.Input().Slot(tp, nil)
		return ok && in[i]
	}
}

// steadyList names the partitions with steady production, for errors.
func (s *steadyTraffic) steadyList() string {
	if len(s.steady) == 0 {
		return "no partition has steady production"
	}
	var names []string
	for _, p := range s.steady {
		names = append(names, p.TP.String())
	}
	return "steady production on: " + strings.Join(names, " ")
}

// perTickCeil is the most records a rate appends in one tick.
func perTickCeil(r Rate) *big.Int {
	return big.NewInt((r.Records + r.Ticks - 1) / r.Ticks)
}

// rateWords spells a rate for narration: "2 records a tick", "1 record
// every 10 ticks", "3 records every 7 ticks".
func rateWords(r Rate) string {
	recs := fmt.Sprintf("%d records", r.Records)
	if r.Records == 1 {
		recs = "1 record"
	}
	if r.Ticks == 1 {
		return recs + " a tick"
	}
	return fmt.Sprintf("%s every %d ticks", recs, r.Ticks)
}

// partitionList spells partitions as one list: a topic's partitions in a
// run as orders-0..2.
func partitionList(tps []TopicPartition) string {
	var out []string
	for i := 0; i < len(tps); {
		j := i + 1
		for j < len(tps) && tps[j].Topic == tps[i].Topic && tps[j].Partition == tps[j-1].Partition+1 {
			j++
		}
		if j-i >= 3 {
			out = append(out, fmt.Sprintf("%s..%d", tps[i], tps[j-1].Partition))
		} else {
			for _, tp := range tps[i:j] {
				out = append(out, tp.String())
			}
		}
		i = j
	}
	return strings.Join(out, " ")
}
