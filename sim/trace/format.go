package trace

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
//	tRange tp off n       n input records from off on, a run longer than
//	                      spellRunMax: o2.3..o2.502 (recordset.go)
//	tOffsets n (tp off)*  committed positions: o0@3 o1@5, each off the
//	                      difference from the one before (the first's from
//	                      0): a member's positions are usually close
//	tPartList n tp*       partitions the seed's way: {o0 o1 p0} (partList)
//	tPartRuns n (g l)*    the same list as runs of partitions numbered
//	                      one after another: each run starts g after the
//	                      end of the one before (the first, g after 0) and
//	                      holds l+1; a list of more than maxRotation
//	                      partitions in fewer bytes than tPartList (a
//	                      range assignment of 100,000 partitions: a few
//	                      runs a member, not 3 bytes a partition)
//	tOffsetsRuns n (g l off*)*  tOffsets's positions as tPartRuns's runs,
//	                      each run's l+1 offsets after its g and l (each
//	                      the difference from the one before, as tOffsets)
//	tParty party          a client id (parties): C1
//	tMember party n       a member id, client-n: C1-4
//	tPhrase+k             phrases[k], a fixed piece of a frequent text
//	tTemplate+k args      templates[k] filled with its arguments (the
//	                      most frequent texts, whole: a produce, its answer)
//	tWhole+k args         the same, and the text ends there (no tEnd):
//	                      a text that is one template (texts.addWhole)
//	tNum+k n              phrases[k] and then the number n: " pid 1004"
//	tSame ref             the one token at ref (an absolute textRef) as
//	                      it reads there: a committed event's offsets are
//	                      its OffsetCommit request's (never a tSame itself)
//	tSameBack d           tSame for the token d bytes back in the same
//	                      arena chunk (1 or 2 bytes where tSame's absolute
//	                      ref takes 4 or 5): a committed event's offsets,
//	                      its request's a tick before (texts.encSameAt)
//	tSrcRuns n (dtp doff span count)*  the value of a batch of several
//	                      runs of invoices (wire.ProduceRequest.Runs,
//	                      linger.ms): inv(o0.3..o0.9, o1.4..o1.12: 3, o2.5),
//	                      each run its input partition and first offset as
//	                      differences from the run before's (zigzag; from 0
//	                      and 0), distance to its last and count, spelled as %R
//	                      spells one (a run of one its record's name);
//	                      one token, so that the batch's produced event and
//	                      answer refer to their request's (tSame)
//	tSrcRunsLike ref (doff span count)*  a tSrcRuns token's value for a
//	                      batch of the same partitions as the tSrcRuns token
//	                      at ref (an absolute textRef, the same producer's),
//	                      each run's first offset the difference from its
//	                      run's there (BatchText); a run whose span and
//	                      count are under 16 is two bytes, 0x80|doff and
//	                      span<<4|count (likePacked)
//	tListOf ref           every token of the text at ref (an absolute
//	                      textRef), as they read there: a polled event's
//	                      records when poll() returns the whole Fetch answer
//	                      its text is (Trace.Polled); never a tListOf
//	                      itself, and Records reads through it
//	tRecordSeq n (dp doff)*  n input records, spaced, none following
//	                      the one before in its partition: each its
//	                      partition number and offset as the difference
//	                      from the one before's (zigzag varints; the
//	                      first's from 0): a Fetch answer at 1 record a
//	                      second a partition, one record of each of 100
//	                      partitions numbered one after another at one
//	                      offset, in 2 bytes a record, not 6 or 7
//	tOffsetsRot d k       the tOffsets token d bytes back in the same arena
//	                      chunk, its positions read from the k-th on and
//	                      then from the first: a fetch's positions are its
//	                      commit's, just before, in the fetch's rotating
//	                      order (texts.encOffsets)
//	tOffsetsRunsRot k (tOffsetsRuns's arguments)  the positions of a
//	                      tOffsetsRuns token (partitions ascending) read
//	                      from its k-th on and then from its first: a
//	                      Fetch's positions in its rotating order (its
//	                      100 partitions of T2 a few runs, each position
//	                      the difference from the one before: about a
//	                      byte a position, not a partition number and
//	                      an offset each as tOffsets holds them)
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
	tRange
	tPartRuns
	tOffsetsRuns
	tPhrase = 16
	// tSrcRuns, tListOf, tSrcRunsLike, tRecordSeq and tOffsetsRunsRot are the last bytes
	// below the templates: the tokens above fill 0..15, the phrases start
	// at 16 (TestTokensDoNotOverlap).
	tSrcRuns     = tTemplate - 1
	tListOf      = tTemplate - 2
	tSrcRunsLike = tTemplate - 3
	tRecordSeq   = tTemplate - 4
	// tOffsetsRunsRot is below them all.
	tOffsetsRunsRot = tTemplate - 5
	tTemplate       = 96
	tNum            = 128
	tWhole          = 160
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
// text of an event only: EventLog.At reads it with its member), %R a
// batch's sources in the current partition: its first offset, the
// distance to its last and its count (uvarints), printed as a range of
// records o0.3..o0.9, ": 3" after it when the count is not every record
// from the first to the last (wire.ProduceRequest.ValueIn), %l the last
// %n's number plus %R's count less one (no argument: a batch's last
// sequence number or offset), %u a run of records of the current
// partition: its first offset and its count (uvarints, the count at
// least 1), spelled as the run's records token reads (encRun: o2.3 o2.4
// up to spellRunMax records, o2.3..o2.102 past it).
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
	tplBatch:          "inv(%t%R) pid %n epoch %n seq %n..%l",
	tplBatchPlain:     "inv(%t%R)",
	tplBatchProduced:  "inv(%t%R) written to %t%p at offsets %n..%l",
	tplBatchAck:       "inv(%t%R)%t at offsets %n..%l",
	tplProcessedRun:   "%m processed %t%u",
	tplInputOne:       "%n record appended to %t%p (%r)",
}

const (
	tplProduce    = iota // an idempotent or transactional produce
	tplProduced          // the produced event
	tplProduceAck        // a produce's answer, from its produced event's arguments (texts.packetText)
	tplInput             // the input event
	// tplProducedCell is the produced event of an invoice whose cell
	// names its source: the cell's place alone (its log and offset), the
	// source read from the cell.
	tplProducedCell
	tplProduceAckCell // the answer from tplProducedCell's arguments
	// tplProcessed is a processed event: its member the event's, its
	// record (Event.Records) the template's (texts.eventRecords).
	tplProcessed
	// tplProduceAfter is tplProduce whose record is named by the
	// processed event just before it (texts.processedBack): a member
	// produces the invoice of the record it has just processed, so the
	// record is stored once, and the produce is 7 to 9 bytes, not 9 to 11.
	tplProduceAfter
	// tplProduceNext is tplProduceAfter whose producer id and epoch are
	// those of its producer's last produce that spells them (in the same
	// arena chunk: producer.fullText), and its sequence number a
	// difference from that one's: 4 or 5 bytes.
	tplProduceNext
	// tplBatch is a batch of invoices' Produce (ProduceRequest.SrcCount):
	// its sources as %R, then its producer id, epoch and sequence
	// numbers, the last one the first plus the count less one (%l).
	tplBatch
	tplBatchPlain    // tplBatch of a plain producer: no producer id
	tplBatchProduced // a batch's produced event: its offsets as %n..%l
	tplBatchAck      // a batch's answer, from its produced event's arguments
	// tplProcessedRun is tplProcessed for a run of records (a tick's work
	// on one partition, wire.Record.Count above 1): its member the
	// event's, its records (Event.Records) the template's %t%u.
	tplProcessedRun
	// tplInputOne is tplInput of one record: "1 record appended to
	// orders-2 (o2.10)", not "1 records ... (o2.10..o2.10)".
	tplInputOne
)

// ackTemplate is the template a Produce answer that keeps its produced
// event's text reads it with (texts.packetText).
var ackTemplate = map[byte]int{tWhole + tplProduced: tplProduceAck, tWhole + tplProducedCell: tplProduceAckCell,
	tWhole + tplBatchProduced: tplBatchAck}

// The phrases' bytes stay below tOffsetsRunsRot (a negative array length
// does not compile).
var _ [tOffsetsRunsRot - tPhrase - len(phrases)]struct{}

// phrases are the fixed pieces of the frequent texts, one byte each.
var phrases = [...]string{
	" ", " processed ", " poll() returned ", " committed ", " written to ", " at offset ",
	" max ", ", ", " records appended to ", " (", "..", ")", " pid ", " epoch ", " seq ",
	" (retry)", "inv(", "epoch ", "gen ", ", assigned ", ", target ", " at offsets ",
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
	phAtOffsets
)
