package trace

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Encoding: each function appends one token (or a template's argument) to
// b, usually the trace's scratch buffer, which addText then keeps.

// addText puts an encoded text (b, without its tEnd) in the arena. b is
// usually t.scratch, which is mostly the arena's spare room
// (textArena.scratch): a text encoded there is kept where it was written.
// So a text is encoded into t.scratch[:0] and added before anything else
// adds a text.
func (tx *texts) addText(b []byte) textRef {
	b = append(b, tEnd)
	ref, in := tx.arena.put(b)
	tx.scratch = tx.arena.scratch(b, in)
	if b[0] == tOffsets {
		tx.arena.offsets = ref
	}
	return ref
}

// addWhole is addText for a text that is one template token and its
// arguments (b[0] is tTemplate+k, from encTemplate): the token becomes
// tWhole+k, which ends the text, so it needs no tEnd.
func (tx *texts) addWhole(b []byte) textRef {
	if len(b) == 0 || b[0] < tTemplate || int(b[0]-tTemplate) >= len(templates) {
		panic("sim: addWhole is for a text that is one template")
	}
	processed := b[0] == tTemplate+tplProcessed
	b[0] += tWhole - tTemplate
	ref, in := tx.arena.put(b)
	tx.scratch = tx.arena.scratch(b, in)
	if processed {
		// its arguments, as processedBack would read them back from the arena
		a := &tx.arena
		a.processed, a.processedRec.ok = ref, false
		if tp, n := binary.Uvarint(b[1:]); n > 0 {
			if off, m := binary.Uvarint(b[1+n:]); m > 0 {
				a.processedRec.tp, a.processedRec.off, a.processedRec.ok = tp, off, true
			}
		}
	}
	return ref
}

// addProcessed is addWhole for a tplProcessed text (encProcessed) of
// record off of input partition i: its record kept for processedBack as
// given, not read back from the arguments.
func (tx *texts) addProcessed(b []byte, i, off int) textRef {
	if firstByte(b) != tTemplate+tplProcessed {
		panic("sim: addProcessed is for a tplProcessed text")
	}
	b[0] += tWhole - tTemplate
	ref, in := tx.arena.put(b)
	tx.scratch = tx.arena.scratch(b, in)
	a := &tx.arena
	a.processed = ref
	a.processedRec.tp, a.processedRec.off, a.processedRec.ok = uint64(i), uint64(off), true
	return ref
}

// addTextTail is addText that also returns a reference to b[at:].
func (tx *texts) addTextTail(b []byte, at int) (textRef, textRef) {
	b = append(b, tEnd)
	ref, tail, in := tx.arena.addWithTail(b, at)
	tx.scratch = tx.arena.scratch(b, in)
	return ref, tail
}

// encLit appends s as it is (a string, or bytes just spelled in a buffer).
func encLit[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, tLit)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encNum is phrase ph and then the number n (" pid 1004").
func encNum(b []byte, ph byte, n int64) []byte {
	return putTokUvarint(b, ph-tPhrase+tNum, uint64(n<<1)^uint64(n>>63)) // binary.AppendVarint's zigzag
}

// encTemplate starts templates[k]: its arguments follow, appended with
// argNum, argTP, argOffset in the template's order.
func encTemplate(b []byte, k int) []byte { return append(b, tTemplate+byte(k)) }

func argNum(b []byte, n int64) []byte { return appendVarint(b, n) }

func argOffset(b []byte, off int) []byte { return binary.AppendUvarint(b, uint64(off)) }

// argTP appends tp's number; false (and b unchanged) for a partition the
// world does not have, which a template cannot hold.
func (tx *texts) argTP(b []byte, tp wire.TopicPartition) ([]byte, bool) {
	i, ok := tx.layout.Number(tp)
	if !ok {
		return b, false
	}
	return binary.AppendUvarint(b, uint64(i)), true
}

// argTPI is argTP for a partition whose number is known: tpi is
// tpIndex(tp) plus one, 0 when not known (then it is looked up).
func (tx *texts) argTPI(b []byte, tpi int32, tp wire.TopicPartition) ([]byte, bool) {
	if tpi > 0 {
		return binary.AppendUvarint(b, uint64(tpi-1)), true
	}
	return tx.argTP(b, tp)
}

// numTPI is tp's number: tpi minus one when known (tpi > 0), else looked
// up; false for a partition the world does not have.
func (tx *texts) numTPI(tpi int32, tp wire.TopicPartition) (int, bool) {
	if tpi > 0 {
		return int(tpi - 1), true
	}
	return tx.layout.Number(tp)
}

// encParty is a client id, as a number.
func (tx *texts) encParty(b []byte, client string) []byte {
	return binary.AppendUvarint(append(b, tParty), uint64(tx.parties.id(client, 0)))
}

// encLabel names a member in narration (Label.String), its client id as a
// party when it is the client's newest process.
func (tx *texts) encLabel(b []byte, who Label) []byte {
	if who.Process > 0 {
		return encLit(b, who.String())
	}
	return tx.encParty(b, who.Client)
}

// encMemberID is a member id C1-4 as its client and number; any other
// spelling as it is.
func (tx *texts) encMemberID(b []byte, id string) []byte {
	ref, ok := tx.memberIDs.Get(id)
	if !ok {
		ref = tx.readMemberID(id)
		tx.memberIDs.Put(id, ref)
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
func (tx *texts) readMemberID(id string) memberIDRef {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return memberIDRef{}
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 || n > math.MaxUint32 || strconv.Itoa(n) != id[i+1:] {
		return memberIDRef{} // spelled as it is (a number past 32 bits too: never a member's)
	}
	return memberIDRef{party: tx.parties.id(id[:i], 0), n: uint32(n), ok: true}
}

func (tx *texts) encTP(b []byte, tok byte, tp wire.TopicPartition) []byte {
	i, ok := tx.layout.Number(tp)
	if !ok {
		var buf [64]byte
		if tok == tShort {
			return encLit(b, tx.layout.AppendShortName(buf[:0], tp))
		}
		return encLit(b, topo.AppendPartition(buf[:0], tp))
	}
	return binary.AppendUvarint(append(b, tok), uint64(i))
}

// encShort is appendShortName as a token (o2).
func (tx *texts) encShort(b []byte, tp wire.TopicPartition) []byte { return tx.encTP(b, tShort, tp) }

// encPart is appendPartition as a token (orders-2).
func (tx *texts) encPart(b []byte, tp wire.TopicPartition) []byte { return tx.encTP(b, tPart, tp) }

// encPartTPI is encPart for a partition whose number may be known: tpi
// is its number plus one (0: not known, looked up), as argTPI's.
func (tx *texts) encPartTPI(b []byte, tpi int32, tp wire.TopicPartition) []byte {
	if tpi > 0 {
		return binary.AppendUvarint(append(b, tPart), uint64(tpi-1))
	}
	return tx.encTP(b, tPart, tp)
}

// encFetched is a fetched record named as World.RecordName names it, its
// value spelled only when it is not an input record's.
func (tx *texts) encFetched(b []byte, f *wire.Record) []byte {
	if i, ok := tx.fetchedInput(f); ok {
		return encRecordAt(b, i, f.Offset)
	}
	if b, ok := tx.encRecordRef(b, f.TP, f.Offset); ok {
		return b
	}
	return encLit(b, f.ValueIn(tx.layout))
}

// encFetchedList is the entries of a fetch or a batch, spaced (o2.3 o2.4
// p0.1): the records that follow each other in one input partition, across
// entries (a run, wire.Record.Count, or single records), are one run,
// spelled record by record up to spellRunMax and as a range past it
// (encRun), so that a text reads the same however the records came in
// entries.
func (tx *texts) encFetchedList(b []byte, recs []wire.Record) []byte {
	if len(recs) >= recordSeqMin && tx.singleRecords(recs) {
		return tx.encRecordSeq(b, recs)
	}
	for i := 0; i < len(recs); {
		if i > 0 {
			b = append(b, phSpace)
		}
		f := &recs[i]
		j := i + 1
		if p, ok := tx.fetchedInput(f); ok {
			n := f.Len()
			for j < len(recs) && recs[j].TPI == f.TPI && recs[j].Offset == f.Offset+n {
				n += recs[j].Len()
				j++
			}
			b = encRun(b, p, f.Offset, n)
		} else {
			b = tx.encFetched(b, f)
		}
		i = j
	}
	return b
}

// recordSeqMin is the fewest records a tRecordSeq token holds: below it
// the tRecord tokens take about as much.
const recordSeqMin = 4

// singleRecords reports whether every entry of recs is one record of an
// input partition whose number it carries and none follows the one before
// in its partition: what encFetchedList would spell as a tRecord each,
// which a tRecordSeq token reads as.
func (tx *texts) singleRecords(recs []wire.Record) bool {
	for i := range recs {
		f := &recs[i]
		if _, ok := tx.fetchedInput(f); !ok || f.Len() != 1 {
			return false
		}
		if i > 0 && recs[i-1].TPI == f.TPI && recs[i-1].Offset+1 == f.Offset {
			return false
		}
	}
	return true
}

// encRecordSeq is the tRecordSeq token of recs (singleRecords).
func (tx *texts) encRecordSeq(b []byte, recs []wire.Record) []byte {
	b = binary.AppendUvarint(append(b, tRecordSeq), uint64(len(recs)))
	part, off := int64(0), int64(0)
	for i := range recs {
		p, o := int64(recs[i].TPI-1), int64(recs[i].Offset)
		b = binary.AppendVarint(binary.AppendVarint(b, p-part), o-off)
		part, off = p, o
	}
	return b
}

// encRecordRef is the tRecord token of record off of input partition tp;
// false (b unchanged) when tp is not an input partition.
func (tx *texts) encRecordRef(b []byte, tp wire.TopicPartition, off int) ([]byte, bool) {
	if i, ok := tx.layout.Number(tp); ok && i < len(tx.layout.Inputs()) && off >= 0 {
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
func (tx *texts) fetchedInput(f *wire.Record) (int, bool) {
	i := int(f.TPI) - 1
	return i, i >= 0 && i < len(tx.layout.Inputs()) && f.Offset >= 0
}

// encOffsets is appendOffsets as a token (o0@3 o1@5). When b starts the
// next text (it is tx.scratch, empty) and the positions are those of the
// last text that began with a tOffsets token (an OffsetCommit request:
// a member commits its positions and then fetches from them, in an order
// that rotates), in the same order from some k on, the token refers back
// to them (tOffsetsRot: 3 or 4 bytes, not 2 or more a partition).
func (tx *texts) encOffsets(b []byte, tps []wire.TopicPartition, slots []int32, offs []int) []byte {
	enc := tx.encOffsetsAt(b, tps, slots, offs)
	if len(b) == 0 && cap(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(tx.scratch) && firstByte(enc) == tOffsets && len(tps) <= maxRotation {
		// the partitions' numbers, as encOffsetsAt found them (tx.nums)
		if d, k, ok := tx.offsetsRotation(tx.nums, offs); ok {
			return binary.AppendUvarint(binary.AppendUvarint(append(b, tOffsetsRot), d), uint64(k))
		}
	}
	return enc
}

// maxRotation is the most positions a tOffsetsRot token is tried for: a
// member's partitions, read on the stack.
const maxRotation = 32

// offsetsRotation is the distance back from the next text added to the
// last tOffsets text's token, and k, when that token holds the positions
// offs of the partitions numbered nums read from its k-th on (then from
// its first), and a text added now lands in its chunk; false otherwise.
// A token of as many positions whose first partition is none of nums (T1:
// another member's Fetch, most of the time) is refused before it is read
// whole.
func (tx *texts) offsetsRotation(nums []uint64, offs []int) (uint64, int, bool) {
	a := &tx.arena
	ref := a.offsets
	end, ok := a.inChunk(ref, 2*binary.MaxVarintLen64+1)
	if !ok || len(nums) == 0 || len(nums) > maxRotation || len(nums) != len(offs) {
		return 0, 0, false
	}
	tok := a.bytes(ref)
	if firstByte(tok) != tOffsets {
		return 0, 0, false
	}
	r := textReader{b: tok[1:]}
	if n, ok := r.uvarint(); !ok || n != uint64(len(nums)) {
		return 0, 0, false
	}
	if p0, ok := r.uvarint(); !ok || !slices.Contains(nums, p0) {
		return 0, 0, false
	}
	var buf [maxRotation]offsetEntry
	ents, ok := offsetEntries(buf[:0], tok)
	if !ok || len(ents) != len(nums) {
		return 0, 0, false
	}
	k := 0
	for k < len(ents) && ents[k].tp != nums[0] {
		k++
	}
	if k == len(ents) {
		return 0, 0, false
	}
	for i, n := range nums {
		if e := ents[(k+i)%len(ents)]; e.off != int64(offs[i]) || e.tp != n {
			return 0, 0, false
		}
	}
	return uint64(end - ref), k, true
}

// encOffsetsAt is encOffsets with slots[i], when given, tps[i]'s slot as a
// hint (an input partition's tpIndex is its slot; the hint is checked).
func (tx *texts) encOffsetsAt(b []byte, tps []wire.TopicPartition, slots []int32, offs []int) []byte {
	start := len(b)
	b = binary.AppendUvarint(append(b, tOffsets), uint64(len(tps)))
	prev, last := int64(0), -2
	nums := tx.nums[:0] // the partitions' numbers, for offsetsRuns
	for i, tp := range tps {
		n, ok := int(topo.SlotAt(slots, i)), true
		if slots == nil {
			n = last + 1 // the partition after the one before, usually
		}
		if !tx.layout.Input().Is(tp, int32(n)) {
			n, ok = tx.layout.Number(tp)
		}
		if !ok {
			return encLit(b[:start], tx.layout.AppendOffsets(nil, tps, offs))
		}
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendVarint(b, int64(offs[i])-prev)
		prev, last = int64(offs[i]), n
		nums = append(nums, uint64(n))
	}
	tx.nums = nums
	if len(tps) > maxRotation {
		return tx.offsetsRuns(b, start, nums, offs)
	}
	return b
}

// offsetsRuns re-encodes the tOffsets token b[start:], of the partitions
// numbered nums at offsets offs, as a tOffsetsRuns token when that is
// shorter (its partitions come in runs of numbers one after another), in
// place: each run's offsets as the tOffsets token has them (each the
// difference from the one before).
func (tx *texts) offsetsRuns(b []byte, start int, nums []uint64, offs []int) []byte {
	if k := rotation(nums); k > 0 {
		return tx.offsetsRunsRot(b, start, nums, offs, k)
	}
	runs, size := numRuns(nums)
	if size+len(b)-start-1-tokenNumsSize(nums) >= len(b)-start-1 {
		return b
	}
	return appendOffsetsRuns(append(b[:start], tOffsetsRuns), runs, nums, offs)
}

// rotation is i when nums[i:] and then nums[:i] ascend strictly (a
// Fetch's partitions, sorted and rotated to start after the last one
// polled: Kafka's AbstractFetch.fetchablePartitions order as
// subscription.fetchableInto keeps it); 0 when nums is no such rotation
// of an ascending list, or ascends as it is.
func rotation(nums []uint64) int {
	i := 0
	for j := 1; j < len(nums); j++ {
		if nums[j] <= nums[j-1] {
			if i > 0 {
				return 0 // a second descent
			}
			i = j
		}
	}
	if i > 0 && nums[len(nums)-1] >= nums[0] {
		return 0
	}
	return i
}

// offsetsRunsRot re-encodes the tOffsets token b[start:], whose partition
// numbers nums ascend from nums[i] to the end and then from the first
// (rotation), as a tOffsetsRunsRot token when that is shorter, in place:
// the positions rotated back into ascending order as a tOffsetsRuns
// token holds them, after the place the token's first position has
// there. A Fetch's 100 partitions are some runs (not a number each), its
// positions, close to each other, one byte each.
func (tx *texts) offsetsRunsRot(b []byte, start int, nums []uint64, offs []int, i int) []byte {
	sorted := append(append(tx.rotNums[:0], nums[i:]...), nums[:i]...)
	sortedOffs := append(append(tx.rotOffs[:0], offs[i:]...), offs[:i]...)
	tx.rotNums, tx.rotOffs = sorted, sortedOffs
	runs, _ := numRuns(sorted)
	at := len(b) // the token is written after the tOffsets one, then moved if shorter
	b = binary.AppendUvarint(append(b, tOffsetsRunsRot), uint64(len(nums)-i))
	b = appendOffsetsRuns(b, runs, sorted, sortedOffs)
	if n := len(b) - at; n < at-start {
		copy(b[start:], b[at:])
		return b[:start+n]
	}
	return b[:at]
}

// appendOffsetsRuns appends a tOffsetsRuns token's arguments: the runs
// count, then each run's gap, length less one and offsets (each the
// difference from the one before, the first's from 0).
func appendOffsetsRuns(b []byte, runs int, nums []uint64, offs []int) []byte {
	b = binary.AppendUvarint(b, uint64(runs))
	i, end, prev := 0, uint64(0), int64(0)
	for i < len(nums) {
		j := i + 1
		for j < len(nums) && nums[j] == nums[j-1]+1 {
			j++
		}
		b = binary.AppendUvarint(binary.AppendUvarint(b, nums[i]-end), uint64(j-i-1))
		for k := i; k < j; k++ {
			b = binary.AppendVarint(b, int64(offs[k])-prev)
			prev = int64(offs[k])
		}
		end, i = nums[j-1]+1, j
	}
	return b
}

// numRuns counts the runs of numbers one after another in nums, and the
// bytes they take as tPartRuns's arguments; a list that does not ascend
// is one it cannot hold (size past any list's).
func numRuns(nums []uint64) (runs, size int) {
	end := uint64(0)
	for i := 0; i < len(nums); {
		if nums[i] < end {
			return 0, math.MaxInt32
		}
		j := i + 1
		for j < len(nums) && nums[j] == nums[j-1]+1 {
			j++
		}
		size += uvarintLen(nums[i]-end) + uvarintLen(uint64(j-i-1))
		end, i = nums[j-1]+1, j
		runs++
	}
	return runs, size + uvarintLen(uint64(runs))
}

// tokenNumsSize is the bytes nums take in a tPartList token, its count
// included.
func tokenNumsSize(nums []uint64) int {
	size := uvarintLen(uint64(len(nums)))
	for _, n := range nums {
		size += uvarintLen(n)
	}
	return size
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
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
func (tx *texts) encSameAt(b []byte, ref textRef) []byte {
	end, ok := tx.arena.inChunk(ref, len(b)+2*binary.MaxVarintLen64)
	if ok && len(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(tx.scratch) {
		at := end + textRef(len(b)) // where the token will be
		return binary.AppendUvarint(append(b, tSameBack), uint64(at-ref))
	}
	return encSame(b, ref)
}

// encPartList is partList as a token ({o0 o1 p0}, sorted).
func (tx *texts) encPartList(b []byte, tps []wire.TopicPartition) []byte {
	start := len(b)
	tps = wire.SortedView(tps)
	b = binary.AppendUvarint(append(b, tPartList), uint64(len(tps)))
	i := -2
	nums := tx.nums[:0] // the partitions' numbers, for the runs below
	for _, tp := range tps {
		// usually the partition after the one before: checked, not looked up
		if i++; !tx.layout.Input().Is(tp, int32(i)) {
			var ok bool
			if i, ok = tx.layout.Number(tp); !ok {
				return encLit(b[:start], tx.layout.AppendPartList(nil, tps))
			}
		}
		b = binary.AppendUvarint(b, uint64(i))
		nums = append(nums, uint64(i))
	}
	tx.nums = nums
	if len(tps) > maxRotation {
		// as runs, when that is shorter
		if runs, size := numRuns(nums); size < len(b)-start-1 {
			b = binary.AppendUvarint(append(b[:start], tPartRuns), uint64(runs))
			end := uint64(0)
			for i := 0; i < len(nums); {
				j := i + 1
				for j < len(nums) && nums[j] == nums[j-1]+1 {
					j++
				}
				b = binary.AppendUvarint(binary.AppendUvarint(b, nums[i]-end), uint64(j-i-1))
				end, i = nums[j-1]+1, j
			}
		}
	}
	return b
}

// encProcessed is a processed event's text for who's record f: a
// tplProcessed (one record) or tplProcessedRun (a run) when m is its
// client's newest process (its label is the event's member) and f an
// input record, else its spelled-out tokens.
// records is where the record tokens start (0: in the template).
func (tx *texts) encProcessed(who Label, f *wire.Record) (b []byte, whole bool, records int) {
	i, input := tx.fetchedInput(f)
	if input && who.Process == 0 {
		if n := f.Len(); n > 1 {
			b = argOffset(encTemplate(tx.scratch[:0], tplProcessedRun), i)
			return argOffset(argOffset(b, f.Offset), n), true, 0
		}
		return argOffset(argOffset(encTemplate(tx.scratch[:0], tplProcessed), i), f.Offset), true, 0
	}
	b = append(tx.encLabel(tx.scratch[:0], who), phProcessed)
	if input {
		return encRun(b, i, f.Offset, f.Len()), false, len(b)
	}
	return tx.encFetched(b, f), false, len(b)
}

// encValue is a produced record's value: inv(o2.3) as tokens when the
// request names its input record, else the value as it is.
func (tx *texts) encValue(b []byte, r *wire.ProduceRequest) []byte {
	if r.HasSrc {
		b = append(b, phInv)
		if rb, ok := tx.encRecordRef(b, r.Src, r.SrcOffset); ok {
			return append(rb, phCloseParen)
		}
		return append(encLit(b, r.SourceIn(tx.layout)), phCloseParen)
	}
	return encLit(b, r.ValueIn(tx.layout))
}

// maxProduceText is the most bytes a produce's text takes
// (tplProduceAfter: its token, four varints).
const maxProduceText = 1 + 4*binary.MaxVarintLen64

// processedBack is the distance back from the next text added to the
// last processed event's (textArena.processed), when that event names
// record off of input partition tpi-1 (tpi: tpIndex plus one) and a text
// of maxProduceText bytes added now would be in its chunk (put adds it at
// end: the open chunk is this world's and has room); false otherwise.
func (tx *texts) processedBack(tpi int32, off int) (uint64, bool) {
	a := &tx.arena
	end, ok := a.inChunk(a.processed, maxProduceText)
	if !ok || tpi <= 0 || off < 0 {
		return 0, false
	}
	if rec := a.processedRec; !rec.ok || rec.tp != uint64(tpi-1) || rec.off != uint64(off) {
		return 0, false
	}
	return uint64(end - a.processed), true
}

// produceBack is the distance back from the next text added to pt's last
// produce text that spells its producer id, epoch and sequence number,
// and that sequence number, when it has req's producer id and epoch and a
// text of maxProduceText bytes added now lands in its chunk; false
// otherwise.
func (tx *texts) produceBack(pt *ProducerText, req *wire.ProduceRequest) (uint64, int64, bool) {
	end, ok := tx.arena.inChunk(pt.text, maxProduceText)
	if !ok || pt.pid != req.PID || pt.epoch != req.Epoch {
		return 0, 0, false
	}
	return uint64(end - pt.text), pt.seq, true
}
