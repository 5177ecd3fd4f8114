package sim

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
	"time"
)

var hourMinutes = flag.Float64("hourminutes", 60, "BenchmarkSteadyHour100x1000: simulate this many minutes (the figures are per simulated hour, extrapolated when less)")

var historyMS = flag.Int("historyms", 0, "BenchmarkSteadyHour100x1000 and BenchmarkRollingRestartKafkaDefaults1000x100000: history.ms, the window of its past the world keeps in detail (0: everything)")

// hourWorld is T1's world (BenchmarkSteadyHour100x1000) with cfg, a
// real-time configuration (KafkaDefaultConfig, say): 100 members over ten
// topics of 100 partitions, each fed 1,000 records a second from the first
// tick, no backlog, each member processing a record in 0.05 ms.
func hourWorld(tb testing.TB, cfg Config) *World {
	tb.Helper()
	cfg.RecordsPerPartition = 0
	// processing.ms 0.05: 1 ms for 20 records, 1 tick for 100.
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, cfg.TickMS)
	return steadyWorld(tb, bigTopology(100, 10, 100), cfg, 1000)
}

// BenchmarkSteadyHour100x1000 is issue 26's first scale target: one
// simulated hour of a 100-member group over 1,000 input partitions (ten
// topics of 100), in real time with Kafka 4.0's defaults (new
// --kafka-defaults: a 5 ms tick), each input partition fed 1,000 records a
// second (5 a tick: 3.6 x 10^9 records in the hour), each member
// processing a record in 0.05 ms (half its time busy), with a deploy in
// the middle: every member restarted in turn, gracefully, each next one
// once the group is stable again (`roll C1..C100 --graceful
// --wait-stable`). It builds the world as a user would and steps it; the
// figures are per simulated hour: CPU seconds (cpu-s/hour), peak heap
// (peak-MB), and the records processed. -hourminutes M simulates M
// minutes only and scales the CPU figure to the hour (the deploy still
// starts at half the span). -historyms MS keeps only the last MS
// milliseconds of its trace in detail (history.ms). Run it alone with
// -benchtime 1x.
func BenchmarkSteadyHour100x1000(b *testing.B) {
	const members, tickMS = 100, DefaultTickMS
	span := int(*hourMinutes * 60_000 / tickMS) // ticks simulated
	if span < 1 {
		b.Fatalf("-hourminutes %v is less than a tick", *hourMinutes)
	}
	var cpu time.Duration
	var pm peakMeter
	processed, produced, restarted := 0, int64(0), 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg := KafkaDefaultConfig()
		cfg.HistoryTicks = *historyMS
		w := hourWorld(b, cfg)
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuTime()
		start := w.Tick
		deployed := false
		for w.Tick-start < span {
			if !deployed && w.Tick-start >= span/2 {
				spec := RollSpec{Graceful: true, WaitStable: true}
				for c := 1; c <= members; c++ {
					spec.Members = append(spec.Members, "C"+strconv.Itoa(c))
				}
				if err := w.Roll(spec); err != nil {
					b.Fatal(err)
				}
				deployed = true
			}
			w.Step()
			if w.Tick%512 == 0 {
				pm.sample()
			}
		}
		cpu += cpuTime() - cpu0
		b.StopTimer()
		processed += w.Processed()
		for _, p := range w.SteadyProducers() {
			produced += p.Sent
		}
		rolls := w.Rolls()
		if len(rolls) != 1 {
			b.Fatalf("%d deploys, not 1", len(rolls))
		}
		restarted += rolls[0].Restarted
		if *hourMinutes >= 60 && rolls[0].Ended < 0 {
			b.Errorf("the deploy did not finish within the hour: %d of %d members restarted", rolls[0].Restarted, members)
		}
		runtime.KeepAlive(w)
		b.StartTimer()
	}
	perHour := 60 / *hourMinutes
	b.ReportMetric(cpu.Seconds()/float64(b.N)*perHour, "cpu-s/hour")
	b.ReportMetric(float64(pm.peak)/1e6, "peak-MB")
	b.ReportMetric(float64(processed)/float64(b.N), "processed")
	b.ReportMetric(float64(processed)/float64(max(produced, 1)), "processed/produced")
	b.ReportMetric(float64(restarted)/float64(b.N), "restarted")
}
