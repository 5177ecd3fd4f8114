package coord

// The offset store both kinds of group share (Kafka's
// OffsetMetadataManager): OffsetCommit, OffsetFetch, TxnOffsetCommit's
// pending offsets and their markers, and the __consumer_offsets log. What
// differs per kind of group is only who may commit and fetch:
// Group.validateOffsetCommit and validateOffsetFetch.

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// OffsetRecord is one record of __consumer_offsets.
type OffsetRecord struct {
	Tick       int
	Group      string
	TP         wire.TopicPartition
	Offset     int
	Generation int
	MemberID   string
	PID        int64  // -1 for a plain OffsetCommit
	State      string // committed, pending, aborted; or COMMIT/ABORT for a marker
	Marker     bool
}

// committedOffset is a partition's latest committed record as the group's
// offsets cache holds it (OffsetMetadataManager.offsets): the record
// without what its key and the group already say, 48 bytes instead of 112.
type committedOffset struct {
	Offset     int
	MemberID   string
	PID        int64
	Tick       int32
	Generation int32
	state      uint8 // index in offsetStates
	has        bool  // offsetTable: the slot is in use
}

// Offsets is the group id's offsets: the latest committed offset of each
// partition, the pending offsets of open transactions by producer id, and
// the __consumer_offsets log. They outlive any one group: a group deleted
// and made anew keeps them.
type Offsets struct {
	group   string
	table   offsetTable
	pending map[int64]map[wire.TopicPartition]OffsetRecord // made at the first TxnOffsetCommit (putMap)
	// Log is the group's __consumer_offsets.
	Log       OffsetsLog
	env       *env.Env
	mutations *Mutations
}

func newOffsets(group string, e *env.Env, mutations *Mutations) Offsets {
	o := Offsets{group: group, env: e, mutations: mutations}
	o.table.index = *e.Layout().Input()
	o.Log.index = *e.Layout().Input()
	return o
}

func (o *Offsets) setCommitted(rec OffsetRecord) {
	o.table.set(rec.TP, committedOffset{Offset: rec.Offset, MemberID: rec.MemberID, PID: rec.PID, Tick: int32(rec.Tick),
		Generation: int32(rec.Generation), state: offsetStateOf(rec.State)})
}

// Committed gives the committed offset of tp (false when none).
func (o *Offsets) Committed(tp wire.TopicPartition) (OffsetRecord, bool) {
	c, ok := o.table.get(tp)
	if !ok {
		return OffsetRecord{}, false
	}
	return OffsetRecord{Tick: int(c.Tick), Group: o.group, TP: tp, Offset: c.Offset, Generation: int(c.Generation),
		MemberID: c.MemberID, PID: c.PID, State: offsetStates[c.state]}, true
}

// CommittedOffset is tp's committed offset (false when none).
func (o *Offsets) CommittedOffset(tp wire.TopicPartition) (int, bool) {
	c, ok := o.table.get(tp)
	return c.Offset, ok
}

// CommittedAt is the committed offset of the input partition numbered i
// (false when none).
func (o *Offsets) CommittedAt(i int) (int, bool) {
	c, ok := o.table.atSlot(i)
	return c.Offset, ok
}

// Version changes whenever an input partition's committed offset is
// written (CommittedAt may then read differently); it is copied with the
// world, so equal versions of one world's history mean no write between.
func (o *Offsets) Version() uint64 { return o.table.version }

// JournalSlots starts listing the input partitions whose committed
// offset is written (TakeTouched): for an observer that follows every
// partition and must not look at each one every tick. It reports
// whether it was listing them already.
func (o *Offsets) JournalSlots() (was bool) {
	was, o.table.journal = o.table.journal, true
	return was
}

// TakeTouched appends to dst the numbers of the input partitions whose
// committed offset was written since the last call (in write order,
// repeats included; none before JournalSlots) and forgets them.
func (o *Offsets) TakeTouched(dst []int32) []int32 {
	dst = append(dst, o.table.touched...)
	o.table.touched = o.table.touched[:0]
	return dst
}

// EachCommitted calls yield for every committed offset, until it returns
// false.
func (o *Offsets) EachCommitted(yield func(tp wire.TopicPartition, offset int) bool) {
	for tp, c := range o.table.all {
		if !yield(tp, c.Offset) {
			return
		}
	}
}

// HasPending reports whether a transaction holds pending offsets for tp.
func (o *Offsets) HasPending(tp wire.TopicPartition) bool {
	for _, m := range o.pending {
		if _, ok := m[tp]; ok {
			return true
		}
	}
	return false
}

// commit is OffsetMetadataManager.commitOffset, once g lets the member
// commit.
func (o *Offsets) commit(p *wire.Packet, r *wire.OffsetCommitRequest, g Group) {
	resp := o.env.NewCommitResponse()
	resp.Partitions, resp.Slots, resp.Offsets, resp.Sync = r.Partitions, r.Slots, r.Offsets, r.Sync
	if code := g.validateOffsetCommit(r.MemberID, r.InstanceID, r.Generation, false); code != wire.None {
		o.env.Reply(p, code, "", resp)
		return
	}
	now := o.env.Now()
	rec := OffsetRecord{Tick: now, Group: o.group, Generation: r.Generation, MemberID: r.MemberID, PID: -1, State: "committed"}
	o.Log.appendCommit(rec, r.Partitions, r.Slots, r.Offsets)
	c := committedOffset{MemberID: r.MemberID, PID: -1, Tick: int32(now), Generation: int32(r.Generation), state: offsetStateOf("committed")}
	o.table.setCommit(r.Partitions, r.Slots, r.Offsets, c)
	// "%s committed o0@3 o1@5" and its answer "o0@3 o1@5", the offsets
	// kept once for the request, the event and the answer.
	o.env.ReplyText(p, wire.None, o.env.Trace().Committed(wire.ClientOf(r.MemberID), r.MemberID, p.Text, r.Partitions, r.Slots, r.Offsets), resp)
}

// fetch answers the committed offsets (OffsetMetadataManager.fetchOffsets).
// A consumer-protocol client sends its member id and epoch (OffsetFetch
// v9+), which the group checks; classic clients send neither and are not
// checked.
func (o *Offsets) fetch(p *wire.Packet, r *wire.OffsetFetchRequest, g Group) {
	resp := &wire.OffsetFetchResponse{Partitions: r.Partitions}
	if r.HasMember {
		if code := g.validateOffsetFetch(r.MemberID, r.MemberEpoch); code != wire.None {
			o.env.Reply(p, code, fmt.Sprintf("%s epoch %d", wire.OrDash(r.MemberID), r.MemberEpoch), resp)
			return
		}
	}
	code := wire.None
	if len(r.Partitions) > 0 {
		resp.Offsets = make([]int, 0, len(r.Partitions))
	}
	var tc topo.TopicCache
	for _, tp := range r.Partitions {
		off := -1
		if rec, ok := o.table.getCached(tp, &tc); ok {
			off = rec.Offset
		}
		if o.HasPending(tp) {
			code = wire.UnstableOffsetCommit
		}
		resp.Offsets = append(resp.Offsets, off)
	}
	o.env.ReplyText(p, code, o.env.Trace().Textf("%s", trace.Positions{L: o.env.Layout(), TPs: resp.Partitions, Offs: resp.Offsets}), resp)
}

// txnCommit stores a transaction's offsets as pending, once g lets the
// member commit (KIP-447's group fence).
func (o *Offsets) txnCommit(p *wire.Packet, g Group) {
	r := p.Body.(*wire.TxnOffsetCommitRequest)
	if code := g.validateOffsetCommit(r.MemberID, r.InstanceID, r.Generation, true); code != wire.None {
		o.env.Reply(p, code, fmt.Sprintf("%s gen %d", wire.OrDash(r.MemberID), r.Generation), nil)
		return
	}
	if o.pending[r.PID] == nil {
		store.PutMap(&o.pending, r.PID, map[wire.TopicPartition]OffsetRecord{}) // made at the first transaction's offsets: most groups have none
	}
	for i, tp := range r.Partitions {
		rec := OffsetRecord{Tick: o.env.Now(), Group: o.group, TP: tp, Offset: r.Offsets[i], Generation: r.Generation,
			MemberID: r.MemberID, PID: r.PID, State: "pending"}
		if o.mutations.CommitOffsetsBeforeMarker {
			rec.State, rec.PID = "committed", -1 // the bug: visible before the marker
			o.Log.Append(rec)
			o.setCommitted(rec)
			continue
		}
		o.Log.Append(rec)
		o.pending[r.PID][tp] = rec
	}
	o.env.Reply(p, wire.None, "pending "+o.env.Layout().Offsets(r.Partitions, r.Offsets), nil)
}

// completeTxn is the marker in __consumer_offsets: pending offsets of pid
// become committed (COMMIT) or are dropped (ABORT).
func (o *Offsets) completeTxn(pid int64, commit bool) {
	state, marker := "aborted", "ABORT"
	if commit {
		state, marker = "committed", "COMMIT"
	}
	o.Log.setPendingState(pid, state)
	for _, tp := range sortedTPKeys(o.pending[pid]) {
		rec := o.pending[pid][tp]
		if commit {
			rec.State = "committed"
			o.setCommitted(rec)
		}
	}
	if commit && len(o.pending[pid]) > 0 {
		var tps []wire.TopicPartition
		var offs []int
		for _, tp := range sortedTPKeys(o.pending[pid]) {
			tps = append(tps, tp)
			offs = append(offs, o.pending[pid][tp].Offset)
		}
		o.env.Trace().Eventf(trace.EvCommitted, "", "COMMIT marker: offsets %s of pid %d committed", o.env.Layout().Offsets(tps, offs), pid)
	}
	delete(o.pending, pid)
	o.Log.Append(OffsetRecord{Tick: o.env.Now(), Group: o.group, PID: pid, State: marker, Marker: true, Offset: -1})
}

func sortedTPKeys(m map[wire.TopicPartition]OffsetRecord) []wire.TopicPartition {
	ks := make([]wire.TopicPartition, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	wire.SortPartitions(ks)
	return ks
}

// clone copies the offsets for a world's copy.
func (o *Offsets) clone(e *env.Env, mutations *Mutations) Offsets {
	n := *o
	n.env, n.mutations = e, mutations
	n.table = o.table.clone()
	n.pending = nil // made at its first write (putMap), so nil while empty
	if len(o.pending) > 0 {
		n.pending = make(map[int64]map[wire.TopicPartition]OffsetRecord, len(o.pending))
		for pid, m := range o.pending {
			n.pending[pid] = store.CopyMap(m)
		}
	}
	n.Log = o.Log.clone()
	return n
}
