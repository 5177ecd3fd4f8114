package trace

import (
	"iter"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

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

// packetRecs is the trace's records, their chunks' bases (one per
// seqChunk records, in step with the Seq's chunks), and the packets whose
// fields do not all fit, whole, by ID in ID order.
type packetRecs struct {
	store.Seq[packetRec]
	bases recBases
	far   store.Seq[farPacket]
	// orphans: the narrow answers kept whose requests were let go of
	// (history.go), by ID; replaced, never changed in place.
	orphans []orphan
	// gone counts the error codes of the packets let go of, by type,
	// direction and code (history.go), so that ErrorsFrom(0) still counts
	// every one the world saw; replaced, never changed in place.
	gone  []errTally
	spare weakSpare[packetRec] // a copy starts without (clone)
}

// farPacket is a packet record's fields, whole.
type farPacket struct {
	id, sent int32
	text     textRef
	peer     uint32
	req      int32 // -1 for a request
}

func (s *packetRecs) clone() packetRecs {
	return packetRecs{Seq: s.Seq.Clone(), bases: s.bases.clone(), far: s.far.Clone(), orphans: s.orphans, gone: s.gone}
}

// add appends a packet's record from its fields, whole (f.id is ignored:
// it is the next index), and h.
func (s *packetRecs) add(h pktHead, f farPacket, textEnd textRef) {
	i := s.Len()
	starts := s.StartsChunk()
	b := s.bases.next(starts, f.sent, f.text, textEnd)
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
	if starts && i > 0 {
		s.spare.appendChunk(&s.Seq, r) // a new chunk, past the first
		return
	}
	s.Append(r)
}

// answerable reports whether an answer of API api to peer may keep only
// how far back its request req is: req is not itself kept as an answer,
// and has that API and that peer.
func (s *packetRecs) answerable(req int, api uint8, peer uint32) bool {
	if req < s.First() {
		return false // let go of (a windowed trace): the answer keeps them itself
	}
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
	if o, ok := s.orphanOf(int(f.req), i); ok {
		f.peer, h.api = o.peer, o.api
		return f, h
	}
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

// PacketLog is the trace: every packet in send order (p.ID is the index).
type PacketLog struct {
	recs packetRecs
	t    *Trace
	apis store.StrCache[wire.API, uint8] // apiIndex's answers
}

// Len is the number of packets sent.
func (l *PacketLog) Len() int { return l.recs.Len() }

// At returns packet i as a new *Packet, its Summary formatted, its Req the
// request it answers (materialized too; nil when a windowed trace let go
// of it, Trace.ForgetBefore), no Body (the trace keeps none).
func (l *PacketLog) At(i int) *wire.Packet {
	p, req := l.materialize(i)
	if req >= 0 && int(req) >= l.First() {
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
	return store.RangeFrom(max(i, l.First()), l.Len(), l.header)
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

// From ranges over the packets from ID i on (from First, if i is before).
func (l *PacketLog) From(i int) iter.Seq2[int, *wire.Packet] {
	return store.RangeFrom(max(i, l.First()), l.Len(), l.At)
}

// Slice returns packets [from, to), from clamped to First.
func (l *PacketLog) Slice(from, to int) []*wire.Packet {
	return store.SliceOf(max(from, l.First()), to, l.At)
}

// Append adds a packet built by hand to the trace as it is, for tests of
// the views; it is delivered at Sent+1 (Delivered Sent+1) or never
// (Delivered -1, kept as lost), as every packet is. The engine sends with
// env.Env.Send.
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
		f.peer = t.parties.ofProcess(p.From, p.FromInc, p.Proc)
	case p.From == wire.Broker:
		f.peer = t.parties.ofProcess(p.To, p.ToInc, p.Proc)
	default:
		panic("sim: a packet between " + p.From + " and " + p.To + ": every packet has the broker at one end")
	}
	t.arena.pinOld(&t.pins.packets, l.recs.Len(), p.Text)
	l.recs.add(pktHead{api: l.api(p.Type), flags: flags, err: uint8(p.Error)}, f, t.arena.end())
}
