package broker

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// noSenders: every producer keeps its place.
type noSenders struct{}

func (noSenders) FetchWaiting(string, int, int) bool               { return false }
func (noSenders) Displaced(string, int, int32) bool                { return false }
func (noSenders) HeldFetchLost(string, int, int, int)              {}
func (noSenders) CheckProduce(*wire.ProduceRequest) wire.ErrorCode { return wire.None }

// batch is one Produce of an idempotent producer in the table below: its
// epoch, first sequence number and record count.
type batch struct{ epoch, seq, n int }

// produceBatch sends b (pid 7 unless pid is given) to the leader of the
// output partition and returns its answer.
func produceBatch(br *Broker, layout *topo.Layout, pid int64, b batch, noLimit bool) *wire.Packet {
	out := layout.Outputs()[0]
	req := &wire.ProduceRequest{TP: out, PID: pid, Epoch: b.epoch, Seq: b.seq, Producer: "C1",
		Value: "inv(x)", Source: "x", NoInFlightLimit: noLimit}
	if b.n > 1 {
		// a batch of b.n invoices of orders-0, offsets 0..n-1
		req.Src, req.SrcTPI, req.HasSrc, req.Named = layout.Inputs()[0], 1, true, true
		req.Value, req.Source = "", ""
		req.SrcOffset, req.SrcEnd, req.SrcCount = 0, b.n-1, b.n
	}
	return br.Produce(&wire.Packet{Type: wire.Produce, From: "C1", FromInc: 1, Body: req})
}

// TestCheckSequence: the partition leader's answer to an idempotent
// producer's batch, case by case, as Kafka 4.0 decides it
// (UnifiedLog.analyzeAndValidateProducerState): first
// ProducerStateEntry.findDuplicateBatch (same epoch, the same first and
// last sequence numbers as one of the last NUM_BATCHES_TO_RETAIN = 5
// batches: the original offset, nothing written), then
// ProducerAppendInfo.checkProducerEpoch (an older epoch:
// INVALID_PRODUCER_EPOCH) and checkSequence (in the entry's epoch the
// first sequence number must follow the last batch's last, else
// OUT_OF_ORDER_SEQUENCE_NUMBER, a sequence older than the kept batches
// included: Kafka 4.0's broker never answers DUPLICATE_SEQUENCE_NUMBER; in
// a newer epoch it must be 0). Two rows are kgrepl's on purpose, named in
// Broker.Produce: a producer with no in-flight limit (the page's world)
// is answered DUPLICATE_SEQUENCE_NUMBER for a batch older than the kept
// ones, and a producer the leader has no state for must start at 0
// (Kafka takes any sequence there).
func TestCheckSequence(t *testing.T) {
	// Seven batches of one epoch: seq 0, 1..2, 3, 4..6, 7, 8, 9; the
	// leader keeps the last five (seq 3 .. 9), at offsets 3, 4, 7, 8, 9.
	history := []batch{{0, 0, 1}, {0, 1, 2}, {0, 3, 1}, {0, 4, 3}, {0, 7, 1}, {0, 8, 1}, {0, 9, 1}}
	cases := []struct {
		name    string
		pid     int64
		req     batch
		noLimit bool
		code    wire.ErrorCode
		dup     bool
		offset  int // the answer's offset: the original one for a duplicate, the new one when written, -1 when refused
	}{
		{"findDuplicateBatch: the last batch again", 7, batch{0, 9, 1}, false, wire.None, true, 9},
		{"findDuplicateBatch: the oldest of the five kept", 7, batch{0, 3, 1}, false, wire.None, true, 3},
		{"findDuplicateBatch: a kept batch of three records", 7, batch{0, 4, 3}, false, wire.None, true, 4},
		{"same first sequence, other last: not that batch; checkSequence: out of order", 7, batch{0, 4, 1}, false, wire.OutOfOrderSequenceNumber, false, -1},
		{"checkSequence: the next sequence is written", 7, batch{0, 10, 1}, false, wire.None, false, 10},
		{"checkSequence: a gap", 7, batch{0, 12, 1}, false, wire.OutOfOrderSequenceNumber, false, -1},
		{"checkSequence: older than the five kept, Kafka 4.0: out of order, not DUPLICATE_SEQUENCE_NUMBER", 7, batch{0, 1, 2}, false, wire.OutOfOrderSequenceNumber, false, -1},
		{"checkSequence: the first batch, long gone", 7, batch{0, 0, 1}, false, wire.OutOfOrderSequenceNumber, false, -1},
		{"kgrepl: older than the five kept, a producer with no in-flight limit", 7, batch{0, 1, 2}, true, wire.DuplicateSequenceNumber, false, -1},
		{"checkSequence: a newer epoch starts at 0", 7, batch{1, 0, 1}, false, wire.None, false, 10},
		{"checkSequence: a newer epoch not at 0", 7, batch{1, 5, 1}, false, wire.OutOfOrderSequenceNumber, false, -1},
		{"checkProducerEpoch: an older epoch", 7, batch{-1, 10, 1}, false, wire.InvalidProducerEpoch, false, -1},
		{"a producer the leader has no state for, at 0", 8, batch{0, 0, 1}, false, wire.None, false, 10},
		{"kgrepl: a producer the leader has no state for, not at 0", 8, batch{0, 3, 1}, false, wire.OutOfOrderSequenceNumber, false, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tick := 0
			layout := topo.New(topo.Default())
			e := env.New(&tick, trace.New(layout, &tick, nil), layout)
			br := New(e, layout, 10, noSenders{}, noSenders{})
			for _, h := range history {
				if a := produceBatch(br, layout, 7, h, false); a.Error != wire.None || a.Body.(*wire.ProduceResponse).Dup {
					t.Fatalf("history batch %+v answered %s", h, a.Error)
				}
			}
			l := br.Log(layout.Outputs()[0])
			end := l.Cells.Len()
			a := produceBatch(br, layout, c.pid, c.req, c.noLimit)
			r := a.Body.(*wire.ProduceResponse)
			if a.Error != c.code || r.Dup != c.dup || r.Offset != c.offset {
				t.Errorf("answered %s dup %v offset %d (%q), want %s dup %v offset %d", a.Error, r.Dup, r.Offset, a.Summary, c.code, c.dup, c.offset)
			}
			wrote := l.Cells.Len() - end
			if want := map[bool]int{true: c.req.n, false: 0}[c.code == wire.None && !c.dup]; wrote != want {
				t.Errorf("wrote %d records, want %d", wrote, want)
			}
		})
	}
}
