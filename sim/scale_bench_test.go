package sim

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Benchmarks at real groups' size (issue 26). Figures are in
// docs/benchmarks.md; compare cpu-* (the process's CPU time, the
// collector's included) rather than ns/op on the shared machine.

// stableWorld is a world of members members over parts partitions of one
// topic, Stable from tick 0 (New's initial group), stepped ticks ticks.
func stableWorld(b *testing.B, protocol string, members, parts, ticks int) *World {
	w, err := New(bigTopology(members, 1, parts), scaleConfig(b, protocol))
	if err != nil {
		b.Fatal(err)
	}
	for range ticks {
		w.Step()
	}
	if !w.GroupSettled() {
		b.Fatalf("%d members: not settled after %d ticks", members, ticks)
	}
	return w
}

// BenchmarkTickIdle10000: a tick of 10,000 idle members over 20,000
// partitions (no records): the heartbeats (packets under the consumer
// protocol) and, every auto.commit.interval.ms, every member's commit of
// its positions; heap-B/tick is what the history keeps a tick.
func BenchmarkTickIdle10000(b *testing.B) {
	for _, protocol := range []string{"classic", "consumer"} {
		b.Run(protocol, func(b *testing.B) {
			w := stableWorld(b, protocol, 10_000, 20_000, 20)
			h0 := liveHeap()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				w.Step()
			}
			cpu := cpuTime() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/tick")
			b.ReportMetric(float64(int64(liveHeap())-int64(h0))/float64(b.N), "heap-B/tick")
			runtime.KeepAlive(w) // else the world is dead at the last liveHeap, and collected
		})
	}
}

var rollRestarts = flag.Int("rollrestarts", 1000, "BenchmarkRollingRestart1000x100000: restart the first N members only")

// peakMeter samples the heap's objects (live and garbage) every tick.
type peakMeter struct{ peak uint64 }

func (p *peakMeter) sample() { p.peak = max(p.peak, heapObjects()) }

// BenchmarkRebalance10000: a member joins a Stable group of 10,000 over
// 20,000 partitions; an op steps until the group is settled again (each op
// on a copy of the same world, made before its timer starts). peak-MB is
// the heap's objects at their most during the ops, the world included.
func BenchmarkRebalance10000(b *testing.B) {
	for _, protocol := range []string{"classic", "consumer"} {
		b.Run(protocol, func(b *testing.B) {
			base := stableWorld(b, protocol, 10_000, 20_000, 20)
			var cpu time.Duration
			var pm peakMeter
			ticks := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				w := base.Clone()
				runtime.GC()
				b.StartTimer()
				cpu0 := cpuTime()
				if err := w.Join("C10001", false, nil); err != nil {
					b.Fatal(err)
				}
				for k := 0; k < 3 || !w.GroupSettled(); k++ {
					w.Step()
					pm.sample()
					ticks++
				}
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(ticks)/float64(b.N), "ticks/op")
			b.ReportMetric(float64(pm.peak)/1e6, "peak-MB")
		})
	}
}

// BenchmarkFormGroup1M: a world of 1,000,000 partitions (ten topics of
// 100,000) is made, 10 members join it at once, and it steps until the
// group is settled: an op is all of that.
func BenchmarkFormGroup1M(b *testing.B) {
	for _, protocol := range []string{"classic", "consumer"} {
		b.Run(protocol, func(b *testing.B) {
			var cpu time.Duration
			var pm peakMeter
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				runtime.GC()
				cpu0 := cpuTime()
				w, err := New(bigTopology(0, 10, 100_000), scaleConfig(b, protocol))
				if err != nil {
					b.Fatal(err)
				}
				for c := 1; c <= 10; c++ {
					if err := w.Join("C"+strconv.Itoa(c), false, nil); err != nil {
						b.Fatal(err)
					}
				}
				for k := 0; k < 3 || !w.GroupSettled(); k++ {
					w.Step()
					pm.sample()
				}
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(pm.peak)/1e6, "peak-MB")
		})
	}
}

// BenchmarkWorldCost measures the figures of kernel's memory model
// (kernel/worldcost.go): the heap a world keeps, after a full collection,
// per member, per partition and per input record once processed, and
// what a copy of the world (kernel's step makes one for its undo) adds
// per member and per partition. One op builds each world once.
func BenchmarkWorldCost(b *testing.B) {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	for i := 0; i < b.N; i++ {
		// partitions: 1,000,000 of one topic (and the output's 4), owned
		// by 10 members (an owned partition is in its member's lists and
		// the coordinator's: about a fifth more than one nobody owns)
		h0 := liveHeap()
		w, _ := New(bigTopology(10, 1, 1_000_000), cfg)
		h1 := liveHeap()
		c := w.Clone()
		h2 := liveHeap()
		b.ReportMetric(float64(h1-h0)/1e6, "B/partition")
		b.ReportMetric(float64(h2-h1)/1e6, "copy-B/partition")
		runtime.KeepAlive(w)
		runtime.KeepAlive(c)
		w, c = nil, nil

		// members: 10,000 over 10,000 partitions, less the same world
		// without them
		h0 = liveHeap()
		bare, _ := New(bigTopology(0, 1, 10_000), cfg)
		h1 = liveHeap()
		w, _ = New(bigTopology(10_000, 1, 10_000), cfg)
		h2 = liveHeap()
		c = w.Clone()
		h3 := liveHeap()
		b.ReportMetric(float64(int64(h2-h1)-int64(h1-h0))/10_000, "B/member")
		b.ReportMetric(float64(int64(h3-h2)-int64(h1-h0))/10_000, "copy-B/member")
		runtime.KeepAlive(bare)
		runtime.KeepAlive(w)
		runtime.KeepAlive(c)
		bare, w, c = nil, nil, nil

		// records: 100 members over 100 partitions of 1,000 records,
		// every record processed (default settings otherwise); over
		// 10,000 partitions of 10 (where the auto-commits, every member's
		// 100 positions every 5 ticks, cost more than the records: a
		// cost per tick, not per record); and one member over 6
		// partitions of 1,000
		for _, shape := range []struct {
			name                   string
			members, parts, record int
		}{{"B/record-100x100", 100, 100, 1000}, {"B/record-100x10000", 100, 10_000, 10}, {"B/record-default", 1, 6, 1_000}} {
			rc := DefaultConfig()
			rc.RecordsPerPartition = shape.record
			w, _ = New(bigTopology(shape.members, 1, shape.parts), rc)
			h0 = liveHeap()
			k := 0
			for ; k < 3 || !w.CaughtUp(); k++ {
				w.Step()
			}
			b.ReportMetric(float64(int64(liveHeap())-int64(h0))/float64(shape.parts*shape.record), shape.name)
			b.ReportMetric(float64(k), shape.name+"-ticks")
			runtime.KeepAlive(w)
			w = nil
		}
	}
}

// BenchmarkRollingRestart1000x100000: issue 26's rolling restart, in the
// page's tick-counting time (not its real-time target): 1,000 members over
// 100,000 partitions (ten topics, 5 records each), each restarted in turn
// and the group left to settle before the next, under each protocol. It
// takes many minutes: run it alone with -benchtime 1x (-rollrestarts N
// restarts only the first N). Under the classic protocol the trace's texts
// reach their 4 GB before the last restart (each eager rebalance names
// every partition several times): it stops there and reports how many
// restarts it made (restarts) and the text they kept (text-MB).
func BenchmarkRollingRestart1000x100000(b *testing.B) {
	for _, protocol := range []string{"classic", "consumer"} {
		b.Run(protocol, func(b *testing.B) {
			ticks := 0
			var cpu time.Duration
			var pm peakMeter
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cfg := scaleConfig(b, protocol)
				cfg.RecordsPerPartition = 5
				w, err := New(bigTopology(1000, 10, 10_000), cfg)
				if err != nil {
					b.Fatal(err)
				}
				start := w.Tick
				runtime.GC()
				b.StartTimer()
				cpu0 := cpuTime()
				restarts := 0
				for c := 1; c <= *rollRestarts; c++ {
					// The trace's texts (4 GB at most, sim/trace) run out
					// before the restarts do under the classic protocol:
					// stop there, and say how far it got.
					if used, reach := w.Trace().TextReach(); used > reach/16*15 {
						break
					}
					restarts++
					if err := w.Restart("C" + strconv.Itoa(c)); err != nil {
						b.Fatal(err)
					}
					for k := 0; k < 3 || !w.GroupSettled(); k++ {
						w.Step()
						if k%16 == 0 {
							pm.sample()
						}
						if k > 5000 {
							b.Fatalf("C%d: not settled", c)
						}
					}
				}
				cpu += cpuTime() - cpu0
				ticks += w.Tick - start
				used, _ := w.Trace().TextReach()
				b.ReportMetric(float64(restarts), "restarts")
				b.ReportMetric(float64(used)/1e6, "text-MB")
			}
			b.ReportMetric(float64(ticks)/float64(b.N), "ticks/op")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(pm.peak)/1e6, "peak-MB")
		})
	}
}

// kafkaRestartWorld is issue 26's T2 world as a user builds it: new
// --kafka-defaults (real time, tick.ms 5, Kafka 4.0's defaults) with
// 1,000 members over 100,000 input partitions (ten topics of 10,000), no
// backlog, steady production of 1 record a second on every input
// partition (-rollrate), and processing.ms 0.1 (10 records a millisecond: a member's
// 100 records a second take 1% of its time, so it keeps up and catches
// up at once after a rebalance).
func kafkaRestartWorld(b *testing.B, protocol string) *World {
	return kafkaWorld(b, bigTopology(1000, 10, 10_000), *historyMS, *rollRate,
		map[string]string{"group.protocol": protocol, "processing.ms": "0.1"})
}

// kafkaWorld is a world of Kafka's defaults (new --kafka-defaults) on top,
// with no backlog, a window of history ticks (0: all), the settings (in
// key order) and, when perSecond > 0, every input partition produced at
// perSecond records a second.
func kafkaWorld(tb testing.TB, top Topology, history, perSecond int, settings map[string]string) *World {
	tb.Helper()
	cfg := KafkaDefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.HistoryTicks = history
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if err := cfg.Set("", k, settings[k]); err != nil {
			tb.Fatal(err)
		}
	}
	w, err := New(top, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if perSecond == 0 {
		return w
	}
	rate, err := RatePerSecond(int64(perSecond), int64(cfg.TickMS))
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.ProduceRate(w.Layout().Inputs(), rate); err != nil {
		tb.Fatal(err)
	}
	return w
}

var (
	rollLogEvery   = flag.Int("rolllogevery", 0, "BenchmarkRollingRestartKafkaDefaults1000x100000: every K restarts, write the CPU and the live heap (a collection each time) to stderr, so a cost growing with the roll shows")
	rollProfFrom   = flag.Int("rollproffrom", 0, "BenchmarkRollingRestartKafkaDefaults1000x100000: with -rollprof, start the CPU profile once N restarts are done")
	rollProf       = flag.String("rollprof", "", "BenchmarkRollingRestartKafkaDefaults1000x100000: write a CPU profile of the roll from restart -rollproffrom on to this file")
	rollHeapProfAt = flag.String("rollheapprof", "", "BenchmarkRollingRestartKafkaDefaults1000x100000: N1,N2,...: write a heap profile (after a collection) to /tmp/rollheap-N.prof once N restarts are done")
)

// rollWatch is the roll's instrumentation (-rolllogevery, -rollprof,
// -rollheapprof): it looks at the roll's progress every tick and logs or
// profiles as the flags ask.
type rollWatch struct {
	b       *testing.B
	cpu0    time.Duration
	last    int // restarts at the last look
	lastCPU time.Duration
	prof    *os.File
	heapAt  map[int]bool
	on      bool // any of the flags set
}

func newRollWatch(b *testing.B, cpu0 time.Duration) *rollWatch {
	rw := &rollWatch{b: b, cpu0: cpu0, lastCPU: cpu0, heapAt: map[int]bool{},
		on: *rollLogEvery > 0 || *rollProf != "" || *rollHeapProfAt != ""}
	for _, f := range strings.Split(*rollHeapProfAt, ",") {
		if n, err := strconv.Atoi(f); err == nil {
			rw.heapAt[n] = true
		}
	}
	return rw
}

func (rw *rollWatch) look(w *World) {
	r := w.Rolls()
	done := r[len(r)-1].Restarted
	if done == rw.last {
		return
	}
	rw.last = done
	if *rollProf != "" && rw.prof == nil && done >= *rollProfFrom {
		f, err := os.Create(*rollProf)
		if err != nil {
			rw.b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			rw.b.Fatal(err)
		}
		rw.prof = f
	}
	if rw.heapAt[done] {
		runtime.GC()
		f, err := os.Create("/tmp/rollheap-" + strconv.Itoa(done) + ".prof")
		if err != nil {
			rw.b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			rw.b.Fatal(err)
		}
		f.Close()
	}
	if k := *rollLogEvery; k > 0 && done%k == 0 {
		now := cpuTime()
		// To stderr as it happens, where b.Logf would print only the
		// first 10 lines, at the end: a long roll's progress shows while
		// it runs, and a roll cut short still said how far it came.
		fmt.Fprintf(os.Stderr, "restart %d tick %d: cpu %.1f s (%.3f s a restart over the last %d), live heap %d MB\n",
			done, w.Tick, (now - rw.cpu0).Seconds(), (now-rw.lastCPU).Seconds()/float64(k), k, liveHeap()/1e6)
		rw.lastCPU = cpuTime() // the collection liveHeap made is not the next stretch's
	}
}

func (rw *rollWatch) stop() {
	if rw.prof != nil {
		pprof.StopCPUProfile()
		rw.prof.Close()
	}
}

var rollRate = flag.Int("rollrate", 1, "BenchmarkRollingRestartKafkaDefaults1000x100000: records a second on each input partition (0: no traffic, to see the rebalances' own cost)")

// BenchmarkRollingRestartKafkaDefaults1000x100000 is issue 26's target
// T2: a rolling restart of 1,000 members over 100,000 partitions, in real
// time with Kafka's defaults and steady traffic (kafkaRestartWorld), in
// at most 60 s of CPU and 4 GB, under each protocol. The world steps 2 s
// first (traffic flowing, every member fetching), then rolls as `roll
// C1..Cn --wait-stable` does (each member closed gracefully, its new
// process started once it has stopped, the next one only once the group
// is stable again) and steps until the roll is done and the group settled
// (`run until stable`). -rollrestarts N rolls the first N members only;
// the per-restart figures (cpu-s/restart, text-B/restart,
// ticks/restart) scale that to 1,000 honestly only as far as the cost of
// a restart does not grow with time (the trace does grow: text-MB is
// what it holds at the end). peak-heap-MB samples the heap's objects
// every 16 ticks; peak-RSS-MB is the process's, setup included;
// retained-MB/restart is the heap's objects after a collection at the
// end, the world alive, less those after one at the start, a restart's
// share (what 1,000 restarts would keep, as far as it does not level
// off: the OffsetFetch requests' 30 s timeouts hold about 10 restarts'
// partitions, then no more).
func BenchmarkRollingRestartKafkaDefaults1000x100000(b *testing.B) {
	for _, protocol := range []string{"classic", "consumer"} {
		b.Run(protocol, func(b *testing.B) {
			n := min(*rollRestarts, 1000)
			var cpu time.Duration
			var pm peakMeter
			ticks, records := 0, 0
			var text int
			var retained int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				w := kafkaRestartWorld(b, protocol)
				for range 2000 / w.Cfg.TickMS {
					w.Step()
				}
				if !w.Settled() {
					b.Fatalf("not settled 2 s after New")
				}
				start, text0, processed0 := w.Tick, textUsed(w), w.Processed()
				heap0 := liveHeap()
				b.StartTimer()
				cpu0 := cpuTime()
				members := make([]string, n)
				for c := range members {
					members[c] = "C" + strconv.Itoa(c+1)
				}
				if err := w.Roll(RollSpec{Members: members, Graceful: true, WaitStable: true}); err != nil {
					b.Fatal(err)
				}
				rw := newRollWatch(b, cpu0)
				for k := 0; !w.Settled(); k++ {
					w.Step()
					if k%16 == 0 {
						pm.sample()
					}
					if rw.on {
						rw.look(w)
					}
					if k > n*20_000 {
						b.Fatalf("roll of %d members not done after %d ticks", n, k)
					}
				}
				cpu += cpuTime() - cpu0
				rw.stop()
				b.StopTimer()
				retained += int64(liveHeap()) - int64(heap0)
				ticks += w.Tick - start
				text += textUsed(w) - text0
				records += w.Processed() - processed0
				if r := w.Rolls(); r[len(r)-1].Restarted != n {
					b.Fatalf("roll restarted %d members of %d", r[len(r)-1].Restarted, n)
				}
				b.StartTimer()
			}
			ops := float64(b.N)
			b.ReportMetric(cpu.Seconds()/ops, "cpu-s/op")
			b.ReportMetric(cpu.Seconds()/ops/float64(n), "cpu-s/restart")
			b.ReportMetric(float64(ticks)/ops, "ticks/op")
			b.ReportMetric(float64(ticks)/ops/float64(n), "ticks/restart")
			b.ReportMetric(float64(ticks)/ops*float64(KafkaDefaultConfig().TickMS)/1000, "sim-s/op")
			b.ReportMetric(float64(text)/ops/float64(n), "text-B/restart")
			b.ReportMetric(float64(retained)/ops/float64(n)/1e6, "retained-MB/restart")
			b.ReportMetric(float64(records)/ops, "records/op")
			b.ReportMetric(float64(pm.peak)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(peakRSS())/1e6, "peak-RSS-MB")
		})
	}
}

func textUsed(w *World) int {
	used, _ := w.Trace().TextReach()
	return used
}

// steadyCostShapes are the worlds BenchmarkSteadyCost measures: the
// page's, at its scale, and issue 26's T1 and T2, as a user builds them,
// with the settings the kernel's estimate of steady production reads
// (linger.ms, the output's partitions, commit.mode) varied.
var steadyCostShapes = []struct {
	name                   string
	kafka                  bool // new --kafka-defaults (real time, tick.ms 5)
	members, topics, parts int
	outs                   int
	rate                   string // R/s in real time, R/Nticks on the page's scale
	settings               map[string]string
	warm, ticks            int
}{
	{name: "page-1/tick", members: 2, topics: 2, parts: 3, outs: 1, rate: "1/1", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500"}, warm: 20, ticks: 2000},
	{name: "page-1/tick-slow", members: 2, topics: 2, parts: 3, outs: 1, rate: "1/1", warm: 20, ticks: 2000},
	{name: "page-5/tick-out4", members: 2, topics: 2, parts: 3, outs: 4, rate: "5/1", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500"}, warm: 20, ticks: 2000},
	{name: "page-5/tick-out4-linger", members: 2, topics: 2, parts: 3, outs: 4, rate: "5/1", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500", "linger.ms": "1"}, warm: 20, ticks: 2000},
	{name: "page-1/10ticks", members: 2, topics: 2, parts: 3, outs: 1, rate: "1/10", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500"}, warm: 20, ticks: 4000},
	{name: "page-1member-1/3ticks", members: 1, topics: 2, parts: 3, outs: 1, rate: "1/3", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500"}, warm: 20, ticks: 4000},
	{name: "page-after-1/tick", members: 2, topics: 2, parts: 3, outs: 1, rate: "1/1", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500", "commit.mode": "after"}, warm: 20, ticks: 2000},
	{name: "page-tx-1/tick", members: 2, topics: 2, parts: 3, outs: 1, rate: "1/1", settings: map[string]string{"processing.ticks": "1/100", "max.poll.records": "500", "commit.mode": "after", "transactional.id": "per-member"}, warm: 20, ticks: 2000},
	{name: "T1", kafka: true, members: 100, topics: 10, parts: 100, outs: 4, rate: "1000", settings: map[string]string{"processing.ms": "0.05"}, warm: 400, ticks: 2000},
	{name: "T1-linger0", kafka: true, members: 100, topics: 10, parts: 100, outs: 4, rate: "1000", settings: map[string]string{"processing.ms": "0.05", "linger.ms": "0"}, warm: 400, ticks: 1000},
	{name: "T1-out1", kafka: true, members: 100, topics: 10, parts: 100, outs: 1, rate: "1000", settings: map[string]string{"processing.ms": "0.05"}, warm: 400, ticks: 2000},
	{name: "T1-after", kafka: true, members: 100, topics: 10, parts: 100, outs: 4, rate: "1000", settings: map[string]string{"processing.ms": "0.05", "commit.mode": "after"}, warm: 400, ticks: 2000},
	{name: "T1-10/s", kafka: true, members: 100, topics: 10, parts: 100, outs: 4, rate: "10", settings: map[string]string{"processing.ms": "0.05"}, warm: 400, ticks: 4000},
	{name: "T2", kafka: true, members: 1000, topics: 10, parts: 10_000, outs: 4, rate: "1", settings: map[string]string{"processing.ms": "0.1"}, warm: 400, ticks: 1000},
}

// BenchmarkSteadyCost measures what steady production costs a world's
// history, the figures of kernel's estimate (kernel/worldcost.go,
// steadyCost): for each shape, the heap a full collection leaves grows by
// heap-B/tick as the world steps, while its producers append runs/tick
// runs ((partition, tick) pairs with records) of records/tick records,
// spread/tick of them (a run's min(records, output partitions)) to the
// output. One op builds each world, steps it warm ticks (the group
// formed, traffic flowing), then measures over ticks more.
func BenchmarkSteadyCost(b *testing.B) {
	for _, sh := range steadyCostShapes {
		b.Run(sh.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cfg := DefaultConfig()
				if sh.kafka {
					cfg = KafkaDefaultConfig()
				}
				cfg.RecordsPerPartition = 0
				for k, v := range sh.settings {
					if err := cfg.Set("", k, v); err != nil {
						b.Fatal(err)
					}
				}
				t := bigTopology(sh.members, sh.topics, sh.parts)
				t.Output.Partitions = sh.outs
				w, err := New(t, cfg)
				if err != nil {
					b.Fatal(err)
				}
				r, per, _ := strings.Cut(sh.rate, "/")
				rn, _ := strconv.Atoi(r)
				var rate Rate
				if sh.kafka {
					rate, err = RatePerSecond(int64(rn), int64(cfg.TickMS))
				} else {
					pn, _ := strconv.Atoi(per)
					rate, err = NewRate(int64(rn), int64(pn))
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := w.ProduceRate(w.Layout().Inputs(), rate); err != nil {
					b.Fatal(err)
				}
				for k := 0; k < sh.warm; k++ {
					w.Step()
				}
				w0 := w.SteadyWorkAfter(0)
				h0 := liveHeap()
				for k := 0; k < sh.ticks; k++ {
					w.Step()
				}
				h1 := liveHeap()
				w1 := w.SteadyWorkAfter(0)
				n := float64(sh.ticks)
				b.ReportMetric(float64(int64(h1)-int64(h0))/n, "heap-B/tick")
				b.ReportMetric(float64(w1.Runs-w0.Runs)/n, "runs/tick")
				b.ReportMetric(float64(w1.Records-w0.Records)/n, "records/tick")
				b.ReportMetric(float64(w1.Spread-w0.Spread)/n, "spread/tick")
				b.ReportMetric(float64(w.Processed()), "processed")
				runtime.KeepAlive(w)
			}
		})
	}
}
