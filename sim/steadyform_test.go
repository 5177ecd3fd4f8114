package sim

import (
	"fmt"
	"strings"
	"testing"
)

// TestPropertySteadyClosedFormAsPerTick: random worlds with steady
// producers started, changed and stopped, user appends, crashes,
// restarts, lost produce answers, transactions read with read_committed
// on some seeds, each run twice from the same schedule: once with the
// leader's closed-form segments (sim/broker/steady.go) and once with the
// test-only per-tick path (a tick run per partition per tick, as before
// the closed form). At every tick both have the same high watermarks,
// LSOs, cells (each record's tick, via At) and steady clock, the same
// packets sent (fetch answers and their records included) and events,
// and the same most lag and time lag; at the end the same fingerprint.
func TestPropertySteadyClosedFormAsPerTick(t *testing.T) {
	seeds := 16
	if testing.Short() {
		seeds = 5
	}
	for seed := 0; seed < seeds; seed++ {
		proto := protocols[seed%len(protocols)]
		t.Run(fmt.Sprintf("%s-seed%d", proto, seed), func(t *testing.T) {
			mk := func(perTick bool) (*World, []action) {
				spec := propertyCase(proto)
				spec.transactional = seedsAt(3, 1)
				spec.readCommitted = seedsAt(3, 1, 2)
				sc := seedWorld(t, seed, spec)
				r, topo, cfg := sc.r, sc.topo, sc.cfg
				if seed%2 == 0 {
					cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 1+r.Intn(4)
				}
				cfg.Client.MaxPollRecords = 1 + r.Intn(8)
				w, err := New(topo, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if perTick {
					w.broker.PerTickForTest()
				}
				sched := append(randomSchedule(r, 200, 4, true), rateSchedule(r, 200)...)
				// Every partition at one rate for a while: fetches held on
				// several partitions that get records at the same tick.
				all := Rate{1 + int64(seed%3), int64(8 + seed%8)}
				sched = append(sched, action{tick: 3 + seed%5, name: "rate " + all.String() + " on all", do: func(w *World) error {
					return w.ProduceRate(w.layout.Inputs(), all)
				}})
				sortActions(sched)
				return w, sched
			}
			steadyBases, steadyTicks := 0, 0
			lazy, sched := mk(false)
			each, _ := mk(true)
			i := 0
			for lazy.Tick < 220 {
				for i < len(sched) && sched[i].tick <= lazy.Tick {
					e1, e2 := sched[i].do(lazy), sched[i].do(each)
					if fmt.Sprint(e1) != fmt.Sprint(e2) {
						t.Fatalf("tick %d: %s: %v against %v per tick", lazy.Tick, sched[i].name, e1, e2)
					}
					i++
				}
				p0, ev0 := lazy.Packets.Len(), lazy.Events.Len()
				lazy.Step()
				each.Step()
				for num, l := range lazy.broker.Logs()[:len(lazy.layout.Inputs())] {
					base, rate, since, ok := l.SteadyBase()
					b2, r2, s2, ok2 := lazy.broker.SteadyBase(num)
					if base != b2 || rate != r2 || since != s2 || ok != ok2 {
						t.Fatalf("tick %d: %s: Broker.SteadyBase %d %v %d %v, the log's %d %v %d %v", lazy.Tick, l.TP, b2, r2, s2, ok2, base, rate, since, ok)
					}
					if ok {
						steadyBases++
					}
					// The meters' and the Fetch's reads of the leader's
					// array (Broker.SteadyEnd, SteadyTickAt) against the log.
					if hw, ok := lazy.broker.SteadyEnd(num); ok != l.Steady() || ok && hw != l.HW() {
						t.Fatalf("tick %d: %s: Broker.SteadyEnd %d %v, the log's HW %d, steady %v", lazy.Tick, l.TP, hw, ok, l.HW(), l.Steady())
					}
					for off := -1; off <= l.HW(); off++ {
						if at, ok := lazy.broker.SteadyTickAt(num, off); ok {
							if want := l.Cells.TickAt(off); at != want {
								t.Fatalf("tick %d: %s: Broker.SteadyTickAt(%d) %d, the log's TickAt %d", lazy.Tick, l.TP, off, at, want)
							}
							steadyTicks++
						}
					}
				}
				if a, b := tickState(lazy, p0, ev0), tickState(each, p0, ev0); a != b {
					t.Fatalf("tick %d differs (schedule so far: %s):\n%s", lazy.Tick, names(sched[:i]), firstDiff(a, b))
				}
			}
			if a, b := fingerprint(lazy), fingerprint(each); a != b {
				t.Fatalf("the closed form ended differently:\n%s", firstDiff(a, b))
			}
			steady := 0
			for _, l := range lazy.broker.Logs() {
				if l.Steady() {
					steady++
				}
			}
			if steadyBases == 0 || steadyTicks == 0 {
				t.Fatalf("no log read with steady production (%d bases, %d ticks read)", steadyBases, steadyTicks)
			}
			if lazy.InputRecordsAfter(0).Int64() == 0 {
				t.Fatal("no input record")
			}
			t.Logf("%d partitions with steady production at the end, %d packets", steady, lazy.Packets.Len())
		})
	}
}

// tickState is what a tick leaves that the closed form could change: every
// log's high watermark and LSO, the tick of its last records and of a few
// spread through it, the packets and events since p0 and ev0, the steady
// clock and producers, the most lag and time lag.
func tickState(w *World, p0, ev0 int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "clock %d steady %v\n", w.broker.SteadyClock(), w.SteadyProducers())
	for _, l := range w.broker.Logs() {
		hw := l.HW()
		fmt.Fprintf(&b, "%s hw %d lso %d", l.TP, hw, l.LSO())
		for _, i := range []int{0, hw / 3, hw / 2, hw - 3, hw - 2, hw - 1} {
			if i >= 0 && i < hw {
				fmt.Fprintf(&b, " %+v", l.Cells.At(i))
			}
		}
		for i := 0; i < hw; i++ {
			fmt.Fprintf(&b, " %d", l.Cells.TickAt(i))
		}
		b.WriteByte('\n')
	}
	for i := p0; i < w.Packets.Len(); i++ {
		p := w.Packets.At(i)
		fmt.Fprintf(&b, "p%d %s>%s %s %v %s %s\n", p.ID, p.From, p.To, p.Type, p.Response, p.Error, p.Summary)
	}
	for i := ev0; i < w.Events.Len(); i++ {
		e := w.Events.At(i)
		fmt.Fprintf(&b, "e %s %s %s\n", e.Kind, e.Member, e.Text)
	}
	ticks, tp, tick, _ := w.Unavail.TimeLag(w)
	fmt.Fprintf(&b, "lag %d %s %d time %d %s %d\n", w.Unavail.MaxLag, w.Unavail.MaxLagPartition, w.Unavail.MaxLagTick, ticks, tp, tick)
	return b.String()
}
