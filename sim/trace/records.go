package trace

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// The trace (every packet) and the events are kept for the world's whole
// life, so each is a fixed-size record in a Seq (chunks shared between
// clones) with its text in the world's textArena: no body, no pointer, no
// string. The engine works on live *Packet objects (on the wire, parked,
// the request of an answer being delivered) and drops them once delivered;
// the views read materialized copies (PacketLog.At, EventLog.At), built
// when asked for.

// narrowBits is the reach of a 12-bit field of a record (a packet's peer
// and back, an event's member): a value from it on is kept whole apart.
const narrowBits = 1 << 12

// farField in a narrow field of a packet or event record (its text): the
// record's fields are kept whole apart (packetRecs.far, eventRecs.far).
const farField = 0xffff

// recBase is what the narrow fields of one chunk of packet or event
// records count from: the tick and the text of the chunk's first record
// (the arena's end when that one has no text). Ticks only grow, and texts
// are added in the order their records are (a textRef is nearly the
// arena's byte position: arenaChunk is 1<<arenaShift), so the others are a
// little past them.
type recBase struct {
	tick int32
	text textRef
}

// recBases is the bases of the chunks of a Seq of packet or event records,
// one per chunk, and the open chunk's at hand.
type recBases struct {
	store.Seq[recBase]
	open recBase // the last of Seq
}

// next is the base of the record about to be appended, made from its tick
// and text (the arena's end, textEnd, when it has none) when it starts a
// chunk (starts: Seq.startsChunk).
func (b *recBases) next(starts bool, tick int32, text, textEnd textRef) recBase {
	if starts {
		b.open = recBase{tick: tick, text: text}
		if text == 0 {
			b.open.text = textEnd
		}
		b.Append(b.open)
	}
	return b.open
}

// of is the base of record i's chunk.
func (b *recBases) of(i int) recBase { return b.At(store.ChunkOf(i)) }

func (b *recBases) clone() recBases { return recBases{Seq: b.Seq.Clone(), open: b.open} }

// narrowText is ref as a record's text field: its distance from base plus
// one (0 being the empty text), or farField when it does not fit.
func narrowText(ref, base textRef) uint16 {
	if ref == 0 {
		return 0
	}
	if d := int64(ref) - int64(base) + 1; d > 0 && d < farField {
		return uint16(d)
	}
	return farField
}

func wideText(v uint16, base textRef) textRef {
	if v == 0 {
		return 0
	}
	return base + textRef(v) - 1
}
