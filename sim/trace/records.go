package trace

import (
	"encoding/binary"
	"iter"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The trace (every packet) and the events are kept for the world's whole
// life, so each is a fixed-size record in a Seq (chunks shared between
// clones) with its text in the world's textArena: no body, no pointer, no
// string. The engine works on live *Packet objects (on the wire, parked,
// the request of an answer being delivered) and drops them once delivered;
// the views read materialized copies (PacketLog.At, EventLog.At), built
// when asked for.

// packetRec is one packet of the trace. Every packet has the broker at one
// end (a member talks only to B1; WriteTxnMarkers goes B1 to B1), so it
// keeps the other end: peer, a process (client and incarnation). It keeps
// no Delivered tick: every packet not lost is delivered at the first Step
// after it was sent, Sent+1 (World.Step), so a record is never changed
// once written.
//
// 6 bytes, since the trace is most of what a world keeps and every byte of
// it is a byte of fresh memory the kernel must fault in: its sent tick and
// its text are kept as their distance from its chunk's first (a chunk of
// seqChunk packets spans a few dozen ticks and a few KB of text: base). A
// request keeps its API and its peer (12 bits: 4,095 processes); an
// answer keeps instead how far back its request is (back, 12 bits: 4,095
// packets) and its error code (7 bits: every code the simulation answers
// is below 128, errors.go), since it has its request's API and peer. A
// packet with a field that does not fit (its request 4,096 or more packets
// back or not before it, or an answer itself, or of another API or peer;
// its text before its chunk's first or far past it; a party past 4,095; a
// packet sent 256 or more ticks after its chunk's first or before it; an
// error code on a request, or past 127) keeps farField in text, its API and
// error code in x, and its other fields whole in packetRecs.far.
type packetRec struct {
	text uint16 // 0 for no text, else the text's ref minus its chunk's base text, plus one; farField: kept whole in far
	// x: a request's peer (low 12 bits) and API (its index in APIs,
	// high 4 bits: APIs has 16 entries); an answer's back (its ID minus
	// its request's, low 12 bits) and its error code's low 4 bits; a far
	// packet's error code (low 8 bits) and API (next 4).
	x    uint16
	sent uint8 // Sent minus its chunk's base tick
	// flagsErr: the pk flags (high 4 bits), pkAnswer (bit 3: x is an
	// answer's) and an answer's error code's high 3 bits.
	flagsErr uint8
}

// narrowBits is the reach of a 12-bit field of a record (a packet's peer
// and back, an event's member): a value from it on is kept whole apart.
const narrowBits = 1 << 12

// pkAnswer in packetRec.flagsErr: x holds back and the error code, the
// API and the peer are the request's.
const pkAnswer = 1 << 3

func (r packetRec) flags() uint8 { return r.flagsErr >> 4 }

// pktHead is what a packet's record says besides the fields farPacket
// holds: its API (index in APIs), pk flags and error code.
type pktHead struct {
	api, flags, err uint8
}

const (
	pkResponse = 1 << iota
	pkLost
	pkToBroker // peer is the sender
	// A packet added by hand (PacketLog.Append) is delivered at Sent+1
	// (pkDelivered) or never (pkLost), whatever the world's tick.
	pkDelivered
)

// farField in a narrow field of a packet or event record (its text): the
// record's fields are kept whole apart (packetRecs.far, eventRecs.far).
const farField = 0xffff

// recBase is what the narrow fields of one chunk of packet or event
// records count from: the tick and the text of the chunk's first record
// (the arena's end when that one has no text). Ticks only grow, and texts
// are added in the order their records are (a textRef is nearly the
// arena's byte position: arenaChunk is 1<<arenaShift), so the others are a
// little past them.
type recBase struct {
	tick int32
	text textRef
}

// recBases is the bases of the chunks of a Seq of packet or event records,
// one per chunk, and the open chunk's at hand.
type recBases struct {
	store.Seq[recBase]
	open recBase // the last of Seq
}

// next is the base of the record about to be appended, made from its tick
// and text (the arena's end, textEnd, when it has none) when it starts a
// chunk (starts: Seq.startsChunk).
func (b *recBases) next(starts bool, tick int32, text, textEnd textRef) recBase {
	if starts {
		b.open = recBase{tick: tick, text: text}
		if text == 0 {
			b.open.text = textEnd
		}
		b.Append(b.open)
	}
	return b.open
}

// of is the base of record i's chunk.
func (b *recBases) of(i int) recBase { return b.At(store.ChunkOf(i)) }

func (b *recBases) clone() recBases { return recBases{Seq: b.Seq.Clone(), open: b.open} }

// narrowText is ref as a record's text field: its distance from base plus
// one (0 being the empty text), or farField when it does not fit.
func narrowText(ref, base textRef) uint16 {
	if ref == 0 {
		return 0
	}
	if d := int64(ref) - int64(base) + 1; d > 0 && d < farField {
		return uint16(d)
	}
	return farField
}

func wideText(v uint16, base textRef) textRef {
	if v == 0 {
		return 0
	}
	return base + textRef(v) - 1
}

// packetRecs is the trace's records, their chunks' bases (one per
// seqChunk records, in step with the Seq's chunks), and the packets whose
// fields do not all fit, whole, by ID in ID order.
type packetRecs struct {
	store.Seq[packetRec]
	bases recBases
	far   store.Seq[farPacket]
}

// farPacket is a packet record's fields, whole.
type farPacket struct {
	id, sent int32
	text     textRef
	peer     uint32
	req      int32 // -1 for a request
}

func (s *packetRecs) clone() packetRecs {
	return packetRecs{Seq: s.Seq.Clone(), bases: s.bases.clone(), far: s.far.Clone()}
}

// add appends a packet's record from its fields, whole (f.id is ignored:
// it is the next index), and h.
func (s *packetRecs) add(h pktHead, f farPacket, textEnd textRef) {
	i := s.Len()
	b := s.bases.next(s.StartsChunk(), f.sent, f.text, textEnd)
	sent, fits := store.Narrow(int64(f.sent), int64(b.tick), 1<<8)
	r := packetRec{text: narrowText(f.text, b.text), sent: uint8(sent), flagsErr: h.flags << 4}
	fits = fits && r.text != farField
	switch back := int64(i) - int64(f.req); {
	case f.req < 0:
		if fits = fits && h.err == 0 && f.peer < narrowBits; fits {
			r.x = uint16(f.peer) | uint16(h.api)<<12
		}
	case fits && back > 0 && back < narrowBits && h.err < 1<<7 && s.answerable(int(f.req), h.api, f.peer):
		r.x = uint16(back) | uint16(h.err&0xf)<<12
		r.flagsErr |= pkAnswer | h.err>>4
	default:
		fits = false
	}
	if !fits {
		r = packetRec{text: farField, x: uint16(h.err) | uint16(h.api)<<8, flagsErr: h.flags << 4}
		f.id = int32(i)
		s.far.Append(f)
	}
	s.Append(r)
}

// answerable reports whether an answer of API api to peer may keep only
// how far back its request req is: req is not itself kept as an answer,
// and has that API and that peer.
func (s *packetRecs) answerable(req int, api uint8, peer uint32) bool {
	r := s.At(req)
	if r.text == farField {
		f, _ := store.FarAt(&s.far, req, func(f farPacket) int32 { return f.id })
		return uint8(r.x>>8) == api && f.peer == peer
	}
	return r.flagsErr&pkAnswer == 0 && uint8(r.x>>12) == api && uint32(r.x&(narrowBits-1)) == peer
}

// whole is packet i's fields, whole, and its API, flags and error code.
func (s *packetRecs) whole(i int) (farPacket, pktHead) {
	r := s.At(i)
	h := pktHead{flags: r.flags()}
	if r.text == farField {
		f, _ := store.FarAt(&s.far, i, func(f farPacket) int32 { return f.id })
		h.api, h.err = uint8(r.x>>8), uint8(r.x)
		return f, h
	}
	b := s.bases.of(i)
	f := farPacket{id: int32(i), sent: b.tick + int32(r.sent), text: wideText(r.text, b.text), req: -1}
	if r.flagsErr&pkAnswer == 0 {
		f.peer, h.api = uint32(r.x&(narrowBits-1)), uint8(r.x>>12)
		return f, h
	}
	f.req = int32(i) - int32(r.x&(narrowBits-1))
	h.err = r.answerErr()
	req, rh := s.whole(int(f.req)) // a request, never an answer (add): one level down
	f.peer, h.api = req.peer, rh.api
	return f, h
}

// answerErr is a narrow answer's error code (its low 4 bits in x, the
// rest in flagsErr).
func (r packetRec) answerErr() uint8 { return uint8(r.x>>12) | (r.flagsErr&7)<<4 }

// errAt is packet i's API, flags and error code when it carries an error
// code (ErrorsFrom): a request kept narrow has none, and a narrow answer
// keeps its code in its record, so neither is read further (nor its
// request, for its API) unless the code is an error.
func (s *packetRecs) errAt(i int) (pktHead, bool) {
	if r := s.At(i); r.text != farField && (r.flagsErr&pkAnswer == 0 || r.answerErr() == uint8(wire.None)) {
		return pktHead{}, false
	}
	_, h := s.whole(i)
	return h, h.err != uint8(wire.None)
}

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
	b := s.bases.next(s.StartsChunk(), tick, text, textEnd)
	t, fits := store.Narrow(int64(tick), int64(b.tick), 1<<8)
	r := eventRec{text: narrowText(text, b.text), kind: kind}
	if fits && r.text != farField && member < narrowBits && records < maxEventRecords {
		r.tick, r.memberRecords = uint8(t), uint16(member)|records<<12
	} else {
		r.text = farField
		s.far.Append(farEvent{i: int32(i), tick: tick, text: text, member: member, records: records})
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

var apiIndex = func() map[wire.API]uint8 {
	if len(wire.APIs) > 16 || len(eventKinds) >= evStop {
		panic("sim: packetRec keeps an API in 4 bits and eventRec an event kind in 7")
	}
	m := make(map[wire.API]uint8, len(wire.APIs))
	for i, a := range wire.APIs {
		m[a] = uint8(i)
	}
	return m
}()

// eventKinds lists every EventKind, so an event keeps a byte for its kind.
var eventKinds = []EventKind{EvGroupState, EvGeneration, EvAssigned, EvRevoked, EvRemoved, EvPollTimeout, EvCrash,
	EvSlowStart, EvPolled, EvProcessed, EvCommitFailed, EvCommitted, EvClosed, EvStarted, EvStaticRejoin, EvProduced,
	EvTxnState, EvFenced, EvRetry, EvInput, EvSideEffect, EvZombie, EvUnstableOffset, EvProducer}

var kindIndex = func() map[EventKind]uint8 {
	m := make(map[EventKind]uint8, len(eventKinds))
	for i, k := range eventKinds {
		m[k] = uint8(i)
	}
	return m
}()

// parties names the ends of packets and the members of events by a small
// number: a process (client id and incarnation; 0 for a client id alone,
// as events and texts name it). ("", 0) is 0, (B1, 0) is 1, the others
// follow in first-seen order.
type parties struct {
	names []party
	index map[party]uint32
	// clients: the parties of client ids alone (inc 0), as events and texts
	// name members: a tick names the same two or three over and over, by
	// the very same strings (Member.Client, a member id's prefix).
	clients store.StrCache[string, uint32]
	// recent: the same for processes (inc > 0), which packets name
	// (World.partyOf keeps most of those on the process).
	recent store.Recent[party, uint32]
}

type party struct {
	name string
	inc  int
}

func (ps *parties) id(name string, inc int) uint32 {
	if inc == 0 {
		if i, ok := ps.clients.Get(name); ok {
			return i
		}
		if name == "" {
			return 0
		}
		if name == wire.Broker {
			return 1
		}
		i := ps.lookup(party{name, 0})
		ps.clients.Put(name, i)
		return i
	}
	k := party{name, inc}
	if i, ok := ps.recent.Get(k); ok {
		return i
	}
	i := ps.lookup(k)
	ps.recent.Put(k, i)
	return i
}

// lookup is k's number, given it if new.
func (ps *parties) lookup(k party) uint32 {
	if i, ok := ps.index[k]; ok {
		return i
	}
	if ps.index == nil {
		ps.index = map[party]uint32{}
	}
	if len(ps.names) < 2 {
		ps.names = append(ps.names[:0:0], party{}, party{name: wire.Broker})
	}
	i := uint32(len(ps.names))
	ps.names = append(ps.names, k)
	ps.index[k] = i
	return i
}

// partyOf is parties.id(name, inc) for a packet's member end, kept by
// process when the packet knows it (proc: its number plus one).
func (t *Trace) partyOf(name string, inc int, proc int32) uint32 {
	i := int(proc) - 1
	if i >= 0 && i < len(t.byProc) {
		if id := t.byProc[i]; id != 0 {
			if p := t.parties.at(id); p.inc == inc && store.SameStr(p.name, name) {
				return id
			}
		}
	}
	id := t.parties.id(name, inc)
	if i >= 0 && i < maxProcCache {
		if i >= len(t.byProc) {
			t.byProc = append(t.byProc, make([]uint32, i+1-len(t.byProc))...)
		}
		t.byProc[i] = id
	}
	return id
}

// maxProcCache bounds byProc: processes past it are looked up by name.
const maxProcCache = 1 << 20

func (ps *parties) at(i uint32) party {
	switch {
	case i == 1:
		return party{name: wire.Broker}
	case int(i) < len(ps.names):
		return ps.names[i]
	}
	return party{}
}

// clone shares the names (append-only, cut to their length) and copies the
// index: about as many entries as processes, which Clone copies anyway.
func (ps *parties) clone() parties {
	return parties{names: ps.names[:len(ps.names):len(ps.names)], index: store.CopyMap(ps.index), clients: ps.clients, recent: ps.recent}
}

// PacketLog is the trace: every packet in send order (p.ID is the index).
type PacketLog struct {
	recs packetRecs
	t    *Trace
	apis store.StrCache[wire.API, uint8] // apiIndex's answers
}

// Len is the number of packets sent.
func (l *PacketLog) Len() int { return l.recs.Len() }

// At returns packet i as a new *Packet, its Summary formatted, its Req the
// request it answers (materialized too), no Body (the trace keeps none).
func (l *PacketLog) At(i int) *wire.Packet {
	p, req := l.materialize(i)
	if req >= 0 {
		p.Req, _ = l.materialize(int(req))
	}
	return p
}

// materialize is packet i without its Req, and its request's ID (-1: none).
func (l *PacketLog) materialize(i int) (*wire.Packet, int32) {
	f, h := l.recs.whole(i)
	p := l.packet(f, h)
	p.Summary = l.t.packetText(p.Type, p.Response, f.text)
	return &p, f.req
}

// Headers ranges over the packets from ID i on as values without their
// summaries and requests (Summary "", Req nil): for a reader that looks
// only at types, ends and errors, as the explorer does after every branch,
// it formats and allocates nothing.
func (l *PacketLog) Headers(i int) iter.Seq2[int, wire.Packet] {
	return store.RangeFrom(i, l.Len(), l.header)
}

func (l *PacketLog) header(i int) wire.Packet { return l.packet(l.recs.whole(i)) }

// packet is a packet's header from its fields, whole, and its head.
func (l *PacketLog) packet(f farPacket, h pktHead) wire.Packet {
	t := l.t
	flags := h.flags
	p := wire.Packet{ID: int(f.id), Sent: int(f.sent), Delivered: -1, Lost: flags&pkLost != 0,
		Type: wire.APIs[h.api], Response: flags&pkResponse != 0, Error: wire.ErrorCode(h.err)}
	if !p.Lost && (flags&pkDelivered != 0 || *t.now > p.Sent) {
		p.Delivered = p.Sent + 1
	}
	peer := t.parties.at(f.peer)
	if flags&pkToBroker != 0 {
		p.From, p.FromInc, p.To = peer.name, peer.inc, wire.Broker
	} else {
		p.From, p.To, p.ToInc = wire.Broker, peer.name, peer.inc
	}
	return p
}

// All ranges over the packets with their IDs.
func (l *PacketLog) All() iter.Seq2[int, *wire.Packet] { return l.From(0) }

// From ranges over the packets from ID i on.
func (l *PacketLog) From(i int) iter.Seq2[int, *wire.Packet] {
	return store.RangeFrom(i, l.Len(), l.At)
}

// Slice returns packets [from, to).
func (l *PacketLog) Slice(from, to int) []*wire.Packet { return store.SliceOf(from, to, l.At) }

// Append adds a packet built by hand to the trace as it is, for tests of
// the views; it is delivered at Sent+1 (Delivered Sent+1) or never
// (Delivered -1, kept as lost), as every packet is. The engine sends with
// World.send.
func (l *PacketLog) Append(p *wire.Packet) {
	if p.Delivered != -1 && p.Delivered != p.Sent+1 {
		panic("sim: a packet is delivered the tick after it is sent, or never")
	}
	l.record(p)
	if r := l.recs.Last(); p.Delivered == -1 {
		r.flagsErr |= pkLost << 4
	} else {
		r.flagsErr |= pkDelivered << 4
	}
}

func (l *PacketLog) api(t wire.API) uint8 {
	a, ok := l.apis.Get(t)
	if !ok {
		a = apiIndex[t]
		l.apis.Put(t, a)
	}
	return a
}

// record appends p to the trace; p.text is its summary (0: p.Summary, kept
// as it is).
func (l *PacketLog) record(p *wire.Packet) {
	t := l.t
	if p.Text == 0 && p.Summary != "" {
		p.Text = t.addText(encLit(t.scratch[:0], p.Summary))
	}
	var flags uint8
	f := farPacket{sent: int32(p.Sent), text: p.Text, req: -1}
	if p.Req != nil {
		f.req = int32(p.Req.ID)
	}
	if p.Response {
		flags |= pkResponse
	}
	if p.Lost {
		flags |= pkLost
	}
	switch {
	case p.To == wire.Broker:
		flags |= pkToBroker
		f.peer = t.partyOf(p.From, p.FromInc, p.Proc)
	case p.From == wire.Broker:
		f.peer = t.partyOf(p.To, p.ToInc, p.Proc)
	default:
		panic("sim: a packet between " + p.From + " and " + p.To + ": every packet has the broker at one end")
	}
	l.recs.add(pktHead{api: l.api(p.Type), flags: flags, err: uint8(p.Error)}, f, t.texts.end())
}

// EventLog is every event, oldest first.
type EventLog struct {
	recs  eventRecs
	t     *Trace
	kinds store.StrCache[EventKind, uint8] // kindIndex's answers
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
func (l *EventLog) Headers(i int) iter.Seq2[int, Event] { return store.RangeFrom(i, l.Len(), l.header) }

func (l *EventLog) header(i int) Event { return l.event(l.recs.whole(i)) }

// KindAt is event i's kind, read off its record alone: for a reader that
// looks only at kinds, every tick (sim's unavailability observer), it
// builds no Event.
func (l *EventLog) KindAt(i int) EventKind { return eventKinds[l.recs.At(i).kind&^evStop] }

// event is an event's header from its record and its fields, whole.
func (l *EventLog) event(f farEvent, r eventRec) Event {
	return Event{Tick: int(f.tick), Kind: eventKinds[r.kind&^evStop], Member: l.t.parties.at(f.member).name, Stop: r.kind&evStop != 0}
}

// All ranges over the events with their indexes.
func (l *EventLog) All() iter.Seq2[int, Event] { return l.From(0) }

// From ranges over the events from index i on.
func (l *EventLog) From(i int) iter.Seq2[int, Event] { return store.RangeFrom(i, l.Len(), l.At) }

// Slice returns events [from, to).
func (l *EventLog) Slice(from, to int) []Event { return store.SliceOf(from, to, l.At) }

func (l *EventLog) add(kind EventKind, member string, text textRef, records uint16) {
	k, ok := l.kinds.Get(kind)
	if !ok {
		k = kindIndex[kind]
		l.kinds.Put(kind, k)
	}
	l.recs.add(int32(*l.t.now), text, l.t.parties.id(member, 0), records, k, l.t.texts.end())
}

// addText puts an encoded text (b, without its tEnd) in the arena. b is
// usually t.scratch, which is mostly the arena's spare room
// (textArena.scratch): a text encoded there is kept where it was written.
// So a text is encoded into t.scratch[:0] and added before anything else
// adds a text.
func (t *Trace) addText(b []byte) textRef {
	b = append(b, tEnd)
	ref, in := t.texts.put(b)
	t.scratch = t.texts.scratch(b, in)
	if b[0] == tOffsets {
		t.texts.offsets = ref
	}
	return ref
}

// addWhole is addText for a text that is one template token and its
// arguments (b[0] is tTemplate+k, from encTemplate): the token becomes
// tWhole+k, which ends the text, so it needs no tEnd.
func (t *Trace) addWhole(b []byte) textRef {
	if len(b) == 0 || b[0] < tTemplate || int(b[0]-tTemplate) >= len(templates) {
		panic("sim: addWhole is for a text that is one template")
	}
	processed := b[0] == tTemplate+tplProcessed
	b[0] += tWhole - tTemplate
	ref, in := t.texts.put(b)
	t.scratch = t.texts.scratch(b, in)
	if processed {
		// its arguments, as processedBack would read them back from the arena
		a := &t.texts
		a.processed, a.processedRec.ok = ref, false
		if tp, n := binary.Uvarint(b[1:]); n > 0 {
			if off, m := binary.Uvarint(b[1+n:]); m > 0 {
				a.processedRec.tp, a.processedRec.off, a.processedRec.ok = tp, off, true
			}
		}
	}
	return ref
}

// addTextTail is addText that also returns a reference to b[at:].
func (t *Trace) addTextTail(b []byte, at int) (textRef, textRef) {
	b = append(b, tEnd)
	ref, tail, in := t.texts.addWithTail(b, at)
	t.scratch = t.texts.scratch(b, in)
	return ref, tail
}
