package sim

import (
	"iter"
	"sort"
)

// OffsetsLog is one group's __consumer_offsets: every record written, in
// order (kgrepl keeps them all, as a log not yet compacted). It is stored
// compactly: what the records of one OffsetCommit share (tick, member,
// generation, producer id, state) is kept once per run of such records, and
// each record adds only its partition, as its index among the world's input
// partitions, and its offset (8 bytes, against 112 for an OffsetRecord and
// 32 with the partition's name); the group id is kept once for the log. At,
// All and Slice give back OffsetRecords equal to what was appended. Chunks
// are shared between clones as for any Seq.
type OffsetsLog struct {
	group   string
	index   inputIndex // the world's input partitions; the zero inputIndex in a log made without a world
	runs    Seq[offsetRun]
	entries Seq[offsetEntry]
	odd     Seq[offsetOdd] // records whose partition is not an input partition or whose offset is past int32
	members nameTable      // the member ids the runs name
}

// offsetRun (32 bytes) is what consecutive records of the log have in common; the
// run's records are entries[first:] up to the next run's first.
type offsetRun struct {
	first      int
	PID        int64
	Tick       int32
	Generation int32
	member     int32 // number in members
	state      uint8 // index in offsetStates
	marker     bool
}

// offsetEntry is one record's partition and offset. part is the
// partition's index among the input partitions; entryNoTP stands for a
// marker's empty partition (offset -1); below it, odd[entryNoTP-1-part]
// holds the record's partition and offset.
type offsetEntry struct {
	part, offset int32
}

const entryNoTP = -1

type offsetOdd struct {
	TP     TopicPartition
	Offset int
}

// entry encodes tp and offset; hint is tp's slot if known (-1: not), and
// c (may be nil) remembers the last topic looked up, for the lists of one
// commit.
func (l *OffsetsLog) entry(tp TopicPartition, hint int32, offset int, c *topicCache) offsetEntry {
	if offset >= -1 && offset <= 1<<31-1 {
		if tp == (TopicPartition{}) {
			return offsetEntry{part: entryNoTP, offset: int32(offset)}
		}
		if p, ok := l.index.slotCached(tp, hint, c); ok {
			return offsetEntry{part: int32(p), offset: int32(offset)}
		}
	}
	l.odd.Append(offsetOdd{TP: tp, Offset: offset})
	return offsetEntry{part: entryNoTP - int32Of(l.odd.Len(), "odd offset records")}
}

// tpOffset decodes an entry.
func (l *OffsetsLog) tpOffset(e offsetEntry) (TopicPartition, int) {
	switch {
	case e.part >= 0:
		return l.index.tps[e.part], int(e.offset)
	case e.part == entryNoTP:
		return TopicPartition{}, int(e.offset)
	}
	o := l.odd.At(int(entryNoTP - 1 - e.part))
	return o.TP, o.Offset
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
func (l *OffsetsLog) Len() int { return l.entries.Len() }

// At returns record i.
func (l *OffsetsLog) At(i int) OffsetRecord {
	n := l.runs.Len()
	r := sort.Search(n, func(k int) bool { return l.runs.At(k).first > i }) - 1
	return l.record(l.runs.At(r), l.entries.At(i))
}

func (l *OffsetsLog) record(r offsetRun, e offsetEntry) OffsetRecord {
	tp, offset := l.tpOffset(e)
	return OffsetRecord{Tick: int(r.Tick), Group: l.group, TP: tp, Offset: offset, Generation: int(r.Generation),
		MemberID: l.members.name(r.member), PID: r.PID, State: offsetStates[r.state], Marker: r.marker}
}

// All ranges over the records with their indexes, oldest first.
func (l *OffsetsLog) All() iter.Seq2[int, OffsetRecord] {
	return func(yield func(int, OffsetRecord) bool) {
		k, n := 0, l.runs.Len()
		for i, e := range l.entries.All() {
			for k+1 < n && l.runs.At(k+1).first <= i {
				k++
			}
			if !yield(i, l.record(l.runs.At(k), e)) {
				return
			}
		}
	}
}

// Slice copies records [from, to) into a new slice.
func (l *OffsetsLog) Slice(from, to int) []OffsetRecord { return sliceOf(from, to, l.At) }

// Append adds a record; every record of a log belongs to the same group.
func (l *OffsetsLog) Append(rec OffsetRecord) {
	l.startRun(rec)
	l.entries.Append(l.entry(rec.TP, -1, rec.Offset, nil))
}

// appendCommit adds one record per partition of tps at offs, each like
// rec (whose TP and Offset are not used): the records of one OffsetCommit.
// slots, when not nil, are the partitions' slots as the member knew them.
func (l *OffsetsLog) appendCommit(rec OffsetRecord, tps []TopicPartition, slots []int32, offs []int) {
	if len(tps) == 0 {
		return
	}
	l.startRun(rec)
	var tc topicCache
	for i, tp := range tps {
		l.entries.Append(l.entry(tp, slotAt(slots, i), offs[i], &tc))
	}
}

// startRun opens a run for records like rec, unless the last run already
// holds such records.
func (l *OffsetsLog) startRun(rec OffsetRecord) {
	if l.entries.Len() == 0 && l.group == "" {
		l.group = rec.Group
	} else if rec.Group != l.group {
		panic("sim: record of group " + rec.Group + " in the offsets log of " + l.group)
	}
	run := offsetRun{first: l.entries.Len(), member: l.members.index(rec.MemberID), PID: rec.PID, Tick: int32Of(rec.Tick, "tick"),
		Generation: int32Of(rec.Generation, "generation"), state: offsetStateOf(rec.State), marker: rec.Marker}
	if last := l.runs.Last(); last == nil || !last.same(run) {
		l.runs.Append(run)
	}
}

func (r *offsetRun) same(o offsetRun) bool {
	return r.member == o.member && r.PID == o.PID && r.Tick == o.Tick && r.Generation == o.Generation &&
		r.state == o.state && r.marker == o.marker
}

// setPendingState gives every pending record of pid the state (the
// transaction's marker: committed or aborted), copying shared chunks first.
// A run's records share their state, so the change is per run.
func (l *OffsetsLog) setPendingState(pid int64, state string) {
	pending, to := offsetStateOf("pending"), offsetStateOf(state)
	l.runs.Update(0, l.runs.Len(), func(r *offsetRun) bool { return r.PID == pid && r.state == pending },
		func(r *offsetRun) { r.state = to })
}

func (l *OffsetsLog) clone() OffsetsLog {
	return OffsetsLog{group: l.group, index: l.index, runs: l.runs.clone(), entries: l.entries.clone(), odd: l.odd.clone(),
		members: l.members.clone()}
}
