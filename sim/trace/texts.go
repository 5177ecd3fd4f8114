package trace

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// texts is a trace's texts, kept encoded: the arena that holds them
// (arena.go) and what they name by number, the world's partitions (its
// layout) and the parties. A fact encodes its text into scratch with the
// encoders (encode.go) and adds it; PacketLog and EventLog read texts back
// (decode.go, and below) when a view asks.
type texts struct {
	layout  *topo.Layout
	sources Sources // the logs a %c argument reads an invoice's source from
	arena   textArena
	parties parties
	// memberIDs: member ids as encMemberID reads them, by the strings a
	// tick passes it (a member's MemberID, a commit's) again and again.
	memberIDs store.StrCache[string, memberIDRef]
	// scratch is where the next text is encoded; private to this trace.
	scratch []byte
	// lists is encLists's list tokens, nums the numbers of the partitions
	// a list token holds (encPartList, encOffsetsAt), reused from text to
	// text (a rebalance of 100,000 partitions encodes lists of them: fresh
	// arrays each time, and reading the numbers back from the token, were
	// a quarter of the bytes a restart allocated); private to this trace,
	// as scratch.
	lists []byte
	nums  []uint64
	// rotNums and rotOffs are a rotated list's numbers and positions in
	// ascending order (offsetsRunsRot), reused as nums.
	rotNums []uint64
	rotOffs []int
}

// cloneInto makes n share the texts written so far, for a copy whose
// logs sources reads (Trace.Clone). It fills n in place: texts is most of
// a kilobyte, which a returned value would copy twice.
func (tx *texts) cloneInto(n *texts, sources Sources) {
	n.layout, n.sources = tx.layout, sources
	n.arena = tx.arena.clone()
	n.parties = tx.parties.clone()
	n.memberIDs = tx.memberIDs
}

// Reading a trace's texts back: a packet's summary, an event's text and
// the records it names, formatted when a view asks.

// packetText is a packet's summary: the text at ref, except that a
// Produce answer whose record was written keeps no text of its own but its
// produced event's (Trace.Produced), read as tplProduceAck, which takes the
// same arguments; and a Produce answer of a batch of several runs keeps
// its produced event's (Trace.ProducedBatch), "VALUE written to out-0 at
// offsets 4..11", read without its second and third tokens: "VALUE at
// offsets 4..11".
func (tx *texts) packetText(api wire.API, response bool, ref textRef) string {
	if api == wire.Produce && response {
		b := tx.arena.bytes(ref)
		if k, ok := ackTemplate[firstByte(b)]; ok {
			r := textReader{tx: tx, b: b[1:]}
			var buf [64]byte
			out, _, _ := r.template(buf[:0], templates[k], 0)
			return string(out)
		}
		if tok := firstByte(b); tok == tSame || tok == tSameBack || tok == tSrcRuns || tok == tLit {
			r := tx.readerAt(ref, "")
			var buf [128]byte
			out, _, ok := r.next(buf[:0])
			if ok && firstByte(r.b) == phWrittenTo {
				r.b = r.b[1:]
				var part [64]byte
				_, _, ok = r.next(part[:0]) // the output partition, as the event names it
				for ok {
					out, _, ok = r.next(out)
				}
				return string(out)
			}
		}
	}
	return tx.text(ref)
}

// appendText formats the text at ref; member is its event's (for %m).
func (tx *texts) appendText(out []byte, ref textRef, member string) []byte {
	r := tx.readerAt(ref, member)
	for ok := true; ok; {
		out, _, ok = r.next(out)
	}
	return out
}

func (tx *texts) text(ref textRef) string { return tx.memberText(ref, "") }

// memberText is the text at ref of an event whose member is member.
func (tx *texts) memberText(ref textRef, member string) string {
	if ref == 0 {
		return ""
	}
	var buf [128]byte
	return string(tx.appendText(buf[:0], ref, member))
}

// eventRecords is an event's Records: the record tokens of its text at ref
// from byte at on, or a tplProcessed or tplProcessedRun text's records;
// read when asked.
func (tx *texts) eventRecords(ref textRef, at uint16) Records {
	b := tx.arena.bytes(ref)
	if at > 0 && int(at) <= len(b) {
		return Records{tx: tx, b: b[at:]}
	}
	switch firstByte(b) {
	case tWhole + tplProcessed:
		return Records{tx: tx, b: b[1:], one: true}
	case tWhole + tplProcessedRun:
		return Records{tx: tx, b: b[1:], one: true, run: true}
	}
	return Records{}
}
