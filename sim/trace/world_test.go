package trace_test

// The trace as running worlds write it: what the protocol code states
// through Trace's methods, kept as references to texts written before
// (tSame, tSameBack, tOffsetsRot, tplProduceAfter, tplProduceNext) and
// read back as the texts they stand for. The worlds are simtest's, those
// sim's tests run.

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
	"github.com/kgrepl/kgrepl/sim/simtest"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return trace.TEndForTest
	}
	return b[0]
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
		w := simtest.TraceCase(t, []sim.GroupType{sim.ClassicGroup, sim.ConsumerGroup}[seed%2], seed)
		tr := w.Trace()
		reqText := map[wire.TextRef]string{} // an OffsetCommit request's text ref: its offsets
		for i := 0; i < w.Packets.Len(); i++ {
			p := w.Packets.At(i)
			if p.Type != sim.OffsetCommit {
				continue
			}
			if p.Req == nil {
				offs, _, _ := strings.Cut(p.Summary, ", ")
				reqText[w.Packets.TextRefForTest(i)] = offs
				continue
			}
			if p.Error == sim.None {
				if want, _, _ := strings.Cut(p.Req.Summary, ", "); p.Summary != want {
					t.Fatalf("seed %d: OffsetCommit %q answered %q, want %q", seed, p.Req.Summary, p.Summary, want)
				}
			}
		}
		for i := 0; i < w.Events.Len(); i++ {
			e := w.Events.At(i)
			text := w.Events.TextRefForTest(i)
			if e.Kind != sim.EvCommitted {
				continue
			}
			b := tr.BytesForTest(text)
			k := bytes.IndexByte(b, trace.PhCommittedForTest) + 1 // onCommit's text: member, phrase, offsets (a rare one is a literal)
			if k == 0 || k >= len(b) || b[k] != trace.TSameForTest && b[k] != trace.TSameBackForTest {
				continue
			}
			ref, n := binary.Uvarint(b[k+1:])
			if b[k] == trace.TSameBackForTest { // a distance back from the token
				ref = uint64(text) + uint64(k) - ref
				back++
			}
			offs, ok := reqText[wire.TextRef(ref)]
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
	tr := simtest.TraceCase(t, sim.ClassicGroup, 1).Trace()
	const (
		end, lit, same, sameBack = trace.TEndForTest, trace.TLitForTest, trace.TSameForTest, trace.TSameBackForTest
	)
	defer tr.SetArenaForTest([]byte{end, lit, 1, 'a', same, 4, end, same, 1, end, same, 99, end, sameBack, 12, end, sameBack, 3, end})()
	for ref, want := range map[wire.TextRef]string{1: "a", 4: "", 7: "a", 10: "", 13: "a", 16: ""} {
		if got := tr.TextForTest(ref); got != want {
			t.Fatalf("text at %d is %q, want %q", ref, got, want)
		}
	}
}

// FuzzTextDecode: the decoder only ever reads what the encoders wrote, but
// on any bytes at all it stops rather than panics.
func FuzzTextDecode(f *testing.F) {
	tr := simtest.TraceCase(f, sim.ClassicGroup, 3).Trace()
	open := tr.OpenChunkForTest()
	for i := 0; i+200 < len(open) && i < 4000; i += 200 {
		f.Add(append([]byte{}, open[i:i+200]...))
	}
	const (
		tEnd, tLit, tOffsets, tSame, tSameBack = trace.TEndForTest, trace.TLitForTest, trace.TOffsetsForTest, trace.TSameForTest, trace.TSameBackForTest
		tRecord, tOffsetsRot                   = trace.TRecordForTest, trace.TOffsetsRotForTest
		processed, produceAfter, produceNext   = trace.WholeProcessedForTest, trace.WholeProduceAfterForTest, trace.WholeProduceNextForTest
	)
	f.Add([]byte{tLit, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{tOffsets, 0x80})
	f.Add([]byte{tSame, 0, tSame, 2})
	f.Add([]byte{tEnd, tOffsets, 1, 0, 6, tEnd, tSameBack, 5, tEnd, tSameBack, 3, tSameBack, 0, tSameBack, 80})
	f.Add([]byte{tRecord, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 3})
	// a produce naming its record as the processed event 3 bytes before it
	// does (tplProduceAfter), and ones whose distance back is 0, before
	// the chunk, or at a text that is not a processed event
	f.Add([]byte{tEnd, processed, 0, 5, produceAfter, 3, 0xd0, 0x0f, 0, 8})
	f.Add([]byte{produceAfter, 0, 2, 0, 2, produceAfter, 9, 2, 0, 2, produceAfter, 5, 2, 0, 2})
	// a produce taking its producer id and epoch from the one 7 bytes
	// back (tplProduceNext), and ones whose distance is 0 or reaches a
	// text that is not a produce spelling them
	f.Add([]byte{tEnd, processed, 0, 5, produceAfter, 3, 0xd0, 0x0f, 0, 8, produceNext, 9, 6, 2,
		produceNext, 13, 0, 2, produceNext, 17, 17, 2})
	// a fetch's positions as its commit's (tOffsetsRot) from the second
	// on, and ones whose k is past the positions, or whose distance back is
	// 0, before the chunk, or at a token that is not a tOffsets
	f.Add([]byte{tEnd, tOffsets, 2, 0, 6, 1, 2, tEnd, tOffsetsRot, 7, 1, tEnd, tOffsetsRot, 11, 2, tEnd})
	f.Add([]byte{tOffsetsRot, 0, 0, tEnd, tOffsetsRot, 9, 0, tEnd, tOffsetsRot, 1, 0, tEnd})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			return
		}
		defer tr.SetArenaForTest(data)()
		for i := range data {
			_ = tr.TextForTest(wire.TextRef(i))
			_, _ = tr.NamesForTest(data[i:], 1024)
		}
	})
}

// TestProduceAnswerKeepsEventText: a written produce's answer keeps no
// text of its own but its produced event's, and reads as the answer:
// "inv(o0.3) at offset 21" beside "inv(o0.3) written to invoices-0 at
// offset 21".
func TestProduceAnswerKeepsEventText(t *testing.T) {
	w := simtest.ConsumingWorld(100, 60)
	events := map[wire.TextRef]string{}
	for i := 0; i < w.Events.Len(); i++ {
		if e := w.Events.At(i); e.Kind == sim.EvProduced {
			events[w.Events.TextRefForTest(i)] = e.Text
		}
	}
	shared := 0
	for i := 0; i < w.Packets.Len(); i++ {
		p := w.Packets.At(i)
		if p.Type != sim.Produce || !p.Response {
			continue
		}
		ev, ok := events[w.Packets.TextRefForTest(i)]
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
	w := simtest.ConsumingWorld(100, 40)
	check := func(from int, member string, wantWhole bool) {
		n := 0
		for i := from; i < w.Events.Len(); i++ {
			e := w.Events.At(i)
			if e.Kind != sim.EvProcessed || e.Member != member {
				continue
			}
			n++
			whole := firstByte(w.Trace().BytesForTest(w.Events.TextRefForTest(i))) == trace.WholeProcessedForTest
			label, _, _ := strings.Cut(e.Text, " processed ")
			if whole != wantWhole || e.Records.Len() != 1 || e.Text != label+" processed "+e.Records.Names()[0] || (label == e.Member) != wantWhole {
				t.Fatalf("event %d: %+v (one template: %v, want %v)", i, e, whole, wantWhole)
			}
		}
		if n == 0 {
			t.Fatalf("no processed event of %s from %d", member, from)
		}
	}
	check(0, "C1", true)
	check(0, "C2", true)
	// C2 restarts while its process is in a slow record: that process runs
	// on as a zombie (C2 (process 1)), processes the rest of its batch and
	// stops, before the new one has a batch of its own.
	old := w.Member("C2")
	if err := w.Slow("C2"); err != nil {
		t.Fatal(err)
	}
	for busy, slow := old.Processing(); !busy || !slow; busy, slow = old.Processing() {
		if w.Tick > 100 {
			t.Fatalf("tick %d: C2 is not in its slow record", w.Tick)
		}
		w.Step()
	}
	if err := w.Restart("C2"); err != nil {
		t.Fatal(err)
	}
	if !old.Alive || !old.Zombie || w.Member("C2") == old {
		t.Fatalf("tick %d: C2's first process is not a zombie running beside its second", w.Tick)
	}
	e0 := w.Events.Len()
	for old.Alive {
		if w.Tick > 200 {
			t.Fatalf("tick %d: C2's zombie process still runs", w.Tick)
		}
		w.Step()
	}
	check(e0, "C2", false)
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
	w := simtest.ConsumingWorld(100, 40)
	c := w.Clone()
	for _, w := range []*sim.World{w, c} {
		tr := w.Trace()
		p0 := w.Packets.Len()
		for i := 0; i < 40; i++ {
			w.Step()
		}
		after, next, whole := 0, 0, 0
		for i := p0; i < w.Packets.Len(); i++ {
			p := w.Packets.At(i)
			if p.Type != sim.Produce || p.Response {
				continue
			}
			ref := w.Packets.TextRefForTest(i)
			switch firstByte(tr.BytesForTest(ref)) {
			case trace.WholeProduceAfterForTest, trace.WholeProduceNextForTest:
				after++
				_, n, _ := tr.FirstTokenForTest(ref)
				most := 9
				if tr.BytesForTest(ref)[0] == trace.WholeProduceNextForTest {
					next, most = next+1, 6
				}
				if n > most {
					t.Fatalf("produce %q takes %d bytes", p.Summary, n)
				}
			case trace.WholeProduceForTest:
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
				found = e.Kind == sim.EvProcessed && e.Member == p.From && e.Records.Len() == 1 && e.Records.Has(src)
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
	w := simtest.ConsumingWorld(1_000, 400)
	tr := w.Trace()
	rot, rotated := 0, 0
	for i := 0; i < w.Packets.Len(); i++ {
		p := w.Packets.At(i)
		if p.Type != sim.Fetch || p.Response {
			continue
		}
		ref := w.Packets.TextRefForTest(i)
		if firstByte(tr.BytesForTest(ref)) != trace.TOffsetsRotForTest {
			continue
		}
		rot++
		out, n, ok := tr.FirstTokenForTest(ref)
		if !ok || n > 4 {
			t.Fatalf("fetch %q: its positions take %d bytes", p.Summary, n)
		}
		// the same positions as the commit just before, maybe in another order
		if !strings.HasPrefix(p.Summary, string(out)+" max ") {
			t.Fatalf("fetch %q: positions read %q", p.Summary, out)
		}
		var c *sim.Packet
		for k := i - 1; k >= 0 && c == nil; k-- {
			if q := w.Packets.At(k); q.Type == sim.OffsetCommit && !q.Response && q.From == p.From {
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

// TestKindAtIsEventKind: KindAt, read off an event's record, is the kind
// At gives, for every event of random worlds under both protocols (stop
// events, whose record marks the stop in the kind's byte, included).
func TestKindAtIsEventKind(t *testing.T) {
	stops := 0
	for _, proto := range simtest.Protocols {
		for seed := 0; seed < 4; seed++ {
			w := simtest.TraceCase(t, proto, seed)
			for i, e := range w.Events.All() {
				if got := w.Events.KindAt(i); got != e.Kind {
					t.Fatalf("%s seed %d: event %d (%q): KindAt %s, At's kind %s", proto, seed, i, e.Text, got, e.Kind)
				}
				if e.Stop {
					stops++
				}
			}
		}
	}
	if stops == 0 {
		t.Fatal("no stop event in the worlds: the stop bit is not covered")
	}
}

// TestBatchOfSeveralRunsTexts: a batch of several runs (linger.ms,
// wire.ProduceRequest.Runs) reads inv(R, R, ...), each run spelled as a
// batch of one run spells its sources (o0.3..o0.9, ": 3" for some of
// them, a record's name alone for one): its request's value one
// tSrcRuns token, first; its produced event refers to it (tSame) and
// reads the same value, and its answer is the event's text, read as an
// answer without " written to out-1"; without the request's text they
// spell the runs and read the same again. A run of a partition the world
// lacks spells the whole value, and its answer reads it too.
func TestBatchOfSeveralRunsTexts(t *testing.T) {
	w, err := sim.New(sim.Topology{Group: "g", Inputs: []sim.TopicSpec{{Name: "o", Partitions: 3}}, Output: sim.TopicSpec{Name: "out", Partitions: 2}, Members: 1}, sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr, l := w.Trace(), w.Layout()
	in := l.Inputs()
	req := &wire.ProduceRequest{TP: l.Outputs()[1], TPI: int32(len(in) + 2), PID: 1000, Epoch: 2, Seq: 40, Producer: "C1",
		Src: in[0], SrcTPI: 1, SrcOffset: 3, SrcEnd: 9, SrcCount: 11, HasSrc: true, Named: true, Runs: []wire.SrcRun{
			{Part: 0, First: 3, Last: 9, Count: 7}, {Part: 1, First: 4, Last: 12, Count: 3}, {Part: 2, First: 5, Last: 5, Count: 1}}}
	value := "inv(" + l.Name(in[0], 3) + ".." + l.Name(in[0], 9) + ", " + l.Name(in[1], 4) + ".." + l.Name(in[1], 12) + ": 3, " + l.Name(in[2], 5) + ")"
	if got := req.ValueIn(l); got != value {
		t.Fatalf("ValueIn: %s, want %s", got, value)
	}
	text := tr.ProduceBatch(req, nil)
	if got, want := tr.TextForTest(text), value+" pid 1000 epoch 2 seq 40..50"; got != want {
		t.Errorf("request: %q, want %q", got, want)
	}
	if b := tr.BytesForTest(text); firstByte(b) == trace.TLitForTest {
		t.Errorf("the request spells its value: % x", b[:min(len(b), 16)])
	}
	tok, _, ok := tr.FirstTokenForTest(text)
	if !ok || string(tok) != value {
		t.Errorf("the request's first token reads %q (%v), want its value %q", tok, ok, value)
	}
	for _, ref := range []wire.TextRef{text, 0} {
		ans := tr.ProducedBatch(req, 20, ref)
		if got, want := tr.AnswerTextForTest(ans), value+" at offsets 20..30"; got != want {
			t.Errorf("answer (request text %d): %q, want %q", ref, got, want)
		}
		if ev := w.Events.TextRefForTest(w.Events.Len() - 1); ans != ev {
			t.Errorf("answer (request text %d): its text at %d, not its event's at %d", ref, ans, ev)
		}
		b := tr.BytesForTest(ans)
		if same := firstByte(b) == trace.TSameForTest || firstByte(b) == trace.TSameBackForTest; same != (ref != 0) {
			t.Errorf("answer (request text %d): refers to it %v", ref, same)
		}
		ev := w.Events.At(w.Events.Len() - 1)
		if want := value + " written to " + l.Outputs()[1].String() + " at offsets 20..30"; ev.Text != want || ev.Member != "C1" {
			t.Errorf("event (request text %d): %s %q, want C1 %q", ref, ev.Member, ev.Text, want)
		}
	}
	retry := *req
	retry.Attempt = 1
	if got, want := tr.TextForTest(tr.ProduceBatch(&retry, nil)), value+" pid 1000 epoch 2 seq 40..50 (retry)"; got != want {
		t.Errorf("retry: %q, want %q", got, want)
	}
	plain := *req
	plain.PID, plain.Seq = -1, -1
	if got := tr.TextForTest(tr.ProduceBatch(&plain, nil)); got != value {
		t.Errorf("plain producer: %q, want %q", got, value)
	}
	// runs whose partitions and offsets go down as well as up (the token
	// keeps each as its difference from the run before's)
	back := *req
	back.Runs = []wire.SrcRun{{Part: 2, First: 1 << 30, Last: 1<<30 + 40, Count: 5}, {Part: 0, First: 7, Last: 8, Count: 2},
		{Part: 1, First: 0, Last: 0, Count: 1}, {Part: 1, First: 90, Last: 99, Count: 10}, {Part: 0, First: 2, Last: 2, Count: 1}}
	if got, want := tr.TextForTest(tr.ProduceBatch(&back, nil)), back.ValueIn(l)+" pid 1000 epoch 2 seq 40..50"; got != want {
		t.Errorf("runs back and forth: %q, want %q", got, want)
	}
	// A producer's batches of the same partitions: the first spelled whole
	// (tSrcRuns), the next ones referring to it (each first offset within
	// 63 of its run's) and read the same, their produced events and
	// answers too; a batch of other partitions, or one whose offsets moved
	// too far, is spelled whole and the next ones refer to it.
	var bt trace.BatchText
	batch := func(firsts []int, ins []int, counts []int) *wire.ProduceRequest {
		r := *req
		r.Runs = nil
		for k, f := range firsts {
			r.Runs = append(r.Runs, wire.SrcRun{Part: int32(ins[k]), First: int32(f), Last: int32(f + 2*counts[k] - 2), Count: int32(counts[k])})
		}
		return &r
	}
	for step, c := range []struct {
		firsts, ins, counts []int
		like                bool
	}{
		{[]int{100, 90, 7}, []int{0, 1, 2}, []int{3, 1, 2}, false},
		{[]int{110, 95, 8}, []int{0, 1, 2}, []int{2, 4, 1}, true},
		// runs of two bytes (span and count under 16), three (under 0x80)
		// and more, in one batch, and at the edges (span 14, 16)
		{[]int{111, 96, 9}, []int{0, 1, 2}, []int{8, 9, 70}, true},
		{[]int{37, 153, 7}, []int{0, 1, 2}, []int{64, 1, 8}, true},
		{[]int{160, 40, 70}, []int{0, 1, 2}, []int{5, 5, 5}, true},   // 63 back and forth
		{[]int{164, 153, 70}, []int{0, 1, 2}, []int{1, 1, 1}, false}, // 64 from the base's
		{[]int{165, 150, 71}, []int{0, 1, 2}, []int{1, 2, 1}, true},
		{[]int{165, 150, 71}, []int{0, 2, 1}, []int{1, 2, 1}, false}, // other partitions
		{[]int{165, 150}, []int{0, 2}, []int{1, 2}, false},
	} {
		r := batch(c.firsts, c.ins, c.counts)
		ref := tr.ProduceBatch(r, &bt)
		if got, want := tr.TextForTest(ref), r.ValueIn(l)+" pid 1000 epoch 2 seq 40..50"; got != want {
			t.Errorf("batch %d: %q, want %q", step, got, want)
		}
		b := tr.BytesForTest(ref)
		if like := firstByte(b) == trace.TSrcRunsLikeForTest; like != c.like {
			t.Errorf("batch %d: refers to the batch before %v, want %v (% x)", step, like, c.like, b[:min(len(b), 8)])
		}
		if got, want := tr.AnswerTextForTest(tr.ProducedBatch(r, 20, ref)), r.ValueIn(l)+" at offsets 20..30"; got != want {
			t.Errorf("batch %d's answer: %q, want %q", step, got, want)
		}
		if ev := w.Events.At(w.Events.Len() - 1); ev.Text != r.ValueIn(l)+" written to "+l.Outputs()[1].String()+" at offsets 20..30" {
			t.Errorf("batch %d's event: %q", step, ev.Text)
		}
	}
	lacking := *req
	lacking.Runs = append([]wire.SrcRun{}, req.Runs...)
	lacking.Runs[1].Count = 20 // more records than 4..12 holds: not a run the token can say
	spelled := lacking.ValueIn(l)
	ref := tr.ProduceBatch(&lacking, nil)
	if got := tr.TextForTest(ref); got != spelled+" pid 1000 epoch 2 seq 40..50" || firstByte(tr.BytesForTest(ref)) != trace.TLitForTest {
		t.Errorf("a run of more records than its range: %q, want %q spelled", got, spelled)
	}
	for _, r := range []wire.TextRef{ref, 0} {
		if got, want := tr.AnswerTextForTest(tr.ProducedBatch(&lacking, 7, r)), spelled+" at offsets 7..17"; got != want {
			t.Errorf("answer of a run of more records than its range (request text %d): %q, want %q", r, got, want)
		}
	}
}
