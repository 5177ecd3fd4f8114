package sim

import (
	"runtime"
	"testing"
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
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	p0, e0, n0 := w.Packets.Len(), w.Events.Len(), w.Processed()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w.Step()
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	recs := float64(w.Processed() - n0)
	if recs == 0 {
		b.Fatal("no record processed")
	}
	b.ReportMetric(recs/float64(b.N), "records/tick")
	b.ReportMetric(float64(cpu)/recs, "cpu-ns/record")
	b.ReportMetric((float64(ms1.HeapAlloc)-float64(ms0.HeapAlloc))/recs, "heap-B/record")
	b.ReportMetric(float64(w.Packets.Len()-p0+w.Events.Len()-e0)/recs, "pkts+evs/record")
	runtime.KeepAlive(w)
}
