package sim

import (
	"iter"
	"sort"
)

// OffsetsLog is one group's __consumer_offsets: every record written, in
// order (kgrepl keeps them all, as a log not yet compacted). It is stored
// compactly: what the records of one OffsetCommit share (tick, member,
// generation, producer id, state) is kept once per run of such records, and
// each record adds only its partition's number and its offset (16 bytes
// without pointers, against 112 for an OffsetRecord: the garbage collector
// never scans them); the group id is kept once for the log. At, All and
// Slice give back OffsetRecords equal to what was appended. Chunks are
// shared between clones as for any Seq.
//
// A partition's number is its place among the world's input partitions
// (index), or, for any other (a marker's empty partition, a test's log
// without a world), len(index.tps) plus its place in extra.
type OffsetsLog struct {
	group   string
	runs    Seq[offsetRun]
	entries Seq[offsetEntry]
	index   inputIndex
	extra   []TopicPartition // append-only; clones get it capped, so appends never meet
	extraAt map[TopicPartition]int32
}

// offsetRun is what consecutive records of the log have in common; the
// run's records are entries[first:] up to the next run's first.
type offsetRun struct {
	first      int
	MemberID   string
	PID        int64
	Tick       int32
	Generation int32
	state      uint8 // index in offsetStates
	marker     bool
}

type offsetEntry struct {
	Offset int
	part   int32 // the partition's number (see OffsetsLog)
}

// part numbers tp for an entry.
func (l *OffsetsLog) part(tp TopicPartition, c *topicCache) int32 {
	if i, ok := l.index.slot(tp, c); ok {
		return int32(i)
	}
	k, ok := l.extraAt[tp]
	if !ok {
		if l.extraAt == nil {
			l.extraAt = map[TopicPartition]int32{}
		}
		k = int32(len(l.extra))
		l.extra = append(l.extra, tp)
		l.extraAt[tp] = k
	}
	return int32(len(l.index.tps)) + k
}

// partition is the partition numbered p.
func (l *OffsetsLog) partition(p int32) TopicPartition {
	if int(p) < len(l.index.tps) {
		return l.index.tps[p]
	}
	return l.extra[int(p)-len(l.index.tps)]
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
	return OffsetRecord{Tick: int(r.Tick), Group: l.group, TP: l.partition(e.part), Offset: e.Offset, Generation: int(r.Generation),
		MemberID: r.MemberID, PID: r.PID, State: offsetStates[r.state], Marker: r.marker}
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
func (l *OffsetsLog) Append(rec OffsetRecord) {
	l.startRun(rec)
	l.entries.Append(offsetEntry{part: l.part(rec.TP, nil), Offset: rec.Offset})
}

// appendCommit adds one record per partition of tps at offs, each like
// rec (whose TP and Offset are not used): the records of one OffsetCommit.
func (l *OffsetsLog) appendCommit(rec OffsetRecord, tps []TopicPartition, offs []int) {
	if len(tps) == 0 {
		return
	}
	l.startRun(rec)
	var tc topicCache
	for i, tp := range tps {
		l.entries.Append(offsetEntry{part: l.part(tp, &tc), Offset: offs[i]})
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
	run := offsetRun{first: l.entries.Len(), MemberID: rec.MemberID, PID: rec.PID, Tick: int32(rec.Tick),
		Generation: int32(rec.Generation), state: offsetStateOf(rec.State), marker: rec.Marker}
	if last := l.runs.Last(); last == nil || !last.same(run) {
		l.runs.Append(run)
	}
}

func (r *offsetRun) same(o offsetRun) bool {
	return r.MemberID == o.MemberID && r.PID == o.PID && r.Tick == o.Tick && r.Generation == o.Generation &&
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
	return OffsetsLog{group: l.group, runs: l.runs.clone(), entries: l.entries.clone(), index: l.index,
		extra: l.extra[:len(l.extra):len(l.extra)], extraAt: cpMap(l.extraAt)}
}
