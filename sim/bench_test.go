package sim

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Benchmarks. Figures are in README.md; compare ratios within one run, as
// these machines are shared.

func bigTopology(members, topics, parts int) Topology {
	t := Topology{Group: "g", Output: TopicSpec{Name: "out", Partitions: 4}, Members: members}
	for i := 0; i < topics; i++ {
		t.Inputs = append(t.Inputs, TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: parts})
	}
	return t
}

// steadyWorld is a world of topo and cfg whose every input partition
// produces perSecond records a second at cfg's tick.ms: how the real-rate
// tests and benchmarks start.
func steadyWorld(tb testing.TB, topo Topology, cfg Config, perSecond int64) *World {
	tb.Helper()
	w, err := New(topo, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	rate, err := RatePerSecond(perSecond, int64(cfg.TickMS))
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.ProduceRate(w.Layout().Inputs(), rate); err != nil {
		tb.Fatal(err)
	}
	return w
}

// consumingWorld is the default world with C2 joined and records records
// per input partition, after ticks ticks: C1 and C2 consume every tick.
func consumingWorld(records, ticks int) *World {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = records
	w, _ := New(DefaultTopology(), cfg)
	w.Join("C2", false, nil)
	for i := 0; i < ticks; i++ {
		w.Step()
	}
	return w
}

// BenchmarkTickDefaultWorld: the default world consuming (C1 and C2 process
// records every tick), in ticks per second and in packets+events recorded
// per second (the fair measure when a tick carries more or less work).
func BenchmarkTickDefaultWorld(b *testing.B) {
	w := consumingWorld(1_000_000, 30)
	p0, e0 := w.Packets.Len(), w.Events.Len()
	// The setup's heap (6,000,000 input records), collected before the
	// timer starts so that its GC does not land in the timed loop.
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w.Step()
	}
	b.ReportMetric(float64(ms.HeapAlloc)/1e6, "setup-heap-MB")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/tick")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ticks/s")
	b.ReportMetric(float64(w.Packets.Len()-p0+w.Events.Len()-e0)/b.Elapsed().Seconds(), "pkts+evs/s")
}

// BenchmarkHeapKeptPerTick: the heap the default world keeps for good per
// tick of steady traffic (C1 and C2 consuming, 6 records produced every 10
// ticks): the trace, the events, the logs and __consumer_offsets, measured
// after a full GC before and after b.N ticks. Run it with -benchtime 100000x
// or more: short runs are dominated by the chunk being filled. The trace's
// share is reported apart: its packet records (pkt-rec-B), event records
// (ev-rec-B) and their encoded texts (text-B), per tick.
func BenchmarkHeapKeptPerTick(b *testing.B) {
	w := agedWorld(1_000)
	p0, e0, t0 := w.trace.Bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for end := w.Tick + b.N; w.Tick < end; {
		if w.Tick%10 == 0 {
			for _, tp := range w.Layout().Inputs() {
				w.ProduceInput(tp, 1)
			}
		}
		w.Step()
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/float64(b.N), "heap-B-kept/tick")
	b.ReportMetric(float64(w.Packets.Len()+w.Events.Len())/float64(w.Tick), "pkts+evs/tick")
	// What of it the trace keeps: packet and event records, their texts.
	p1, e1, t1 := w.trace.Bytes()
	b.ReportMetric(float64(p1-p0)/float64(b.N), "pkt-rec-B/tick")
	b.ReportMetric(float64(e1-e0)/float64(b.N), "ev-rec-B/tick")
	b.ReportMetric(float64(t1-t0)/float64(b.N), "text-B/tick")
	runtime.KeepAlive(w)
}

// BenchmarkTickIdle compares the cost of an idle tick (every member parked
// in a long poll, nothing to read) in the default world and in one of 100
// members and 1,000 partitions: idle members and partitions cost nothing.
// consumer-1000x1000 is 1,000 consumer-protocol members over 1,000
// partitions: their heartbeats are real packets (one per member every
// interval), so an idle tick costs what those heartbeats cost, each O(1).
func BenchmarkTickIdle(b *testing.B) {
	for _, c := range []struct {
		name     string
		topo     Topology
		protocol string
	}{{"default", DefaultTopology(), "classic"}, {"100x1000", bigTopology(100, 10, 100), "classic"},
		{"consumer-1000x1000", bigTopology(1000, 10, 100), "consumer"}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.RecordsPerPartition = 0
			cfg.Client.GroupProtocol = c.protocol
			w, _ := New(c.topo, cfg)
			for i := 0; i < 20; i++ {
				w.Step()
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				w.Step()
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/tick")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ticks/s")
		})
	}
}

// BenchmarkRollingRestart100x1000: 100 members over 1,000 partitions (10
// topics x 100), each restarted in turn and the group run until it settles;
// one op is the whole rolling restart. Dynamic members cost a rebalance per
// restart (two, counting the session timeout); static ones none.
// consumer-dynamic is the dynamic case under group.protocol=consumer (no
// static variant there: a restart without close() leaves the instance id
// held, and Kafka answers the new instance UNRELEASED_INSTANCE_ID).
// cpu-s/op is the process's CPU time per op (garbage collection included):
// on a shared machine it moves less than ns/op.
func BenchmarkRollingRestart100x1000(b *testing.B) {
	for _, name := range []string{"dynamic", "static", "consumer-dynamic"} {
		static := name == "static"
		b.Run(name, func(b *testing.B) {
			ticks := 0
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cfg := DefaultConfig()
				cfg.RecordsPerPartition = 5
				if name == "consumer-dynamic" {
					cfg.Client.GroupProtocol = string(ConsumerGroup)
				}
				if static {
					for c := 1; c <= 100; c++ {
						cfg.Overrides = append(cfg.Overrides, Override{Client: fmt.Sprintf("C%d", c), Key: "group.instance.id", Value: fmt.Sprintf("C%d", c)})
					}
				}
				w, _ := New(bigTopology(100, 10, 100), cfg)
				start := w.Tick
				b.StartTimer()
				cpu0 := cpuTime()
				for c := 1; c <= 100; c++ {
					if err := w.Restart(fmt.Sprintf("C%d", c)); err != nil {
						b.Fatal(err)
					}
					for k := 0; k < 3 || !w.GroupSettled(); k++ {
						w.Step()
						if k > 5000 {
							b.Fatalf("C%d: not settled", c)
						}
					}
				}
				cpu += cpuTime() - cpu0
				ticks += w.Tick - start
			}
			b.ReportMetric(float64(ticks)/b.Elapsed().Seconds(), "ticks/s")
			b.ReportMetric(float64(ticks)/float64(b.N), "ticks/op")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkClone: a snapshot of the default world after 200 busy ticks,
// the explorer's unit of work.
func BenchmarkClone(b *testing.B) {
	w := busyWorld()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = w.Clone()
	}
}

// BenchmarkCloneStepParallel is the explorer's unit of work without the
// explorer: copy the default world at tick 200 (BenchmarkClone's) and step
// the copy 20 ticks, on 1 and on 2 goroutines sharing the source. It
// reports CPU time per op (every thread, the collector's too): if it rises
// from 1 to 2 goroutines, the engine's own work scales less than linearly
// (the runtime's allocator and collector, shared caches), whatever the
// explorer's worker pool does.
func BenchmarkCloneStepParallel(b *testing.B) {
	w := busyWorld()
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprint(workers), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			var wg sync.WaitGroup
			per := (b.N + workers - 1) / workers
			for g := 0; g < workers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < per; i++ {
						c := w.Clone()
						for k := 0; k < 20; k++ {
							c.Step()
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(per*workers), "cpu-ns/op")
		})
	}
}

// busyWorld is the default world with C2 joined after 200 busy ticks (100
// records per partition), what BenchmarkClone copies.
func busyWorld() *World {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 100
	w, _ := New(DefaultTopology(), cfg)
	w.Join("C2", false, nil)
	for i := 0; i < 200; i++ {
		w.Step()
	}
	return w
}

// agedWorld is the default world after ticks of steady traffic: C1 and C2
// consuming, and 6 records produced every 10 ticks, so the trace, the logs
// and __consumer_offsets grow all the time.
func agedWorld(ticks int) *World {
	w, _ := New(DefaultTopology(), DefaultConfig())
	w.Join("C2", false, nil)
	for w.Tick < ticks {
		if w.Tick%10 == 0 {
			for _, tp := range w.Layout().Inputs() {
				w.ProduceInput(tp, 1)
			}
		}
		w.Step()
	}
	return w
}

// BenchmarkCloneByAge: World.Clone of the default world with steady
// traffic after 200 / 2,000 / 20,000 / 200,000 ticks. The history is shared
// chunk by chunk, so the cost should not grow with the age.
func BenchmarkCloneByAge(b *testing.B) {
	for _, ticks := range []int{200, 2_000, 20_000, 200_000} {
		w := agedWorld(ticks)
		b.Run(fmt.Sprint(ticks), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = w.Clone()
			}
		})
	}
}
