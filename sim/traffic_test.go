package sim

import (
	"fmt"
	"math/big"
	"math/rand"
	"strings"
	"testing"
)

func TestRateDueSpreadsRecordsEvenly(t *testing.T) {
	cases := []struct {
		rate Rate
		want []int64 // Due(1), Due(2), ...
	}{
		{Rate{1, 1}, []int64{1, 2, 3, 4}},
		{Rate{2, 1}, []int64{2, 4, 6}},
		{Rate{1, 10}, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}},
		{Rate{3, 2}, []int64{2, 3, 5, 6, 8}},
	}
	for _, c := range cases {
		for i, want := range c.want {
			if got := c.rate.Due(i + 1); got != want {
				t.Errorf("%s: Due(%d) = %d, want %d", c.rate, i+1, got, want)
			}
		}
		if c.rate.Due(0) != 0 || c.rate.Due(-3) != 0 {
			t.Errorf("%s: records due before the start", c.rate)
		}
	}
	// Every rate: each tick appends floor or ceil of Records/Ticks, and
	// every Ticks ticks exactly Records.
	r := rand.New(rand.NewSource(1))
	for k := 0; k < 200; k++ {
		rate, err := NewRate(1+r.Int63n(50), 1+r.Int63n(50))
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := rate.Records/rate.Ticks, (rate.Records+rate.Ticks-1)/rate.Ticks
		for n := 1; n < 300; n++ {
			if d := rate.Due(n) - rate.Due(n-1); d < lo || d > hi {
				t.Fatalf("%s: %d records at tick %d, want %d..%d", rate, d, n, lo, hi)
			}
			if n%int(rate.Ticks) == 0 && rate.Due(n) != rate.Records*int64(n)/rate.Ticks {
				t.Fatalf("%s: %d records after %d ticks", rate, rate.Due(n), n)
			}
		}
	}
}

func TestRateConstructorsRefuseAndReduce(t *testing.T) {
	if r, err := NewRate(4, 6); err != nil || r != (Rate{2, 3}) {
		t.Errorf("NewRate(4, 6) = %v, %v; want 2/3ticks", r, err)
	}
	for _, c := range [][2]int64{{0, 1}, {-1, 1}, {1, 0}, {1, -5}, {MaxRateTerm + 1, 1}, {1, MaxRateTerm + 1}} {
		if _, err := NewRate(c[0], c[1]); err == nil {
			t.Errorf("NewRate(%d, %d) accepted", c[0], c[1])
		}
	}
	// The conversion point of real time: R records a second with a tick
	// of T ms is R x T records every 1,000 ticks.
	for _, c := range []struct {
		r, tickMS int64
		want      Rate
	}{{1000, 5, Rate{5, 1}}, {7, 3, Rate{21, 1000}}, {1, 1000, Rate{1, 1}}, {200, 5, Rate{1, 1}}} {
		if got, err := RatePerSecond(c.r, c.tickMS); err != nil || got != c.want {
			t.Errorf("RatePerSecond(%d, %d) = %v, %v; want %v", c.r, c.tickMS, got, err, c.want)
		}
	}
	for _, c := range [][2]int64{{0, 5}, {-1, 5}, {1, 0}, {MaxRateTerm, 5}} {
		if _, err := RatePerSecond(c[0], c[1]); err == nil {
			t.Errorf("RatePerSecond(%d, %d) accepted", c[0], c[1])
		}
	}
	// A minute, an hour, a millisecond: r x T records every period's ms in ticks.
	for _, c := range []struct {
		r, periodMS, tickMS int64
		want                Rate
	}{{60, 60_000, 5, Rate{1, 200}}, {1, 3_600_000, 5, Rate{1, 720_000}}, {2, 1, 5, Rate{10, 1}}} {
		if got, err := RatePer(c.r, c.periodMS, c.tickMS); err != nil || got != c.want {
			t.Errorf("RatePer(%d, %d ms, %d) = %v, %v; want %v", c.r, c.periodMS, c.tickMS, got, err, c.want)
		}
	}
	if got := (Rate{1, 10}).String(); got != "1/10ticks" {
		t.Errorf("String: %q", got)
	}
}

func TestSteadyProductionAppendsOnItsSchedule(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	o0, p1 := TopicPartition{Topic: "orders", Partition: 0}, TopicPartition{Topic: "payments", Partition: 1}
	for w.Tick < 4 {
		w.Step()
	}
	if err := w.ProduceRate([]TopicPartition{p1, o0}, Rate{3, 2}); err != nil {
		t.Fatal(err)
	}
	if got := w.SteadyProducers(); len(got) != 2 || got[0].TP != o0 || got[1].TP != p1 {
		t.Fatalf("producers not in partition order: %v", got)
	}
	if w.Log(o0).HW() != 10 {
		t.Fatal("a rate appended before the next tick")
	}
	perTick := []int{2, 1, 2, 1, 2, 1}
	for i, want := range perTick {
		before := w.Log(o0).HW()
		if got := w.InputRecordsAfter(1).Int64() - int64(inputHeld(w)); got != int64(2*want) {
			t.Fatalf("tick %d: InputRecordsAfter(1) says %d more, want %d", w.Tick+1, got, 2*want)
		}
		w.Step()
		if got := w.Log(o0).HW() - before; got != want {
			t.Fatalf("tick %d: %d records appended, want %d", w.Tick, got, want)
		}
		if w.Log(p1).HW() != w.Log(o0).HW() {
			t.Fatalf("tick %d: the two partitions differ", w.Tick)
		}
		if c := w.Log(o0).Cells.At(w.Log(o0).HW() - 1); c.Tick != w.Tick || c.Producer != "" {
			t.Fatalf("tick %d: the last record is %+v", w.Tick, c)
		}
		_ = i
	}
	// A new rate on a partition counts from now; stop ends it.
	if err := w.ProduceRate([]TopicPartition{o0}, Rate{1, 1}); err != nil {
		t.Fatal(err)
	}
	before := w.Log(o0).HW()
	w.Step()
	if w.Log(o0).HW() != before+1 {
		t.Fatalf("the new rate appended %d", w.Log(o0).HW()-before)
	}
	if err := w.StopRate([]TopicPartition{o0}); err != nil {
		t.Fatal(err)
	}
	before = w.Log(o0).HW()
	w.Step()
	if w.Log(o0).HW() != before {
		t.Fatal("a stopped producer appended")
	}
	if got := w.SteadyProducers(); len(got) != 1 || got[0].TP != p1 {
		t.Fatalf("after stop: %v", got)
	}
}

func inputHeld(w *World) int {
	n := 0
	for _, tp := range w.layout.Inputs() {
		n += w.Log(tp).HW()
	}
	return n
}

func TestSteadyProductionRefusalsLeaveTheWorld(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	o0 := TopicPartition{Topic: "orders", Partition: 0}
	if err := w.ProduceRate([]TopicPartition{o0}, Rate{1, 1}); err != nil {
		t.Fatal(err)
	}
	w.Step()
	before := fingerprint(w)
	bad := []struct {
		do   func() error
		want string
	}{
		{func() error { return w.ProduceRate([]TopicPartition{{Topic: "invoices", Partition: 0}}, Rate{1, 1}) }, "not an input partition"},
		{func() error { return w.ProduceRate([]TopicPartition{{Topic: "orders", Partition: 7}}, Rate{1, 1}) }, "not an input partition"},
		{func() error { return w.ProduceRate([]TopicPartition{o0, o0}, Rate{1, 1}) }, "named twice"},
		{func() error { return w.ProduceRate(nil, Rate{1, 1}) }, "no partition"},
		{func() error { return w.ProduceRate([]TopicPartition{o0}, Rate{0, 1}) }, "at least 1"},
		{func() error { return w.ProduceRate([]TopicPartition{o0}, Rate{-2, 1}) }, "at least 1"},
		{func() error { return w.ProduceRate([]TopicPartition{o0}, Rate{1, 0}) }, "at least 1 tick"},
		{func() error {
			return w.ProduceRate(w.layout.Inputs(), Rate{MaxRateTerm, 1})
		}, "records a tick"},
		{func() error { return w.StopRate([]TopicPartition{{Topic: "payments", Partition: 0}}) }, "no steady production on payments-0 (steady production on: orders-0)"},
	}
	for _, b := range bad {
		err := b.do()
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("got %v, want an error with %q", err, b.want)
		}
		if fingerprint(w) != before {
			t.Fatalf("a refused input (%v) changed the world", err)
		}
	}
}

// TestSteadyWorkCountsEveryTick: SteadyWorkAfter's closed form agrees with
// the records each input partition's log gains tick by tick (a run for
// each partition and tick that gains any; min(gain, output partitions)
// pieces), through rates below one a tick, at one, above the output's
// partitions and between, a rate changed and one stopped (their work so
// far kept); and it looks ahead exactly: SteadyWorkAfter(n) now is
// SteadyWorkAfter(0) n ticks later.
func TestSteadyWorkCountsEveryTick(t *testing.T) {
	topo := DefaultTopology()
	topo.Output.Partitions = 3
	cfg := DefaultConfig()
	w, _ := New(topo, cfg)
	in := w.layout.Inputs()
	if (w.SteadyWorkAfter(100) != SteadyWork{}) {
		t.Fatalf("no producers: %+v", w.SteadyWorkAfter(100))
	}
	var want SteadyWork
	step := func(n int) {
		for k := 0; k < n; k++ {
			hw := make([]int, len(in))
			for i, tp := range in {
				hw[i] = w.Log(tp).HW()
			}
			w.Step()
			for i, tp := range in {
				if d := int64(w.Log(tp).HW() - hw[i]); d > 0 {
					want.add(SteadyWork{Records: d, Runs: 1, Spread: min(d, 3)})
				}
			}
			if got := w.SteadyWorkAfter(0); got != want {
				t.Fatalf("tick %d: SteadyWorkAfter(0) = %+v, counted %+v", w.Tick, got, want)
			}
		}
	}
	for _, r := range []struct {
		tps  []TopicPartition
		rate Rate
	}{{in[:2], Rate{1, 3}}, {in[2:3], Rate{2, 1}}, {in[3:4], Rate{7, 2}}, {in[4:5], Rate{5, 1}}} {
		if err := w.ProduceRate(r.tps, r.rate); err != nil {
			t.Fatal(err)
		}
	}
	ahead := w.SteadyWorkAfter(20)
	step(20)
	if got := w.SteadyWorkAfter(0); got != ahead {
		t.Fatalf("SteadyWorkAfter(20) said %+v, 20 ticks later it is %+v", ahead, got)
	}
	if err := w.ProduceRate(in[2:4], Rate{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.StopRate(in[4:5]); err != nil {
		t.Fatal(err)
	}
	if got := w.SteadyWorkAfterRate(in[:1], Rate{4, 1}, 0); got != want {
		t.Fatalf("SteadyWorkAfterRate(.., 0) = %+v, want what was appended, %+v", got, want)
	}
	step(15)
	c := w.Clone()
	if c.SteadyWorkAfter(7) != w.SteadyWorkAfter(7) {
		t.Fatal("a copy counts differently")
	}
}

// TestPropertySteadyProductionCopiesExactly: random worlds with steady
// producers started, changed and stopped among the faults; a copy taken at
// any tick and driven the same way ends exactly as the world never copied,
// with every invariant checked on every tick.
func TestPropertySteadyProductionCopiesExactly(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := 0; seed < seeds; seed++ {
		proto := protocols[seed%len(protocols)]
		t.Run(fmt.Sprintf("%s-seed%d", proto, seed), func(t *testing.T) {
			mk := func() (*World, []action) {
				spec := propertyCase(proto)
				spec.assignor = cycle(1, "range", "cooperative-sticky", "sticky")
				sc := seedWorld(t, seed, spec) // its world is made again below, with the processing drawn
				r, topo, cfg := sc.r, sc.topo, sc.cfg
				if seed%2 == 0 {
					cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 1+r.Intn(4)
				}
				cfg.Client.MaxPollRecords = 1 + r.Intn(8)
				w, err := New(topo, cfg)
				if err != nil {
					t.Fatal(err)
				}
				sched := append(randomSchedule(r, 200, 4, true), rateSchedule(r, 200)...)
				sortActions(sched)
				return w, sched
			}
			ref, sched := mk()
			runSchedule(t, ref, sched, 200)
			started := 0
			for _, e := range ref.Events.All() {
				if strings.HasPrefix(e.Text, "steady production of") {
					started++
				}
			}
			if started == 0 {
				t.Fatal("no steady production started")
			}
			w, _ := mk()
			cut := 30 + seed*11%150
			var first, rest []action
			for _, a := range sched {
				if a.tick < cut {
					first = append(first, a)
				} else {
					rest = append(rest, a)
				}
			}
			runSchedule(t, w, first, cut)
			snap := w.Clone()
			runSchedule(t, w, rest, 200)
			runSchedule(t, snap, rest, 200)
			if a, b := fingerprint(snap), fingerprint(ref); a != b {
				t.Fatalf("the copy taken at tick %d ended differently:\n%s", cut, firstDiff(a, b))
			}
			if a, b := fingerprint(w), fingerprint(ref); a != b {
				t.Fatalf("the world copied at tick %d ended differently:\n%s", cut, firstDiff(a, b))
			}
		})
	}
}

// rateSchedule starts, changes and stops steady production at random
// ticks, some of the inputs refused (a rate of 0, a partition twice).
func rateSchedule(r *rand.Rand, ticks int) []action {
	var out []action
	for t := 0; t < ticks; t++ {
		if r.Intn(15) != 0 {
			continue
		}
		k, recs, per := r.Intn(100), int64(r.Intn(4)), int64(1+r.Intn(6))
		switch r.Intn(3) {
		case 0, 1:
			out = append(out, action{tick: t, name: fmt.Sprintf("rate %d/%d on %d", recs, per, k), do: func(w *World) error {
				tps := w.layout.Inputs()
				pick := []TopicPartition{tps[k%len(tps)]}
				if k%5 == 0 {
					pick = append(pick, tps[(k/5)%len(tps)]) // sometimes the same one twice: refused
				}
				return w.ProduceRate(pick, Rate{recs, per})
			}})
		case 2:
			out = append(out, action{tick: t, name: fmt.Sprintf("stop %d", k), do: func(w *World) error {
				tps := w.layout.Inputs()
				return w.StopRate([]TopicPartition{tps[k%len(tps)]})
			}})
		}
	}
	return out
}

func sortActions(s []action) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].tick < s[j-1].tick; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestInputRecordsAfterAsBigSums: InputRecordsAfter, summed in 128 bits
// with a producer's count in 64 where it fits, equals the exact sum of
// big numbers, for rates up to MaxRateTerm and horizons whose counts pass
// 64 bits (a producer's, and the world's).
func TestInputRecordsAfterAsBigSums(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	cfg := DefaultConfig()
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tps := w.layout.Inputs()
	for i, tp := range tps {
		if err := w.ProduceRate([]TopicPartition{tp}, Rate{1 + r.Int63n(MaxRateTerm/int64(len(tps))), 1 + r.Int63n(7)}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			w.Step() // producers started at different ticks
		}
	}
	for _, n := range []int{0, 1, 7, 1000, 1 << 20, 1 << 34, 1 << 40, 1 << 50} {
		want := new(big.Int)
		for _, tp := range tps {
			want.Add(want, big.NewInt(int64(w.broker.Log(tp).HW())))
		}
		for _, p := range w.SteadyProducers() {
			due := new(big.Int).Mul(big.NewInt(p.Rate.Records), big.NewInt(int64(w.Tick+n-p.Since)))
			due.Add(due, big.NewInt(p.Rate.Ticks-1))
			due.Quo(due, big.NewInt(p.Rate.Ticks))
			want.Add(want, due.Sub(due, big.NewInt(p.Sent)))
		}
		if got := w.InputRecordsAfter(n); got.Cmp(want) != 0 {
			t.Errorf("InputRecordsAfter(%d) = %v, want %v", n, got, want)
		}
		if n == 1<<50 && want.BitLen() <= 64 {
			t.Errorf("%v records after 2^50 ticks: within 64 bits", want)
		}
	}
}
