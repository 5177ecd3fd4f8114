package sim

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/client"
)

// MaxInFlight is Kafka's max.in.flight.requests.per.connection default.
const MaxInFlight = client.MaxInFlight

// stormOutcome is what TestInFlightLimitInARetryStorm reads off one run.
type stormOutcome struct {
	maxInFlight int // the most of C1's batches in flight when it sent one
	dupSeq      int // answers DUPLICATE_SEQUENCE_NUMBER
	outOfOrder  int // answers OUT_OF_ORDER_SEQUENCE_NUMBER
	retries     int // Produce requests sent again
	lost        int // Produce requests and answers lost
	seqGaps     []string
	written     int
	delivery    Counts
	invoices    map[string]int // invoices in the output per source, read back
	processed   int
}

// retryStorm runs one member producing invoices of 6 input partitions to
// one output partition, idempotent, linger.ms 0 (a Produce per run of
// each input partition: six a poll), commit after processing, while for
// 200 ticks a seeded storm loses the next Produce answer (half the
// ticks) or request (a quarter) whenever no loss is pending (each one a
// request timeout and a retry: kgrepl's retry timer is the round trip
// plus retry.backoff.ms); then runs until tick 400, when its backlog is
// processed and every produce answered.
func retryStorm(t *testing.T, seed int64, maxInFlight int) stormOutcome {
	cfg := DefaultConfig()
	cfg.Client.Idempotence = true
	cfg.Client.Commit = CommitAfter
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 1000
	cfg.Client.MaxPollRecords = 500
	cfg.Client.MaxPollInterval = 1000 // no rebalance in the storm
	cfg.Client.SessionTimeout = 1000
	cfg.Client.MaxInFlight = maxInFlight
	cfg.RecordsPerPartition = 2
	topo := Topology{Group: "g", Inputs: []TopicSpec{{Name: "o", Partitions: 6}}, Output: TopicSpec{Name: "out", Partitions: 1}, Members: 1}
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(seed))
	for w.Tick < 400 {
		if w.Tick < 150 {
			// steady input: 2 records a tick on each input partition, so
			// that a poll returns runs of every partition and a tick sends
			// six Produces
			for _, tp := range w.Layout().Inputs() {
				w.ProduceInput(tp, 2)
			}
		}
		if w.Tick < 200 && len(w.PendingDrops()) == 0 {
			switch r.Intn(4) {
			case 0, 1:
				w.Drop(DropRule{Type: Produce, Response: true, To: "C1", Count: 1})
			case 2:
				w.Drop(DropRule{Type: Produce, From: "C1", Count: 1})
			}
		}
		w.Step()
	}
	var o stormOutcome
	if m := w.current["C1"]; m == nil || m.Unsettled() {
		t.Fatalf("seed %d: C1 still has produces unanswered at tick %d", seed, w.Tick)
	}
	// C1's batches in the order it sent them (their first attempts), by
	// their "pid P epoch E seq S" (a retry says so after it), and the
	// tick each was settled: its first answer delivered that is not
	// OUT_OF_ORDER_SEQUENCE_NUMBER (that one is retried).
	summaries := map[int]string{} // C1's Produce requests' summaries, by packet id
	key := func(summary string) string {
		_, k, _ := strings.Cut(strings.TrimSuffix(summary, " (retry)"), ") ")
		return k
	}
	var order []string
	sentAt := map[string]int{}
	settled := map[string]int{}
	for _, p := range w.Packets.All() {
		if p.Type != Produce {
			continue
		}
		if p.Lost {
			o.lost++
		}
		if !p.Response {
			if p.From != "C1" {
				continue
			}
			summaries[p.ID] = p.Summary
			if strings.HasSuffix(p.Summary, " (retry)") {
				o.retries++
				continue
			}
			k := key(p.Summary)
			order = append(order, k)
			sentAt[k] = p.Sent
			continue
		}
		switch p.Error {
		case DuplicateSequenceNumber:
			o.dupSeq++
		case OutOfOrderSequenceNumber:
			o.outOfOrder++
			continue
		}
		k := key(summaries[p.Req.ID])
		if _, ok := settled[k]; !ok && !p.Lost {
			settled[k] = p.Delivered
		}
	}
	// At each send, the batches in flight: from the oldest not settled
	// (answers are delivered before the member acts in a tick) to the
	// one sent.
	oldest := 0
	for i, k := range order {
		for oldest < i {
			if at, ok := settled[order[oldest]]; ok && at <= sentAt[k] {
				oldest++
				continue
			}
			break
		}
		o.maxInFlight = max(o.maxInFlight, i-oldest+1)
	}
	// The output log: C1's sequence numbers from 0, one after another.
	next := 0
	for _, c := range w.broker.Log(w.layout.Outputs()[0]).Cells.All() {
		if c.Producer != "C1" {
			continue
		}
		if c.Seq != next {
			o.seqGaps = append(o.seqGaps, c.Value)
		}
		next = c.Seq + 1
		o.written++
	}
	o.delivery = w.Delivery("read_uncommitted")
	o.invoices = map[string]int{}
	for _, rec := range w.ReadTopic("out", "read_uncommitted") {
		o.invoices[rec.Source]++
	}
	o.processed = w.Processed()
	return o
}

// TestInFlightLimitInARetryStorm: in a storm of lost Produce requests and
// answers, a producer with Kafka's max.in.flight.requests.per.connection
// of 5 never has more than 5 batches of a partition in flight (counted,
// as a connection answers in order, from the oldest one unanswered), so
// the leader's five kept batches (ProducerStateEntry.
// NUM_BATCHES_TO_RETAIN) always hold a retried batch that was written: no
// answer is DUPLICATE_SEQUENCE_NUMBER (Kafka 4.0's broker sends none), the
// output's sequence numbers have no gap, every processed record has one
// invoice, and the delivery counts (duplicates, losses) agree with the
// invoices read back. The same storm without a limit (the page's world)
// has more than 5 in flight and retries older than the kept five,
// answered DUPLICATE_SEQUENCE_NUMBER: the storm reaches the case the
// limit rules out.
func TestInFlightLimitInARetryStorm(t *testing.T) {
	unlimitedDup := 0
	for seed := int64(1); seed <= 6; seed++ {
		o := retryStorm(t, seed, MaxInFlight)
		t.Logf("seed %d: at most %d in flight, %d retries, %d lost, %d out of order, %d written", seed, o.maxInFlight, o.retries, o.lost, o.outOfOrder, o.written)
		if o.maxInFlight > MaxInFlight {
			t.Errorf("seed %d: %d batches in flight at once, want at most %d", seed, o.maxInFlight, MaxInFlight)
		}
		if o.maxInFlight < MaxInFlight || o.retries == 0 || o.lost == 0 {
			t.Errorf("seed %d: the storm never filled the limit (%d in flight) or lost nothing (%d lost, %d retries)", seed, o.maxInFlight, o.lost, o.retries)
		}
		if o.dupSeq != 0 {
			t.Errorf("seed %d: %d answers DUPLICATE_SEQUENCE_NUMBER, want none", seed, o.dupSeq)
		}
		if len(o.seqGaps) != 0 {
			t.Errorf("seed %d: sequence gaps before %v", seed, o.seqGaps)
		}
		if o.processed != 6*(2+2*150) || o.written != o.processed || len(o.invoices) != o.processed {
			t.Errorf("seed %d: %d processed, %d invoices written for %d records, want %d each", seed, o.processed, o.written, len(o.invoices), 6*(2+2*150))
		}
		dups := 0
		for _, n := range o.invoices {
			dups += n - 1
		}
		if o.delivery.Duplicates != dups || o.delivery.Lost != 0 || dups != 0 {
			t.Errorf("seed %d: delivery counts %d duplicates %d lost, read back %d duplicates; want 0, 0, 0", seed, o.delivery.Duplicates, o.delivery.Lost, dups)
		}

		u := retryStorm(t, seed, 0)
		unlimitedDup += u.dupSeq
		if u.maxInFlight <= MaxInFlight {
			t.Errorf("seed %d without a limit: at most %d in flight, want more than %d (the storm does not test the limit)", seed, u.maxInFlight, MaxInFlight)
		}
		if u.written != u.processed || u.delivery.Duplicates != 0 || u.delivery.Lost != 0 {
			t.Errorf("seed %d without a limit: %d written for %d processed, %d duplicates, %d lost", seed, u.written, u.processed, u.delivery.Duplicates, u.delivery.Lost)
		}
	}
	if unlimitedDup == 0 {
		t.Errorf("without a limit no retry was older than the leader's five kept batches: the storm does not reach the case")
	}
}
