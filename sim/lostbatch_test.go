package sim

import (
	"fmt"
	"strings"
	"testing"
)

// TestTwoLostAnswersOfABatch: why TestRunsAgreeWithPerRecord leaves out a
// second lost Produce answer to a member while the first is still to come.
// A lost answer is a lost packet, and a batch of invoices is one Produce
// with one answer, as in Kafka: the Sender sends a ProducerBatch whole in
// one ProduceRequest; without its answer the request times out and the
// batch fails as a whole (Sender.completeBatch: canRetry, reenqueueBatch),
// goes again whole with its base sequence, and the leader finds it among
// the producer's last five (ProducerStateEntry.findDuplicateBatch) and
// answers with the offsets it has, writing nothing; KafkaProducer.flush
// (RecordAccumulator.awaitFlushCompletion) waits for every batch.
//
// An idempotent member processes input records 0..9 in one tick, committing
// after the batch, with two answers to it to be lost. With runs, the
// invoices are one batch (seq 0..9): the first rule takes its answer, the
// second its retry's answer, and the batch goes a third time; the member
// flushes until that answer and commits a retry round (2 ticks +
// retry.backoff.ms) later than one record at a time, where the two rules
// take the answers of records 0 and 1, sent in the same tick and retried
// together once. Both write each invoice once.
func TestTwoLostAnswersOfABatch(t *testing.T) {
	type outcome struct {
		requests []string // C1's Produce requests
		lost     []string // the lost answers
		commit   int      // the tick C1's first OffsetCommit went out
		flushing []int    // the ticks C1 ended flushing
		written  int      // invoices in the output
	}
	run := func(perRecord bool) outcome {
		cfg := DefaultConfig()
		cfg.Client.Idempotence = true
		cfg.Client.Commit = CommitAfter
		cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 10
		cfg.Client.MaxPollRecords = 10
		cfg.Client.MaxPollInterval = 60 // no rebalance while the batch goes again
		cfg.RecordsPerPartition = 10
		topo := Topology{Group: "g", Inputs: []TopicSpec{{Name: "o", Partitions: 1}}, Output: TopicSpec{Name: "out", Partitions: 1}, Members: 1}
		w, err := New(topo, cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.env.SetPerRecordForTest(perRecord)
		for k := 0; k < 2; k++ {
			w.Drop(DropRule{Type: Produce, Response: true, To: "C1", Count: 1})
		}
		var o outcome
		o.commit = -1
		for w.Tick < 60 {
			w.Step()
			if w.current["C1"].LoopState().String() == "flushing" {
				o.flushing = append(o.flushing, w.Tick)
			}
		}
		for _, p := range w.Packets.All() {
			switch {
			case p.Type == Produce && !p.Response && p.From == "C1":
				o.requests = append(o.requests, fmt.Sprintf("t%d %s", p.Sent, p.Summary))
			case p.Type == Produce && p.Response && p.Lost:
				o.lost = append(o.lost, fmt.Sprintf("t%d %s", p.Sent, p.Summary))
			case p.Type == OffsetCommit && !p.Response && p.From == "C1" && o.commit < 0:
				o.commit = p.Sent
			}
		}
		for _, c := range w.broker.Log(w.layout.Outputs()[0]).Cells.All() {
			if c.Producer == "C1" {
				o.written++
			}
		}
		if len(w.PendingDrops()) != 0 {
			t.Fatalf("perRecord %v: drop rules left unused: %v", perRecord, w.PendingDrops())
		}
		return o
	}
	batch, each := run(false), run(true)
	t.Logf("with runs: %q lost %q commit t%d flushing %v", batch.requests, batch.lost, batch.commit, batch.flushing)
	t.Logf("one record at a time: %q lost %q commit t%d flushing %v", each.requests, each.lost, each.commit, each.flushing)

	// With runs: one batch, sent three times, whole, its first two
	// answers lost.
	if len(batch.requests) != 3 {
		t.Fatalf("with runs C1 sent %d Produce requests %q, want the batch and two retries", len(batch.requests), batch.requests)
	}
	first := batch.requests[0]
	if !strings.Contains(first, "seq 0..9") || strings.Contains(first, "(retry)") {
		t.Errorf("with runs the first Produce is %q, want the batch of seq 0..9", first)
	}
	for _, r := range batch.requests[1:] {
		if !strings.HasSuffix(r, strings.SplitN(first, " ", 2)[1]+" (retry)") {
			t.Errorf("with runs a retry is %q, want the batch %q again whole", r, first)
		}
	}
	if len(batch.lost) != 2 || strings.Contains(batch.lost[0], "already") || !strings.Contains(batch.lost[1], "seq 0..9 already at offsets") {
		t.Errorf("with runs the lost answers are %q, want the batch's and its first retry's", batch.lost)
	}
	// One record at a time: ten, the answers of seq 0 and 1 lost, those two
	// retried together once.
	if len(each.requests) != 12 {
		t.Fatalf("one record at a time C1 sent %d Produce requests %q, want ten and two retries", len(each.requests), each.requests)
	}
	if len(each.lost) != 2 || !strings.Contains(each.requests[10], "seq 0 (retry)") || !strings.Contains(each.requests[11], "seq 1 (retry)") ||
		strings.Fields(each.requests[10])[0] != strings.Fields(each.requests[11])[0] {
		t.Errorf("one record at a time the retries are %q (lost %q), want seq 0 and 1 in one tick", each.requests[10:], each.lost)
	}
	// Each invoice once, either way; the batch commits a retry round later,
	// having flushed that much longer.
	if batch.written != 10 || each.written != 10 {
		t.Errorf("invoices written: %d with runs, %d one record at a time, want 10 (once each)", batch.written, each.written)
	}
	round := 2 + DefaultConfig().Client.RetryBackoff
	if batch.commit < 0 || each.commit < 0 || batch.commit-each.commit != round {
		t.Errorf("C1 commits at t%d with runs, t%d one record at a time: want a retry round (%d ticks) apart", batch.commit, each.commit, round)
	}
	if len(batch.flushing)-len(each.flushing) != round {
		t.Errorf("C1 flushing for %d ticks with runs, %d one record at a time: want a retry round (%d ticks) more", len(batch.flushing), len(each.flushing), round)
	}
}
