// Package trace keeps what happened in a world: every packet (the trace)
// and every event, each as a small fixed-size record whose text is a short
// encoding in a byte arena, formatted only when a view reads it. The
// protocol code states facts (a record was processed, offsets were
// committed, the group changed state) through the methods of Trace; this
// package alone decides how compactly to keep them (templates, references
// back to an earlier text, the parties and partitions by number).
package trace

import (
	"fmt"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Sources finds the input record an invoice was made from, at offset off
// of the log numbered part (topo.Layout.Number): the trace keeps a produced
// event as the invoice's place and reads its source from the log.
type Sources interface {
	InvoiceSource(part, off uint64) (wire.TopicPartition, int, bool)
}

// Trace is a world's packets and events. A Trace is copied with its world
// (Clone): the copies share every chunk written so far and never write
// where the other reads.
type Trace struct {
	now *int // the world's clock

	Packets PacketLog
	Events  EventLog

	// texts keeps the packets' and events' texts, encoded (texts.go): the
	// facts encode theirs with its encoders, the logs read them back.
	texts
	// stopped: a stop event happened in the current tick.
	stopped bool
	// historyFrom is HistoryFrom; pins the records of a windowed trace
	// whose texts were added before their ticks (history.go), each list
	// replaced, never changed in place (clones share them).
	historyFrom int
	pins        struct{ packets, events []pin }
}

// New is an empty trace of a world laid out as layout, whose clock is
// *now, and whose logs sources reads.
func New(layout *topo.Layout, now *int, sources Sources) *Trace {
	t := &Trace{now: now, texts: texts{layout: layout, sources: sources}}
	t.Packets.t, t.Events.t = t, t
	t.arena.now = now
	return t
}

// Clone is a copy of t for a world whose clock is *now and whose logs
// sources reads: it shares the records and texts written so far. With a
// spare (the trace of a finished copy, never read again: sim.Reuser) the
// copy is made in its storage, its encoding buffer too, as the World that
// held the trace's fields before the trace had a room of its own was.
func (t *Trace) Clone(now *int, sources Sources, spare *Trace) *Trace {
	n, scratch := spare, []byte(nil)
	if n == nil {
		n = new(Trace)
	} else {
		scratch = n.scratch[:0]
	}
	*n = Trace{now: now,
		Packets: PacketLog{recs: t.Packets.recs.clone(), apis: t.Packets.apis},
		Events:  EventLog{recs: t.Events.recs.clone()}}
	t.texts.cloneInto(&n.texts, sources)
	n.arena.now = now
	n.scratch = scratch
	n.historyFrom, n.pins = t.historyFrom, t.pins
	n.Packets.t, n.Events.t = n, n
	return n
}

// ForgetEvents drops every event recorded so far: a world's given
// initial state is not something that happened.
func (t *Trace) ForgetEvents() { t.Events.recs, t.pins.events = eventRecs{}, nil }

// BeginTick starts a tick: no stop event yet.
func (t *Trace) BeginTick() { t.stopped, t.arena.tickStart = false, t.arena.end() }

// Stopped reports whether a stop event happened in the current tick.
func (t *Trace) Stopped() bool { return t.stopped }

// Layout is the world's partitions, by which the trace names them.
func (t *Trace) Layout() *topo.Layout { return t.layout }

// Event records a rare event, its text as it is. The frequent ones have
// methods of their own (facts.go), which keep their arguments.
func (t *Trace) Event(kind EventKind, member, text string) {
	t.Events.add(kindIndex[kind], member, t.addText(encLit(t.scratch[:0], text)), 0)
}

// EventBytes is Event with its text in bytes, copied into the trace's
// arena as Event copies a string: a caller that builds a long text (a
// target assignment of 100,000 partitions, about 1 MB) need not copy it
// into a string first.
func (t *Trace) EventBytes(kind EventKind, member string, text []byte) {
	t.Events.add(kindIndex[kind], member, t.addText(encLit(t.scratch[:0], text)), 0)
}

// Eventf is Event with the text formatted.
// Its Parts and Positions arguments are kept as tokens (parts.go).
func (t *Trace) Eventf(kind EventKind, member, format string, args ...any) {
	if b, ok := t.encLists(format, args); ok {
		t.Events.add(kindIndex[kind], member, t.addText(b), 0)
		return
	}
	t.Event(kind, member, fmt.Sprintf(format, args...))
}

// StopEventf is Eventf for a stop event: every form of run halts after the
// tick it happened in.
func (t *Trace) StopEventf(kind EventKind, member, format string, args ...any) {
	t.Eventf(kind, member, format, args...)
	t.Events.recs.Last().kind |= evStop
	t.stopped = true
}

// Record appends p, just sent, to the trace; p.Text is its summary (0:
// p.Summary, kept as it is).
func (t *Trace) Record(p *wire.Packet) { t.Packets.record(p) }

// TextReach is how far the trace's texts reach into their arena, in bytes
// of its address space (16 KB chunks, a chunk's unused end counted), from
// the first chunk kept, and the arena's whole reach, 4 GB. Past it a trace
// that keeps its whole history cannot keep a text and the world panics,
// so a caller that steps a world without bound stops it well before
// (kernel's step). A windowed trace (SetHistory) lets go of its past
// chunks and numbers its chunks without end (64-bit references): used is
// what its window holds, and writing more than 4 GB in its life is fine.
func (t *Trace) TextReach() (used, reach int) {
	return int(t.arena.end()) - t.arena.first<<arenaShift, textRefReach
}

// Bytes is what the trace and the events keep: their records, and their
// texts in the arena (for the heap-per-tick benchmark's breakdown); a
// windowed trace's, those it still keeps.
func (t *Trace) Bytes() (packets, events, texts int) {
	for _, c := range t.arena.full {
		texts += len(c)
	}
	texts += len(t.arena.open)
	pk, ev := t.Packets.Len()-t.Packets.First(), t.Events.Len()-t.Events.First()
	return pk * int(unsafe.Sizeof(packetRec{})), ev * int(unsafe.Sizeof(eventRec{})), texts
}
