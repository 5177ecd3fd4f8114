package trace

import (
	"iter"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// eventRec is one event. The record names it is about (Event.Records)
// are the tokens of its own text from byte records on (0: none): "C1
// processed o2.3" names o2.3.
//
// 6 bytes: its tick and its text are kept as packetRec keeps a packet's
// (from its chunk's base), its member (a party, 12 bits) and its records
// offset (4 bits: a polled event's records start at byte 3 or 4) share 16
// bits. An event whose tick or text does not fit that way, or whose member
// or records offset does not fit (farField in text), keeps its fields
// whole in eventRecs.far.
type eventRec struct {
	text uint16 // 0 for no text, else the text's ref minus its chunk's base text, plus one; farField: kept whole in far
	// memberRecords: the member, a party (low 12 bits), and the records
	// offset (high 4 bits).
	memberRecords uint16
	tick          uint8 // the tick minus its chunk's base tick
	kind          uint8 // index in eventKinds, evStop set for a stop event
}

// maxEventRecords is where an event's records offset stops fitting its
// record (4 bits).
const maxEventRecords = 1 << 4

const evStop = 0x80

// eventRecs is the events' records, their chunks' bases, and the events
// whose fields do not all fit, whole, by index in index order.
type eventRecs struct {
	store.Seq[eventRec]
	bases recBases
	far   store.Seq[farEvent]
	spare weakSpare[eventRec] // a copy starts without (clone)
}

type farEvent struct {
	i, tick int32
	text    textRef
	member  uint32
	records uint16
}

func (s *eventRecs) clone() eventRecs {
	return eventRecs{Seq: s.Seq.Clone(), bases: s.bases.clone(), far: s.far.Clone()}
}

// add appends an event's record.
func (s *eventRecs) add(tick int32, text textRef, member uint32, records uint16, kind uint8, textEnd textRef) {
	i := s.Len()
	starts := s.StartsChunk()
	b := s.bases.next(starts, tick, text, textEnd)
	t, fits := store.Narrow(int64(tick), int64(b.tick), 1<<8)
	r := eventRec{text: narrowText(text, b.text), kind: kind}
	if fits && r.text != farField && member < narrowBits && records < maxEventRecords {
		r.tick, r.memberRecords = uint8(t), uint16(member)|records<<12
	} else {
		r.text = farField
		s.far.Append(farEvent{i: int32(i), tick: tick, text: text, member: member, records: records})
	}
	if starts && i > 0 {
		s.spare.appendChunk(&s.Seq, r) // a new chunk, past the first
		return
	}
	s.Append(r)
}

// whole is event i's tick, text, member and records offset, and its record.
func (s *eventRecs) whole(i int) (farEvent, eventRec) {
	r := s.At(i)
	if r.text == farField {
		f, _ := store.FarAt(&s.far, i, func(f farEvent) int32 { return f.i })
		return f, r
	}
	b := s.bases.of(i)
	return farEvent{i: int32(i), tick: b.tick + int32(r.tick), text: wideText(r.text, b.text),
		member: uint32(r.memberRecords & (narrowBits - 1)), records: r.memberRecords >> 12}, r
}

// EventLog is every event, oldest first.
type EventLog struct {
	recs eventRecs
	t    *Trace
}

// Len is the number of events.
func (l *EventLog) Len() int { return l.recs.Len() }

// At returns event i with its Text and Records formatted.
func (l *EventLog) At(i int) Event {
	f, r := l.recs.whole(i)
	e := l.event(f, r)
	e.Text = l.t.memberText(f.text, e.Member)
	e.Records = l.t.eventRecords(f.text, f.records)
	return e
}

// Headers ranges over the events from index i on without their Text and
// Records: for a reader that looks only at ticks, kinds and members (and
// reads At(i) for the few it keeps), it formats and allocates nothing.
func (l *EventLog) Headers(i int) iter.Seq2[int, Event] {
	return store.RangeFrom(max(i, l.First()), l.Len(), l.header)
}

func (l *EventLog) header(i int) Event { return l.event(l.recs.whole(i)) }

// KindAt is event i's kind, read off its record alone: for a reader that
// looks only at kinds, every tick (sim's unavailability observer), it
// builds no Event.
func (l *EventLog) KindAt(i int) EventKind { return eventKinds[l.recs.At(i).kind&^evStop] }

// KindSet is a set of event kinds (KindSetOf), for NextNotIn.
type KindSet uint32

// KindSetOf is the set of kinds ks.
func KindSetOf(ks ...EventKind) KindSet {
	var s KindSet
	for _, k := range ks {
		i, ok := kindIndex[k]
		if !ok {
			panic("trace: no event kind " + string(k))
		}
		s |= 1 << i
	}
	return s
}

// NextNotIn is the index of the first event from i on whose kind is not
// in s, or Len: the events read a chunk at a time. KindAt's string
// compared with each of a set's (a switch on it) cost about 1% of T1,
// which asks it of every event of every tick (World.Step's accounting).
func (l *EventLog) NextNotIn(i int, s KindSet) int {
	for n := l.recs.Len(); i < n; {
		for _, r := range l.recs.ChunkFrom(i) {
			if s&(1<<(r.kind&^evStop)) == 0 {
				return i
			}
			i++
		}
	}
	return i
}

// event is an event's header from its record and its fields, whole.
func (l *EventLog) event(f farEvent, r eventRec) Event {
	return Event{Tick: int(f.tick), Kind: eventKinds[r.kind&^evStop], Member: l.t.parties.at(f.member).name, Stop: r.kind&evStop != 0}
}

// All ranges over the events with their indexes.
func (l *EventLog) All() iter.Seq2[int, Event] { return l.From(0) }

// From ranges over the events from index i on (from First, if i is
// before).
func (l *EventLog) From(i int) iter.Seq2[int, Event] {
	return store.RangeFrom(max(i, l.First()), l.Len(), l.At)
}

// Slice returns events [from, to), from clamped to First.
func (l *EventLog) Slice(from, to int) []Event { return store.SliceOf(max(from, l.First()), to, l.At) }

func (l *EventLog) add(k kind, member string, text textRef, records uint16) {
	l.t.arena.pinOld(&l.t.pins.events, l.recs.Len(), text)
	l.recs.add(int32(*l.t.now), text, l.t.parties.id(member, 0), records, uint8(k), l.t.arena.end())
}
