package sim

import (
	"flag"
	"reflect"
	"testing"
	"time"
)

var (
	deliverySeconds = flag.Float64("deliveryseconds", 20, "BenchmarkDeliveryRealRates: simulated seconds of traffic before Delivery is asked")
	deliveryOutputs = flag.Int("deliveryoutputs", 4, "BenchmarkDeliveryRealRates: output partitions")
	deliveryForget  = flag.Int("deliveryforgetms", 10_000, "BenchmarkDeliveryRealRates: a copy of the world lets its output logs go of what is older than this many ms, every tick (0: no copy)")
)

// BenchmarkDeliveryRealRates: Delivery on T1's world (100 members over
// 1,000 input partitions, Kafka 4.0's defaults, 1,000 records a second
// into each partition) after -deliveryseconds simulated seconds (20:
// 20,000,000 input records), by merging runs (runs) and by a count a
// record (perRecord, the reference it replaced), at both isolation
// levels per op; -deliveryoutputs sets the output topic's partitions
// (4, T1's). The world is built once, outside the timer; the two must
// agree on it. Run with -benchtime 1x or a few x.
//
// With -deliveryforgetms W (10,000 unless 0) a copy of the world, stepped
// beside it, lets its output logs go of their cells older than W ms after
// every tick (ForgetOutputBefore): the same four are timed on it
// (runs-forgot, perRecord-forgot), and every one reports the bytes its
// world's output logs keep (output-MB, Log.KeptBytes) and the CPU its
// world took to step (step-cpu-s, ForgetOutputBefore included).
func BenchmarkDeliveryRealRates(b *testing.B) {
	cfg := KafkaDefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, DefaultTickMS)
	topo := bigTopology(100, 10, 100)
	topo.Output.Partitions = *deliveryOutputs
	w := steadyWorld(b, topo, cfg, 1000)
	var f *World // the copy letting go of its output logs' past
	if *deliveryForget > 0 {
		f = w.Clone()
	}
	window := *deliveryForget / DefaultTickMS
	var cpuW, cpuF time.Duration
	for ticks := int(*deliverySeconds * 1000 / DefaultTickMS); w.Tick < ticks; {
		t0 := cpuTime()
		w.Step()
		cpuW += cpuTime() - t0
		if f != nil {
			t0 = cpuTime()
			f.Step()
			f.broker.ForgetOutputBefore(f.Tick - window)
			cpuF += cpuTime() - t0
		}
	}
	records := 0
	for _, tp := range w.layout.Inputs() {
		records += w.broker.Log(tp).HW()
	}
	isos := []string{"read_uncommitted", "read_committed"}
	for _, iso := range isos {
		want := deliveryPerRecord(w, iso)
		if got := w.Delivery(iso); !reflect.DeepEqual(got, want) {
			b.Fatalf("%s: by runs %+v, a count a record %+v", iso, got, want)
		}
		if f == nil {
			continue
		}
		if got := f.Delivery(iso); !reflect.DeepEqual(got, want) {
			b.Fatalf("%s: by runs after letting go of the output logs' past %+v, keeping all %+v", iso, got, want)
		}
		if got := deliveryPerRecord(f, iso); !reflect.DeepEqual(got, want) {
			b.Fatalf("%s: a count a record after letting go of the output logs' past %+v, keeping all %+v", iso, got, want)
		}
	}
	outputBytes := func(w *World) int {
		n := 0
		for _, tp := range w.layout.Outputs() {
			n += w.broker.Log(tp).KeptBytes()
		}
		return n
	}
	type world struct {
		suffix string
		w      *World
		cpu    time.Duration
	}
	worlds := []world{{"", w, cpuW}}
	if f != nil {
		worlds = append(worlds, world{"-forgot", f, cpuF})
	}
	for _, wo := range worlds {
		for _, bc := range []struct {
			name string
			f    func(*World, string) Counts
		}{{"runs", (*World).Delivery}, {"perRecord", deliveryPerRecord}} {
			b.Run(bc.name+wo.suffix, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					for _, iso := range isos {
						bc.f(wo.w, iso)
					}
				}
				b.ReportMetric(float64(records), "input-records")
				b.ReportMetric(float64(outputBytes(wo.w))/1e6, "output-MB")
				b.ReportMetric(wo.cpu.Seconds(), "step-cpu-s")
			})
		}
	}
}

// BenchmarkDeliveryAfterASecond is metrics asked after every simulated
// second of T1's world (hourWorld: 100 members, 1,000 partitions at 1,000
// records a second, Kafka's defaults): an op steps a second (200 ticks)
// and asks Delivery at read_uncommitted, /read-on as a world does
// (reading the second's new runs, deliveryCache), /afresh with the reads
// forgotten first (every run since the start, as before the cache), after
// -deliverywarm seconds stepped first. cpu-ms/op is the process's CPU per
// op, the step included; delivery-ms/op is Delivery's alone.
func BenchmarkDeliveryAfterASecond(b *testing.B) {
	for _, fresh := range []bool{false, true} {
		name := "read-on"
		if fresh {
			name = "afresh"
		}
		b.Run(name, func(b *testing.B) {
			cfg := KafkaDefaultConfig()
			w := hourWorld(b, cfg)
			for w.Tick < *deliveryWarm*200 {
				w.Step()
			}
			w.Delivery("read_uncommitted")
			var inDelivery time.Duration
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				for end := w.Tick + 200; w.Tick < end; {
					w.Step()
				}
				if fresh {
					w.delivered = deliveryCache{}
				}
				c0 := cpuTime()
				w.Delivery("read_uncommitted")
				inDelivery += cpuTime() - c0
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(inDelivery.Milliseconds())/float64(b.N), "delivery-ms/op")
		})
	}
}

var deliveryWarm = flag.Int("deliverywarm", 10, "BenchmarkDeliveryAfterASecond: seconds of T1's world stepped before the ops")

// BenchmarkDeliveryEveryTick is plot duplicates on T1's world (hourWorld,
// Kafka's defaults): the chart's replay asks Delivery at both isolation
// levels after every tick. An op steps one tick (5 ms) and asks, after
// -deliverywarm seconds stepped first; delivery-us/op is Delivery's CPU
// alone. Each ask reads the tick's new runs (deliveryCache) into their
// partitions' lists and walks again the partitions they, or a commit,
// changed (deliveryLevel).
func BenchmarkDeliveryEveryTick(b *testing.B) {
	cfg := KafkaDefaultConfig()
	w := hourWorld(b, cfg)
	deliveryEveryTick(b, w, *deliveryWarm*200)
}

// BenchmarkDeliveryEveryTickT2 is BenchmarkDeliveryEveryTick on T2's world
// (kafkaRestartWorld: 1,000 members over 100,000 input partitions, 1
// record a second on each, the classic protocol), stepped 2 s first: a
// real group's plot duplicates, where each ask merged and walked every
// partition's runs (0.2 s a tick).
func BenchmarkDeliveryEveryTickT2(b *testing.B) {
	w := kafkaRestartWorld(b, "classic")
	deliveryEveryTick(b, w, 400)
}

// deliveryEveryTick steps w to tick warm, asks Delivery at both levels,
// then times the asks after each op's tick.
func deliveryEveryTick(b *testing.B, w *World, warm int) {
	for w.Tick < warm {
		w.Step()
	}
	w.Delivery("read_uncommitted")
	w.Delivery("read_committed")
	var inDelivery time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Step()
		c0 := cpuTime()
		w.Delivery("read_uncommitted")
		w.Delivery("read_committed")
		inDelivery += cpuTime() - c0
	}
	b.ReportMetric(float64(inDelivery.Microseconds())/float64(b.N), "delivery-us/op")
}
