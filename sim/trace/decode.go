package trace

import (
	"encoding/binary"
	"strconv"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Decoding. The arena holds only what the encoders wrote; still, a token
// that does not parse ends the text rather than panicking.

// textReader walks the tokens of one text.
type textReader struct {
	tx     *texts
	b      []byte
	member string // the event's member, for %m ("" in a packet's text)
	// ref is b's first byte's place in the arena and n its length, so
	// that a token's place is known (%b counts back from it); ref 0 when
	// not known (a %b then does not parse).
	ref textRef
	n   int
	tok textRef // the place of the token being read (next)
	// depth is how many references (tListOf, tSame) were followed to
	// reach this text: past maxRefDepth a reference is refused, so bytes
	// whose references lead back to themselves end (FuzzTextDecode) as
	// the one-step checks (a reference to a reference) could not ensure.
	depth uint8
}

// maxRefDepth is the most references a reader follows in a row. The
// encoders' texts need one at most (every test passes with 1, and fails
// with 0); 8 leaves room for a later encoder's.
const maxRefDepth = 8

// readerAt is a reader of the text at ref.
func (tx *texts) readerAt(ref textRef, member string) textReader {
	b := tx.arena.bytes(ref)
	return textReader{tx: tx, b: b, member: member, ref: ref, n: len(b)}
}

// at is the place in the arena of the next byte to read (0: not known).
func (r *textReader) at() textRef {
	if r.ref == 0 {
		return 0
	}
	return r.ref + textRef(r.n-len(r.b))
}

func (r *textReader) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return v, true
}

// varint reads a zigzag varint.
func (r *textReader) varint() (int64, bool) {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return v, true
}

func (r *textReader) tp() (wire.TopicPartition, bool) {
	tp, _, ok := r.tpNumbered()
	return tp, ok
}

// tpNumbered reads an input partition's number: the partition and the
// number.
func (r *textReader) tpNumbered() (wire.TopicPartition, int, bool) {
	i, ok := r.uvarint()
	if !ok {
		return wire.TopicPartition{}, 0, false
	}
	tp, _, ok := r.tx.layout.Numbered(i)
	return tp, int(i), ok
}

// recordRun reads a tRecords token's arguments: the partition, the first
// offset, the count, and the partition's number.
func (r *textReader) recordRun() (wire.TopicPartition, int, int, int, bool) {
	tp, part, ok := r.tpNumbered()
	off, ok2 := r.uvarint()
	n, ok3 := r.uvarint()
	if !ok || !ok2 || !ok3 || off > 1<<62 || n > maxRun {
		return wire.TopicPartition{}, 0, 0, 0, false
	}
	return tp, int(off), int(n), part, true
}

// maxRun is the most records one tRecords token holds.
const maxRun = 255

// next appends the next token's text to out; false at tEnd or on bytes
// that do not parse. It dispatches on the token; each kind's arguments are
// read by a method of its own, which reports whether they parsed.
func (r *textReader) next(out []byte) ([]byte, byte, bool) {
	if len(r.b) == 0 {
		return out, tEnd, false
	}
	r.tok = r.at()
	tok := r.b[0]
	r.b = r.b[1:]
	ok := true
	switch {
	case tok == tEnd:
		return out, tEnd, false
	case tok == tLit:
		out, ok = r.lit(out)
	case tok == tShort, tok == tPart:
		out, ok = r.partition(out, tok == tShort)
	case tok == tRecord:
		out, ok = r.record(out)
	case tok == tRecords:
		out, ok = r.records(out)
	case tok == tRange:
		out, ok = r.rangeText(out)
	case tok == tSrcRuns:
		out, ok = r.srcRuns(out)
	case tok == tSrcRunsLike:
		out, ok = r.srcRunsLike(out)
	case tok == tOffsets:
		out, ok = r.offsets(out)
	case tok == tOffsetsRot:
		out, ok = r.offsetsRot(out)
	case tok == tPartList:
		out, ok = r.partList(out)
	case tok == tPartRuns:
		out, ok = r.partRuns(out)
	case tok == tOffsetsRuns:
		out, ok = r.offsetsRuns(out)
	case tok == tOffsetsRunsRot:
		out, ok = r.offsetsRunsRot(out)
	case tok == tParty, tok == tMember:
		out, ok = r.party(out, tok == tMember)
	case tok == tSame, tok == tSameBack:
		out, ok = r.same(out, tok == tSameBack)
	case tok == tListOf:
		out, ok = r.listOf(out)
	case tok == tRecordSeq:
		ok = r.recordSeq(func(tp wire.TopicPartition, _ int, off int) {
			out = r.tx.layout.AppendName(out, tp, off)
		}, func() { out = append(out, ' ') })
	case tok >= tPhrase && int(tok-tPhrase) < len(phrases):
		out = append(out, phrases[tok-tPhrase]...)
	case tok >= tTemplate && int(tok-tTemplate) < len(templates):
		return r.template(out, templates[tok-tTemplate], tok)
	case tok >= tWhole && int(tok-tWhole) < len(templates):
		out, _, _ = r.template(out, templates[tok-tWhole], tok)
		return out, tEnd, false
	case tok >= tNum && int(tok-tNum) < len(phrases):
		out, ok = r.num(out, phrases[tok-tNum])
	default:
		ok = false
	}
	if !ok {
		return out, tEnd, false
	}
	return out, tok, true
}

// recordSeq reads a tRecordSeq token's records, calling rec for each
// (its partition, number and offset) and space between two.
func (r *textReader) recordSeq(rec func(tp wire.TopicPartition, part, off int), space func()) bool {
	n, ok := r.uvarint()
	if !ok || n == 0 || n > uint64(len(r.b)) {
		return false
	}
	part, off := int64(0), int64(0)
	for i := uint64(0); i < n; i++ {
		dp, ok := r.varint()
		do, ok2 := r.varint()
		if !ok || !ok2 {
			return false
		}
		part, off = part+dp, off+do
		if part < 0 || off < 0 || off > 1<<62 {
			return false
		}
		tp, _, ok := r.tx.layout.Numbered(uint64(part))
		if !ok {
			return false
		}
		if i > 0 {
			space()
		}
		rec(tp, int(part), int(off))
	}
	return true
}

// lit reads a tLit token: its bytes as they are.
func (r *textReader) lit(out []byte) ([]byte, bool) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return out, false
	}
	out = append(out, r.b[:n]...)
	r.b = r.b[n:]
	return out, true
}

// partition reads a tShort (short) or tPart token: o2 or orders-2.
func (r *textReader) partition(out []byte, short bool) ([]byte, bool) {
	tp, ok := r.tp()
	if !ok {
		return out, false
	}
	if short {
		return r.tx.layout.AppendShortName(out, tp), true
	}
	return topo.AppendPartition(out, tp), true
}

// record reads a tRecord token: o2.3.
func (r *textReader) record(out []byte) ([]byte, bool) {
	tp, ok := r.tp()
	off, ok2 := r.uvarint()
	if !ok || !ok2 || off > 1<<62 {
		return out, false
	}
	return r.tx.layout.AppendName(out, tp, int(off)), true
}

// srcRuns reads a tSrcRuns token: inv(o0.3..o0.9, o1.4..o1.12: 3, o2.5).
func (r *textReader) srcRuns(out []byte) ([]byte, bool) {
	n, ok := r.uvarint()
	if !ok || n < 2 || n > uint64(len(r.b)) {
		return out, false
	}
	out = append(out, "inv("...)
	var part, first int64 // the run before's (encSrcRuns: each run's are differences from them)
	for i := uint64(0); i < n; i++ {
		dp, ok := r.varint()
		df, ok2 := r.varint()
		span, ok3 := r.uvarint()
		k, ok4 := r.uvarint()
		part, first = part+dp, first+df
		tp, _, ok5 := r.tx.layout.Numbered(uint64(part))
		off := uint64(first)
		if !ok || !ok2 || !ok3 || !ok4 || !ok5 || part < 0 || first < 0 || off > 1<<62 || span > 1<<62 || k == 0 || k > span+1 {
			return out, false
		}
		out = appendSrcRun(out, r.tx.layout, i, tp, off, span, k)
	}
	return append(out, ')'), true
}

// srcRunsLike reads a tSrcRunsLike token: the partitions and first
// offsets of the tSrcRuns token it refers to, each first offset moved by
// its difference, spelled as srcRuns spells them.
func (r *textReader) srcRunsLike(out []byte) ([]byte, bool) {
	ref, ok := r.uvarint()
	if !ok || ref == 0 || ref > maxTextRef {
		return out, false
	}
	followed("tSrcRunsLike", r.tok, textRef(ref))
	base := r.tx.readerAt(textRef(ref), "")
	if len(base.b) == 0 || base.b[0] != tSrcRuns {
		return out, false
	}
	base.b = base.b[1:]
	n, ok := base.uvarint()
	if !ok || n < 2 || n > uint64(len(base.b)) {
		return out, false
	}
	out = append(out, "inv("...)
	var part, first int64 // the base's run before's
	for i := uint64(0); i < n; i++ {
		dp, ok := base.varint()
		df, ok2 := base.varint()
		_, ok3 := base.uvarint()
		_, ok4 := base.uvarint()
		d, span, k, ok5, ok6, ok7 := int64(0), uint64(0), uint64(0), true, true, true
		if len(r.b) >= 2 && r.b[0]&likePacked != 0 { // two bytes (encLike)
			zz := uint64(r.b[0] &^ likePacked)
			d, span, k = int64(zz>>1)^-int64(zz&1), uint64(r.b[1]>>4), uint64(r.b[1]&15)
			r.b = r.b[2:]
		} else {
			d, ok5 = r.varint()
			span, ok6 = r.uvarint()
			k, ok7 = r.uvarint()
		}
		part, first = part+dp, first+df
		tp, _, ok8 := r.tx.layout.Numbered(uint64(part))
		off := first + d
		if !ok || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || !ok8 || part < 0 || off < 0 || off > 1<<62 || span > 1<<62 || k == 0 || k > span+1 {
			return out, false
		}
		out = appendSrcRun(out, r.tx.layout, i, tp, uint64(off), span, k)
	}
	return append(out, ')'), true
}

// appendSrcRun spells the i-th run of a batch's value: its first record's
// name, and ..its last and ": count" as a batch of one run spells them.
func appendSrcRun(out []byte, l *topo.Layout, i uint64, tp wire.TopicPartition, off, span, k uint64) []byte {
	if i > 0 {
		out = append(out, ", "...)
	}
	out = l.AppendName(out, tp, int(off))
	if k == 1 {
		return out
	}
	out = l.AppendName(append(out, ".."...), tp, int(off+span))
	if k != span+1 {
		out = strconv.AppendUint(append(out, ": "...), k, 10)
	}
	return out
}

// records reads a tRecords token: o2.3 o2.4 o2.5.
func (r *textReader) records(out []byte) ([]byte, bool) {
	tp, off, n, _, ok := r.recordRun()
	if !ok {
		return out, false
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			out = append(out, ' ')
		}
		out = r.tx.layout.AppendName(out, tp, off+i)
	}
	return out, true
}

// party reads a tParty token (a client id: C1) or a tMember one (member,
// a member id: C1-4).
func (r *textReader) party(out []byte, member bool) ([]byte, bool) {
	i, ok := r.uvarint()
	if !ok || i >= uint64(len(r.tx.parties.names)) {
		return out, false
	}
	out = append(out, r.tx.parties.names[i].name...)
	if member {
		n, ok := r.uvarint()
		if !ok {
			return out, false
		}
		out = strconv.AppendUint(append(out, '-'), n, 10)
	}
	return out, true
}

// same reads a tSame token, or a tSameBack one (back): the one token it
// refers to, as it reads there.
func (r *textReader) same(out []byte, back bool) ([]byte, bool) {
	ref, ok := r.uvarint()
	if back {
		at, ok2 := r.back(ref)
		if !ok || !ok2 {
			return out, false
		}
		ref = uint64(at)
	}
	if !ok || ref > maxTextRef {
		return out, false
	}
	if !back {
		followed("tSame", r.tok, textRef(ref))
	}
	at := r.tx.readerAt(textRef(ref), "")
	if at.depth = r.depth + 1; at.depth > maxRefDepth || len(at.b) == 0 || at.b[0] == tSame || at.b[0] == tSameBack {
		return out, false // a reference to a reference could loop
	}
	out, _, ok = at.next(out)
	return out, ok
}

// listOf reads a tListOf token: every token of the text it refers to.
func (r *textReader) listOf(out []byte) ([]byte, bool) {
	at, ok := r.listRef()
	if !ok {
		return out, false
	}
	for ok := true; ok; {
		out, _, ok = at.next(out)
	}
	return out, true
}

// listRef reads a tListOf token's reference: a reader of the text there,
// refused when that is a tListOf itself (a reference to a reference could
// loop).
func (r *textReader) listRef() (textReader, bool) {
	ref, ok := r.uvarint()
	if !ok || ref == 0 || ref > maxTextRef {
		return textReader{}, false
	}
	followed("tListOf", r.tok, textRef(ref))
	at := r.tx.readerAt(textRef(ref), r.member)
	at.depth = r.depth + 1
	return at, at.depth <= maxRefDepth && len(at.b) > 0 && at.b[0] != tListOf
}

// num reads a tNum+k token: its phrase and then its number.
func (r *textReader) num(out []byte, phrase string) ([]byte, bool) {
	v, ok := r.varint()
	if !ok {
		return out, false
	}
	return strconv.AppendInt(append(out, phrase...), v, 10), true
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return tEnd
	}
	return b[0]
}

// template formats one template token's text from its arguments.
func (r *textReader) template(out []byte, tpl string, tok byte) ([]byte, byte, bool) {
	var tp wire.TopicPartition
	var cur uint64       // %c's offset
	var num, count int64 // the last %n's number, %R's count
	for i := 0; i < len(tpl); i++ {
		if tpl[i] != '%' || i+1 == len(tpl) {
			out = append(out, tpl[i])
			continue
		}
		i++
		switch tpl[i] {
		case 'n':
			v, ok := r.varint()
			if !ok {
				return out, tEnd, false
			}
			num = v
			out = strconv.AppendInt(out, v, 10)
		case 'l':
			out = strconv.AppendInt(out, num+count-1, 10)
		case 'R':
			off, ok := r.uvarint()
			span, ok2 := r.uvarint()
			n, ok3 := r.uvarint()
			if !ok || !ok2 || !ok3 || off > 1<<62 || span > 1<<62 || n == 0 || n > span+1 || tp.Topic == "" {
				return out, tEnd, false
			}
			count = int64(n)
			out = append(r.tx.layout.AppendName(out, tp, int(off)), ".."...)
			out = r.tx.layout.AppendName(out, tp, int(off+span))
			if n != span+1 {
				out = strconv.AppendUint(append(out, ": "...), n, 10)
			}
		case 't':
			var ok bool
			if tp, ok = r.tp(); !ok {
				return out, tEnd, false
			}
		case 'p':
			out = topo.AppendPartition(out, tp)
		case 'c':
			i, ok := r.uvarint()
			off, ok2 := r.uvarint()
			src, srcOff, ok3 := r.invoiceSource(i, off)
			if !ok || !ok2 || !ok3 {
				return out, tEnd, false
			}
			tp, _, _ = r.tx.layout.Numbered(i)
			cur = off
			out = r.tx.layout.AppendName(out, src, srcOff)
		case 'o':
			out = strconv.AppendUint(out, cur, 10)
		case 'm':
			out = append(out, r.member...)
		case 'q':
			d, ok := r.uvarint()
			dseq, ok3 := r.varint()
			at, ok2 := r.back(d)
			if !ok || !ok3 || !ok2 {
				return out, tEnd, false
			}
			pid, epoch, seq, ok := r.produceHead(at)
			if !ok {
				return out, tEnd, false
			}
			out = strconv.AppendInt(append(out, " pid "...), pid, 10)
			out = strconv.AppendInt(append(out, " epoch "...), epoch, 10)
			out = strconv.AppendInt(append(out, " seq "...), seq+dseq, 10)
		case 'b':
			d, ok := r.uvarint()
			var off uint64
			if tp, off, ok = r.processedAt(d, ok); !ok {
				return out, tEnd, false
			}
			out = r.tx.layout.AppendName(out, tp, int(off))
		case 'u':
			off, ok := r.uvarint()
			n, ok2 := r.uvarint()
			if !ok || !ok2 || off > 1<<62 || n == 0 || n > 1<<62 || tp.Topic == "" {
				return out, tEnd, false
			}
			out = appendRun(out, r.tx.layout, tp, int(off), int(n))
		case 'r':
			off, ok := r.uvarint()
			if !ok || off > 1<<62 || tp.Topic == "" {
				return out, tEnd, false
			}
			out = r.tx.layout.AppendName(out, tp, int(off))
		}
	}
	return out, tok, true
}

// back is the text d bytes before the token being read: the read side of
// textArena.inChunk. A back reference is valid only when it points at an
// earlier text of the same arena chunk (d from 1 to the token's place in
// its chunk), which is what every writer of one checked.
func (r *textReader) back(d uint64) (textRef, bool) {
	if r.tok == 0 || d == 0 || d > uint64(r.tok&(1<<arenaShift-1)) {
		return 0, false
	}
	followed("back", r.tok, r.tok-textRef(d))
	return r.tok - textRef(d), true
}

// processedAt reads the record of the tplProcessed text d bytes back from
// the token being read (%b): false unless it is one, in the same chunk.
func (r *textReader) processedAt(d uint64, ok bool) (wire.TopicPartition, uint64, bool) {
	ref, ok2 := r.back(d)
	if !ok || !ok2 {
		return wire.TopicPartition{}, 0, false
	}
	b := r.tx.arena.bytes(ref)
	if firstByte(b) != tWhole+tplProcessed {
		return wire.TopicPartition{}, 0, false
	}
	at := textReader{tx: r.tx, b: b[1:]}
	tp, ok := at.tp()
	off, ok2 := at.uvarint()
	if !ok || !ok2 || off > 1<<62 || tp.Topic == "" {
		return wire.TopicPartition{}, 0, false
	}
	return tp, off, true
}

// invoiceSource is the source of the invoice at offset off of the log
// numbered i (topo.Layout.Number), an input record; false for any other
// cell (or with no logs to read).
func (r *textReader) invoiceSource(i, off uint64) (wire.TopicPartition, int, bool) {
	if r.tx.sources == nil {
		return wire.TopicPartition{}, 0, false
	}
	return r.tx.sources.InvoiceSource(i, off)
}

// produceHead is the producer id, epoch and sequence number of the
// produce text at ref, one that spells them (tplProduce, tplProduceAfter);
// false for any other text.
func (r *textReader) produceHead(ref textRef) (pid, epoch, seq int64, ok bool) {
	b := r.tx.arena.bytes(ref)
	at := textReader{tx: r.tx, b: b[min(len(b), 1):]}
	switch firstByte(b) {
	case tWhole + tplProduce:
		_, ok1 := at.uvarint() // the record: partition and offset
		_, ok2 := at.uvarint()
		ok = ok1 && ok2
	case tWhole + tplProduceAfter:
		_, ok = at.uvarint() // the distance back to the processed event
	}
	for _, v := range []*int64{&pid, &epoch, &seq} {
		var ok2 bool
		if *v, ok2 = at.varint(); !ok2 {
			return 0, 0, 0, false
		}
	}
	return pid, epoch, seq, ok
}
