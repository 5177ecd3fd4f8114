package trace

import (
	"fmt"
	"math"
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

// newTestTrace is the empty trace of a world of topology tp (as a new
// world's is: no packet, event or text yet) whose clock is *now and whose
// logs src reads (nil: none).
func newTestTrace(t testing.TB, tp topo.Topology, now *int, src Sources) *Trace {
	t.Helper()
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(topo.New(tp), now, src)
}

// newSmallWindowTrace is a trace on the default topology keeping 8 ticks,
// with store chunks of 2 and text chunks of 64 bytes, so a few ticks'
// packets fill, let go of and reuse several chunks.
func newSmallWindowTrace(t *testing.T, now *int) *Trace {
	t.Helper()
	t.Cleanup(store.SetSeqChunkForTest(2))
	t.Cleanup(SetArenaChunkForTest(64))
	tr := newTestTrace(t, topo.Default(), now, nil)
	tr.SetHistory(8)
	return tr
}

// invoiceLogs is the invoices written to each log (by its number,
// topo.Layout.Number), each by its source, as a world's cells keep them:
// the trace reads a produced event's source from them (Sources).
type invoiceLogs map[uint64][]invoiceSource

type invoiceSource struct {
	tp  wire.TopicPartition
	off int
}

// write appends the invoice of record off of tp to log part and returns
// its offset there.
func (l invoiceLogs) write(part int, tp wire.TopicPartition, off int) int {
	l[uint64(part)] = append(l[uint64(part)], invoiceSource{tp, off})
	return len(l[uint64(part)]) - 1
}

// InvoiceSource is the source of the invoice at off of log part, false
// for an offset the log does not have (as World.InvoiceSource).
func (l invoiceLogs) InvoiceSource(part, off uint64) (wire.TopicPartition, int, bool) {
	if off >= uint64(len(l[part])) {
		return wire.TopicPartition{}, 0, false
	}
	s := l[part][off]
	return s.tp, s.off, true
}

// encRecord is the input record at off of tp, named as the layout names
// it; value is its name, kept as it is when tp is not an input partition
// (the record then has no name to rebuild).
func (t *Trace) encRecord(b []byte, tp wire.TopicPartition, off int, value string) []byte {
	if b, ok := t.encRecordRef(b, tp, off); ok {
		return b
	}
	return encLit(b, value)
}

// TestTextEncodingRoundTrip: every encoder, formatted back, gives what the
// direct formatting gives, for random arguments in the default world (o2,
// o2.3) and in one with other topics (orders-2 style names), partitions the
// world does not have and member ids of any spelling included.
func TestTextEncodingRoundTrip(t *testing.T) {
	other := topo.Topology{Group: "g", Inputs: []topo.TopicSpec{{Name: "a", Partitions: 3}, {Name: "bb", Partitions: 200}}, Output: topo.TopicSpec{Name: "out", Partitions: 2}}
	for _, tpl := range []topo.Topology{topo.Default(), other} {
		var tick int
		logs := invoiceLogs{}
		tr := newTestTrace(t, tpl, &tick, logs)
		layout := tr.layout
		r := rand.New(rand.NewSource(1))
		topics := []string{tpl.Output.Name, "nope"}
		for _, in := range tpl.Inputs {
			topics = append(topics, in.Name)
		}
		randTP := func() wire.TopicPartition {
			return wire.TopicPartition{Topic: topics[r.Intn(len(topics))], Partition: r.Intn(220) - 5}
		}
		ids := []string{"", "-", "C1-1", "C12-345", "C1-01", "a-b", "x", "C1--2", "C1-", "-3", "C1-99999999999999999999"}
		for i := 0; i < 3000; i++ {
			var b, want []byte
			var recAt int
			for k := 0; k < 1+r.Intn(5); k++ {
				switch r.Intn(10) {
				case 0:
					tp := randTP()
					b, want = tr.encShort(b, tp), layout.AppendShortName(want, tp)
				case 1:
					tp := randTP()
					b, want = tr.encPart(b, tp), append(want, tp.String()...)
				case 2:
					tp, off := layout.Inputs()[r.Intn(len(layout.Inputs()))], r.Intn(1<<20)
					if r.Intn(4) == 0 {
						tp = randTP()
					}
					name := layout.Name(tp, off)
					b, want = tr.encRecord(b, tp, off, name), append(want, name...)
				case 3:
					var tps []wire.TopicPartition
					var offs []int
					for j := 0; j < r.Intn(6); j++ {
						off := r.Intn(1<<30) - 5
						if r.Intn(8) == 0 { // kept as the difference from the one before: it wraps and comes back
							off = []int{math.MaxInt64, math.MinInt64, -1}[r.Intn(3)]
						}
						tps, offs = append(tps, randTP()), append(offs, off)
					}
					b, want = tr.encOffsets(b, tps, nil, offs), layout.AppendOffsets(want, tps, offs)
				case 4:
					ph, n := byte(tPhrase+r.Intn(len(phrases))), r.Int63()-r.Int63()
					b, want = encNum(b, ph, n), strconv.AppendInt(append(want, phrases[ph-tPhrase]...), n, 10)
				case 5:
					id := ids[r.Intn(len(ids))]
					b, want = tr.encMemberID(b, id), append(want, id...)
				case 6:
					s := fmt.Sprint(r.Int63())[:r.Intn(10)]
					b, want = encLit(b, s), append(want, s...)
				case 7:
					ph := byte(tPhrase + r.Intn(len(phrases)))
					b, want = append(b, ph), append(want, phrases[ph-tPhrase]...)
				case 8:
					var tps []wire.TopicPartition
					for j := 0; j < r.Intn(6); j++ {
						tps = append(tps, randTP())
					}
					b, want = tr.encPartList(b, tps), layout.AppendPartList(want, tps)
				case 9:
					in := layout.Inputs()[r.Intn(len(layout.Inputs()))]
					out := layout.Outputs()[r.Intn(len(layout.Outputs()))]
					off, n1, n2, n3 := r.Intn(1<<20), r.Int63n(1<<40), r.Int63n(100)-1, r.Int63n(1<<20)
					switch k := r.Intn(len(templates)); k {
					case tplProduce:
						b, _ = tr.argTP(encTemplate(b, k), in)
						b = argNum(argNum(argNum(argOffset(b, off), n1), n2), n3)
						want = fmt.Appendf(want, "inv(%s) pid %d epoch %d seq %d", layout.Name(in, off), n1, n2, n3)
					case tplProduced:
						b, _ = tr.argTP(encTemplate(b, k), in)
						b, _ = tr.argTP(argOffset(b, off), out)
						b = argNum(b, n3)
						want = fmt.Appendf(want, "inv(%s) written to %s at offset %d", layout.Name(in, off), out, n3)
					case tplProduceAck:
						b, _ = tr.argTP(encTemplate(b, k), in)
						b, _ = tr.argTP(argOffset(b, off), out)
						b = argNum(b, n3)
						want = fmt.Appendf(want, "inv(%s) at offset %d", layout.Name(in, off), n3)
					case tplProducedCell, tplProduceAckCell: // the source read from the invoice's cell
						li, _ := layout.Number(out)
						at := logs.write(li, in, off)
						b = argOffset(argOffset(encTemplate(b, k), li), at)
						if k == tplProducedCell {
							want = fmt.Appendf(want, "inv(%s) written to %s at offset %d", layout.Name(in, off), out, at)
						} else {
							want = fmt.Appendf(want, "inv(%s) at offset %d", layout.Name(in, off), at)
						}
					case tplBatch, tplBatchPlain, tplBatchProduced, tplBatchAck:
						// a batch's sources: every record from the first to the last, or some
						span, count := r.Intn(300)+1, 0
						if r.Intn(2) == 0 {
							count = span + 1
						} else {
							count = 2 + r.Intn(span)
						}
						b, _ = tr.argTP(encTemplate(b, k), in)
						b = argOffset(argOffset(argOffset(b, off), span), count)
						run := layout.Name(in, off) + ".." + layout.Name(in, off+span)
						if count != span+1 {
							run += fmt.Sprintf(": %d", count)
						}
						switch k {
						case tplBatch:
							b = argNum(argNum(argNum(b, n1), n2), n3)
							want = fmt.Appendf(want, "inv(%s) pid %d epoch %d seq %d..%d", run, n1, n2, n3, n3+int64(count)-1)
						case tplBatchPlain:
							want = fmt.Appendf(want, "inv(%s)", run)
						default:
							b, _ = tr.argTP(b, out)
							b = argNum(b, n3)
							if k == tplBatchProduced {
								want = fmt.Appendf(want, "inv(%s) written to %s at offsets %d..%d", run, out, n3, n3+int64(count)-1)
							} else {
								want = fmt.Appendf(want, "inv(%s) at offsets %d..%d", run, n3, n3+int64(count)-1)
							}
						}
					case tplProcessed: // a text read with no event: %m is ""
						b, _ = tr.argTP(encTemplate(b, k), in)
						b = argOffset(b, off)
						want = fmt.Appendf(want, " processed %s", layout.Name(in, off))
					case tplProcessedRun: // a run of 1 to 40 records: spelled up to spellRunMax, a range past it
						n := 1 + r.Intn(40)
						b, _ = tr.argTP(encTemplate(b, k), in)
						b = argOffset(argOffset(b, off), n)
						names := make([]string, n)
						for j := range names {
							names[j] = layout.Name(in, off+j)
						}
						if n > spellRunMax {
							names = []string{names[0] + ".." + names[n-1]}
						}
						want = fmt.Appendf(want, " processed %s", strings.Join(names, " "))
					case tplInput:
						b, _ = tr.argTP(argNum(encTemplate(b, k), n2), in)
						b = argOffset(argOffset(b, off), off+int(n3))
						want = fmt.Appendf(want, "%d records appended to %s (%s..%s)", n2, in, layout.Name(in, off), layout.Name(in, off+int(n3)))
					case tplInputOne:
						b, _ = tr.argTP(argNum(encTemplate(b, k), 1), in)
						b = argOffset(b, off)
						want = fmt.Appendf(want, "1 record appended to %s (%s)", in, layout.Name(in, off))
					}
				}
				if k == 0 {
					recAt = len(b)
				}
			}
			ref, tail := tr.addTextTail(b, recAt)
			if got := tr.text(ref); got != string(want) {
				t.Fatalf("%s: encoded %x formats as %q, want %q", tpl.Output.Name, b, got, want)
			}
			if tr.text(tail) != tr.text(ref)[len(tr.text(ref))-len(tr.text(tail)):] {
				t.Fatalf("the tail of %q formats as %q", tr.text(ref), tr.text(tail))
			}
		}
		// A fetch's records, runs in one partition as one token: formatted
		// spaced up to spellRunMax records and as a range past it, and
		// read back one name per record (Event.Records).
		for i := 0; i < 300; i++ {
			var recs []wire.Record
			var want, words []string
			// a third: one record of each of many partitions, near one
			// offset (a Fetch answer at 1 record a second a partition,
			// tRecordSeq), a few of them by another's number or value
			single, base, next := i%3 == 0, r.Intn(1<<20), r.Intn(len(layout.Inputs()))
			for limit := r.Intn(12) + btoi(single)*r.Intn(150); len(recs) < limit; {
				tp := layout.Inputs()[r.Intn(len(layout.Inputs()))]
				off := r.Intn(1 << 20)
				if single {
					next = (next + 1 + r.Intn(2)*r.Intn(5)) % len(layout.Inputs())
					tp, off = layout.Inputs()[next], base+r.Intn(3)
				}
				for k := 0; k < 1+r.Intn(300)*(1-btoi(single)) && len(recs) < 400; k++ {
					f := wire.Record{TP: tp, Offset: off + k, Named: true}
					if tpi, ok := layout.Number(tp); ok && r.Intn(8*(1+10*btoi(single))) > 0 {
						f.TPI = int32(tpi + 1)
					}
					if r.Intn(40) == 0 { // a value of its own: an input record is still shown by its name
						f.Named, f.Value = false, "v"+strconv.Itoa(k)
					}
					recs, want = append(recs, f), append(want, layout.Name(tp, off+k))
				}
			}
			// The words: a run is the records that follow each other in one
			// input partition whose number the records carry.
			for i := 0; i < len(recs); {
				j := i + 1
				for recs[i].TPI > 0 && j < len(recs) && recs[j].TPI == recs[i].TPI && recs[j].Offset == recs[i].Offset+j-i {
					j++
				}
				if j-i > spellRunMax {
					words = append(words, want[i]+".."+want[j-1])
				} else {
					words = append(words, want[i:j]...)
				}
				i = j
			}
			b := append(encLit(tr.scratch[:0], "C1"), phPolled)
			at := len(b)
			ref, tail := tr.addTextTail(tr.encFetchedList(b, recs), at)
			if got := tr.text(ref); got != "C1 poll() returned "+strings.Join(words, " ") {
				t.Fatalf("records %v format as %q", words, got)
			}
			if got := (Records{tx: &tr.texts, b: tr.arena.bytes(tail)}).Names(); !slices.Equal(got, want) && len(want) > 0 {
				t.Fatalf("records %v read back as %v", want, got)
			}
			// poll() returning a whole Fetch answer: its event refers to
			// the answer's text (tListOf) and reads as if it spelled it,
			// its Records too; one returning part of it spells its own
			if len(recs) == 0 {
				continue
			}
			answer := tr.FetchAnswer(recs)
			for _, ref := range []wire.TextRef{answer, 0} {
				tr.Polled(Label{Client: "C1"}, recs, ref)
				ev := tr.Events.At(tr.Events.Len() - 1)
				if want := "C1 poll() returned " + strings.Join(words, " "); ev.Text != want || ev.Kind != EvPolled || ev.Member != "C1" {
					t.Fatalf("poll() of a fetch answer (text %d) reads %s %s %q, want C1 %s %q", ref, ev.Member, ev.Kind, ev.Text, EvPolled, want)
				}
				if got := ev.Records.Names(); !slices.Equal(got, want) || !ev.Records.Has(want[len(want)-1]) || ev.Records.String() != strings.Join(words, " ") {
					t.Fatalf("poll() of a fetch answer (text %d): records %v read back as %v (%q)", ref, want, got, ev.Records.String())
				}
				b := tr.arena.bytes(tr.Events.recs.text(tr.Events.Len() - 1))
				if refers := slices.Contains(b[:min(len(b), 4)], tListOf); refers != (ref != 0) {
					t.Fatalf("poll() of a fetch answer (text %d): refers to it %v: % x", ref, refers, b[:min(len(b), 8)])
				}
			}
		}
		// A text that is one template, kept without its tEnd (addWhole),
		// formats the same and ends where its arguments end: the text
		// written right after it is not read into it.
		for i := 0; i < 200; i++ {
			in := layout.Inputs()[r.Intn(len(layout.Inputs()))]
			out := layout.Outputs()[r.Intn(len(layout.Outputs()))]
			off, n := r.Intn(1<<20), r.Int63n(1<<20)
			var b []byte
			var want string
			switch r.Intn(3) {
			case 0:
				b, _ = tr.argTP(encTemplate(tr.scratch[:0], tplProduce), in)
				b = argNum(argNum(argNum(argOffset(b, off), n), 0), n+1)
				want = fmt.Sprintf("inv(%s) pid %d epoch 0 seq %d", layout.Name(in, off), n, n+1)
			case 1:
				b, _ = tr.argTP(encTemplate(tr.scratch[:0], tplProduced), in)
				b, _ = tr.argTP(argOffset(b, off), out)
				b = argNum(b, n)
				want = fmt.Sprintf("inv(%s) written to %s at offset %d", layout.Name(in, off), out, n)
			default:
				b, _ = tr.argTP(encTemplate(tr.scratch[:0], tplProduceAck), in)
				b, _ = tr.argTP(argOffset(b, off), out)
				b = argNum(b, n)
				want = fmt.Sprintf("inv(%s) at offset %d", layout.Name(in, off), n)
			}
			ref := tr.addWhole(b)
			next := tr.addText(encLit(tr.scratch[:0], "next"))
			if got := tr.text(ref); got != want || tr.text(next) != "next" {
				t.Fatalf("whole template formats as %q then %q, want %q then \"next\"", got, tr.text(next), want)
			}
		}
	}
}

// A text encoded in the arena's spare room is kept in place; a clone, whose
// copy of the open chunk has no spare room, encodes elsewhere, so neither
// trace's texts change when the other adds its own, in place or not.
func TestArenaTextsInPlaceAndClones(t *testing.T) {
	defer func(a int) { arenaChunk = a }(arenaChunk)
	copied, closed := map[int]bool{}, map[int]bool{}
	for _, chunk := range []int{40, 1 << arenaShift} {
		arenaChunk = chunk
		var tick, cloneTick int
		tr := newTestTrace(t, topo.Default(), &tick, nil)
		var refs []textRef
		var want []string
		add := func(tr *Trace, s string) (textRef, bool) {
			b := encLit(tr.scratch[:0], s)
			inPlace := tr.arena.inSpare(b) && cap(b) > len(b)
			return tr.addText(b), inPlace
		}
		placed := 0
		for i := 0; i < 3000; i++ { // past the first chunk, which starts small
			s := strings.Repeat(string(rune('a'+i%26)), 1+i%7)
			ref, in := add(tr, s)
			if in {
				placed++
			}
			refs, want = append(refs, ref), append(want, s)
		}
		if (placed > 0) != (chunk >= 2*spillMin) { // a small chunk never has spillMin bytes of room
			t.Fatalf("chunk %d: %d texts kept in place", chunk, placed)
		}
		c := tr.Clone(&cloneTick, nil, nil)
		if len(c.arena.spare()) != 0 || cap(c.arena.spare()) != 0 {
			t.Fatalf("chunk %d: the clone has %d bytes of spare room in a shared chunk", chunk, cap(c.arena.spare()))
		}
		// The clone's first text copies a short shared open chunk (at most
		// cloneChunk bytes) into one of its own under the same number; a
		// longer one it closes as it is (a short full chunk, not copied)
		// and goes on in a chunk of its own, the next.
		shared, nFull := tr.arena.open, len(c.arena.full)
		first, _ := add(c, "clone-first")
		if unsafe.SliceData(c.arena.open) == unsafe.SliceData(shared) {
			t.Fatalf("chunk %d: the clone's first text is in the shared chunk", chunk)
		}
		if len(shared) <= cloneChunk {
			copied[chunk] = true
			if len(c.arena.full) != nFull || int(first>>arenaShift) != nFull || string(c.arena.open[:len(shared)]) != string(shared) {
				t.Fatalf("chunk %d: the clone's first text did not copy the short shared open chunk (%d bytes) under its number", chunk, len(shared))
			}
		} else {
			closed[chunk] = true
			if last := c.arena.full[nFull]; len(c.arena.full) != nFull+1 || len(last) != len(shared) ||
				unsafe.SliceData(last) != unsafe.SliceData(shared) {
				t.Fatalf("chunk %d: the clone's first text did not close the shared open chunk uncopied", chunk)
			}
			if int(first>>arenaShift) != nFull+1 {
				t.Fatalf("chunk %d: the clone's first text is not in the next chunk", chunk)
			}
		}
		var cw, ww []textRef
		for i := 0; i < 30; i++ {
			r1, _ := add(tr, "orig"+strconv.Itoa(i))
			r2, _ := add(c, "clone"+strconv.Itoa(i))
			ww, cw = append(ww, r1), append(cw, r2)
		}
		if c.text(first) != "clone-first" {
			t.Fatalf("chunk %d: the clone's first text reads %q", chunk, c.text(first))
		}
		for i, ref := range refs {
			if tr.text(ref) != want[i] || c.text(ref) != want[i] {
				t.Fatalf("chunk %d: shared text %d reads %q / %q, want %q", chunk, i, tr.text(ref), c.text(ref), want[i])
			}
		}
		for i := range ww {
			if tr.text(ww[i]) != "orig"+strconv.Itoa(i) || c.text(cw[i]) != "clone"+strconv.Itoa(i) {
				t.Fatalf("chunk %d: text %d reads %q / %q", chunk, i, tr.text(ww[i]), c.text(cw[i]))
			}
		}
	}
	if len(copied) == 0 || len(closed) == 0 {
		t.Errorf("the clones copied a short shared chunk at chunk sizes %v and closed a long one at %v: both must be tried", copied, closed)
	}
}

// TestProcessedRuns: a processed event of a run reads as its records,
// spelled one by one up to spellRunMax and as first..last past it, for a
// member's newest process and an old one; its Records hold the run (Has
// by containment, Len, All, String as the text spells it) without a name
// per record, and a run of one is the template of one record.
func TestProcessedRuns(t *testing.T) {
	var now int
	tr := newTestTrace(t, topo.Default(), &now, nil)
	tp := tr.layout.Inputs()[1]
	tpi, _ := tr.layout.Number(tp)
	for _, c := range []struct {
		who   Label
		off   int
		n     int
		words string
	}{
		{Label{Client: "C1"}, 7, 1, "o1.7"},
		{Label{Client: "C1"}, 7, 3, "o1.7 o1.8 o1.9"},
		{Label{Client: "C2"}, 0, spellRunMax, "o1.0 o1.1 o1.2 o1.3 o1.4 o1.5 o1.6 o1.7 o1.8 o1.9 o1.10 o1.11 o1.12 o1.13 o1.14 o1.15"},
		{Label{Client: "C2"}, 3, spellRunMax + 1, "o1.3..o1.19"},
		{Label{Client: "C3", Process: 1}, 100, 1_000_000, "o1.100..o1.1000099"},
	} {
		if tp.Topic != "orders" || tp.Partition != 1 {
			t.Fatalf("input 1 is %s, want orders-1", tp)
		}
		f := wire.Record{TP: tp, Offset: c.off, Named: true, TPI: int32(tpi + 1), Count: c.n}
		tr.Processed(c.who, &f)
		e := tr.Events.At(tr.Events.Len() - 1)
		if want := c.who.String() + " processed " + c.words; e.Text != want || e.Kind != EvProcessed || e.Member != c.who.Client {
			t.Errorf("run of %d from %d: %s %s %q, want %q", c.n, c.off, e.Kind, e.Member, e.Text, want)
		}
		if e.Records.Len() != c.n || e.Records.String() != c.words {
			t.Errorf("run of %d from %d: Records of %d, %q", c.n, c.off, e.Records.Len(), e.Records.String())
		}
		for _, probe := range []struct {
			off  int
			want bool
		}{{c.off - 1, false}, {c.off, true}, {c.off + c.n - 1, true}, {c.off + c.n, false}} {
			if probe.off < 0 {
				continue
			}
			if got := e.Records.Has(tr.layout.Name(tp, probe.off)); got != probe.want {
				t.Errorf("run of %d from %d: Has(%s) = %v", c.n, c.off, tr.layout.Name(tp, probe.off), got)
			}
		}
		if e.Records.Has("o1.0"+strconv.Itoa(c.off)) || e.Records.Has(tr.layout.Name(tr.layout.Inputs()[0], c.off)) {
			t.Errorf("run of %d from %d: holds a name that is not one of its records", c.n, c.off)
		}
		if c.n <= spellRunMax {
			if got := strings.Join(e.Records.Names(), " "); got != c.words {
				t.Errorf("run of %d from %d: names %q", c.n, c.off, got)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTokensDoNotOverlap: every token byte means one thing (the decoder
// dispatches on ranges: the fixed tokens, the phrases, tOffsetsRunsRot, tRecordSeq,
// tSrcRunsLike, tListOf and tSrcRuns below the templates, the numbers,
// the whole templates).
func TestTokensDoNotOverlap(t *testing.T) {
	if tOffsetsRuns >= tPhrase || tPhrase+len(phrases) > tOffsetsRunsRot || tOffsetsRunsRot >= tRecordSeq || tRecordSeq >= tSrcRunsLike || tSrcRunsLike >= tListOf || tListOf >= tSrcRuns || tSrcRuns >= tTemplate ||
		tTemplate+len(templates) > tNum || tNum+len(phrases) > tWhole || tWhole+len(templates) > 256 {
		t.Fatalf("token ranges overlap: phrases %d..%d, tOffsetsRunsRot %d, tRecordSeq %d, tSrcRunsLike %d, tListOf %d, tSrcRuns %d, templates %d..%d, numbers %d..%d, whole %d..%d",
			tPhrase, tPhrase+len(phrases), tOffsetsRunsRot, tRecordSeq, tSrcRunsLike, tListOf, tSrcRuns, tTemplate, tTemplate+len(templates), tNum, tNum+len(phrases), tWhole, tWhole+len(templates))
	}
}
