package sim

import "testing"

// TestBatchTextArraysStayWithTheirWorld: a producer's last batch of
// several runs, which its next batches refer to (trace.BatchText), is
// written again in place only while no copy of its world shares it. A
// world copied while steady traffic flows and its copy, stepped on, write
// texts that read the same tick for tick: had
// the original written the shared arrays, the copy's next batches would
// refer to runs it never sent. The two step in turn, so that what one
// wrote is still near enough for the other to refer to.
func TestBatchTextArraysStayWithTheirWorld(t *testing.T) {
	cfg := KafkaDefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, cfg.TickMS) // T1's
	w := steadyWorld(t, bigTopology(4, 10, 10), cfg, 1000)
	for w.Tick < 60 {
		w.Step()
	}
	c := w.Clone()
	from := w.Packets.Len()
	for i := 0; i < 200; i++ { // in turn: each writes its batches a tick before the other
		w.Step()
		c.Step()
	}
	if w.Packets.Len() != c.Packets.Len() {
		t.Fatalf("%d packets and %d in the copy", w.Packets.Len(), c.Packets.Len())
	}
	batches := 0
	for i := from; i < w.Packets.Len(); i++ {
		got, want := packetLine(c.Packets.At(i)), packetLine(w.Packets.At(i))
		if got != want {
			t.Fatalf("packet %d of the copy reads\n  %s\nwant\n  %s", i, got, want)
		}
		if p := w.Packets.At(i); p.Type == Produce && !p.Response {
			batches++
		}
	}
	if batches < 100 {
		t.Fatalf("only %d Produce requests: the test no longer covers batches", batches)
	}
}
