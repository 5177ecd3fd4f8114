package sim

import (
	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// clientHost is the world as a client process sees it beyond its
// environment (client.Host): the coordinator told of its implicit
// heartbeats (heartbeat.go), the broker asked whether its fetch is still
// out, the external sink it writes to, the count of records processed.
type clientHost struct {
	group     *Group
	broker    *broker.Broker
	trace     *trace.Trace
	sink      *SinkCounts
	processed *int
}

// RecordProcessed counts a record processed, or a run of them
// (wire.Record.Count), and calls the external sink for each: one call of
// the sink's counts for the run (SinkCounts.incRun), and one event for
// each stretch of records the sink had already been called for as often.
// slot is f's partition's number as the member checked it, or -1
// (client.Host).
func (h *clientHost) RecordProcessed(who trace.Label, f wire.Record, slot int32) {
	n := f.Len()
	*h.processed += n
	p := int(slot)
	if slot < 0 {
		p = h.sink.slot(f.TP, f.TPI-1)
	}
	if n == 1 {
		if times := h.sink.incAt(p, f.Offset); times > 1 {
			h.trace.Eventf(EvSideEffect, who.Client, "external sink called again for %s (%d times): not covered by any transaction", f.ValueIn(h.sink.names), times)
		}
		return
	}
	tp := f.TP
	h.sink.incRunAt(p, f.Offset, n, func(first, count, times int) {
		if count == 1 {
			h.trace.Eventf(EvSideEffect, who.Client, "external sink called again for %s (%d times): not covered by any transaction", h.sink.names.Name(tp, first), times)
			return
		}
		// o0.3..o0.9: the quiet summary reads the range back (kernel/quiet.go)
		h.trace.Eventf(EvSideEffect, who.Client, "external sink called again for %s..%s (%d times each): not covered by any transaction",
			h.sink.names.Name(tp, first), h.sink.names.Name(tp, first+count-1), times)
	})
}

// GroupID is the group every process joins.
func (h *clientHost) GroupID() string { return h.group.ID() }

// FetchOutstanding reports whether a process's fetch is held at the
// broker or its answer on the wire.
func (h *clientHost) FetchOutstanding(client string, inc int, id int) bool {
	return h.broker.FetchOutstanding(client, inc, id)
}

// invoiceSources finds the input record an invoice was made from, in the
// broker's logs (trace.Sources: the trace keeps a produced event as the
// invoice's place). The trace is made before the broker, so the world
// sets broker once it has one.
type invoiceSources struct{ broker *broker.Broker }

func (s *invoiceSources) InvoiceSource(part, off uint64) (TopicPartition, int, bool) {
	return s.broker.InvoiceSource(part, off)
}
