package coord

import (
	"iter"
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// OffsetsLog is one group's __consumer_offsets: every record written, in
// order (kgrepl keeps them all, as a log not yet compacted, but for those
// older than the window of a world keeping one: ForgetBefore). It is stored
// compactly: what the records of one OffsetCommit share (tick, member,
// generation, producer id, state) is kept once per run of such records,
// and of that what a member's commits of one generation share (member,
// generation, producer id, state) once per such stretch (a head); each
// record adds its offset (4 bytes) and its partition, as a code: its
// index among the world's input partitions. A run's codes are a list in
// parts, and a commit naming the same partitions in the same order as its
// member's previous one (the auto-commit of an unchanged assignment) shares
// that list: its records then cost 4 bytes each, against 8 with their
// codes, 32 with the partition's name and 112 for an OffsetRecord. The
// group id is kept once for the log. At, All and Slice give back
// OffsetRecords equal to what was appended. Chunks are shared between
// clones as for any Seq.
type OffsetsLog struct {
	group   string
	index   topo.InputIndex // the world's input partitions; the zero topo.InputIndex in a log made without a world
	runs    store.Seq[offsetRun]
	heads   store.Seq[offsetHead] // the runs' heads (offsetRun.head)
	offs    store.Seq[int32]      // each record's offset (0 for one kept in odd)
	parts   store.Seq[int32]      // partition codes: run r's records' are parts[r.parts:], one per record
	odd     store.Seq[offsetOdd]  // records whose partition is not an input partition or whose offset is past int32
	members store.NameTable       // the member ids the runs name
	// lists[m] is member m's last commit's list of codes, and where it
	// is in parts. The codes are never changed in place: clones share them.
	lists   []codeList
	scratch []int32 // appendCommit's codes; not shared with clones
}

// codeList is a list of partition codes stored in parts from at.
type codeList struct {
	at    int
	codes []int32
}

// offsetRun (16 bytes) is what consecutive records of the log have in
// common; the run's records are offs[first:] up to the next run's first,
// and their partition codes parts[parts:] as many. A log holds at most
// 2^31-1 records (header panics past it). The rest of what they share is
// its head, heads[head]: a member commits every few ticks under one
// generation, member id and producer id, so its runs share one head (16
// bytes a commit, not 32).
type offsetRun struct {
	first int32
	parts int32
	Tick  int32
	head  int32
}

// offsetHead is what the runs of a stretch of commits have in common
// besides their tick. Heads are found by value among the last few
// (OffsetsLog.headOf), so two runs may have equal heads at two indexes;
// setPendingState changes every matching head, so runs change together as
// they did when each kept its own.
type offsetHead struct {
	PID        int64
	Generation int32
	member     int32 // number in members
	state      uint8 // index in offsetStates
	marker     bool
}

// A partition code is the partition's index among the input partitions;
// entryNoTP stands for a marker's empty partition (offset -1); below it,
// odd[entryNoTP-1-code] holds the record's partition and offset.
const entryNoTP = -1

type offsetOdd struct {
	TP     wire.TopicPartition
	Offset int
}

// entry encodes tp and offset as a code and the offset to store; hint is
// tp's slot if known (-1: not), and c (may be nil) remembers the last
// topic looked up, for the lists of one commit.
func (l *OffsetsLog) entry(tp wire.TopicPartition, hint int32, offset int, c *topo.TopicCache) (code, off int32) {
	if offset >= -1 && offset <= 1<<31-1 {
		if tp == (wire.TopicPartition{}) {
			return entryNoTP, int32(offset)
		}
		if p, ok := l.index.SlotCached(tp, hint, c); ok {
			return int32(p), int32(offset)
		}
	}
	l.odd.Append(offsetOdd{TP: tp, Offset: offset})
	return entryNoTP - store.Int32Of(l.odd.Len(), "odd offset records"), 0
}

// tpOffset decodes a record's code and stored offset.
func (l *OffsetsLog) tpOffset(code, off int32) (wire.TopicPartition, int) {
	switch {
	case code >= 0:
		return l.index.At(int(code)), int(off)
	case code == entryNoTP:
		return wire.TopicPartition{}, int(off)
	}
	o := l.odd.At(int(entryNoTP - 1 - code))
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

// Len is the number of records, those let go of (ForgetBefore) included.
func (l *OffsetsLog) Len() int { return l.offs.Len() }

// First is the index of the first record kept: 0 unless ForgetBefore let
// go of some (history.ms). Records before it can no longer be read.
func (l *OffsetsLog) First() int { return l.offs.First() }

// runOf is the index of the run holding record i (kept).
func (l *OffsetsLog) runOf(i int) int {
	lo, n := l.runs.First(), l.runs.Len()
	return lo + sort.Search(n-lo, func(k int) bool { return int(l.runs.At(lo+k).first) > i }) - 1
}

// At returns record i (kept: First or later).
func (l *OffsetsLog) At(i int) OffsetRecord { return l.record(l.runs.At(l.runOf(i)), i) }

// TickAt is record i's tick (kept: First or later), without making the record.
func (l *OffsetsLog) TickAt(i int) int { return int(l.runs.At(l.runOf(i)).Tick) }

// record is record i, of run r.
func (l *OffsetsLog) record(r offsetRun, i int) OffsetRecord {
	tp, offset := l.tpOffset(l.parts.At(int(r.parts)+i-int(r.first)), l.offs.At(i))
	h := l.heads.At(int(r.head))
	return OffsetRecord{Tick: int(r.Tick), Group: l.group, TP: tp, Offset: offset, Generation: int(h.Generation),
		MemberID: l.members.Name(h.member), PID: h.PID, State: offsetStates[h.state], Marker: h.marker}
}

// All ranges over the records kept with their indexes, oldest first.
func (l *OffsetsLog) All() iter.Seq2[int, OffsetRecord] {
	return func(yield func(int, OffsetRecord) bool) {
		if l.First() >= l.Len() {
			return
		}
		k, n := l.runOf(l.First()), l.runs.Len()
		for i := l.First(); i < l.Len(); i++ {
			for k+1 < n && int(l.runs.At(k+1).first) <= i {
				k++
			}
			if !yield(i, l.record(l.runs.At(k), i)) {
				return
			}
		}
	}
}

// Slice copies the records kept of [from, to) into a new slice.
func (l *OffsetsLog) Slice(from, to int) []OffsetRecord {
	return store.SliceOf(max(from, l.First()), to, l.At)
}

// Append adds a record; every record of a log belongs to the same group.
func (l *OffsetsLog) Append(rec OffsetRecord) {
	run, _ := l.header(rec)
	// The last run takes it if it holds such records and its codes end
	// parts (a run sharing an earlier list does not).
	if last := l.runs.Last(); last == nil || !l.same(last, run) || int(last.parts)+l.Len()-int(last.first) != l.parts.Len() {
		l.runs.Append(run)
	}
	code, off := l.entry(rec.TP, -1, rec.Offset, nil)
	l.parts.Append(code)
	l.offs.Append(off)
}

// appendCommit adds one record per partition of tps at offs, each like
// rec (whose TP and Offset are not used): the records of one OffsetCommit,
// a run of their own. slots, when not nil, are the partitions' slots as
// the member knew them. The partitions' codes are shared with the member's
// previous commit when they are the same list.
func (l *OffsetsLog) appendCommit(rec OffsetRecord, tps []wire.TopicPartition, slots []int32, offs []int) {
	if len(tps) == 0 {
		return
	}
	run, m := l.header(rec)
	codes := l.scratch[:0]
	var tc topo.TopicCache
	for i, tp := range tps {
		code, off := l.entry(tp, topo.SlotAt(slots, i), offs[i], &tc)
		codes = append(codes, code)
		l.offs.Append(off)
	}
	l.scratch = codes
	if m < len(l.lists) && slices.Equal(l.lists[m].codes, codes) {
		run.parts = int32(l.lists[m].at)
	} else {
		for m >= len(l.lists) {
			l.lists = append(l.lists, codeList{at: -1})
		}
		l.lists[m] = codeList{at: int(run.parts), codes: slices.Clone(codes)}
		for _, c := range codes {
			l.parts.Append(c)
		}
	}
	l.runs.Append(run)
}

// header is the run for records like rec, starting at the end of the log
// (its records' codes at the end of parts), and its member's number.
func (l *OffsetsLog) header(rec OffsetRecord) (offsetRun, int) {
	if l.Len() == 0 && l.group == "" {
		l.group = rec.Group
	} else if rec.Group != l.group {
		panic("sim: record of group " + rec.Group + " in the offsets log of " + l.group)
	}
	h := offsetHead{member: l.members.Index(rec.MemberID), PID: rec.PID, Generation: store.Int32Of(rec.Generation, "generation"),
		state: offsetStateOf(rec.State), marker: rec.Marker}
	return offsetRun{first: store.Int32Of(l.Len(), "__consumer_offsets record"), parts: store.Int32Of(l.parts.Len(), "__consumer_offsets partition code"),
		Tick: store.Int32Of(rec.Tick, "tick"), head: l.headOf(h)}, int(h.member)
}

// headOf is h's index in heads: one of the last eight equal to it, else
// added (the members of a group take turns: a few heads are live at a
// time, and a head seen long ago may be added again).
func (l *OffsetsLog) headOf(h offsetHead) int32 {
	n := l.heads.Len()
	for i := n - 1; i >= max(n-8, l.heads.First()); i-- {
		if l.heads.At(i) == h {
			return int32(i)
		}
	}
	l.heads.Append(h)
	return store.Int32Of(n, "__consumer_offsets heads")
}

// same reports whether runs r and o hold records alike but for their
// partitions and offsets (the same tick and an equal head).
func (l *OffsetsLog) same(r *offsetRun, o offsetRun) bool {
	return r.Tick == o.Tick && (r.head == o.head || l.heads.At(int(r.head)) == l.heads.At(int(o.head)))
}

// SetPendingStateForTest is setPendingState without the marker that
// always comes with it (Offsets.completeTxn): for the tests of the
// invariant that no pending offset turns committed without its marker.
func (l *OffsetsLog) SetPendingStateForTest(pid int64, state string) { l.setPendingState(pid, state) }

// setPendingState gives every pending record of pid the state (the
// transaction's marker: committed or aborted), copying shared chunks first.
// A run's records share their state, and a run its head's, so the change is
// per head.
func (l *OffsetsLog) setPendingState(pid int64, state string) {
	pending, to := offsetStateOf("pending"), offsetStateOf(state)
	l.heads.Update(l.heads.First(), l.heads.Len(), func(h *offsetHead) bool { return h.PID == pid && h.state == pending },
		func(h *offsetHead) { h.state = to })
}

// ForgetBefore lets go of the records from before tick, whole chunks at a
// time as for any Seq (store.Seq.ForgetBefore), for a world that keeps a
// window of its past (history.ms, sim's World.forgetHistory): every
// record from tick on is kept, and At, All and Slice give back the same
// records as a log that let none go. Kafka's log cleaner would compact
// __consumer_offsets to each key's last record; kgrepl keeps the window's
// records instead, as it does of its other logs. Nothing the coordinator
// does reads a record: committed offsets are kept apart (offsetTable), and
// a transaction's marker changes heads (setPendingState), not records.
// What the kept records refer to stays: their runs, the heads those
// name, the codes they read (a run may share an older commit's list) and
// the odd records among those. A member's list (lists) that no kept run
// reads is dropped, so that it does not hold its codes: the member's next
// commit writes its codes anew, the records it makes being the same.
// Clones share the chunks: one made before keeps every chunk it had.
func (l *OffsetsLog) ForgetBefore(tick int) {
	lo, n := l.runs.First(), l.runs.Len()
	if lo >= n {
		return
	}
	// The first run of tick or later (runs are in tick order) and its
	// first record: unless it starts a later chunk, there is nothing to
	// let go of.
	k := lo + sort.Search(n-lo, func(k int) bool { return int(l.runs.At(lo+k).Tick) >= tick })
	cut := l.Len()
	if k < n {
		cut = int(l.runs.At(k).first)
	}
	if store.ChunkOf(cut) <= store.ChunkOf(l.First()) {
		return
	}
	l.offs.ForgetBefore(cut)
	first := l.First()
	k = l.runOf(first)
	head, parts := l.heads.Len(), l.parts.Len()
	for i := k; i < n; i++ {
		r := l.runs.At(i)
		head, parts = min(head, int(r.head)), min(parts, int(r.parts))
	}
	l.runs.ForgetBefore(k)
	l.heads.ForgetBefore(head)
	for m := range l.lists {
		if l.lists[m].at >= 0 && l.lists[m].at < parts {
			l.lists[m] = codeList{at: -1} // lists is the log's own (clone copies it)
		}
	}
	// An odd record is read only by the code written for it, in the order
	// written: those of the codes let go of go with them.
	odd := -1
	for i := l.parts.First(); i < store.ChunkOf(parts)*store.SeqChunk(); i++ {
		if c := l.parts.At(i); c < entryNoTP {
			odd = int(entryNoTP - 1 - c)
		}
	}
	l.parts.ForgetBefore(parts)
	if odd >= 0 {
		l.odd.ForgetBefore(odd + 1)
	}
}

func (l *OffsetsLog) clone() OffsetsLog {
	return OffsetsLog{group: l.group, index: l.index, runs: l.runs.Clone(), heads: l.heads.Clone(), offs: l.offs.Clone(), parts: l.parts.Clone(),
		odd: l.odd.Clone(), members: l.members.Clone(), lists: store.Copy(l.lists)}
}
