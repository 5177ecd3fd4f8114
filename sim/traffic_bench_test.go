package sim

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkSteadyTraffic1000: 100 members over 1,000 input partitions, each
// partition fed 5 records a tick (1,000 records a second with real time's
// 5 ms tick), members processing 100 records a tick each (processing.ticks
// 1/100) in batches of up to 500: about 5,000 records a tick flow through
// fetch, processing, the sink, the invoices and the trace. b.N is ticks;
// the figures are per record processed: CPU time, and the heap the world
// keeps for good (after a full GC) — what steady traffic at real rates
// costs with one event, one produce round trip and one output cell per
// record. Run with -benchtime 200x.
func BenchmarkSteadyTraffic1000(b *testing.B) {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 100
	cfg.Client.MaxPollRecords = 500
	cfg.Client.MaxPollInterval = 1000
	w, err := New(bigTopology(100, 1, 1000), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.ProduceRate(w.layout.Inputs(), Rate{5, 1}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 50; i++ { // into the steady state
		w.Step()
	}
	p0, e0, n0 := w.Packets.Len(), w.Events.Len(), w.Processed()
	cpu, kept := stepsMeasured(b, w)
	recs := float64(w.Processed() - n0)
	if recs == 0 {
		b.Fatal("no record processed")
	}
	b.ReportMetric(recs/float64(b.N), "records/tick")
	b.ReportMetric(float64(cpu)/recs, "cpu-ns/record")
	b.ReportMetric(kept/recs, "heap-B/record")
	b.ReportMetric(float64(w.Packets.Len()-p0+w.Events.Len()-e0)/recs, "pkts+evs/record")
	runtime.KeepAlive(w)
}

// BenchmarkSteadyIdle100000: steady traffic on 100,000 input partitions
// (topic busy, 1 record a tick each: 100,000 records a tick) that nobody
// consumes, beside 10 idle members subscribed to another topic (quiet, 10
// partitions, no records: each parked in a long poll). b.N is ticks; the
// figures are per tick: CPU time and the heap the world keeps (after a
// full GC). What steady production itself costs the engine per tick,
// apart from consuming it: before its records were kept in closed form,
// a tick run per partition per tick. Run with -benchtime 200x.
func BenchmarkSteadyIdle100000(b *testing.B) {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	topo := Topology{Group: "g", Inputs: []TopicSpec{{Name: "busy", Partitions: 100_000}, {Name: "quiet", Partitions: 10}},
		Output: TopicSpec{Name: "out", Partitions: 4}}
	w, err := New(topo, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for c := 1; c <= 10; c++ {
		if err := w.Join(fmt.Sprintf("C%d", c), false, []string{"quiet"}); err != nil {
			b.Fatal(err)
		}
	}
	var busy []TopicPartition
	for _, tp := range w.layout.Inputs() {
		if tp.Topic == "busy" {
			busy = append(busy, tp)
		}
	}
	if err := w.ProduceRate(busy, Rate{1, 1}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 50; i++ { // the group forms; every member parks
		w.Step()
	}
	in0 := w.InputRecordsAfter(0).Int64()
	cpu, kept := stepsMeasured(b, w)
	if got := w.InputRecordsAfter(0).Int64() - in0; got != int64(100_000*b.N) {
		b.Fatalf("%d records appended in %d ticks, want %d", got, b.N, 100_000*b.N)
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/tick")
	b.ReportMetric(kept/float64(b.N), "heap-B/tick")
	runtime.KeepAlive(w)
}

// BenchmarkInputRecordsAfter100000: the kernel's record limit's sum
// (InputRecordsAfter) over 100,000 steady producers, once an op.
func BenchmarkInputRecordsAfter100000(b *testing.B) {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	w, err := New(Topology{Group: "g", Inputs: []TopicSpec{{Name: "busy", Partitions: 100_000}}, Output: TopicSpec{Name: "out", Partitions: 1}}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.ProduceRate(w.layout.Inputs(), Rate{3, 2}); err != nil {
		b.Fatal(err)
	}
	w.Step()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if w.InputRecordsAfter(1000).Sign() <= 0 {
			b.Fatal("no record")
		}
	}
}

// stepsMeasured steps w b.N times under the benchmark's timer and gives
// the CPU the steps took and the heap they kept (after a full collection
// each side).
func stepsMeasured(b *testing.B, w *World) (cpu time.Duration, kept float64) {
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w.Step()
	}
	cpu = cpuTime() - cpu0
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	return cpu, float64(ms1.HeapAlloc) - float64(ms0.HeapAlloc)
}
