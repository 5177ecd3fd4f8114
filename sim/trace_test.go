package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

var updateTrace = flag.Bool("update-trace", false, "rewrite testdata/trace_digests.txt from the current engine")

// traceDump renders every field of the trace that a view can read: the
// packets as materialized (summaries, the request an answer answers) and the
// events (texts, record names, stop marks).
func traceDump(w *World) string {
	var b strings.Builder
	for _, p := range w.Packets.All() {
		req := -1
		if p.Req != nil {
			req = p.Req.ID
		}
		fmt.Fprintf(&b, "p%d %d>%d %s/%d>%s/%d %s %v %s %q lost=%v req=%d\n", p.ID, p.Sent, p.Delivered, p.From, p.FromInc,
			p.To, p.ToInc, p.Type, p.Response, p.Error, p.Summary, p.Lost, req)
	}
	for i, e := range w.Events.All() {
		fmt.Fprintf(&b, "e%d t%d %s %s stop=%v %q %q\n", i, e.Tick, e.Kind, e.Member, e.Stop, e.Text, e.Records)
	}
	return b.String()
}

// traceCase runs one random world of the property tests' kind
// (randomCaseConfig, and idempotence) with lost packets of every steady
// type, and returns it.
func traceCase(t *testing.T, proto GroupType, seed int) *World {
	return traceCaseWith(t, proto, seed, func(w *World) *World { return w })
}

// traceCaseWith is traceCase, with each called before every tick: the
// world it returns goes on.
func traceCaseWith(t *testing.T, proto GroupType, seed int, each func(*World) *World) *World {
	r := rand.New(rand.NewSource(int64(seed)))
	topo, cfg := randomCaseConfig(r, proto, seed, []string{"range", "roundrobin", "sticky", "cooperative-sticky"},
		[]CommitMode{CommitAuto, CommitAfter, CommitBefore})
	if seed%5 == 1 {
		cfg.Client.Idempotence = true
	}
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sched := randomSchedule(r, 300, 5, true)
	types := []API{Fetch, OffsetCommit, Produce, JoinGroup, SyncGroup, ConsumerGroupHeartbeat, OffsetFetch, EndTxn, TxnOffsetCommit}
	i := 0
	for w.Tick < 400 {
		for i < len(sched) && sched[i].tick <= w.Tick {
			sched[i].do(w)
			i++
		}
		if r.Intn(25) == 0 {
			w.Drop(DropRule{Type: types[r.Intn(len(types))], Response: r.Intn(2) == 0, Count: 1})
		}
		if w.Tick%17 == 0 {
			tps := w.InputPartitions()
			w.ProduceInput(tps[r.Intn(len(tps))], 1+r.Intn(3))
		}
		w = each(w)
		w.Step()
	}
	return w
}

// TestTraceMaterializedAsBefore: for random worlds, the trace as the views
// read it (every packet field and summary, every event text and record
// name) hashes to what the engine produced before the trace was kept as
// compact records with text formatted on read (testdata/trace_digests.txt
// was written by the engine that built every string when it happened).
func TestTraceMaterializedAsBefore(t *testing.T) {
	const path = "testdata/trace_digests.txt"
	var got strings.Builder
	for _, proto := range protocols {
		for seed := 0; seed < 24; seed++ {
			w := traceCase(t, proto, seed)
			dump := traceDump(w)
			for i, h := range w.Packets.Headers(0) {
				p := *w.Packets.At(i)
				p.Summary, p.Req = "", nil
				if h != p {
					t.Fatalf("%s-%d: packet %d's header %+v, want %+v", proto, seed, i, h, p)
				}
			}
			for i, h := range w.Events.Headers(0) {
				e := w.Events.At(i)
				if h.Tick != e.Tick || h.Kind != e.Kind || h.Member != e.Member || h.Stop != e.Stop || h.Text != "" || h.Records != nil {
					t.Fatalf("%s-%d: event %d's header %+v, want %+v without text and records", proto, seed, i, h, e)
				}
			}
			fmt.Fprintf(&got, "%s-%d %d %d %x\n", proto, seed, w.Packets.Len(), w.Events.Len(), sha256.Sum256([]byte(dump)))
			if dir := os.Getenv("KGREPL_TRACE_DUMP"); dir != "" { // to find a difference: dump before and after, then diff
				os.WriteFile(fmt.Sprintf("%s/%s-%d.txt", dir, proto, seed), []byte(dump), 0o644)
			}
		}
	}
	if *updateTrace {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("the materialized trace differs from the old engine's:\n%s", firstDiff(string(want), got.String()))
	}
}

// TestTraceSharedBetweenClones: the same random worlds with tiny chunks
// (Seq and text arena), each replaced every few ticks by a clone of itself
// while the original goes on a few ticks with other inputs, writing where
// the two still share: the clone's trace must come out as the digests say,
// and each original's must not change as the clones go on.
func TestTraceSharedBetweenClones(t *testing.T) {
	defer func(a int) { arenaChunk = a }(arenaChunk)
	setSeqChunk(t, 4)
	arenaChunk = 40
	want, err := os.ReadFile("testdata/trace_digests.txt")
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		f := strings.Fields(line)
		digests[f[0]] = line
	}
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, proto := range protocols {
		for seed := 0; seed < seeds; seed++ {
			r := rand.New(rand.NewSource(int64(seed)))
			type left struct {
				w    *World
				dump string
			}
			var originals []left
			w := traceCaseWith(t, proto, seed, func(w *World) *World {
				if r.Intn(23) != 0 {
					return w
				}
				c := w.Clone()
				w.Join(fmt.Sprintf("X%d", r.Intn(3)), false, nil)
				w.Drop(DropRule{Type: Fetch, Response: true, Count: 1})
				for i := 0; i < 1+r.Intn(4); i++ {
					w.ProduceInput(w.InputPartitions()[0], 2)
					w.Step()
				}
				originals = append(originals, left{w, traceDump(w)})
				return c
			})
			for i, o := range originals {
				if d := traceDump(o.w); d != o.dump {
					t.Fatalf("%s-%d: original %d changed after it was cloned:\n%s", proto, seed, i, firstDiff(o.dump, d))
				}
			}
			name := fmt.Sprintf("%s-%d", proto, seed)
			got := fmt.Sprintf("%s %d %d %x", name, w.Packets.Len(), w.Events.Len(), sha256.Sum256([]byte(traceDump(w))))
			if got != digests[name] {
				t.Errorf("%s: the clones' trace differs from the digest:\n got %s\nwant %s", name, got, digests[name])
			}
		}
	}
}

// TestTextEncodingRoundTrip: every encoder, formatted back, gives what the
// direct formatting gives, for random arguments in the default world (o2,
// o2.3) and in one with other topics (orders-2 style names), partitions the
// world does not have and member ids of any spelling included.
func TestTextEncodingRoundTrip(t *testing.T) {
	other := Topology{Group: "g", Inputs: []TopicSpec{{Name: "a", Partitions: 3}, {Name: "bb", Partitions: 200}}, Output: TopicSpec{Name: "out", Partitions: 2}}
	for _, topo := range []Topology{DefaultTopology(), other} {
		w, err := New(topo, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewSource(1))
		topics := []string{topo.Output.Name, "nope"}
		for _, in := range topo.Inputs {
			topics = append(topics, in.Name)
		}
		randTP := func() TopicPartition {
			return TopicPartition{Topic: topics[r.Intn(len(topics))], Partition: r.Intn(220) - 5}
		}
		ids := []string{"", "-", "C1-1", "C12-345", "C1-01", "a-b", "x", "C1--2", "C1-", "-3", "C1-99999999999999999999"}
		for i := 0; i < 3000; i++ {
			var b, want []byte
			var recAt int
			for k := 0; k < 1+r.Intn(5); k++ {
				switch r.Intn(10) {
				case 0:
					tp := randTP()
					b, want = w.encShort(b, tp), w.layout.AppendShortName(want, tp)
				case 1:
					tp := randTP()
					b, want = w.encPart(b, tp), append(want, tp.String()...)
				case 2:
					tp, off := w.InputPartitions()[r.Intn(len(w.InputPartitions()))], r.Intn(1<<20)
					if r.Intn(4) == 0 {
						tp = randTP()
					}
					name := w.RecordName(tp, off)
					b, want = w.encRecord(b, tp, off, name), append(want, name...)
				case 3:
					var tps []TopicPartition
					var offs []int
					for j := 0; j < r.Intn(6); j++ {
						off := r.Intn(1<<30) - 5
						if r.Intn(8) == 0 { // kept as the difference from the one before: it wraps and comes back
							off = []int{math.MaxInt64, math.MinInt64, -1}[r.Intn(3)]
						}
						tps, offs = append(tps, randTP()), append(offs, off)
					}
					b, want = w.encOffsets(b, tps, offs), appendOffsets(w, want, tps, offs)
				case 4:
					ph, n := byte(tPhrase+r.Intn(len(phrases))), r.Int63()-r.Int63()
					b, want = encNum(b, ph, n), strconv.AppendInt(append(want, phrases[ph-tPhrase]...), n, 10)
				case 5:
					id := ids[r.Intn(len(ids))]
					b, want = w.encMemberID(b, id), append(want, id...)
				case 6:
					s := fmt.Sprint(r.Int63())[:r.Intn(10)]
					b, want = encLit(b, s), append(want, s...)
				case 7:
					ph := byte(tPhrase + r.Intn(len(phrases)))
					b, want = append(b, ph), append(want, phrases[ph-tPhrase]...)
				case 8:
					var tps []TopicPartition
					for j := 0; j < r.Intn(6); j++ {
						tps = append(tps, randTP())
					}
					b, want = w.encPartList(b, tps), appendPartList(w, want, tps)
				case 9:
					in := w.InputPartitions()[r.Intn(len(w.InputPartitions()))]
					out := w.layout.Outputs()[r.Intn(len(w.layout.Outputs()))]
					off, n1, n2, n3 := r.Intn(1<<20), r.Int63n(1<<40), r.Int63n(100)-1, r.Int63n(1<<20)
					switch k := r.Intn(len(templates)); k {
					case tplProduce:
						b, _ = w.argTP(encTemplate(b, k), in)
						b = argNum(argNum(argNum(argOffset(b, off), n1), n2), n3)
						want = fmt.Appendf(want, "inv(%s) pid %d epoch %d seq %d", w.RecordName(in, off), n1, n2, n3)
					case tplProduced:
						b, _ = w.argTP(encTemplate(b, k), in)
						b, _ = w.argTP(argOffset(b, off), out)
						b = argNum(b, n3)
						want = fmt.Appendf(want, "inv(%s) written to %s at offset %d", w.RecordName(in, off), out, n3)
					case tplProduceAck:
						b, _ = w.argTP(encTemplate(b, k), in)
						b, _ = w.argTP(argOffset(b, off), out)
						b = argNum(b, n3)
						want = fmt.Appendf(want, "inv(%s) at offset %d", w.RecordName(in, off), n3)
					case tplProducedCell, tplProduceAckCell: // the source read from the invoice's cell
						l, li := w.logIndexed(out)
						slot, _ := w.layout.Number(in)
						l.Cells.appendInvoice(Cell{PID: -1, Seq: -1}, in, off, slot)
						at := l.Cells.Len() - 1
						b = argOffset(argOffset(encTemplate(b, k), li), at)
						if k == tplProducedCell {
							want = fmt.Appendf(want, "inv(%s) written to %s at offset %d", w.RecordName(in, off), out, at)
						} else {
							want = fmt.Appendf(want, "inv(%s) at offset %d", w.RecordName(in, off), at)
						}
					case tplProcessed: // a text read with no event: %m is ""
						b, _ = w.argTP(encTemplate(b, k), in)
						b = argOffset(b, off)
						want = fmt.Appendf(want, " processed %s", w.RecordName(in, off))
					case tplInput:
						b, _ = w.argTP(argNum(encTemplate(b, k), n2), in)
						b = argOffset(argOffset(b, off), off+int(n3))
						want = fmt.Appendf(want, "%d records appended to %s (%s..%s)", n2, in, w.RecordName(in, off), w.RecordName(in, off+int(n3)))
					}
				}
				if k == 0 {
					recAt = len(b)
				}
			}
			ref, tail := w.addTextTail(b, recAt)
			if got := w.text(ref); got != string(want) {
				t.Fatalf("%s: encoded %x formats as %q, want %q", topo.Output.Name, b, got, want)
			}
			if w.text(tail) != w.text(ref)[len(w.text(ref))-len(w.text(tail)):] {
				t.Fatalf("the tail of %q formats as %q", w.text(ref), w.text(tail))
			}
		}
		// A fetch's records, runs in one partition as one token: formatted
		// spaced, and read back one name per record (Event.Records).
		for i := 0; i < 300; i++ {
			var recs []wire.Record
			var want []string
			for len(recs) < r.Intn(12) {
				tp := w.InputPartitions()[r.Intn(len(w.InputPartitions()))]
				off := r.Intn(1 << 20)
				for k := 0; k < 1+r.Intn(300) && len(recs) < 400; k++ {
					f := wire.Record{TP: tp, Offset: off + k, Named: true}
					if tpi, ok := w.layout.Number(tp); ok && r.Intn(8) > 0 {
						f.TPI = int32(tpi + 1)
					}
					if r.Intn(40) == 0 { // a value of its own: an input record is still shown by its name
						f.Named, f.Value = false, "v"+strconv.Itoa(k)
					}
					recs, want = append(recs, f), append(want, w.RecordName(tp, off+k))
				}
			}
			b := append(encLit(w.scratch[:0], "C1"), phPolled)
			at := len(b)
			ref, tail := w.addTextTail(w.encFetchedList(b, recs), at)
			if got := w.text(ref); got != "C1 poll() returned "+strings.Join(want, " ") {
				t.Fatalf("records %v format as %q", want, got)
			}
			if got := w.names(w.texts.bytes(tail)); !slices.Equal(got, want) && len(want) > 0 {
				t.Fatalf("records %v read back as %v", want, got)
			}
		}
		// A text that is one template, kept without its tEnd (addWhole),
		// formats the same and ends where its arguments end: the text
		// written right after it is not read into it.
		for i := 0; i < 200; i++ {
			in := w.InputPartitions()[r.Intn(len(w.InputPartitions()))]
			out := w.layout.Outputs()[r.Intn(len(w.layout.Outputs()))]
			off, n := r.Intn(1<<20), r.Int63n(1<<20)
			var b []byte
			var want string
			switch r.Intn(3) {
			case 0:
				b, _ = w.argTP(encTemplate(w.scratch[:0], tplProduce), in)
				b = argNum(argNum(argNum(argOffset(b, off), n), 0), n+1)
				want = fmt.Sprintf("inv(%s) pid %d epoch 0 seq %d", w.RecordName(in, off), n, n+1)
			case 1:
				b, _ = w.argTP(encTemplate(w.scratch[:0], tplProduced), in)
				b, _ = w.argTP(argOffset(b, off), out)
				b = argNum(b, n)
				want = fmt.Sprintf("inv(%s) written to %s at offset %d", w.RecordName(in, off), out, n)
			default:
				b, _ = w.argTP(encTemplate(w.scratch[:0], tplProduceAck), in)
				b, _ = w.argTP(argOffset(b, off), out)
				b = argNum(b, n)
				want = fmt.Sprintf("inv(%s) at offset %d", w.RecordName(in, off), n)
			}
			ref := w.addWhole(b)
			next := w.addText(encLit(w.scratch[:0], "next"))
			if got := w.text(ref); got != want || w.text(next) != "next" {
				t.Fatalf("whole template formats as %q then %q, want %q then \"next\"", got, w.text(next), want)
			}
		}
	}
}

// TestCommitOffsetsStoredOnce: a committed event's offsets are its
// OffsetCommit request's offsets token, referred to (tSame, or tSameBack
// as a distance back within the arena's chunk, which most are), not
// encoded again, and they read as the request's: the event is "<member> committed
// <offsets>" and the answer "<offsets>", where the request is "<offsets>,
// gen N, <member>". A reference to a reference, or to nothing, ends the text.
func TestCommitOffsetsStoredOnce(t *testing.T) {
	shared, back := 0, 0
	for seed := 1; seed <= 8; seed++ {
		w := traceCase(t, []GroupType{ClassicGroup, ConsumerGroup}[seed%2], seed)
		reqText := map[textRef]string{} // an OffsetCommit request's text ref: its offsets
		for i := 0; i < w.Packets.Len(); i++ {
			p := w.Packets.At(i)
			if p.Type != OffsetCommit {
				continue
			}
			if p.Req == nil {
				offs, _, _ := strings.Cut(p.Summary, ", ")
				reqText[w.Packets.recs.text(i)] = offs
				continue
			}
			if p.Error == None {
				if want, _, _ := strings.Cut(p.Req.Summary, ", "); p.Summary != want {
					t.Fatalf("seed %d: OffsetCommit %q answered %q, want %q", seed, p.Req.Summary, p.Summary, want)
				}
			}
		}
		for i := 0; i < w.Events.Len(); i++ {
			e := w.Events.At(i)
			r, _ := w.Events.recs.whole(i)
			if e.Kind != EvCommitted {
				continue
			}
			b := w.texts.bytes(r.text)
			k := bytes.IndexByte(b, phCommitted) + 1 // onCommit's text: member, phrase, offsets (a rare one is a literal)
			if k == 0 || k >= len(b) || b[k] != tSame && b[k] != tSameBack {
				continue
			}
			ref, n := binary.Uvarint(b[k+1:])
			if b[k] == tSameBack { // a distance back from the token
				ref = uint64(r.text) + uint64(k) - ref
				back++
			}
			offs, ok := reqText[textRef(ref)]
			if n <= 0 || !ok {
				t.Fatalf("seed %d: event %q refers to %d, not an OffsetCommit's text", seed, e.Text, ref)
			}
			if !strings.HasSuffix(e.Text, " committed "+offs) {
				t.Fatalf("seed %d: event %q, its request's offsets %q", seed, e.Text, offs)
			}
			shared++
		}
	}
	if shared == 0 || back == 0 {
		t.Fatalf("%d committed events refer to their request's offsets, %d as a distance back (tSameBack)", shared, back)
	}
	w := traceCase(t, ClassicGroup, 1)
	saved := w.texts
	defer func() { w.texts = saved }()
	w.texts = textArena{open: []byte{tEnd, tLit, 1, 'a', tSame, 4, tEnd, tSame, 1, tEnd, tSame, 99, tEnd, tSameBack, 12, tEnd, tSameBack, 3, tEnd}}
	for ref, want := range map[textRef]string{1: "a", 4: "", 7: "a", 10: "", 13: "a", 16: ""} {
		if got := w.text(ref); got != want {
			t.Fatalf("text at %d is %q, want %q", ref, got, want)
		}
	}
}

// FuzzTextDecode: the decoder only ever reads what the encoders wrote, but
// on any bytes at all it stops rather than panics.
func FuzzTextDecode(f *testing.F) {
	w := traceCase(&testing.T{}, ClassicGroup, 3)
	for i := 0; i+200 < len(w.texts.open) && i < 4000; i += 200 {
		f.Add(append([]byte{}, w.texts.open[i:i+200]...))
	}
	f.Add([]byte{tLit, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{tOffsets, 0x80})
	f.Add([]byte{tSame, 0, tSame, 2})
	f.Add([]byte{tEnd, tOffsets, 1, 0, 6, tEnd, tSameBack, 5, tEnd, tSameBack, 3, tSameBack, 0, tSameBack, 80})
	f.Add([]byte{tRecord, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 3})
	// a produce naming its record as the processed event 3 bytes before it
	// does (tplProduceAfter), and ones whose distance back is 0, before
	// the chunk, or at a text that is not a processed event
	f.Add([]byte{tEnd, tWhole + tplProcessed, 0, 5, tWhole + tplProduceAfter, 3, 0xd0, 0x0f, 0, 8})
	f.Add([]byte{tWhole + tplProduceAfter, 0, 2, 0, 2, tWhole + tplProduceAfter, 9, 2, 0, 2, tWhole + tplProduceAfter, 5, 2, 0, 2})
	// a produce taking its producer id and epoch from the one 7 bytes
	// back (tplProduceNext), and ones whose distance is 0 or reaches a
	// text that is not a produce spelling them
	f.Add([]byte{tEnd, tWhole + tplProcessed, 0, 5, tWhole + tplProduceAfter, 3, 0xd0, 0x0f, 0, 8, tWhole + tplProduceNext, 9, 6, 2,
		tWhole + tplProduceNext, 13, 0, 2, tWhole + tplProduceNext, 17, 17, 2})
	// a fetch's positions as its commit's (tOffsetsRot) from the second
	// on, and ones whose k is past the positions, or whose distance back is
	// 0, before the chunk, or at a token that is not a tOffsets
	f.Add([]byte{tEnd, tOffsets, 2, 0, 6, 1, 2, tEnd, tOffsetsRot, 7, 1, tEnd, tOffsetsRot, 11, 2, tEnd})
	f.Add([]byte{tOffsetsRot, 0, 0, tEnd, tOffsetsRot, 9, 0, tEnd, tOffsetsRot, 1, 0, tEnd})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			return
		}
		saved := w.texts
		defer func() { w.texts = saved }()
		w.texts = textArena{open: data}
		for i := range data {
			_ = w.text(textRef(i))
			_ = w.names(data[i:])
		}
	})
}

// The trace's records keep an answer's request as a distance back and an
// event's member and records offset in narrow fields; what does not fit
// (a request 4,096 or more packets back or not before its answer, a member
// past party 4,095, records from byte 16 on) is kept apart and read back
// exactly, in the world and in its clones.
func TestTraceRecordsThatDoNotFit(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	base := w.Packets.Len()
	send := func(p *Packet) *Packet {
		p.ID, p.Sent, p.Delivered = w.Packets.Len(), w.Tick, w.Tick+1
		w.Packets.Append(p)
		return p
	}
	first := send(&Packet{From: "C1", FromInc: 1, To: Broker, Type: Fetch, Summary: "first"})
	for i := 0; i < farField+10; i++ {
		send(&Packet{From: "C1", FromInc: 1, To: Broker, Type: OffsetFetch})
	}
	near := send(&Packet{From: "C2", FromInc: 1, To: Broker, Type: Produce, Summary: "near"})
	answers := []struct {
		p   *Packet
		req int
	}{
		{send(&Packet{From: Broker, To: "C1", ToInc: 1, Type: Fetch, Response: true, Req: first, Summary: "far"}), first.ID},
		{send(&Packet{From: Broker, To: "C2", ToInc: 1, Type: Produce, Response: true, Req: near, Summary: "near"}), near.ID},
	}
	self := w.Packets.Len()
	answers = append(answers, struct {
		p   *Packet
		req int
	}{send(&Packet{From: Broker, To: "C2", ToInc: 1, Type: Produce, Response: true, Req: &Packet{ID: self}, Summary: "itself"}), self})
	if w.Packets.recs.far.Len() != 2 {
		t.Fatalf("%d answers kept apart, want 2 (far back, itself)", w.Packets.recs.far.Len())
	}
	// events: one whose member is past 65,534, one whose records start at byte 300
	for i := w.parties.id("C2", 0); i < farField+1; i = w.parties.id("P"+strconv.Itoa(int(i)), 0) {
	}
	far := w.parties.names[len(w.parties.names)-1].name
	e0 := w.Events.Len()
	w.eventEnc(EvProcessed, far, w.encRecord(append(w.encParty(w.scratch[:0], far), phProcessed), w.InputPartitions()[0], 7, ""), 0)
	b := encLit(w.scratch[:0], strings.Repeat("x", 300))
	at := len(b)
	w.eventEnc(EvPolled, "C1", w.encRecord(b, w.InputPartitions()[1], 9, ""), at)
	w.stopEvent(EvCrash, far, "%s stops", far)
	check := func(w *World, what string) {
		for _, a := range answers {
			if got := w.Packets.At(a.p.ID); got.Req == nil || got.Req.ID != a.req || got.Summary != a.p.Summary {
				t.Fatalf("%s: packet %d answers %v (%q), want %d", what, a.p.ID, got.Req, got.Summary, a.req)
			}
		}
		if got := w.Packets.At(base + 5); got.Req != nil || got.Type != OffsetFetch || got.Response || got.From != "C1" || got.FromInc != 1 {
			t.Fatalf("%s: request %d reads as %+v", what, base+5, got)
		}
		evs := w.Events.Slice(e0, w.Events.Len())
		if evs[0].Member != far || evs[0].Text != far+" processed "+w.RecordName(w.InputPartitions()[0], 7) || len(evs[0].Records) != 0 {
			t.Fatalf("%s: event for party %s reads as %+v", what, far, evs[0])
		}
		if evs[1].Member != "C1" || len(evs[1].Records) != 1 || evs[1].Records[0] != w.RecordName(w.InputPartitions()[1], 9) {
			t.Fatalf("%s: event with records at byte %d reads as %+v", what, at, evs[1])
		}
		if evs[2].Member != far || !evs[2].Stop || evs[2].Kind != EvCrash || evs[2].Text != far+" stops" {
			t.Fatalf("%s: stop event reads as %+v", what, evs[2])
		}
	}
	checkWithClone(w, check)
}

// checkWithClone runs check on w, then on a clone of it and on w once w
// has stepped: records kept apart read back in clones too, and neither
// world's change shows in the other.
func checkWithClone(w *World, check func(w *World, what string)) {
	check(w, "world")
	c := w.Clone()
	w.Step()
	check(c, "clone")
	check(w, "world after a step")
}

// A text encoded in the arena's spare room is kept in place; a clone, whose
// copy of the open chunk has no spare room, encodes elsewhere, so neither
// world's texts change when the other adds its own, in place or not.
func TestArenaTextsInPlaceAndClones(t *testing.T) {
	defer func(a int) { arenaChunk = a }(arenaChunk)
	for _, chunk := range []int{40, 1 << arenaShift} {
		arenaChunk = chunk
		w, _ := New(DefaultTopology(), DefaultConfig())
		var refs []textRef
		var want []string
		add := func(w *World, s string) (textRef, bool) {
			b := encLit(w.scratch[:0], s)
			inPlace := w.texts.inSpare(b) && cap(b) > len(b)
			return w.addText(b), inPlace
		}
		placed := 0
		for i := 0; i < 3000; i++ { // past the first chunk, which starts small
			s := strings.Repeat(string(rune('a'+i%26)), 1+i%7)
			ref, in := add(w, s)
			if in {
				placed++
			}
			refs, want = append(refs, ref), append(want, s)
		}
		if (placed > 0) != (chunk >= 2*spillMin) { // a small chunk never has spillMin bytes of room
			t.Fatalf("chunk %d: %d texts kept in place", chunk, placed)
		}
		c := w.Clone()
		if len(c.texts.spare()) != 0 || cap(c.texts.spare()) != 0 {
			t.Fatalf("chunk %d: the clone has %d bytes of spare room in a shared chunk", chunk, cap(c.texts.spare()))
		}
		// The clone's first text closes the shared open chunk as it is (a
		// short full chunk, not copied) and goes to a chunk of its own.
		shared, nFull := w.texts.open, len(c.texts.full)
		first, _ := add(c, "clone-first")
		if last := c.texts.full[nFull]; len(c.texts.full) != nFull+1 || len(last) != len(shared) ||
			unsafe.SliceData(last) != unsafe.SliceData(shared) {
			t.Fatalf("chunk %d: the clone's first text did not close the shared open chunk uncopied", chunk)
		}
		if unsafe.SliceData(c.texts.open) == unsafe.SliceData(shared) || int(first>>arenaShift) != nFull+1 {
			t.Fatalf("chunk %d: the clone's first text is not in a chunk of its own", chunk)
		}
		var cw, ww []textRef
		for i := 0; i < 30; i++ {
			r1, _ := add(w, "orig"+strconv.Itoa(i))
			r2, _ := add(c, "clone"+strconv.Itoa(i))
			ww, cw = append(ww, r1), append(cw, r2)
		}
		if c.text(first) != "clone-first" {
			t.Fatalf("chunk %d: the clone's first text reads %q", chunk, c.text(first))
		}
		for i, ref := range refs {
			if w.text(ref) != want[i] || c.text(ref) != want[i] {
				t.Fatalf("chunk %d: shared text %d reads %q / %q, want %q", chunk, i, w.text(ref), c.text(ref), want[i])
			}
		}
		for i := range ww {
			if w.text(ww[i]) != "orig"+strconv.Itoa(i) || c.text(cw[i]) != "clone"+strconv.Itoa(i) {
				t.Fatalf("chunk %d: text %d reads %q / %q", chunk, i, w.text(ww[i]), c.text(cw[i]))
			}
		}
	}
}

// TestTraceFieldsFromChunkBase: packet and event records keep their tick
// and text as distances from their chunk's first record's; what does not
// fit (a tick 65,535 or more past the chunk's first, a hand-made packet
// sent before it, a text before the chunk's first or 64 KB past it, no
// text at the chunk's start) is kept whole apart and reads back exactly,
// in the world and in a clone, on either side of chunk boundaries.
func TestTraceFieldsFromChunkBase(t *testing.T) {
	setSeqChunk(t, 4)
	w, _ := New(DefaultTopology(), DefaultConfig())
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
	old := w.addText(encLit(w.scratch[:0], "an old text"))
	send := func(sent int, summary string, text textRef) {
		p := &Packet{ID: w.Packets.Len(), Sent: sent, Delivered: sent + 1, From: "C1", FromInc: 1, To: Broker, Type: Fetch, Summary: summary, Text: text}
		w.Packets.Append(p)
		if text == old {
			summary = "an old text"
		}
		pkts = append(pkts, pkt{p.ID, sent, summary})
	}
	event := func(text string) {
		evs = append(evs, ev{w.Events.Len(), w.Tick, text})
		w.event(EvCrash, "C1", "%s", text)
	}
	big := strings.Repeat("y", 70_000) // past a text's 64 KB reach from its chunk's base
	for i := 0; i < 40; i++ {
		switch i % 8 {
		case 0:
			send(w.Tick, "", 0) // no text: the chunk counts from the arena's end
			event("")
		case 1:
			send(w.Tick-5, "before", 0) // sent before the chunk's first
			event("a")
		case 2:
			w.Tick += farField + 3 // far past the chunk's first
			send(w.Tick, "far tick", 0)
			event("far tick")
		case 3:
			send(w.Tick, "", old) // a text before the chunk's first
			event(big)
		case 4:
			send(w.Tick, big, 0)
			event("after big")
		default:
			w.Tick++
			send(w.Tick, fmt.Sprint("near ", i), 0)
			event(fmt.Sprint("near ", i))
		}
	}
	if w.Packets.recs.far.Len() == 0 || w.Events.recs.far.Len() == 0 || w.Packets.recs.far.Len() == w.Packets.Len() {
		t.Fatalf("%d of %d packets and %d events kept whole: want some, not all", w.Packets.recs.far.Len(), w.Packets.Len(), w.Events.recs.far.Len())
	}
	check := func(w *World, what string) {
		for _, want := range pkts {
			if p := w.Packets.At(want.id); p.Sent != want.sent || p.Summary != want.summary || p.From != "C1" || p.Type != Fetch {
				t.Fatalf("%s: packet %d reads sent %d %.20q, want %d %.20q", what, want.id, p.Sent, p.Summary, want.sent, want.summary)
			}
		}
		for _, want := range evs {
			if e := w.Events.At(want.i); e.Tick != want.tick || e.Text != want.text || e.Member != "C1" || e.Kind != EvCrash {
				t.Fatalf("%s: event %d reads tick %d %.20q, want %d %.20q", what, want.i, e.Tick, e.Text, want.tick, want.text)
			}
		}
	}
	checkWithClone(w, check)
}

// TestProduceAnswerKeepsEventText: a written produce's answer keeps no
// text of its own but its produced event's, and reads as the answer:
// "inv(o0.3) at offset 21" beside "inv(o0.3) written to invoices-0 at
// offset 21".
func TestProduceAnswerKeepsEventText(t *testing.T) {
	w := consumingWorld(100, 60)
	events := map[textRef]string{}
	for i := 0; i < w.Events.Len(); i++ {
		if e := w.Events.At(i); e.Kind == EvProduced {
			events[w.Events.recs.text(i)] = e.Text
		}
	}
	shared := 0
	for i := 0; i < w.Packets.Len(); i++ {
		p := w.Packets.At(i)
		if p.Type != Produce || !p.Response {
			continue
		}
		ev, ok := events[w.Packets.recs.text(i)]
		if !ok {
			continue
		}
		shared++
		value, rest, _ := strings.Cut(ev, " written to ")
		_, off, _ := strings.Cut(rest, " at offset ")
		if want := value + " at offset " + off; p.Summary != want {
			t.Fatalf("produce answer %d reads %q, want %q (its event: %q)", i, p.Summary, want, ev)
		}
	}
	if shared < 20 {
		t.Fatalf("%d produce answers keep their event's text, want every written one (20 or more)", shared)
	}
}

// TestProcessedEventTemplate: a processed event of an input record is one
// template, its member read from the event and its record (Event.Records)
// from the template; one of a process that is not its client's newest
// spells its label ("C2 (process 1)") and keeps its record token.
func TestProcessedEventTemplate(t *testing.T) {
	w := consumingWorld(100, 40)
	check := func(from int, member string, wantWhole bool) {
		n := 0
		for i := from; i < w.Events.Len(); i++ {
			e := w.Events.At(i)
			if e.Kind != EvProcessed || e.Member != member {
				continue
			}
			n++
			whole := firstByte(w.texts.bytes(w.Events.recs.text(i))) == tWhole+tplProcessed
			label, _, _ := strings.Cut(e.Text, " processed ")
			if whole != wantWhole || len(e.Records) != 1 || e.Text != label+" processed "+e.Records[0] || (label == e.Member) != wantWhole {
				t.Fatalf("event %d: %+v (one template: %v, want %v)", i, e, whole, wantWhole)
			}
		}
		if n == 0 {
			t.Fatalf("no processed event of %s from %d", member, from)
		}
	}
	check(0, "C1", true)
	check(0, "C2", true)
	w.current["C2"].superseded = true // as when C2 restarts while this process still runs
	e0 := w.Events.Len()
	for i := 0; i < 10; i++ {
		w.Step()
	}
	check(e0, "C2", false)
}

// Used by the tests only: the engine encodes fetched records with
// encFetched and reads records whole.

// encRecord is the input record at off of tp, named as World.RecordName
// names it; value is its name, kept as it is when tp is not an input
// partition (the record then has no name to rebuild).
func (w *World) encRecord(b []byte, tp TopicPartition, off int, value string) []byte {
	if b, ok := w.encRecordRef(b, tp, off); ok {
		return b
	}
	return encLit(b, value)
}

// text is packet i's text.
func (s *packetRecs) text(i int) textRef {
	f, _ := s.whole(i)
	return f.text
}

// text is event i's text.
func (s *eventRecs) text(i int) textRef {
	f, _ := s.whole(i)
	return f.text
}

// The narrow fields of a packet record (a request's peer, an answer's back
// 12 bits each and error code 7 bits, sent 8 bits from its chunk's first)
// and of an event record (member 12 bits, records 4 bits, tick 8 bits) hold
// every value up to their edge, and the first value past it is kept apart
// (far) and read back exactly: a test of each edge from both sides, in the
// world and in its clones. An answer keeps its request's API and peer, so
// one of another API or peer, an answer to an answer and a request with
// an error code are kept apart too.
func TestTraceNarrowFieldEdges(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	farPackets, farEvents := w.Packets.recs.far.Len(), w.Events.recs.far.Len()
	edge := func(what string, wantFar bool, add func()) {
		t.Helper()
		p0, e0 := w.Packets.recs.far.Len(), w.Events.recs.far.Len()
		add()
		p1, e1 := w.Packets.recs.far.Len(), w.Events.recs.far.Len()
		if got := p1-p0+e1-e0 == 1; got != wantFar || p1-p0+e1-e0 > 1 {
			t.Fatalf("%s: %d packets and %d events kept apart, want far %v", what, p1-p0, e1-e0, wantFar)
		}
	}
	type pkt struct {
		id, sent, req int
		from          string
		inc           int
		typ           API
		err           ErrorCode
	}
	var pkts []pkt
	sendAs := func(typ API, err ErrorCode, from string, inc, sent int, req *Packet) *Packet {
		p := &Packet{ID: w.Packets.Len(), Sent: sent, Delivered: sent + 1, From: from, FromInc: inc, To: Broker, Type: typ, Error: err, Summary: fmt.Sprint("p", w.Packets.Len())}
		want := pkt{id: p.ID, sent: sent, req: -1, from: from, inc: inc, typ: typ, err: err}
		if req != nil {
			p.From, p.FromInc, p.To, p.ToInc, p.Response, p.Req = Broker, 0, from, inc, true, req
			want.req = req.ID
		}
		w.Packets.Append(p)
		pkts = append(pkts, want)
		return p
	}
	send := func(from string, inc, sent int, req *Packet) *Packet {
		return sendAs(Fetch, None, from, inc, sent, req)
	}
	// parties numbered 4,095 and 4,096 (client ids, incarnation 0: the
	// packets' ends and the events' members), after the ones the other
	// packets and events name
	w.parties.id("C1", 1)
	w.parties.id("C1", 0)
	var m4095, m4096 string
	for i := 0; m4096 == ""; i++ {
		name := "M" + strconv.Itoa(i)
		switch w.parties.id(name, 0) {
		case narrowBits - 1:
			m4095 = name
		case narrowBits:
			m4096 = name
		}
	}
	edge("peer 4,095", false, func() { send(m4095, 0, w.Tick, nil) })
	edge("peer 4,096", true, func() { send(m4096, 0, w.Tick, nil) })
	for _, back := range []int{narrowBits - 1, narrowBits} {
		req := send("C1", 1, w.Tick, nil)
		for w.Packets.Len() < req.ID+back {
			send("C1", 1, w.Tick, nil)
		}
		edge(fmt.Sprint("back ", back), back == narrowBits, func() { send("C1", 1, w.Tick, req) })
	}
	req := send("C1", 1, w.Tick, nil)
	edge("an answer's error code 127", false, func() { sendAs(Fetch, 127, "C1", 1, w.Tick, req) })
	edge("an answer's error code 128", true, func() { sendAs(Fetch, 128, "C1", 1, w.Tick, req) })
	edge("a request's error code", true, func() { sendAs(Fetch, RebalanceInProgress, "C1", 1, w.Tick, nil) })
	edge("an answer of another API", true, func() { sendAs(Produce, None, "C1", 1, w.Tick, req) })
	edge("an answer to another process", true, func() { send("C1", 2, w.Tick, req) })
	ans := send("C1", 1, w.Tick, req)
	edge("an answer to an answer", true, func() { send("C1", 1, w.Tick, ans) })
	for _, d := range []int{255, 256} {
		for w.Packets.Len()%store.SeqChunk() != 0 {
			send("C1", 1, w.Tick, nil)
		}
		send("C1", 1, w.Tick, nil) // the chunk's first: its base tick
		edge(fmt.Sprint("sent ", d, " ticks after the chunk's first"), d == 256, func() { send("C1", 1, w.Tick+d, nil) })
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
		b := encLit(w.scratch[:0], strings.Repeat("x", max(at-2, 0)))
		rec := w.RecordName(w.InputPartitions()[0], 7)
		want := ev{i: w.Events.Len(), tick: w.Tick, member: member, text: strings.Repeat("x", max(at-2, 0)) + rec, kind: EvPolled}
		if at > 0 {
			want.records = []string{rec}
		}
		w.eventEnc(EvPolled, member, w.encRecord(b, w.InputPartitions()[0], 7, ""), at)
		evs = append(evs, want)
	}
	edge("member 4,095", false, func() { event(m4095, 0) })
	edge("member 4,096", true, func() { event(m4096, 0) })
	edge("records at byte 15", false, func() { event("C1", 15) })
	edge("records at byte 16", true, func() { event("C1", 16) })
	for _, d := range []int{255, 256} {
		for w.Events.Len()%store.SeqChunk() != 0 {
			event("C1", 0)
		}
		event("C1", 0) // the chunk's first: its base tick
		w.Tick += d
		edge(fmt.Sprint("event ", d, " ticks after the chunk's first"), d == 256, func() { event("C1", 0) })
		w.Tick -= d
	}
	if w.Packets.recs.far.Len()-farPackets != 8 || w.Events.recs.far.Len()-farEvents != 3 {
		t.Fatalf("%d packets and %d events kept apart, want 8 and 3", w.Packets.recs.far.Len()-farPackets, w.Events.recs.far.Len()-farEvents)
	}
	checkWithClone(w, func(w *World, what string) {
		for _, want := range pkts {
			p := w.Packets.At(want.id)
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
			e := w.Events.At(want.i)
			if e.Tick != want.tick || e.Member != want.member || e.Text != want.text || e.Kind != want.kind || !slices.Equal(e.Records, want.records) {
				t.Fatalf("%s: event %d reads %+v, want %+v", what, want.i, e, want)
			}
		}
	})
}

// TestProduceNamesProcessedRecord: a produce's text names its record as
// a reference back to the processed event just before it
// (tplProduceAfter), so the record is stored once, in 9 bytes or fewer
// for the produce, and most take their producer id and epoch from their
// producer's last produce that spells them (tplProduceNext: 6 or fewer); it names the record its member processed, in the world
// and in a clone (whose first text starts a chunk of its own: a reference
// never crosses chunks). TestTraceMaterializedAsBefore checks every text
// reads as before.
func TestProduceNamesProcessedRecord(t *testing.T) {
	w := consumingWorld(100, 40)
	c := w.Clone()
	for _, w := range []*World{w, c} {
		p0 := w.Packets.Len()
		for i := 0; i < 40; i++ {
			w.Step()
		}
		after, next, whole := 0, 0, 0
		for i := p0; i < w.Packets.Len(); i++ {
			p := w.Packets.At(i)
			if p.Type != Produce || p.Response {
				continue
			}
			ref := w.Packets.recs.text(i)
			switch firstByte(w.texts.bytes(ref)) {
			case tWhole + tplProduceAfter, tWhole + tplProduceNext:
				after++
				r := w.readerAt(ref, "")
				r.next(nil)
				n, most := r.n-len(r.b), 9
				if w.texts.bytes(ref)[0] == tWhole+tplProduceNext {
					next, most = next+1, 6
				}
				if n > most {
					t.Fatalf("produce %q takes %d bytes", p.Summary, n)
				}
			case tWhole + tplProduce:
				whole++
			}
			if !strings.HasPrefix(p.Summary, "inv(") || !strings.Contains(p.Summary, ") pid ") {
				t.Fatalf("produce reads %q", p.Summary)
			}
			src := p.Summary[len("inv("):strings.IndexByte(p.Summary, ')')]
			// the processed event of that record, by the same member
			found := false
			for k := w.Events.Len() - 1; k >= 0 && !found; k-- {
				e := w.Events.At(k)
				found = e.Kind == EvProcessed && e.Member == p.From && len(e.Records) == 1 && e.Records[0] == src
			}
			if !found {
				t.Fatalf("produce %q: no processed event of %s by %s", p.Summary, src, p.From)
			}
		}
		if after < 20 || whole > 2 || next < after-4 {
			t.Fatalf("%d produces refer to their processed event, %d of them to their producer's last for its id and epoch; %d are whole", after, next, whole)
		}
	}
}

// TestFetchPositionsReferToCommit: a fetch sent right after its member's
// commit names its positions as a reference back to the commit's offsets
// token, rotated to the fetch's order (tOffsetsRot), in 4 bytes or fewer
// where each position took 2 or more; it reads as the fetch always read.
func TestFetchPositionsReferToCommit(t *testing.T) {
	w := consumingWorld(1_000, 400)
	rot, rotated := 0, 0
	for i := 0; i < w.Packets.Len(); i++ {
		p := w.Packets.At(i)
		if p.Type != Fetch || p.Response {
			continue
		}
		ref := w.Packets.recs.text(i)
		if firstByte(w.texts.bytes(ref)) != tOffsetsRot {
			continue
		}
		rot++
		r := w.readerAt(ref, "")
		out, _, ok := r.next(nil)
		if n := r.n - len(r.b); !ok || n > 4 {
			t.Fatalf("fetch %q: its positions take %d bytes", p.Summary, n)
		}
		// the same positions as the commit just before, maybe in another order
		if !strings.HasPrefix(p.Summary, string(out)+" max ") {
			t.Fatalf("fetch %q: positions read %q", p.Summary, out)
		}
		var c *Packet
		for k := i - 1; k >= 0 && c == nil; k-- {
			if q := w.Packets.At(k); q.Type == OffsetCommit && !q.Response && q.From == p.From {
				c = q
			}
		}
		if c == nil {
			t.Fatalf("fetch %q: no commit before it", p.Summary)
		}
		offs, _, _ := strings.Cut(c.Summary, ", ")
		got, want := strings.Fields(string(out)), strings.Fields(offs)
		if !strings.HasPrefix(string(out), want[0]) {
			rotated++
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("fetch %q: positions %v, its commit's %q", p.Summary, got, c.Summary)
		}
	}
	if rot < 100 || rotated == 0 {
		t.Fatalf("%d fetches refer to their commit's positions, %d of them rotated", rot, rotated)
	}
}
