package trace

// The facts the protocol code states, one method each for the frequent
// ones: every method keeps its arguments in the trace's compact encoding
// (text.go) and returns, where a packet carries it, the packet's text.
// The rare events are Event and Eventf, their texts kept as they are.

import (
	"encoding/binary"
	"slices"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// GroupState records a group coordinator's state change: "group G: FROM
// -> TO (reason)", spelled on the stack and kept as one literal (a branch
// of the explorer makes a few of these).
func (t *Trace) GroupState(group, from, to, reason string) {
	var buf [128]byte
	b := append(append(append(append(append(buf[:0], "group "...), group...), ": "...), from...), " -> "...)
	b = append(b, to...)
	if reason != "" {
		b = append(append(append(b, " ("...), reason...), ')')
	}
	t.eventEnc(kindGroupState, "", encLit(t.scratch[:0], b), 0)
}

// Input records n upstream records appended to input partition tp from
// offset first on.
func (t *Trace) Input(tp wire.TopicPartition, n, first int) {
	if n == 1 {
		b, _ := t.argTP(argNum(encTemplate(t.scratch[:0], tplInputOne), 1), tp)
		t.eventEnc(kindInput, "", argOffset(b, first), 0)
		return
	}
	b, _ := t.argTP(argNum(encTemplate(t.scratch[:0], tplInput), int64(n)), tp) // an input partition: the world has it
	t.eventEnc(kindInput, "", argOffset(argOffset(b, first), first+n-1), 0)
}

// FetchRequest is a Fetch's text: "o0@3 o1@5 max 3" (positions that repeat
// the member's last commit's refer to it). slots are the partitions'
// input numbers as the member knows them (hints, checked), or nil: an
// input partition is then numbered without a lookup of its topic's name
// (T1: a Fetch of 10 partitions each poll, spaced, which the guess "the
// one after the one before" missed).
func (t *Trace) FetchRequest(tps []wire.TopicPartition, slots []int32, offs []int, max int) wire.TextRef {
	return t.addText(encNum(t.encOffsets(t.scratch[:0], tps, slots, offs), phMax, int64(max)))
}

// FetchAnswer is a Fetch answer's text: the records, "o2.3 o2.4".
func (t *Trace) FetchAnswer(recs []wire.Record) wire.TextRef {
	return t.addText(t.encFetchedList(t.scratch[:0], recs))
}

// Polled records poll() returning a batch: "C2 poll() returned o2.3 o2.4";
// the event's Records are the batch. answer (0: none) is the text of the
// Fetch answer the batch is, whole (FetchAnswer's of the same records):
// the event refers to it (tListOf, 5 or 6 bytes) rather than spelling the
// records again (T1: 72 bytes a poll).
func (t *Trace) Polled(who Label, batch []wire.Record, answer wire.TextRef) {
	b := append(t.encLabel(t.scratch[:0], who), phPolled)
	at := len(b)
	if answer != 0 && t.canRefer(answer) {
		b = binary.AppendUvarint(append(b, tListOf), uint64(answer))
	} else {
		b = t.encFetchedList(b, batch)
	}
	t.eventEnc(kindPolled, who.Client, b, at)
}

// Processed records a record processed, "C2 processed o2.3", or a run of
// them (f.Count, the records a tick's work finished in one partition): "C2
// processed o2.3 o2.4", "C2 processed o2.3..o2.102" past spellRunMax.
func (t *Trace) Processed(who Label, f *wire.Record) {
	if b, whole, at := t.encProcessed(who, f); whole && f.Len() == 1 {
		t.Events.add(kindProcessed, who.Client, t.addProcessed(b, int(f.TPI)-1, f.Offset), 0)
	} else if whole {
		t.Events.add(kindProcessed, who.Client, t.addWhole(b), 0)
	} else {
		t.eventEnc(kindProcessed, who.Client, b, at)
	}
}

// CommitRequest is an OffsetCommit's text: "o0@3 o1@5, gen 2, C1-1" (epoch
// instead of gen under the consumer protocol). slots are the partitions'
// input numbers as the member knows them (hints), or nil.
func (t *Trace) CommitRequest(tps []wire.TopicPartition, slots []int32, offs []int, epoch bool, gen int, memberID string) wire.TextRef {
	b := append(t.encOffsetsAt(t.scratch[:0], tps, slots, offs), phComma)
	if epoch {
		b = encNum(b, phEpochWord, int64(gen))
	} else {
		b = encNum(b, phGenWord, int64(gen))
	}
	return t.addText(t.encMemberID(append(b, phComma), memberID))
}

// Committed records a commit written ("C1 committed o0@3 o1@5") and returns
// its answer's text ("o0@3 o1@5"): the answer points at the event's offsets
// token, which refers to the offsets token its request's text begins
// with (CommitRequest: the request and its body never change once sent),
// so the offsets are kept once for the three texts.
func (t *Trace) Committed(client, memberID string, req wire.TextRef, tps []wire.TopicPartition, slots []int32, offs []int) wire.TextRef {
	b := append(t.encMemberID(t.scratch[:0], memberID), phCommitted)
	at := len(b)
	if req != 0 && t.canReferAt(b, req) && offsetsToken(firstByte(t.arena.bytes(req))) {
		b = t.encSameAt(b, req)
	} else {
		b = t.encOffsetsAt(b, tps, slots, offs)
	}
	ref, offsets := t.addTextTail(b, at)
	t.Events.add(kindCommitted, client, ref, 0)
	return offsets
}

// offsetsToken reports whether tok is one of committed positions.
func offsetsToken(tok byte) bool {
	return tok == tOffsets || tok == tOffsetsRuns || tok == tOffsetsRunsRot
}

// HeartbeatRequest is a ConsumerGroupHeartbeat's text: "epoch 2", then
// the fields sent, if any (", join, subscribe orders, owns {}").
func (t *Trace) HeartbeatRequest(epoch int, fields string) wire.TextRef {
	b := encNum(t.scratch[:0], phEpochWord, int64(epoch))
	if fields != "" {
		b = encLit(b, ", "+fields)
	}
	return t.addText(b)
}

// HeartbeatAnswer is a ConsumerGroupHeartbeat answer's text: "epoch 2",
// ", assigned {o0 o1}" when it carries the assignment, ", target {o0 o1
// o2}" when the target differs from it.
func (t *Trace) HeartbeatAnswer(epoch int, assigned []wire.TopicPartition, hasAssignment bool, target []wire.TopicPartition, showTarget bool) wire.TextRef {
	b := encNum(t.scratch[:0], phEpochWord, int64(epoch))
	if hasAssignment {
		b = t.encPartList(append(b, phAssigned), assigned)
	}
	if showTarget {
		b = t.encPartList(append(b, phTarget), target)
	}
	return t.addText(b)
}

// ProducerText is what a producer's next produce text may refer back to:
// its last produce text that spells its producer id, epoch and sequence
// number. A producer keeps one; it is data the trace alone reads.
type ProducerText struct {
	text  wire.TextRef
	pid   int64
	seq   int64
	epoch int
}

// ProduceRequest is a Produce's text, "inv(o2.3) pid 1000 epoch 0 seq 4",
// " (retry)" on a retry. A produce of the record processed just before
// names it by that event; one with the producer id and epoch of pt's last
// refers to it for them.
func (t *Trace) ProduceRequest(req *wire.ProduceRequest, pt *ProducerText) wire.TextRef {
	var b []byte
	whole := false // b is the template alone
	full := false  // b spells the producer id, epoch and sequence number: the next may refer to it
	if d, ok := t.processedBack(req.SrcTPI, req.SrcOffset); ok && req.HasSrc && req.PID >= 0 && req.Attempt == 0 {
		// the record as the processed event just before names it, the
		// producer id and epoch as this producer's last produce spelled
		// them (tplProduceNext), else spelled
		if back, seq, ok := t.produceBack(pt, req); ok {
			b = argNum(argOffset(argOffset(encTemplate(t.scratch[:0], tplProduceNext), int(d)), int(back)), int64(req.Seq)-seq)
		} else {
			b = argNum(argNum(argNum(argOffset(encTemplate(t.scratch[:0], tplProduceAfter), int(d)), req.PID), int64(req.Epoch)), int64(req.Seq))
			full = true
		}
		whole = true
	} else if src, ok := t.argTPI(encTemplate(t.scratch[:0], tplProduce), req.SrcTPI, req.Src); ok && req.HasSrc && req.PID >= 0 {
		b = argNum(argNum(argNum(argOffset(src, req.SrcOffset), req.PID), int64(req.Epoch)), int64(req.Seq))
		whole = req.Attempt == 0
		full = whole
	} else {
		b = t.encValue(t.scratch[:0], req)
		if req.PID >= 0 {
			b = encNum(b, phPID, req.PID)
			b = encNum(b, phEpoch, int64(req.Epoch))
			b = encNum(b, phSeq, int64(req.Seq))
		}
	}
	if req.Attempt > 0 {
		b = append(b, phRetry)
	}
	var text wire.TextRef
	if whole {
		text = t.addWhole(b)
	} else {
		text = t.addText(b)
	}
	if full {
		*pt = ProducerText{text: text, pid: req.PID, epoch: req.Epoch, seq: int64(req.Seq)}
	}
	return text
}

// Produced records req's record written at offset and returns the
// answer's text. When the log's cell names its source (cellNamesSource:
// the partition leader found the invoice's source in the cell, by
// number), the event is the cell's place alone and the answer reads it;
// else the event spells the record and partition by number, and the
// answer keeps the event's text too (packetText reads it as the answer's);
// else both are spelled.
func (t *Trace) Produced(req *wire.ProduceRequest, offset int, cellNamesSource bool) wire.TextRef {
	if cellNamesSource {
		b, _ := t.argTPI(encTemplate(t.scratch[:0], tplProducedCell), req.TPI, req.TP)
		text := t.addWhole(argOffset(b, offset))
		t.Events.add(kindProduced, req.Producer, text, 0)
		return text
	}
	src, ok1 := t.argTPI(encTemplate(t.scratch[:0], tplProduced), req.SrcTPI, req.Src)
	if to, ok2 := t.argTPI(argOffset(src, req.SrcOffset), req.TPI, req.TP); ok1 && ok2 && req.HasSrc {
		text := t.addWhole(argNum(to, int64(offset)))
		t.Events.add(kindProduced, req.Producer, text, 0)
		return text
	}
	b := t.encPart(append(t.encValue(t.scratch[:0], req), phWrittenTo), req.TP)
	t.eventEnc(kindProduced, req.Producer, encNum(b, phAtOffset, int64(offset)), 0)
	return t.addText(encNum(t.encValue(t.scratch[:0], req), phAtOffset, int64(offset)))
}

// ProduceBatch is a batch of invoices' Produce text (req.SrcCount: more
// than one record), "inv(o0.3..o0.9) pid 1000 epoch 0 seq 4..10" (no
// producer id for a plain producer), " (retry)" on a retry: its sources
// kept as a run (tplBatch's %R), never spelled until read.
//
// A batch of several runs (req.Runs) reads "inv(o0.3..o0.9, o1.4..o1.12:
// 3, o2.5) pid 1000 epoch 0 seq 4..16": its value one tSrcRuns token
// (encSrcRuns), first, so that its produced event and answer refer to it
// (ProducedBatch), spelled only when read.
func (t *Trace) ProduceBatch(req *wire.ProduceRequest, bt *BatchText) wire.TextRef {
	if len(req.Runs) > 0 {
		b, base := t.encSrcRunsLike(t.scratch[:0], req, bt)
		if req.PID >= 0 {
			b = encNum(encNum(encNum(encNum(b, phPID, req.PID), phEpoch, int64(req.Epoch)), phSeq, int64(req.Seq)), phDotDot, int64(req.LastSeq()))
		}
		if req.Attempt > 0 {
			b = append(b, phRetry)
		}
		ref := t.addText(b)
		if base && bt != nil {
			// the next batches of these partitions refer to this one
			bt.set(ref, req.Runs, t)
		}
		return ref
	}
	tpl := tplBatchPlain
	if req.PID >= 0 {
		tpl = tplBatch
	}
	b, ok := t.argTPI(encTemplate(t.scratch[:0], tpl), req.SrcTPI, req.Src)
	if !ok || !req.Named {
		// a source partition the world lacks: the value spelled
		b = encLit(t.scratch[:0], req.ValueIn(t.layout))
		if req.PID >= 0 {
			b = encNum(encNum(encNum(encNum(b, phPID, req.PID), phEpoch, int64(req.Epoch)), phSeq, int64(req.Seq)), phDotDot, int64(req.LastSeq()))
		}
	} else {
		b = argBatch(b, req)
		if req.PID >= 0 {
			b = argNum(argNum(argNum(b, req.PID), int64(req.Epoch)), int64(req.Seq))
		}
		if req.Attempt == 0 {
			return t.addWhole(b)
		}
	}
	if req.Attempt > 0 {
		b = append(b, phRetry)
	}
	return t.addText(b)
}

// argBatch appends a batch's sources as tplBatch's %R reads them: its
// first offset, the distance to its last, its count.
func argBatch(b []byte, req *wire.ProduceRequest) []byte {
	return argOffset(argOffset(argOffset(b, req.SrcOffset), req.SrcLast()-req.SrcOffset), req.Count())
}

// ProducedBatch records a batch of invoices (req.SrcCount records) written from
// offset on, "inv(o0.3..o0.9) written to out-0 at offsets 4..10", and
// returns its answer's text, "inv(o0.3..o0.9) at offsets 4..10", which
// reads the event's (texts.packetText): kept once, as a run.
//
// A batch of several runs (req.Runs): "inv(o0.3..o0.9, o2.5) written to
// out-0 at offsets 4..11", its value referring to the one its request's
// text (reqText, 0: none) begins with (tSame: ProduceBatch keeps it as one
// token), else spelling its runs (encSrcRuns); its answer keeps no text
// of its own but the event's, which packetText reads without " written to
// out-0" (one text a batch, not two: T1 wrote 15 bytes an answer).
func (t *Trace) ProducedBatch(req *wire.ProduceRequest, offset int, reqText wire.TextRef) wire.TextRef {
	last := int64(offset + req.Count() - 1)
	if len(req.Runs) > 0 {
		var b []byte
		if reqText != 0 && t.canReferAt(t.scratch[:0], reqText) {
			b = t.encSameAt(t.scratch[:0], reqText)
		} else {
			b = t.encSrcRuns(t.scratch[:0], req)
		}
		b = t.encPartTPI(append(b, phWrittenTo), req.TPI, req.TP)
		text := t.addText(encNum(encNum(b, phAtOffsets, int64(offset)), phDotDot, last))
		t.Events.add(kindProduced, req.Producer, text, 0)
		return text
	}
	src, ok1 := t.argTPI(encTemplate(t.scratch[:0], tplBatchProduced), req.SrcTPI, req.Src)
	if to, ok2 := t.argTPI(argBatch(src, req), req.TPI, req.TP); ok1 && ok2 && req.Named {
		text := t.addWhole(argNum(to, int64(offset)))
		t.Events.add(kindProduced, req.Producer, text, 0)
		return text
	}
	b := t.encPart(append(encLit(t.scratch[:0], req.ValueIn(t.layout)), phWrittenTo), req.TP)
	t.eventEnc(kindProduced, req.Producer, encNum(encNum(b, phAtOffsets, int64(offset)), phDotDot, last), 0)
	return t.addText(encNum(encNum(encLit(t.scratch[:0], req.ValueIn(t.layout)), phAtOffsets, int64(offset)), phDotDot, last))
}

// encSrcRuns appends the value of a batch of several runs (req.Runs),
// inv(o0.3..o0.9, o1.4..o1.12: 3, o2.5), as one tSrcRuns token: each run
// its partition's number and first offset as the differences from the
// run before's (zigzag varints; 0 and 0 before the first), the distance
// to its last and its count. A batch's runs are a member's partitions, at
// offsets that steady traffic keeps close: a difference takes a byte or
// two where an offset took three or four (T1's batches: 74 bytes a text
// to about 50). A run of a partition the world lacks spells the whole
// value instead (one tLit token).
func (t *Trace) encSrcRuns(b []byte, req *wire.ProduceRequest) []byte {
	start := len(b)
	b = binary.AppendUvarint(append(b, tSrcRuns), uint64(len(req.Runs)))
	var part, first int64
	for k := range req.Runs {
		run := &req.Runs[k]
		i, ok := t.runPart(run)
		if !ok || run.Count < 1 || run.Last-run.First+1 < run.Count || run.First < 0 {
			return encLit(b[:start], req.ValueIn(t.layout))
		}
		b = binary.AppendVarint(b, int64(i)-part)
		b = binary.AppendVarint(b, int64(run.First)-first)
		b = argOffset(argOffset(b, int(run.Last-run.First)), int(run.Count))
		part, first = int64(i), int64(run.First)
	}
	return b
}

// runPart is the number of run's input partition, false when the world
// has no such input partition.
func (t *Trace) runPart(run *wire.SrcRun) (int, bool) {
	return int(run.Part), run.Part >= 0 && int(run.Part) < len(t.layout.Inputs())
}

// BatchText is what a producer's next batch of several runs may refer
// to (tSrcRunsLike): its last batch text spelled whole (a tSrcRuns
// token, at the start of the text at ref), the numbers of its runs'
// partitions and their first offsets. A producer keeps one; a World's
// copy shares it: the arrays are written again in place only while no
// copy was made since they were (epoch, store.CopyEpoch), and replaced
// otherwise. Data the trace alone reads.
type BatchText struct {
	ref    wire.TextRef
	parts  []int32
	firsts []int64
	epoch  uint64
}

// set makes the batch of runs whose text is at ref the one the next refer
// to, in arrays of its own: the ones it has when no copy can share them
// (a steady producer sets a new batch every dozen or so, and arrays made
// anew each time were the most frequent allocation of T2's restarts).
func (bt *BatchText) set(ref wire.TextRef, runs []wire.SrcRun, t *Trace) {
	n := len(runs)
	parts, firsts := bt.parts[:0], bt.firsts[:0]
	if e := store.CopyEpoch(); bt.epoch != e || cap(parts) < n || cap(firsts) < n {
		parts, firsts, bt.epoch = make([]int32, n), make([]int64, n), e
	}
	parts, firsts = parts[:n], firsts[:n]
	for k := range runs {
		parts[k], firsts[k] = runs[k].Part, int64(runs[k].First) // encSrcRuns checked each
	}
	bt.ref, bt.parts, bt.firsts = ref, parts, firsts
}

// likeMax is how far a run's first offset may be from the one of bt's
// run of the same partition for a batch to refer to bt: its difference
// then takes one byte (zigzag).
const likeMax = 63

// likePacked marks a run of a tSrcRunsLike token written in two bytes:
// the first its difference's zigzag (under 0x7f, likeMax) with this bit
// set, which a varint of one byte never has; the second its distance to
// its last (high four bits) and its count (low four).
const likePacked = 0x80

// encSrcRunsLike appends a batch's value as a tSrcRunsLike token when bt
// (nil: none) holds a batch of the same partitions in the same order
// whose first offsets are each within likeMax of these: the reference to
// it, then each run's first offset as the difference from its run's, its
// distance to its last and its count (3 bytes a run where encSrcRuns
// takes about 5: a member's batches repeat its partitions). Else it is
// encSrcRuns's, and base reports that it is a tSrcRuns token a next batch
// may refer to.
func (t *Trace) encSrcRunsLike(b []byte, req *wire.ProduceRequest, bt *BatchText) (_ []byte, base bool) {
	if bt != nil && bt.ref != 0 && len(bt.parts) == len(req.Runs) && t.canRefer(bt.ref) {
		if like, ok := t.encLike(b, req.Runs, bt); ok {
			return like, false
		}
	}
	b = t.encSrcRuns(b, req)
	return b, firstByte(b) == tSrcRuns
}

// encLike appends runs as a tSrcRunsLike token referring to bt's batch
// (of as many runs), in one pass: false (and b as it was, but for its
// spare room) when a run is not within likeMax of its run in bt's batch,
// of another partition, or not a run. A run's three numbers usually take
// a byte each (the difference is within likeMax, so its zigzag varint
// is one byte, under 0x7f), and two when its distance to its last and
// its count are each under 16 (likePacked: T1's runs, ~1.25 records):
// written as bytes into room made once for the token.
func (t *Trace) encLike(b []byte, runs []wire.SrcRun, bt *BatchText) ([]byte, bool) {
	start := len(b)
	b = binary.AppendUvarint(append(b, tSrcRunsLike), uint64(bt.ref))
	b = slices.Grow(b, 3*len(runs))
	parts, firsts := bt.parts[:len(runs)], bt.firsts[:len(runs)]
	for k := range runs {
		run := &runs[k]
		i, ok := int(run.Part), run.Part >= 0 // parts[k] is a number encSrcRuns checked
		d := int64(run.First) - firsts[k]
		span := run.Last - run.First
		if !ok || int32(i) != parts[k] || d < -likeMax || d > likeMax || run.Count < 1 || span+1 < run.Count {
			return b[:start], false
		}
		zz := byte(uint64(d<<1) ^ uint64(d>>63)) // AppendVarint's zigzag: under 0x7f within likeMax
		switch {
		case span < 16 && run.Count < 16:
			b = append(b, likePacked|zz, byte(span<<4|run.Count)) // two bytes
		case span < 0x80 && run.Count < 0x80:
			b = append(b, zz, byte(span), byte(run.Count))
		default:
			b = argOffset(argOffset(append(b, zz), int(span)), int(run.Count))
		}
	}
	return b, true
}

// eventEnc records an event whose text is encoded in b (usually
// t.scratch, without its tEnd); records, if at > 0, are the record tokens
// from b[at:] on (Event.Records): a label and a phrase come first, so at is
// a few bytes.
func (t *Trace) eventEnc(k kind, member string, b []byte, at int) {
	if at >= 1<<16 {
		panic("sim: an event's records start past its first 64 KB")
	}
	t.Events.add(k, member, t.addText(b), uint16(max(at, 0)))
}
