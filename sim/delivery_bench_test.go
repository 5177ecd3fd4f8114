package sim

import (
	"flag"
	"reflect"
	"testing"
)

var (
	deliverySeconds = flag.Float64("deliveryseconds", 20, "BenchmarkDeliveryRealRates: simulated seconds of traffic before Delivery is asked")
	deliveryOutputs = flag.Int("deliveryoutputs", 4, "BenchmarkDeliveryRealRates: output partitions")
)

// BenchmarkDeliveryRealRates: Delivery on T1's world (100 members over
// 1,000 input partitions, Kafka 4.0's defaults, 1,000 records a second
// into each partition) after -deliveryseconds simulated seconds (20:
// 20,000,000 input records), by merging runs (runs) and by a count a
// record (perRecord, the reference it replaced), at both isolation
// levels per op; -deliveryoutputs sets the output topic's partitions
// (4, T1's). The world is built once, outside the timer; the two must
// agree on it. Run with -benchtime 1x or a few x.
func BenchmarkDeliveryRealRates(b *testing.B) {
	cfg := KafkaDefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, DefaultTickMS)
	topo := bigTopology(100, 10, 100)
	topo.Output.Partitions = *deliveryOutputs
	w := steadyWorld(b, topo, cfg, 1000)
	for ticks := int(*deliverySeconds * 1000 / DefaultTickMS); w.Tick < ticks; {
		w.Step()
	}
	records := 0
	for _, tp := range w.layout.Inputs() {
		records += w.broker.Log(tp).HW()
	}
	isos := []string{"read_uncommitted", "read_committed"}
	for _, iso := range isos {
		if got, want := w.Delivery(iso), deliveryPerRecord(w, iso); !reflect.DeepEqual(got, want) {
			b.Fatalf("%s: by runs %+v, a count a record %+v", iso, got, want)
		}
	}
	for _, bc := range []struct {
		name string
		f    func(*World, string) Counts
	}{{"runs", (*World).Delivery}, {"perRecord", deliveryPerRecord}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, iso := range isos {
					bc.f(w, iso)
				}
			}
			b.ReportMetric(float64(records), "input-records")
		})
	}
}
