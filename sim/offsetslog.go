package sim

import "iter"

// OffsetsLog is one group's __consumer_offsets: every record written, in
// order (kgrepl keeps them all, as a log not yet compacted). Records are
// stored compactly, 72 bytes instead of OffsetRecord's 112: the group id,
// the same in every record of the log, is kept once, the state (one of five
// words) is a byte, and the tick and generation are 32-bit. At, All and
// Slice give back full OffsetRecords, equal to what was appended. Chunks are
// shared between clones as for any Seq.
type OffsetsLog struct {
	group string
	recs  Seq[offsetCell]
}

type offsetCell struct {
	TP         TopicPartition
	MemberID   string
	Offset     int
	PID        int64
	Tick       int32
	Generation int32
	state      uint8 // index in offsetStates
	marker     bool
}

// offsetStates are the states a record of __consumer_offsets can show.
var offsetStates = [...]string{"committed", "pending", "aborted", "COMMIT", "ABORT"}

func offsetStateOf(s string) uint8 {
	for i, v := range offsetStates {
		if v == s {
			return uint8(i)
		}
	}
	panic("sim: unknown __consumer_offsets record state " + s)
}

// Len is the number of records.
func (l *OffsetsLog) Len() int { return l.recs.Len() }

// At returns record i.
func (l *OffsetsLog) At(i int) OffsetRecord { return l.record(l.recs.At(i)) }

func (l *OffsetsLog) record(c offsetCell) OffsetRecord {
	return OffsetRecord{Tick: int(c.Tick), Group: l.group, TP: c.TP, Offset: c.Offset, Generation: int(c.Generation),
		MemberID: c.MemberID, PID: c.PID, State: offsetStates[c.state], Marker: c.marker}
}

// All ranges over the records with their indexes, oldest first.
func (l *OffsetsLog) All() iter.Seq2[int, OffsetRecord] {
	return func(yield func(int, OffsetRecord) bool) {
		for i, c := range l.recs.All() {
			if !yield(i, l.record(c)) {
				return
			}
		}
	}
}

// Slice copies records [from, to) into a new slice.
func (l *OffsetsLog) Slice(from, to int) []OffsetRecord {
	if to <= from {
		return nil
	}
	out := make([]OffsetRecord, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, l.At(i))
	}
	return out
}

// Append adds a record; every record of a log belongs to the same group.
func (l *OffsetsLog) Append(r OffsetRecord) {
	if l.recs.Len() == 0 && l.group == "" {
		l.group = r.Group
	} else if r.Group != l.group {
		panic("sim: record of group " + r.Group + " in the offsets log of " + l.group)
	}
	l.recs.Append(offsetCell{TP: r.TP, MemberID: r.MemberID, Offset: r.Offset, PID: r.PID, Tick: int32(r.Tick),
		Generation: int32(r.Generation), state: offsetStateOf(r.State), marker: r.Marker})
}

// setPendingState gives every pending record of pid the state (the
// transaction's marker: committed or aborted), copying shared chunks first.
func (l *OffsetsLog) setPendingState(pid int64, state string) {
	pending, to := offsetStateOf("pending"), offsetStateOf(state)
	l.recs.Update(0, l.recs.Len(), func(c *offsetCell) bool { return c.PID == pid && c.state == pending },
		func(c *offsetCell) { c.state = to })
}

func (l *OffsetsLog) clone() OffsetsLog { return OffsetsLog{group: l.group, recs: l.recs.clone()} }
