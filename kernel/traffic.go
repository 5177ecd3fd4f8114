package kernel

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// Steady production: produce --rate RATE INPUT... starts an upstream
// producer on each input partition named (a topic: each of its
// partitions) that keeps appending as time passes; produce --stop INPUT...
// ends it. A rate is part of the world (sim/traffic.go), so back, fork,
// save, load and compare replay it with the command that set it.

// produceRateHelp is produce's help text.
const produceRateHelp = "produce TOPIC-P N appends N records at once (the page's finite backlog, records.per.partition,\n" +
	"stays the default). produce --rate RATE INPUT... starts steady production on each INPUT (an\n" +
	"input partition, o0 or orders-0, or an input topic: each of its partitions): RATE is R/tick\n" +
	"(R records every tick) or R/Nticks (R records every N ticks, spread evenly: 1/10ticks is one\n" +
	"record every tenth tick), from the next tick on; a partition with a rate gets the new one.\n" +
	"In real time (set time ms, or new --kafka-defaults) RATE may be R/s, records a second (R/ms,\n" +
	"R/m, R/h: a millisecond, a minute, an hour), exactly: R x tick.ms records every 1,000 ticks.\n" +
	"produce --stop INPUT... ends it; show traffic lists the rates. With processing.ticks (a\n" +
	"member's time per record: N, or N/K for K records in N ticks; processing.ms in real time,\n" +
	"0.1 for ten records a millisecond) a member's throughput is finite, so lag grows while the\n" +
	"group pauses and drains after. Steady production costs the world by its runs (a partition's\n" +
	"records of one tick are one run), the members' turns that take them, the pieces and Produce\n" +
	"batches their invoices make (linger.ms 0: one a run and output partition), and 4 B a record\n" +
	"(see the limits below): a rate that would take that estimate past the limit within one tick\n" +
	"is refused, and so is a step or run that would (the error says after how many ticks the\n" +
	"world reaches it)."

// inputWords completes an INPUT: the input partitions and topics.
func inputWords(s *Session, typed []string, partial string) []string {
	return append(inputPartitionWords(s, typed, partial), s.World().Layout().InputTopics()...)
}

// cmdProduceSteady is produce --rate and produce --stop.
func cmdProduceSteady(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("produce", args, []string{"--rate"}, []string{"--stop"})
	if err != nil {
		return nil, err
	}
	rateText, rated := fl["--rate"]
	if rated == (fl["--stop"] != "") {
		return nil, usageErr("produce", "give --rate RATE or --stop, not both")
	}
	cmd := "produce --stop"
	if rated {
		cmd = "produce --rate " + rateText
	}
	if len(pos) == 0 {
		return nil, usageErr("produce", "%s: name the input partitions or topics", strings.TrimPrefix(cmd, "produce "))
	}
	w := s.World()
	tps, err := parseInputs(w, cmd, pos)
	if err != nil {
		return nil, err
	}
	if !rated {
		return nil, narrateInput(s, func() error { return w.StopRate(tps) })
	}
	rate, err := parseRate(w, cmd, rateText)
	if err != nil {
		return nil, err
	}
	// The world must be able to advance a tick with the new rate and stay
	// within what its estimated cost allows.
	after := shapeWith(w, w.SteadyWorkKeptRate(tps, rate, 1), 1)
	if est := after.bytes(); est.Cmp(costRoom(w)) > 0 {
		return nil, costErr(cmd, after, describeShapeWhen(after, ", one tick from now at the new rate"), est, worldBudget())
	}
	return nil, narrateInput(s, func() error { return w.ProduceRate(tps, rate) })
}

// narrateInput applies a world input and narrates the events it made.
func narrateInput(s *Session, apply func() error) error {
	w := s.World()
	from := w.Events.Len()
	if err := apply(); err != nil {
		return err
	}
	s.narrate(w, from)
	return nil
}

// parseInputs reads INPUT words: input partitions (o0, orders-0) and input
// topics (each of its partitions), in order, none twice.
func parseInputs(w *sim.World, cmd string, words []string) ([]sim.TopicPartition, error) {
	var tps []sim.TopicPartition
	seen := map[sim.TopicPartition]bool{}
	add := func(word string, tp sim.TopicPartition) error {
		if seen[tp] {
			return fmt.Errorf("%s: %s names %s again (name each partition once)", cmd, word, tp)
		}
		seen[tp] = true
		tps = append(tps, tp)
		return nil
	}
	for _, word := range words {
		if span, ok := w.Layout().Span(word); ok {
			for i := 0; i < span.N; i++ {
				if err := add(word, w.Layout().Input().At(span.At+i)); err != nil {
					return nil, err
				}
			}
			continue
		}
		tp, err := w.Layout().ParsePartition(word)
		if err == nil && !isInput(w, tp) {
			err = fmt.Errorf("%s is not an input partition", tp)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v (an INPUT is an input partition or topic: %s)", cmd, err, strings.Join(inputTopicNames(w), ", "))
		}
		if err := add(word, tp); err != nil {
			return nil, err
		}
	}
	return tps, nil
}

func isInput(w *sim.World, tp sim.TopicPartition) bool {
	for _, t := range w.Layout().Inputs() {
		if t == tp {
			return true
		}
	}
	return false
}

// inputTopicNames names the input topics and how their partitions are named.
func inputTopicNames(w *sim.World) []string {
	var out []string
	for _, t := range w.Topo.Inputs {
		out = append(out, fmt.Sprintf("%s (%s-0..%d)", t.Name, t.Name, t.Partitions-1))
	}
	return out
}

// maxRateWord bounds each number of a rate as typed (sim.MaxRateTerm).
const maxRateWord = sim.MaxRateTerm

// rateUnits are the periods of a rate in real time, in milliseconds: the
// units of a typed duration (durationUnits).
var rateUnits = map[string]int64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}

// parseRate reads a rate: R/tick, R/Nticks, or in real time R/s (records a
// second; R/ms, R/m and R/h a millisecond, a minute and an hour, the units
// of a duration). Every refusal names the value and the rule.
func parseRate(w *sim.World, cmd, v string) (sim.Rate, error) {
	rule := "a rate is R/tick or R/Nticks (R records every N ticks), R and N whole numbers from 1 to " + group(maxRateWord)
	c := clockOf(w)
	if c.real {
		rule = "a rate is R/tick, R/Nticks (R records every N ticks) or R/s (R records a second; R/ms, R/m, R/h: a millisecond, a minute, an hour), R and N whole numbers from 1 to " + group(maxRateWord)
	}
	num, per, ok := strings.Cut(v, "/")
	if !ok {
		return sim.Rate{}, fmt.Errorf("%s: %q is not a rate (%s)", cmd, v, rule)
	}
	r, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return sim.Rate{}, fmt.Errorf("%s: %q is not a whole number of records (%s)", cmd, num, rule)
	}
	if r < 1 {
		return sim.Rate{}, fmt.Errorf("%s: a rate of %d records is not allowed: R is at least 1 (produce --stop INPUT ends steady production)", cmd, r)
	}
	if r > maxRateWord {
		return sim.Rate{}, fmt.Errorf("%s: %s records is over the limit (%s)", cmd, group(int(min(r, 1<<62))), rule)
	}
	switch {
	case per == "tick":
		return sim.NewRate(r, 1)
	case rateUnits[per] > 0:
		if !c.real {
			return sim.Rate{}, fmt.Errorf("%s: %s is a rate in time, and this world counts ticks (time ticks, the page's scale): a rate in time needs real time (set time ms, or new --kafka-defaults); here give R/tick or R/Nticks", cmd, v)
		}
		// Real time converts here, and only here: r records a period are
		// r x tick.ms records every period's milliseconds in ticks.
		rate, err := sim.RatePer(r, rateUnits[per], int64(c.tickMS))
		if per == "s" {
			rate, err = sim.RatePerSecond(r, int64(c.tickMS))
		}
		if err != nil {
			return sim.Rate{}, fmt.Errorf("%s: %v", cmd, err)
		}
		return rate, nil
	case strings.HasSuffix(per, "ticks"):
		n, err := strconv.ParseInt(strings.TrimSuffix(per, "ticks"), 10, 64)
		if err != nil || n < 1 || n > maxRateWord {
			return sim.Rate{}, fmt.Errorf("%s: %q is not a number of ticks from 1 to %s (%s)", cmd, per, group(maxRateWord), rule)
		}
		return sim.NewRate(r, n)
	}
	return sim.Rate{}, fmt.Errorf("%s: %q is not a period (%s)", cmd, "/"+per, rule)
}

// checkStepRecords refuses a step or run of n ticks after which the world
// would hold more records in one input partition than a log can, or be
// estimated past what its cost allows (costRoom).
func checkStepRecords(cmd string, w *sim.World, n int) error {
	if tp, most := partitionRecordsAfter(w, n); most > int64(limitPartitionRecords.max) {
		err := limitPartitionRecords.checkf(cmd, int(min(most, math.MaxInt)), fmt.Sprintf("%s would hold %s records after %s ticks of steady production", tp, group(int(most)), group(n)))
		return fmt.Errorf("%v: it reaches it after %d more tick(s) (produce --stop ends steady production)", err, ticksWithinPartitions(w, n))
	}
	after := shapeAfter(w, n)
	est := after.bytes()
	if est.Cmp(costRoom(w)) <= 0 {
		return nil
	}
	err := costErr(cmd, after, describeShapeWhen(after, fmt.Sprintf(", %s ticks from now", group(n))), est, worldBudget())
	return fmt.Errorf("%v: the world reaches it after %d more tick(s) (produce --stop ends steady production%s)", err, ticksWithinCost(w, n), orAdvice(w))
}

// partitionRecordsAfter is the input partition that will hold the most
// records after n more ticks of steady production, and how many: each
// partition's log is bounded on its own (its offsets are 32-bit), the
// world's records in all by the estimate of what they cost.
func partitionRecordsAfter(w *sim.World, n int) (sim.TopicPartition, int64) {
	var tp sim.TopicPartition
	most := int64(-1)
	for _, p := range w.SteadyProducers() {
		at := int64(w.Log(p.TP).HW()) + p.Rate.Due(w.Tick+n-p.Since) - p.Sent
		if at > most {
			tp, most = p.TP, at
		}
	}
	return tp, most
}

// ticksWithinPartitions is the most ticks, up to max, after which no
// input partition holds more records than a log can.
func ticksWithinPartitions(w *sim.World, max int) int {
	within := func(n int) bool {
		_, most := partitionRecordsAfter(w, n)
		return most <= int64(limitPartitionRecords.max)
	}
	if within(max) {
		return max
	}
	return sort.Search(max+1, func(n int) bool { return !within(n) }) - 1
}

// costRoom is the estimate steady production may take the world to: the
// budget (worldcost.go: the heap guard's, three quarters), or what the
// world is estimated at now when that is more (its members joined, or the
// heap limit is lower than when it was made): a world is not refused for
// what it holds, only steady production may not grow it, and the heap
// guard watches the rest.
func costRoom(w *sim.World) *big.Int {
	room := new(big.Int).SetUint64(worldBudget())
	if now := shapeOf(w).bytes(); now.Cmp(room) > 0 {
		return now
	}
	return room
}

// ticksWithinCost is the most ticks, up to max, after which the world's
// estimate (steady production's history growing) stays within costRoom;
// the estimate only grows with the ticks.
func ticksWithinCost(w *sim.World, max int) int {
	room, base := costRoom(w), shapeOf(w)
	within := func(n int) bool {
		s := base
		s.steady = steadyOf(w, n)
		return s.bytes().Cmp(room) <= 0
	}
	if within(max) {
		return max
	}
	return sort.Search(max+1, func(n int) bool { return !within(n) }) - 1
}

// runBound is the most ticks a run until may wait: its own bound, cut to
// what the world's estimated cost and each partition's records allow;
// recs reports that they cut it.
func runBound(w *sim.World, bound int) (n int, recs bool) {
	fit := min(ticksWithinCost(w, bound), ticksWithinPartitions(w, bound))
	return fit, fit < bound
}

// orAdvice is windowAdvice as a refusal's parenthesis goes on: "; or ..."
// when a history.ms would fit.
func orAdvice(w *sim.World) string {
	if a := windowAdvice(w); a != "" {
		return "; or " + a
	}
	return ""
}

// recordsStopped is the error of a run until that waited as long as the
// world's input records allow.
func recordsStopped(cmd string, w *sim.World, ran int) error {
	return fmt.Errorf("%s: not met within %d ticks, after which steady production would take the world past %s (produce --stop ends it%s)", cmd, ran, limitWorldBytes.helpLine(), orAdvice(w))
}

// cmdShowTraffic lists the world's steady production.
func cmdShowTraffic(s *Session) (*Result, error) {
	w := s.World()
	ps := w.SteadyProducers()
	if len(ps) == 0 {
		return &Result{Text: "no steady production (produce --rate RATE INPUT starts it)"}, nil
	}
	c := clockOf(w)
	t := &Table{Header: []string{"PARTITION", "RATE", "SINCE", "APPENDED", "LOG-END-OFFSET"}}
	row := func(p sim.SteadyProducer) []string {
		return []string{rateText(c, p.Rate), "t=" + since(c, p.Since), strconv.FormatInt(p.Sent, 10), strconv.Itoa(w.Log(p.TP).HW())}
	}
	// Past spelledWhole partitions (a rate on a topic of 100,000), a run
	// of consecutive partitions of one topic whose rows read alike is one
	// row, t-0..t-99999, as the other views spell long lists; the page's
	// few partitions keep a row each.
	// Each producer's row is spelled once: the one that ends a run starts
	// the next.
	next := row(ps[0])
	for i := 0; i < len(ps); {
		cells, j := next, i+1
		for ; j < len(ps); j++ {
			next = row(ps[j])
			if len(ps) <= spelledWhole || ps[j].TP.Topic != ps[i].TP.Topic || ps[j].TP.Partition != ps[j-1].TP.Partition+1 || !slices.Equal(next, cells) {
				break
			}
		}
		name := ps[i].TP.String()
		if j-i > 1 {
			name += ".." + ps[j-1].TP.String()
		}
		t.Add(append([]string{name}, cells...)...)
		i = j
	}
	return &Result{Text: strings.TrimRight(t.Text(), "\n"), Table: t, HTML: s.htmlOf(t)}, nil
}

// rateText is a rate as show traffic prints it: as typed on the page's
// scale (1/2ticks); in real time also in the first of a second, a minute
// or an hour that holds a whole number of records (100/s = 1/2ticks, 6/m
// = 1/2000ticks).
func rateText(c clock, r sim.Rate) string {
	if !c.real {
		return r.String()
	}
	for _, u := range []struct {
		name string
		ms   int64
	}{{"s", 1000}, {"m", 60_000}, {"h", 3_600_000}} {
		// Records every Ticks x tick.ms ms: per period, Records x period / (Ticks x tick.ms).
		num, den := r.Records*u.ms, r.Ticks*int64(c.tickMS)
		if num%den == 0 {
			return fmt.Sprintf("%d/%s = %s", num/den, u.name, r)
		}
	}
	return r.String()
}

// since is a tick as show traffic's SINCE prints it: the tick, or in real
// time its time with the tick.
func since(c clock, tick int) string {
	if !c.real {
		return strconv.Itoa(tick)
	}
	return fmt.Sprintf("%s (%d)", c.at(tick), tick)
}
