package trace

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The parties' cache of recent lookups gives the numbers the map alone
// gives: first-seen order, ("", 0) 0 and (B1, 0) 1, over random lookups
// with clones taken along the way.
func TestPropertyPartiesCacheAsMap(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		var ps parties
		ref := map[party]uint32{{"", 0}: 0, {wire.Broker, 0}: 1}
		next := uint32(2)
		names := []string{"", wire.Broker, "C1", "C2", "C3", "C10", "P1", "C1-1"}
		for i := 0; i < 500; i++ {
			k := party{names[r.Intn(len(names))], r.Intn(4)}
			want, ok := ref[k]
			if !ok {
				want = next
				ref[k] = next
				next++
			}
			if got := ps.id(k.name, k.inc); got != want {
				t.Fatalf("seed %d, lookup %d: id(%q, %d) = %d, want %d", seed, i, k.name, k.inc, got, want)
			}
			if got := ps.at(want); want > 1 && got != k {
				t.Fatalf("seed %d: at(%d) = %v, want %v", seed, want, got, k)
			}
			if r.Intn(50) == 0 {
				c := ps.clone()
				ps = c
			}
		}
	}
}

// The records the trace keeps for every packet and event: their sizes are
// what a world's memory grows by, tick after tick.
func TestRecordSizes(t *testing.T) {
	if got := unsafe.Sizeof(packetRec{}); got != 6 {
		t.Errorf("packetRec is %d bytes, want 6", got)
	}
	if got := unsafe.Sizeof(eventRec{}); got != 6 {
		t.Errorf("eventRec is %d bytes, want 6", got)
	}
}

// checkWithClone runs check on tr, then on a clone of it and on tr once tr
// has gone on a tick (a packet and an event more, written where the two
// still share chunks): records kept apart read back in clones too, and
// neither trace's change shows in the other. tick is tr's clock.
func checkWithClone(tr *Trace, tick *int, check func(tr *Trace, what string)) {
	check(tr, "trace")
	cloneTick := *tick
	c := tr.Clone(&cloneTick, nil, nil)
	*tick++
	tr.Record(&wire.Packet{ID: tr.Packets.Len(), Sent: *tick, Delivered: *tick + 1, From: "C1", FromInc: 1, To: wire.Broker,
		Type: wire.Fetch, Summary: "after the clone"})
	tr.Event(EvCrash, "C1", "after the clone")
	check(c, "clone")
	check(tr, "trace after a tick")
}

// The trace's records keep an answer's request as a distance back and an
// event's member and records offset in narrow fields; what does not fit
// (a request 4,096 or more packets back or not before its answer, a member
// past party 4,095, records from byte 16 on) is kept apart and read back
// exactly, in the trace and in its clones.
func TestTraceRecordsThatDoNotFit(t *testing.T) {
	var tick int
	tr := newTestTrace(t, topo.Default(), &tick, nil)
	inputs := tr.layout.Inputs()
	base := tr.Packets.Len()
	send := func(p *wire.Packet) *wire.Packet {
		p.ID, p.Sent, p.Delivered = tr.Packets.Len(), tick, tick+1
		tr.Packets.Append(p)
		return p
	}
	first := send(&wire.Packet{From: "C1", FromInc: 1, To: wire.Broker, Type: wire.Fetch, Summary: "first"})
	for i := 0; i < farField+10; i++ {
		send(&wire.Packet{From: "C1", FromInc: 1, To: wire.Broker, Type: wire.OffsetFetch})
	}
	near := send(&wire.Packet{From: "C2", FromInc: 1, To: wire.Broker, Type: wire.Produce, Summary: "near"})
	answers := []struct {
		p   *wire.Packet
		req int
	}{
		{send(&wire.Packet{From: wire.Broker, To: "C1", ToInc: 1, Type: wire.Fetch, Response: true, Req: first, Summary: "far"}), first.ID},
		{send(&wire.Packet{From: wire.Broker, To: "C2", ToInc: 1, Type: wire.Produce, Response: true, Req: near, Summary: "near"}), near.ID},
	}
	self := tr.Packets.Len()
	answers = append(answers, struct {
		p   *wire.Packet
		req int
	}{send(&wire.Packet{From: wire.Broker, To: "C2", ToInc: 1, Type: wire.Produce, Response: true, Req: &wire.Packet{ID: self}, Summary: "itself"}), self})
	if tr.Packets.recs.far.Len() != 2 {
		t.Fatalf("%d answers kept apart, want 2 (far back, itself)", tr.Packets.recs.far.Len())
	}
	// events: one whose member is past 65,534, one whose records start at byte 300
	for i := tr.parties.id("C2", 0); i < farField+1; i = tr.parties.id("P"+strconv.Itoa(int(i)), 0) {
	}
	far := tr.parties.names[len(tr.parties.names)-1].name
	e0 := tr.Events.Len()
	tr.eventEnc(kindProcessed, far, tr.encRecord(append(tr.encParty(tr.scratch[:0], far), phProcessed), inputs[0], 7, ""), 0)
	b := encLit(tr.scratch[:0], strings.Repeat("x", 300))
	at := len(b)
	tr.eventEnc(kindPolled, "C1", tr.encRecord(b, inputs[1], 9, ""), at)
	tr.StopEventf(EvCrash, far, "%s stops", far)
	check := func(tr *Trace, what string) {
		for _, a := range answers {
			if got := tr.Packets.At(a.p.ID); got.Req == nil || got.Req.ID != a.req || got.Summary != a.p.Summary {
				t.Fatalf("%s: packet %d answers %v (%q), want %d", what, a.p.ID, got.Req, got.Summary, a.req)
			}
		}
		if got := tr.Packets.At(base + 5); got.Req != nil || got.Type != wire.OffsetFetch || got.Response || got.From != "C1" || got.FromInc != 1 {
			t.Fatalf("%s: request %d reads as %+v", what, base+5, got)
		}
		evs := tr.Events.Slice(e0, tr.Events.Len())
		if evs[0].Member != far || evs[0].Text != far+" processed "+tr.layout.Name(inputs[0], 7) || evs[0].Records.Len() != 0 {
			t.Fatalf("%s: event for party %s reads as %+v", what, far, evs[0])
		}
		if evs[1].Member != "C1" || !slices.Equal(evs[1].Records.Names(), []string{tr.layout.Name(inputs[1], 9)}) {
			t.Fatalf("%s: event with records at byte %d reads as %+v", what, at, evs[1])
		}
		if evs[2].Member != far || !evs[2].Stop || evs[2].Kind != EvCrash || evs[2].Text != far+" stops" {
			t.Fatalf("%s: stop event reads as %+v", what, evs[2])
		}
	}
	checkWithClone(tr, &tick, check)
}

// TestTraceFieldsFromChunkBase: packet and event records keep their tick
// and text as distances from their chunk's first record's; what does not
// fit (a tick 65,535 or more past the chunk's first, a hand-made packet
// sent before it, a text before the chunk's first or 64 KB past it, no
// text at the chunk's start) is kept whole apart and reads back exactly,
// in the trace and in a clone, on either side of chunk boundaries.
func TestTraceFieldsFromChunkBase(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	var tick int
	tr := newTestTrace(t, topo.Default(), &tick, nil)
	type pkt struct {
		id, sent int
		summary  string
	}
	type ev struct {
		i, tick int
		text    string
	}
	var pkts []pkt
	var evs []ev
	old := tr.addText(encLit(tr.scratch[:0], "an old text"))
	send := func(sent int, summary string, text textRef) {
		p := &wire.Packet{ID: tr.Packets.Len(), Sent: sent, Delivered: sent + 1, From: "C1", FromInc: 1, To: wire.Broker, Type: wire.Fetch, Summary: summary, Text: text}
		tr.Packets.Append(p)
		if text == old {
			summary = "an old text"
		}
		pkts = append(pkts, pkt{p.ID, sent, summary})
	}
	event := func(text string) {
		evs = append(evs, ev{tr.Events.Len(), tick, text})
		tr.Eventf(EvCrash, "C1", "%s", text)
	}
	big := strings.Repeat("y", 70_000) // past a text's 64 KB reach from its chunk's base
	for i := 0; i < 40; i++ {
		switch i % 8 {
		case 0:
			send(tick, "", 0) // no text: the chunk counts from the arena's end
			event("")
		case 1:
			send(tick-5, "before", 0) // sent before the chunk's first
			event("a")
		case 2:
			tick += farField + 3 // far past the chunk's first
			send(tick, "far tick", 0)
			event("far tick")
		case 3:
			send(tick, "", old) // a text before the chunk's first
			event(big)
		case 4:
			send(tick, big, 0)
			event("after big")
		default:
			tick++
			send(tick, fmt.Sprint("near ", i), 0)
			event(fmt.Sprint("near ", i))
		}
	}
	if tr.Packets.recs.far.Len() == 0 || tr.Events.recs.far.Len() == 0 || tr.Packets.recs.far.Len() == tr.Packets.Len() {
		t.Fatalf("%d of %d packets and %d events kept whole: want some, not all", tr.Packets.recs.far.Len(), tr.Packets.Len(), tr.Events.recs.far.Len())
	}
	check := func(tr *Trace, what string) {
		for _, want := range pkts {
			if p := tr.Packets.At(want.id); p.Sent != want.sent || p.Summary != want.summary || p.From != "C1" || p.Type != wire.Fetch {
				t.Fatalf("%s: packet %d reads sent %d %.20q, want %d %.20q", what, want.id, p.Sent, p.Summary, want.sent, want.summary)
			}
		}
		for _, want := range evs {
			if e := tr.Events.At(want.i); e.Tick != want.tick || e.Text != want.text || e.Member != "C1" || e.Kind != EvCrash {
				t.Fatalf("%s: event %d reads tick %d %.20q, want %d %.20q", what, want.i, e.Tick, e.Text, want.tick, want.text)
			}
		}
	}
	checkWithClone(tr, &tick, check)
}

// The narrow fields of a packet record (a request's peer, an answer's back
// 12 bits each and error code 7 bits, sent 8 bits from its chunk's first)
// and of an event record (member 12 bits, records 4 bits, tick 8 bits) hold
// every value up to their edge, and the first value past it is kept apart
// (far) and read back exactly: a test of each edge from both sides, in the
// trace and in its clones. An answer keeps its request's API and peer, so
// one of another API or peer, an answer to an answer and a request with
// an error code are kept apart too.
func TestTraceNarrowFieldEdges(t *testing.T) {
	var tick int
	tr := newTestTrace(t, topo.Default(), &tick, nil)
	input0 := tr.layout.Inputs()[0]
	farPackets, farEvents := tr.Packets.recs.far.Len(), tr.Events.recs.far.Len()
	edge := func(what string, wantFar bool, add func()) {
		t.Helper()
		p0, e0 := tr.Packets.recs.far.Len(), tr.Events.recs.far.Len()
		add()
		p1, e1 := tr.Packets.recs.far.Len(), tr.Events.recs.far.Len()
		if got := p1-p0+e1-e0 == 1; got != wantFar || p1-p0+e1-e0 > 1 {
			t.Fatalf("%s: %d packets and %d events kept apart, want far %v", what, p1-p0, e1-e0, wantFar)
		}
	}
	type pkt struct {
		id, sent, req int
		from          string
		inc           int
		typ           wire.API
		err           wire.ErrorCode
	}
	var pkts []pkt
	sendAs := func(typ wire.API, err wire.ErrorCode, from string, inc, sent int, req *wire.Packet) *wire.Packet {
		p := &wire.Packet{ID: tr.Packets.Len(), Sent: sent, Delivered: sent + 1, From: from, FromInc: inc, To: wire.Broker, Type: typ, Error: err, Summary: fmt.Sprint("p", tr.Packets.Len())}
		want := pkt{id: p.ID, sent: sent, req: -1, from: from, inc: inc, typ: typ, err: err}
		if req != nil {
			p.From, p.FromInc, p.To, p.ToInc, p.Response, p.Req = wire.Broker, 0, from, inc, true, req
			want.req = req.ID
		}
		tr.Packets.Append(p)
		pkts = append(pkts, want)
		return p
	}
	send := func(from string, inc, sent int, req *wire.Packet) *wire.Packet {
		return sendAs(wire.Fetch, wire.None, from, inc, sent, req)
	}
	// parties numbered 4,095 and 4,096 (client ids, incarnation 0: the
	// packets' ends and the events' members), after the ones the other
	// packets and events name
	tr.parties.id("C1", 1)
	tr.parties.id("C1", 0)
	var m4095, m4096 string
	for i := 0; m4096 == ""; i++ {
		name := "M" + strconv.Itoa(i)
		switch tr.parties.id(name, 0) {
		case narrowBits - 1:
			m4095 = name
		case narrowBits:
			m4096 = name
		}
	}
	edge("peer 4,095", false, func() { send(m4095, 0, tick, nil) })
	edge("peer 4,096", true, func() { send(m4096, 0, tick, nil) })
	for _, back := range []int{narrowBits - 1, narrowBits} {
		req := send("C1", 1, tick, nil)
		for tr.Packets.Len() < req.ID+back {
			send("C1", 1, tick, nil)
		}
		edge(fmt.Sprint("back ", back), back == narrowBits, func() { send("C1", 1, tick, req) })
	}
	req := send("C1", 1, tick, nil)
	edge("an answer's error code 127", false, func() { sendAs(wire.Fetch, 127, "C1", 1, tick, req) })
	edge("an answer's error code 128", true, func() { sendAs(wire.Fetch, 128, "C1", 1, tick, req) })
	edge("a request's error code", true, func() { sendAs(wire.Fetch, wire.RebalanceInProgress, "C1", 1, tick, nil) })
	edge("an answer of another API", true, func() { sendAs(wire.Produce, wire.None, "C1", 1, tick, req) })
	edge("an answer to another process", true, func() { send("C1", 2, tick, req) })
	ans := send("C1", 1, tick, req)
	edge("an answer to an answer", true, func() { send("C1", 1, tick, ans) })
	for _, d := range []int{255, 256} {
		for tr.Packets.Len()%store.SeqChunk() != 0 {
			send("C1", 1, tick, nil)
		}
		send("C1", 1, tick, nil) // the chunk's first: its base tick
		edge(fmt.Sprint("sent ", d, " ticks after the chunk's first"), d == 256, func() { send("C1", 1, tick+d, nil) })
	}

	type ev struct {
		i, tick int
		member  string
		text    string
		records []string
		kind    EventKind
	}
	var evs []ev
	event := func(member string, at int) {
		b := encLit(tr.scratch[:0], strings.Repeat("x", max(at-2, 0)))
		rec := tr.layout.Name(input0, 7)
		want := ev{i: tr.Events.Len(), tick: tick, member: member, text: strings.Repeat("x", max(at-2, 0)) + rec, kind: EvPolled}
		if at > 0 {
			want.records = []string{rec}
		}
		tr.eventEnc(kindPolled, member, tr.encRecord(b, input0, 7, ""), at)
		evs = append(evs, want)
	}
	edge("member 4,095", false, func() { event(m4095, 0) })
	edge("member 4,096", true, func() { event(m4096, 0) })
	edge("records at byte 15", false, func() { event("C1", 15) })
	edge("records at byte 16", true, func() { event("C1", 16) })
	for _, d := range []int{255, 256} {
		for tr.Events.Len()%store.SeqChunk() != 0 {
			event("C1", 0)
		}
		event("C1", 0) // the chunk's first: its base tick
		tick += d
		edge(fmt.Sprint("event ", d, " ticks after the chunk's first"), d == 256, func() { event("C1", 0) })
		tick -= d
	}
	if tr.Packets.recs.far.Len()-farPackets != 8 || tr.Events.recs.far.Len()-farEvents != 3 {
		t.Fatalf("%d packets and %d events kept apart, want 8 and 3", tr.Packets.recs.far.Len()-farPackets, tr.Events.recs.far.Len()-farEvents)
	}
	checkWithClone(tr, &tick, func(tr *Trace, what string) {
		for _, want := range pkts {
			p := tr.Packets.At(want.id)
			from, inc := p.From, p.FromInc
			if p.Response {
				from, inc = p.To, p.ToInc
			}
			req := -1
			if p.Req != nil {
				req = p.Req.ID
			}
			if p.Sent != want.sent || req != want.req || from != want.from || inc != want.inc || p.Type != want.typ || p.Error != want.err ||
				p.Response != (want.req >= 0) || p.Summary != fmt.Sprint("p", want.id) {
				t.Fatalf("%s: packet %d reads %+v, want %+v", what, want.id, p, want)
			}
		}
		for _, want := range evs {
			e := tr.Events.At(want.i)
			if e.Tick != want.tick || e.Member != want.member || e.Text != want.text || e.Kind != want.kind || !slices.Equal(e.Records.Names(), want.records) {
				t.Fatalf("%s: event %d reads %+v, want %+v", what, want.i, e, want)
			}
		}
	})
}

// TestTextReachGrowsWithTheTexts: TextReach counts the arena's address
// space, chunk by chunk, and its reach is 4 GB.
func TestTextReachGrowsWithTheTexts(t *testing.T) {
	tick := 0
	tr := newTestTrace(t, topo.Default(), &tick, nil)
	used0, reach := tr.TextReach()
	if reach != 1<<32 {
		t.Fatalf("reach %d, want 4 GB", reach)
	}
	for i := 0; i < 3*arenaChunk/10; i++ {
		tr.Eventf(EvGeneration, "", "a text of some length %d", i)
	}
	if used, _ := tr.TextReach(); used < used0+2*arenaChunk || used >= reach {
		t.Errorf("after %d texts of about 25 bytes: reach %d (from %d)", 3*arenaChunk/10, used, used0)
	}
}
