package trace

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The trace's texts (packet summaries, event texts, the record names an
// event is about) are kept as a small encoding in a byte arena and formatted
// only when a view reads them: a world keeps millions, a view shows a few
// hundred. The frequent ones (fetches, produces, commits, polled, processed)
// store their arguments (a record as topic, partition and offset; a number
// as a varint) and cost a few bytes; rare ones store their text as a string.
//
// The texts are kgrepl's own trace formats (the `trace` view, the event
// lines); partitions are spelled as Kafka's tools print a TopicPartition
// (orders-2) or the seed's short way (o2).
//
// A text is a run of tokens ended by tEnd. Each token formats one piece:
//
//	tLit n bytes          the bytes as they are
//	tShort tp             a partition as the seed names it: o2 (orders-2 when the topics are not the default ones)
//	tPart tp              a partition as Kafka's tools print it: orders-2
//	tRecord tp off        an input record: o2.3 (World.RecordName)
//	tRecords tp off n     n input records from off on, spaced: o2.3 o2.4 o2.5
//	tOffsets n (tp off)*  committed positions: o0@3 o1@5, each off the
//	                      difference from the one before (the first's from
//	                      0): a member's positions are usually close
//	tPartList n tp*       partitions the seed's way: {o0 o1 p0} (partList)
//	tParty party          a client id (World.parties): C1
//	tMember party n       a member id, client-n: C1-4
//	tPhrase+k             phrases[k], a fixed piece of a frequent text
//	tTemplate+k args      templates[k] filled with its arguments (the
//	                      most frequent texts, whole: a produce, its answer)
//	tWhole+k args         the same, and the text ends there (no tEnd):
//	                      a text that is one template (World.addWhole)
//	tNum+k n              phrases[k] and then the number n: " pid 1004"
//	tSame ref             the one token at ref (an absolute textRef) as
//	                      it reads there: a committed event's offsets are
//	                      its OffsetCommit request's (never a tSame itself)
//	tSameBack d           tSame for the token d bytes back in the same
//	                      arena chunk (1 or 2 bytes where tSame's absolute
//	                      ref takes 4 or 5): a committed event's offsets,
//	                      its request's a tick before (World.encSameAt)
//	tOffsetsRot d k       the tOffsets token d bytes back in the same arena
//	                      chunk, its positions read from the k-th on and
//	                      then from the first: a fetch's positions are its
//	                      commit's, just before, in the fetch's rotating
//	                      order (World.encOffsets)
//
// tp numbers the world's partitions: its input partitions in inputTPs'
// (sorted) order, then the output topic's (one byte up to 128
// partitions); every number is a varint. A reference into the arena (textRef) may point at any token of
// a text, not only its first:
// a polled event's Records point at the record tokens of its own text, and a
// commit's answer at the offsets token of its committed event, so what two
// views show of one fact is stored once.
const (
	tEnd byte = iota
	tLit
	tShort
	tPart
	tRecord
	tOffsets
	tParty
	tMember
	tPartList
	tRecords
	tSame
	tOffsetsRot
	tSameBack
	tPhrase   = 16
	tTemplate = 96
	tNum      = 128
	tWhole    = 160
)

// templates are the most frequent texts whole, their arguments read in
// order: %n a number (zigzag varint), %t a partition number (tp) that
// prints nothing and becomes the current partition, %b a distance back
// (uvarint) from the template's token to a tplProcessed text in the same
// arena chunk, whose record it prints (as %t%r would: its partition
// becomes the current one), %q a distance back (uvarint) from the
// template's token to a produce text with its producer id, epoch and
// sequence number spelled (tplProduce, tplProduceAfter) in the same chunk
// and a sequence number difference (zigzag varint), printed as " pid %n
// epoch %n seq %n" with that producer id and epoch and that sequence
// number plus the difference, %p the current
// partition as Kafka's tools print it (orders-2), %r an offset (uvarint),
// printed as the current partition's input record (o2.3), %c a partition
// number and an offset (uvarint) that become the current partition and
// offset, printed as the source of the invoice its log holds there
// (CellLog.sourceRef), %o the current offset, %m the event's member (a
// text of an event only: EventLog.At reads it with its member).
var templates = [...]string{
	tplProduce:        "inv(%t%r) pid %n epoch %n seq %n",
	tplProduced:       "inv(%t%r) written to %t%p at offset %n",
	tplProduceAck:     "inv(%t%r)%t at offset %n",
	tplInput:          "%n records appended to %t%p (%r..%r)",
	tplProducedCell:   "inv(%c) written to %p at offset %o",
	tplProduceAckCell: "inv(%c) at offset %o",
	tplProcessed:      "%m processed %t%r",
	tplProduceAfter:   "inv(%b) pid %n epoch %n seq %n",
	tplProduceNext:    "inv(%b)%q",
}

const (
	tplProduce    = iota // an idempotent or transactional produce
	tplProduced          // the produced event
	tplProduceAck        // a produce's answer, from its produced event's arguments (World.packetText)
	tplInput             // the input event
	// tplProducedCell is the produced event of an invoice whose cell
	// names its source: the cell's place alone (its log and offset), the
	// source read from the cell.
	tplProducedCell
	tplProduceAckCell // the answer from tplProducedCell's arguments
	// tplProcessed is a processed event: its member the event's, its
	// record (Event.Records) the template's (World.eventRecords).
	tplProcessed
	// tplProduceAfter is tplProduce whose record is named by the
	// processed event just before it (World.processedBack): a member
	// produces the invoice of the record it has just processed, so the
	// record is stored once, and the produce is 7 to 9 bytes, not 9 to 11.
	tplProduceAfter
	// tplProduceNext is tplProduceAfter whose producer id and epoch are
	// those of its producer's last produce that spells them (in the same
	// arena chunk: producer.fullText), and its sequence number a
	// difference from that one's: 4 or 5 bytes.
	tplProduceNext
)

// ackTemplate is the template a Produce answer that keeps its produced
// event's text reads it with (World.packetText).
var ackTemplate = map[byte]int{tWhole + tplProduced: tplProduceAck, tWhole + tplProducedCell: tplProduceAckCell}

// phrases are the fixed pieces of the frequent texts, one byte each.
var phrases = [...]string{
	" ", " processed ", " poll() returned ", " committed ", " written to ", " at offset ",
	" max ", ", ", " records appended to ", " (", "..", ")", " pid ", " epoch ", " seq ",
	" (retry)", "inv(", "epoch ", "gen ", ", assigned ", ", target ",
}

const (
	phSpace = tPhrase + iota
	phProcessed
	phPolled
	phCommitted
	phWrittenTo
	phAtOffset
	phMax
	phComma
	phAppendedTo
	phOpenParen
	phDotDot
	phCloseParen
	phPID
	phEpoch
	phSeq
	phRetry
	phInv
	phEpochWord
	phGenWord
	phAssigned
	phTarget
)

// textRef is where a text (or a token inside one) starts in the arena:
// chunk<<arenaShift | offset. 0 is the empty text (every arena begins with a
// lone tEnd).
type textRef = wire.TextRef

const arenaShift = 14 // 16 KB chunks: 4 GB of text in all

// arenaChunk is the size of a full chunk: at most 1<<arenaShift (a var only
// so that tests can make chunks tiny; never changed while a world exists).
var arenaChunk = 1 << arenaShift

// textArena is append-only bytes in chunks: a chunk's bytes never change
// once written, so World.Clone shares every chunk, the open one too (with
// its capacity cut to its length: an append on either side then writes
// where the other never reads, and the clone's first append copies it).
type textArena struct {
	full [][]byte // full chunks; the spine is shared with clones, cut to its length
	open []byte   // the chunk being filled
	// spill is where the next text is encoded when the open chunk has
	// less than spillMin bytes of room (scratch); never shared (a clone
	// starts without one).
	spill []byte
	// openShared: open is the chunk of the world this one was cloned from,
	// cut to its length. The first text added closes it as it is (a short
	// full chunk, still shared) and starts a chunk of this world's own,
	// instead of copying the shared one (half a chunk on average): an
	// explorer branch writes a few KB of text in all.
	openShared bool
	// processed is the last tplProcessed text added (World.addWhole), 0
	// for none: a produce of its record refers back to it (tplProduceAfter).
	// processedRec is the record it names, as its text spells it (the
	// partition's tpIndex and the offset; ok false if unreadable), read
	// when it is added, so that processedBack compares two numbers.
	processed    textRef
	processedRec struct {
		tp, off uint64
		ok      bool
	}
	// offsets is the last text added that begins with a tOffsets token
	// (World.addText), 0 for none: a fetch's positions may refer back to
	// it (tOffsetsRot).
	offsets textRef
}

// spillMin is the room the open chunk must have for the next text to be
// encoded in it (scratch): a text rarely needs more.
const spillMin = 1024

// add copies an encoded text (its tEnd included) into the arena and returns
// its reference. A text never spans chunks; one longer than a chunk (a
// rebalance plan of thousands of partitions) gets a chunk of its own.
func (a *textArena) add(b []byte) textRef {
	ref, _ := a.put(b)
	return ref
}

// put is add, and reports whether b was kept where it was written (it was
// encoded in the spare room), not copied.
func (a *textArena) put(b []byte) (textRef, bool) {
	if n := len(a.open); n+len(b) <= arenaChunk && a.inSpare(b) {
		// Encoded in the spare room: it is in place already.
		ref := a.end()
		a.open = a.open[:n+len(b)]
		return ref, true
	}
	if a.open == nil && len(a.full) == 0 {
		a.open = append(make([]byte, 0, 256), tEnd)
	}
	if a.openShared {
		a.openShared = false
		if len(a.open) > 0 && len(a.open)+len(b) <= arenaChunk {
			a.closeOpen(make([]byte, 0, max(cloneChunk, len(b))))
		}
	}
	if len(a.open)+len(b) > arenaChunk {
		a.closeOpen(make([]byte, 0, max(arenaChunk, len(b)))) // an arena that filled one chunk fills the next
	}
	ref := a.end()
	if need := len(a.open) + len(b); need > cap(a.open) {
		// A young chunk, or one shared with a clone (cut to its length):
		// copy it to twice its size while under 4 KB (append would grow
		// one past 256 bytes by a quarter at a time, copying it each
		// time), then by a quarter (a copy that is kept, a fork, holds
		// little room it does not use), up to a whole chunk.
		grow := cap(a.open) / 4
		if cap(a.open) < 4<<10 {
			grow = cap(a.open)
		}
		a.open = append(make([]byte, 0, max(min(cap(a.open)+grow, arenaChunk), need)), a.open...)
	}
	a.open = append(a.open, b...)
	return ref, false
}

// closeOpen moves the open chunk to the full ones and makes next the open
// one. A full chunk may be shorter than arenaChunk: a reference names its
// chunk and its offset in it.
func (a *textArena) closeOpen(next []byte) {
	if len(a.full)+1 >= 1<<(32-arenaShift) {
		panic("sim: the trace's text arena is full (4 GB of encoded text)")
	}
	a.full = append(a.full, a.open)
	a.open = next
}

// cloneChunk is the room a clone's own first chunk starts with: about what
// an explorer branch writes before it ends (it grows as put says).
const cloneChunk = 4 << 10

// spare is the open chunk's room past its last text, empty: a text
// encoded there (appended to it) and then added is kept where it was
// written, not copied. Only the world that owns the chunk writes there: a
// clone gets the chunk with its capacity cut (clone), so it has no spare
// room in a shared chunk.
func (a *textArena) spare() []byte {
	return a.open[len(a.open):len(a.open)]
}

// inSpare reports whether b starts the open chunk's spare room.
func (a *textArena) inSpare(b []byte) bool {
	n := len(a.open)
	return len(b) > 0 && n < cap(a.open) && unsafe.SliceData(b) == unsafe.SliceData(a.open[n:n+1])
}

// scratch is the buffer to encode the next text in (World.scratch): the
// spare room while it has spillMin bytes or more, else spill. b is the
// text just added and inPlace whether it was kept where it was written:
// one that was not, and is larger than spill, becomes spill (as a world's
// scratch buffer always kept the largest text's room for the next).
func (a *textArena) scratch(b []byte, inPlace bool) []byte {
	if !inPlace && cap(b) > cap(a.spill) {
		a.spill = b[:0]
	}
	if cap(a.open)-len(a.open) >= spillMin {
		return a.spare()
	}
	if a.spill == nil {
		a.spill = make([]byte, 0, spillMin)
	}
	return a.spill[:0]
}

// addWithTail adds b and also returns a reference to b[at:] (the tail of
// the text: its records, its offsets), the same bytes when the offset fits
// in a reference, else a copy of the tail; and, as put, whether b was kept
// in place.
func (a *textArena) addWithTail(b []byte, at int) (textRef, textRef, bool) {
	ref, in := a.put(b)
	if int(ref&(1<<arenaShift-1))+at < 1<<arenaShift {
		return ref, ref + textRef(at), in
	}
	return ref, a.add(b[at:]), in
}

// end is the reference the next text added would get if it fits in the
// open chunk.
// inChunk reports whether a text of room bytes added now lands in the
// open chunk of the earlier text at ref, after it: the one place a back
// reference (a distance from the new text to ref) may point. It returns
// where the new text will start. A clone's first chunk is shared, so a
// text added there never lands in it (openShared).
func (a *textArena) inChunk(ref textRef, room int) (textRef, bool) {
	end := a.end()
	return end, ref != 0 && !a.openShared && len(a.open)+room <= arenaChunk &&
		ref>>arenaShift == end>>arenaShift && ref < end
}

func (a *textArena) end() textRef { return textRef(len(a.full)<<arenaShift | len(a.open)) }

// bytes returns the arena from ref to the end of its chunk.
func (a *textArena) bytes(ref textRef) []byte {
	c, off := int(ref>>arenaShift), int(ref&(1<<arenaShift-1))
	chunk := a.open
	if c < len(a.full) {
		chunk = a.full[c]
	} else if c > len(a.full) {
		return nil
	}
	if off >= len(chunk) {
		return nil
	}
	return chunk[off:]
}

func (a *textArena) clone() textArena {
	return textArena{full: a.full[:len(a.full):len(a.full)], open: a.open[:len(a.open):len(a.open)], openShared: len(a.open) > 0,
		processed: a.processed, processedRec: a.processedRec, offsets: a.offsets}
}

// Encoding. Each function appends one token to b.

// encLit appends s as it is (a string, or bytes just spelled in a buffer).
func encLit[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, tLit)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encNum is phrase ph and then the number n (" pid 1004").
func encNum(b []byte, ph byte, n int64) []byte {
	return binary.AppendVarint(append(b, ph-tPhrase+tNum), n)
}

// encTemplate starts templates[k]: its arguments follow, appended with
// argNum, argTP, argOffset in the template's order.
func encTemplate(b []byte, k int) []byte { return append(b, tTemplate+byte(k)) }

func argNum(b []byte, n int64) []byte { return binary.AppendVarint(b, n) }

func argOffset(b []byte, off int) []byte { return binary.AppendUvarint(b, uint64(off)) }

// argTP appends tp's number; false (and b unchanged) for a partition the
// world does not have, which a template cannot hold.
func (t *Trace) argTP(b []byte, tp wire.TopicPartition) ([]byte, bool) {
	i, ok := t.layout.Number(tp)
	if !ok {
		return b, false
	}
	return binary.AppendUvarint(b, uint64(i)), true
}

// argTPI is argTP for a partition whose number is known: tpi is
// tpIndex(tp) plus one, 0 when not known (then it is looked up).
func (t *Trace) argTPI(b []byte, tpi int32, tp wire.TopicPartition) ([]byte, bool) {
	if tpi > 0 {
		return binary.AppendUvarint(b, uint64(tpi-1)), true
	}
	return t.argTP(b, tp)
}

// encParty is a client id, as a number.
func (t *Trace) encParty(b []byte, client string) []byte {
	return binary.AppendUvarint(append(b, tParty), uint64(t.parties.id(client, 0)))
}

// encLabel names a member in narration (Label.String), its client id as a
// party when it is the client's newest process.
func (t *Trace) encLabel(b []byte, who Label) []byte {
	if who.Process > 0 {
		return encLit(b, who.String())
	}
	return t.encParty(b, who.Client)
}

// encMemberID is a member id C1-4 as its client and number; any other
// spelling as it is.
func (t *Trace) encMemberID(b []byte, id string) []byte {
	ref, ok := t.memberIDs.Get(id)
	if !ok {
		ref = t.readMemberID(id)
		t.memberIDs.Put(id, ref)
	}
	if !ref.ok {
		return encLit(b, id)
	}
	b = binary.AppendUvarint(append(b, tMember), uint64(ref.party))
	return binary.AppendUvarint(b, uint64(ref.n))
}

// memberIDRef is a member id as encMemberID encodes it: its client's party
// and its number, if it is spelled C1-4 (ok).
type memberIDRef struct {
	party uint32
	n     uint32
	ok    bool
}

// readMemberID reads id as encMemberID encodes it, naming its client as a
// party if it is spelled so (the parties only grow: the answer stays true).
func (t *Trace) readMemberID(id string) memberIDRef {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return memberIDRef{}
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 || n > math.MaxUint32 || strconv.Itoa(n) != id[i+1:] {
		return memberIDRef{} // spelled as it is (a number past 32 bits too: never a member's)
	}
	return memberIDRef{party: t.parties.id(id[:i], 0), n: uint32(n), ok: true}
}

func (t *Trace) encTP(b []byte, tok byte, tp wire.TopicPartition) []byte {
	i, ok := t.layout.Number(tp)
	if !ok {
		var buf [64]byte
		if tok == tShort {
			return encLit(b, t.layout.AppendShortName(buf[:0], tp))
		}
		return encLit(b, topo.AppendPartition(buf[:0], tp))
	}
	return binary.AppendUvarint(append(b, tok), uint64(i))
}

// encShort is appendShortName as a token (o2).
func (t *Trace) encShort(b []byte, tp wire.TopicPartition) []byte { return t.encTP(b, tShort, tp) }

// encPart is appendPartition as a token (orders-2).
func (t *Trace) encPart(b []byte, tp wire.TopicPartition) []byte { return t.encTP(b, tPart, tp) }

// encFetched is a fetched record named as World.RecordName names it, its
// value spelled only when it is not an input record's.
func (t *Trace) encFetched(b []byte, f *wire.Record) []byte {
	if i, ok := t.fetchedInput(f); ok {
		return encRecordAt(b, i, f.Offset)
	}
	if b, ok := t.encRecordRef(b, f.TP, f.Offset); ok {
		return b
	}
	return encLit(b, f.ValueIn(t.layout))
}

// encFetchedList is the records of a fetch, spaced (o2.3 o2.4 p0.1): a
// run of records that follow each other in one input partition is one
// tRecords token.
func (t *Trace) encFetchedList(b []byte, recs []wire.Record) []byte {
	for i := 0; i < len(recs); {
		if i > 0 {
			b = append(b, phSpace)
		}
		f := &recs[i]
		j := i + 1
		if _, ok := t.fetchedInput(f); ok {
			for j < len(recs) && j-i < maxRun && recs[j].TPI == f.TPI && recs[j].Offset == f.Offset+(j-i) {
				j++
			}
		}
		if j-i == 1 {
			b = t.encFetched(b, f)
		} else {
			b = binary.AppendUvarint(append(b, tRecords), uint64(f.TPI-1))
			b = binary.AppendUvarint(b, uint64(f.Offset))
			b = binary.AppendUvarint(b, uint64(j-i))
		}
		i = j
	}
	return b
}

// encRecordRef is the tRecord token of record off of input partition tp;
// false (b unchanged) when tp is not an input partition.
func (t *Trace) encRecordRef(b []byte, tp wire.TopicPartition, off int) ([]byte, bool) {
	if i, ok := t.layout.Number(tp); ok && i < len(t.layout.Inputs()) && off >= 0 {
		return encRecordAt(b, i, off), true
	}
	return b, false
}

// encRecordAt is the tRecord token of record off of input partition i
// (tpIndex).
func encRecordAt(b []byte, i, off int) []byte {
	b = binary.AppendUvarint(append(b, tRecord), uint64(i))
	return binary.AppendUvarint(b, uint64(off))
}

// fetchedInput is the tpIndex of f's partition when f carries it (tpi)
// and f is a record of an input partition (a tRecord can name it).
func (t *Trace) fetchedInput(f *wire.Record) (int, bool) {
	i := int(f.TPI) - 1
	return i, i >= 0 && i < len(t.layout.Inputs()) && f.Offset >= 0
}

// encOffsets is appendOffsets as a token (o0@3 o1@5). When b starts the
// next text (it is t.scratch, empty) and the positions are those of the
// last text that began with a tOffsets token (an OffsetCommit request:
// a member commits its positions and then fetches from them, in an order
// that rotates), in the same order from some k on, the token refers back
// to them (tOffsetsRot: 3 or 4 bytes, not 2 or more a partition).
func (t *Trace) encOffsets(b []byte, tps []wire.TopicPartition, offs []int) []byte {
	if len(b) == 0 && cap(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(t.scratch) {
		if d, k, ok := t.offsetsRotation(tps, offs); ok {
			return binary.AppendUvarint(binary.AppendUvarint(append(b, tOffsetsRot), d), uint64(k))
		}
	}
	return t.encOffsetsAt(b, tps, nil, offs)
}

// maxRotation is the most positions a tOffsetsRot token is tried for: a
// member's partitions, read on the stack.
const maxRotation = 32

// offsetsRotation is the distance back from the next text added to the
// last tOffsets text's token, and k, when that token holds the positions
// offs of tps read from its k-th on (then from its first), and a text
// added now lands in its chunk; false otherwise.
func (t *Trace) offsetsRotation(tps []wire.TopicPartition, offs []int) (uint64, int, bool) {
	a := &t.texts
	ref := a.offsets
	end, ok := a.inChunk(ref, 2*binary.MaxVarintLen64+1)
	if !ok || len(tps) == 0 || len(tps) > maxRotation || len(tps) != len(offs) {
		return 0, 0, false
	}
	var buf [maxRotation]offsetEntry
	ents, ok := t.offsetEntries(buf[:0], a.bytes(ref))
	if !ok || len(ents) != len(tps) {
		return 0, 0, false
	}
	k := 0
	for k < len(ents) && !t.isTP(tps[0], ents[k].tp) {
		k++
	}
	if k == len(ents) {
		return 0, 0, false
	}
	for i, tp := range tps {
		if e := ents[(k+i)%len(ents)]; e.off != int64(offs[i]) || !t.isTP(tp, e.tp) {
			return 0, 0, false
		}
	}
	return uint64(end - ref), k, true
}

// isTP reports whether tp is the partition numbered i (tpIndex): for an
// input partition a compare with the one in its slot, nothing hashed.
func (t *Trace) isTP(tp wire.TopicPartition, i uint64) bool {
	if i < uint64(len(t.layout.Inputs())) {
		return t.layout.Input().Is(tp, int32(i))
	}
	n, ok := t.layout.Number(tp)
	return ok && uint64(n) == i
}

// offsetEntry is one position of a tOffsets token: its partition's number
// (tpIndex) and its offset.
type offsetEntry struct {
	tp  uint64
	off int64
}

// offsetEntries appends to ents the positions of the tOffsets token b
// begins with; false when b is not one or does not parse.
func (t *Trace) offsetEntries(ents []offsetEntry, b []byte) ([]offsetEntry, bool) {
	if firstByte(b) != tOffsets {
		return ents, false
	}
	r := textReader{t: t, b: b[1:]}
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return ents, false
	}
	v := int64(0)
	for i := uint64(0); i < n; i++ {
		tp, ok := r.uvarint()
		d, m := binary.Varint(r.b)
		if !ok || m <= 0 {
			return ents, false
		}
		r.b, v = r.b[m:], v+d
		ents = append(ents, offsetEntry{tp: tp, off: v})
	}
	return ents, true
}

// encOffsetsAt is encOffsets with slots[i], when given, tps[i]'s slot as a
// hint (an input partition's tpIndex is its slot; the hint is checked).
func (t *Trace) encOffsetsAt(b []byte, tps []wire.TopicPartition, slots []int32, offs []int) []byte {
	start := len(b)
	b = binary.AppendUvarint(append(b, tOffsets), uint64(len(tps)))
	prev := int64(0)
	for i, tp := range tps {
		n, ok := int(topo.SlotAt(slots, i)), true
		if !t.layout.Input().Is(tp, int32(n)) {
			n, ok = t.layout.Number(tp)
		}
		if !ok {
			return encLit(b[:start], t.layout.AppendOffsets(nil, tps, offs))
		}
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendVarint(b, int64(offs[i])-prev)
		prev = int64(offs[i])
	}
	return b
}

// encSame is the token at ref, referred to (tSame): ref must be a token
// other than tSame or tSameBack.
func encSame(b []byte, ref textRef) []byte {
	return binary.AppendUvarint(append(b, tSame), uint64(ref))
}

// encSameAt is encSame for a text being encoded in t.scratch (b, its
// bytes so far), to be added next: the token at ref is referred to as a
// distance back (tSameBack) when both will be in the open chunk, else by
// its absolute ref (tSame).
func (t *Trace) encSameAt(b []byte, ref textRef) []byte {
	end, ok := t.texts.inChunk(ref, len(b)+2*binary.MaxVarintLen64)
	if ok && len(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(t.scratch) {
		at := end + textRef(len(b)) // where the token will be
		return binary.AppendUvarint(append(b, tSameBack), uint64(at-ref))
	}
	return encSame(b, ref)
}

// encPartList is partList as a token ({o0 o1 p0}, sorted).
func (t *Trace) encPartList(b []byte, tps []wire.TopicPartition) []byte {
	start := len(b)
	tps = wire.SortedView(tps)
	b = binary.AppendUvarint(append(b, tPartList), uint64(len(tps)))
	for _, tp := range tps {
		i, ok := t.layout.Number(tp)
		if !ok {
			return encLit(b[:start], t.layout.AppendPartList(nil, tps))
		}
		b = binary.AppendUvarint(b, uint64(i))
	}
	return b
}

// Decoding. The arena holds only what the encoders above wrote; still, a
// token that does not parse ends the text rather than panicking.

// textReader walks the tokens of one text.
type textReader struct {
	t      *Trace
	b      []byte
	member string // the event's member, for %m ("" in a packet's text)
	// ref is b's first byte's place in the arena and n its length, so
	// that a token's place is known (%b counts back from it); ref 0 when
	// not known (a %b then does not parse).
	ref textRef
	n   int
	tok textRef // the place of the token being read (next)
}

// readerAt is a reader of the text at ref.
func (t *Trace) readerAt(ref textRef, member string) textReader {
	b := t.texts.bytes(ref)
	return textReader{t: t, b: b, member: member, ref: ref, n: len(b)}
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

func (r *textReader) tp() (wire.TopicPartition, bool) {
	i, ok := r.uvarint()
	if !ok {
		return wire.TopicPartition{}, false
	}
	tp, _, ok := r.t.layout.Numbered(i)
	return tp, ok
}

// recordRun reads a tRecords token's arguments.
func (r *textReader) recordRun() (wire.TopicPartition, int, int, bool) {
	tp, ok := r.tp()
	off, ok2 := r.uvarint()
	n, ok3 := r.uvarint()
	if !ok || !ok2 || !ok3 || off > 1<<62 || n > maxRun {
		return wire.TopicPartition{}, 0, 0, false
	}
	return tp, int(off), int(n), true
}

// maxRun is the most records one tRecords token holds.
const maxRun = 255

// next appends the next token's text to out; false at tEnd or on bytes
// that do not parse.
func (r *textReader) next(out []byte) ([]byte, byte, bool) {
	if len(r.b) == 0 {
		return out, tEnd, false
	}
	r.tok = r.at()
	tok := r.b[0]
	r.b = r.b[1:]
	switch {
	case tok == tEnd:
		return out, tEnd, false
	case tok == tLit:
		n, ok := r.uvarint()
		if !ok || n > uint64(len(r.b)) {
			return out, tEnd, false
		}
		out = append(out, r.b[:n]...)
		r.b = r.b[n:]
	case tok == tShort, tok == tPart:
		tp, ok := r.tp()
		if !ok {
			return out, tEnd, false
		}
		if tok == tShort {
			out = r.t.layout.AppendShortName(out, tp)
		} else {
			out = topo.AppendPartition(out, tp)
		}
	case tok == tRecord:
		tp, ok := r.tp()
		off, ok2 := r.uvarint()
		if !ok || !ok2 || off > 1<<62 {
			return out, tEnd, false
		}
		out = r.t.appendRecordName(out, tp, int(off))
	case tok == tRecords:
		tp, off, n, ok := r.recordRun()
		if !ok {
			return out, tEnd, false
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				out = append(out, ' ')
			}
			out = r.t.appendRecordName(out, tp, off+i)
		}
	case tok == tOffsets:
		n, ok := r.uvarint()
		if !ok || n > uint64(len(r.b)) {
			return out, tEnd, false
		}
		v := int64(0)
		for i := uint64(0); i < n; i++ {
			tp, ok := r.tp()
			d, m := binary.Varint(r.b)
			if !ok || m <= 0 {
				return out, tEnd, false
			}
			r.b, v = r.b[m:], v+d
			if i > 0 {
				out = append(out, ' ')
			}
			out = r.t.layout.AppendShortName(out, tp)
			out = append(out, '@')
			out = strconv.AppendInt(out, v, 10)
		}
	case tok == tOffsetsRot:
		d, ok := r.uvarint()
		k, ok2 := r.uvarint()
		at, ok3 := r.back(d)
		if !ok || !ok2 || !ok3 {
			return out, tEnd, false
		}
		var buf [maxRotation]offsetEntry
		ents, ok := r.t.offsetEntries(buf[:0], r.t.texts.bytes(at))
		if !ok || k >= uint64(len(ents)) {
			return out, tEnd, false
		}
		for i := range ents {
			e := ents[(int(k)+i)%len(ents)]
			tp, _, ok := r.t.layout.Numbered(e.tp)
			if !ok {
				return out, tEnd, false
			}
			if i > 0 {
				out = append(out, ' ')
			}
			out = r.t.layout.AppendShortName(out, tp)
			out = append(out, '@')
			out = strconv.AppendInt(out, e.off, 10)
		}
	case tok == tPartList:
		n, ok := r.uvarint()
		if !ok || n > uint64(len(r.b)) {
			return out, tEnd, false
		}
		out = append(out, '{')
		for i := uint64(0); i < n; i++ {
			tp, ok := r.tp()
			if !ok {
				return out, tEnd, false
			}
			if i > 0 {
				out = append(out, ' ')
			}
			out = r.t.layout.AppendShortName(out, tp)
		}
		out = append(out, '}')
	case tok == tParty, tok == tMember:
		i, ok := r.uvarint()
		if !ok || i >= uint64(len(r.t.parties.names)) {
			return out, tEnd, false
		}
		out = append(out, r.t.parties.names[i].name...)
		if tok == tMember {
			n, ok := r.uvarint()
			if !ok {
				return out, tEnd, false
			}
			out = strconv.AppendUint(append(out, '-'), n, 10)
		}
	case tok == tSame, tok == tSameBack:
		ref, ok := r.uvarint()
		if tok == tSameBack {
			at, ok2 := r.back(ref)
			if !ok || !ok2 {
				return out, tEnd, false
			}
			ref = uint64(at)
		}
		if !ok || ref > 1<<32-1 {
			return out, tEnd, false
		}
		at := r.t.readerAt(textRef(ref), "")
		if len(at.b) == 0 || at.b[0] == tSame || at.b[0] == tSameBack {
			return out, tEnd, false // a reference to a reference could loop
		}
		if out, _, ok = at.next(out); !ok {
			return out, tEnd, false
		}
	case tok >= tPhrase && int(tok-tPhrase) < len(phrases):
		out = append(out, phrases[tok-tPhrase]...)
	case tok >= tTemplate && int(tok-tTemplate) < len(templates):
		return r.template(out, templates[tok-tTemplate], tok)
	case tok >= tWhole && int(tok-tWhole) < len(templates):
		out, _, _ = r.template(out, templates[tok-tWhole], tok)
		return out, tEnd, false
	case tok >= tNum && int(tok-tNum) < len(phrases):
		v, n := binary.Varint(r.b)
		if n <= 0 {
			return out, tEnd, false
		}
		r.b = r.b[n:]
		out = strconv.AppendInt(append(out, phrases[tok-tNum]...), v, 10)
	default:
		return out, tEnd, false
	}
	return out, tok, true
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
	var cur uint64 // %c's offset
	for i := 0; i < len(tpl); i++ {
		if tpl[i] != '%' || i+1 == len(tpl) {
			out = append(out, tpl[i])
			continue
		}
		i++
		switch tpl[i] {
		case 'n':
			v, n := binary.Varint(r.b)
			if n <= 0 {
				return out, tEnd, false
			}
			r.b = r.b[n:]
			out = strconv.AppendInt(out, v, 10)
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
			src, srcOff, ok3 := r.t.invoiceSource(i, off)
			if !ok || !ok2 || !ok3 {
				return out, tEnd, false
			}
			tp, _, _ = r.t.layout.Numbered(i)
			cur = off
			out = r.t.appendRecordName(out, src, srcOff)
		case 'o':
			out = strconv.AppendUint(out, cur, 10)
		case 'm':
			out = append(out, r.member...)
		case 'q':
			d, ok := r.uvarint()
			dseq, n := binary.Varint(r.b)
			at, ok2 := r.back(d)
			if !ok || n <= 0 || !ok2 {
				return out, tEnd, false
			}
			r.b = r.b[n:]
			pid, epoch, seq, ok := r.t.produceHead(at)
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
			out = r.t.appendRecordName(out, tp, int(off))
		case 'r':
			off, ok := r.uvarint()
			if !ok || off > 1<<62 || tp.Topic == "" {
				return out, tEnd, false
			}
			out = r.t.appendRecordName(out, tp, int(off))
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
	return r.tok - textRef(d), true
}

// processedAt reads the record of the tplProcessed text d bytes back from
// the token being read (%b): false unless it is one, in the same chunk.
func (r *textReader) processedAt(d uint64, ok bool) (wire.TopicPartition, uint64, bool) {
	ref, ok2 := r.back(d)
	if !ok || !ok2 {
		return wire.TopicPartition{}, 0, false
	}
	b := r.t.texts.bytes(ref)
	if firstByte(b) != tWhole+tplProcessed {
		return wire.TopicPartition{}, 0, false
	}
	at := textReader{t: r.t, b: b[1:]}
	tp, ok := at.tp()
	off, ok2 := at.uvarint()
	if !ok || !ok2 || off > 1<<62 || tp.Topic == "" {
		return wire.TopicPartition{}, 0, false
	}
	return tp, off, true
}

// produceHead is the producer id, epoch and sequence number of the
// produce text at ref, one that spells them (tplProduce, tplProduceAfter);
// false for any other text.
func (t *Trace) produceHead(ref textRef) (pid, epoch, seq int64, ok bool) {
	b := t.texts.bytes(ref)
	r := textReader{t: t, b: b[min(len(b), 1):]}
	switch firstByte(b) {
	case tWhole + tplProduce:
		_, ok1 := r.uvarint() // the record: partition and offset
		_, ok2 := r.uvarint()
		ok = ok1 && ok2
	case tWhole + tplProduceAfter:
		_, ok = r.uvarint() // the distance back to the processed event
	}
	for _, v := range []*int64{&pid, &epoch, &seq} {
		var n int
		if *v, n = binary.Varint(r.b); n <= 0 {
			return 0, 0, 0, false
		}
		r.b = r.b[n:]
	}
	return pid, epoch, seq, ok
}

// maxProduceText is the most bytes a produce's text takes
// (tplProduceAfter: its token, four varints).
const maxProduceText = 1 + 4*binary.MaxVarintLen64

// processedBack is the distance back from the next text added to the
// last processed event's (textArena.processed), when that event names
// record off of input partition tpi-1 (tpi: tpIndex plus one) and a text
// of maxProduceText bytes added now would be in its chunk (put adds it at
// end: the open chunk is this world's and has room); false otherwise.
func (t *Trace) processedBack(tpi int32, off int) (uint64, bool) {
	a := &t.texts
	end, ok := a.inChunk(a.processed, maxProduceText)
	if !ok || tpi <= 0 || off < 0 {
		return 0, false
	}
	if rec := a.processedRec; !rec.ok || rec.tp != uint64(tpi-1) || rec.off != uint64(off) {
		return 0, false
	}
	return uint64(end - a.processed), true
}

// packetText is a packet's summary: the text at ref, except that a
// Produce answer whose record was written keeps no text of its own but its
// produced event's (handleProduce), read as tplProduceAck, which takes the
// same arguments.
func (t *Trace) packetText(api wire.API, response bool, ref textRef) string {
	if api == wire.Produce && response {
		b := t.texts.bytes(ref)
		if k, ok := ackTemplate[firstByte(b)]; ok {
			r := textReader{t: t, b: b[1:]}
			var buf [64]byte
			out, _, _ := r.template(buf[:0], templates[k], 0)
			return string(out)
		}
	}
	return t.text(ref)
}

// invoiceSource is the source of the invoice at offset off of the log
// numbered i (topo.Layout.Number), an input record; false for any other
// cell (or with no logs to read).
func (t *Trace) invoiceSource(i, off uint64) (wire.TopicPartition, int, bool) {
	if t.sources == nil {
		return wire.TopicPartition{}, 0, false
	}
	return t.sources.InvoiceSource(i, off)
}

// appendText formats the text at ref; member is its event's (for %m).
func (t *Trace) appendText(out []byte, ref textRef, member string) []byte {
	r := t.readerAt(ref, member)
	for ok := true; ok; {
		out, _, ok = r.next(out)
	}
	return out
}

func (t *Trace) text(ref textRef) string { return t.memberText(ref, "") }

// memberText is the text at ref of an event whose member is member.
func (t *Trace) memberText(ref textRef, member string) string {
	if ref == 0 {
		return ""
	}
	var buf [128]byte
	return string(t.appendText(buf[:0], ref, member))
}

// eventRecords is an event's Records: the record tokens of its text at ref
// from byte at on, or a tplProcessed text's record.
func (t *Trace) eventRecords(ref textRef, at uint16) []string {
	b := t.texts.bytes(ref)
	if at > 0 && int(at) <= len(b) {
		return t.names(b[at:])
	}
	if firstByte(b) != tWhole+tplProcessed {
		return nil
	}
	r := textReader{t: t, b: b[1:]}
	tp, ok := r.tp()
	off, ok2 := r.uvarint()
	if !ok || !ok2 || off > 1<<62 {
		return nil
	}
	return []string{t.layout.Name(tp, int(off))}
}

// encProcessed is a processed event's text for who's record f: a
// tplProcessed when m is its client's newest process (its label is the
// event's member) and f an input record, else its spelled-out tokens.
// records is where the record tokens start (0: in the template).
func (t *Trace) encProcessed(who Label, f *wire.Record) (b []byte, whole bool, records int) {
	if i, ok := t.fetchedInput(f); ok && who.Process == 0 {
		return argOffset(argOffset(encTemplate(t.scratch[:0], tplProcessed), i), f.Offset), true, 0
	}
	b = append(t.encLabel(t.scratch[:0], who), phProcessed)
	return t.encFetched(b, f), false, len(b)
}

// names formats a list of records (an event's Records): one name per
// token, the spaces between them (phSpace) skipped.
func (t *Trace) names(b []byte) []string {
	var out []string
	r := textReader{t: t, b: b}
	var buf [64]byte
	for {
		if len(r.b) > 0 && r.b[0] == tRecords { // a run: one name per record
			r.b = r.b[1:]
			tp, off, n, ok := r.recordRun()
			if !ok {
				return out
			}
			for i := 0; i < n; i++ {
				out = append(out, string(t.appendRecordName(buf[:0], tp, off+i)))
			}
			continue
		}
		b, tok, ok := r.next(buf[:0])
		if !ok {
			return out
		}
		if tok != phSpace {
			out = append(out, string(b))
		}
	}
}

// appendRecordName is RecordName appending to b.
func (t *Trace) appendRecordName(b []byte, tp wire.TopicPartition, off int) []byte {
	return t.layout.AppendName(b, tp, off)
}

// encValue is a produced record's value: inv(o2.3) as tokens when the
// request names its input record, else the value as it is.
func (t *Trace) encValue(b []byte, r *wire.ProduceRequest) []byte {
	if r.HasSrc {
		b = append(b, phInv)
		if rb, ok := t.encRecordRef(b, r.Src, r.SrcOffset); ok {
			return append(rb, phCloseParen)
		}
		return append(encLit(b, r.SourceIn(t.layout)), phCloseParen)
	}
	return encLit(b, r.ValueIn(t.layout))
}

// SetArenaChunkForTest makes the text arena's chunks n bytes long (at most
// 1<<arenaShift) and returns the function that restores them: tests only,
// never while a world exists.
func SetArenaChunkForTest(n int) (restore func()) {
	old := arenaChunk
	arenaChunk = n
	return func() { arenaChunk = old }
}
