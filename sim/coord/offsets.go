package coord

// The offset store both group types share: OffsetCommit, OffsetFetch,
// TxnOffsetCommit's pending offsets and their markers, and the
// __consumer_offsets log (Kafka's OffsetMetadataManager). What differs per
// group type is only who may commit: groupKind.validateOffsetCommit.

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/internal/store"
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

func (g *Group) setCommitted(rec OffsetRecord) {
	g.offsets.set(rec.TP, committedOffset{Offset: rec.Offset, MemberID: rec.MemberID, PID: rec.PID, Tick: int32(rec.Tick),
		Generation: int32(rec.Generation), state: offsetStateOf(rec.State)})
}

// Committed gives the committed offset of tp (false when none).
func (g *Group) Committed(tp wire.TopicPartition) (OffsetRecord, bool) {
	c, ok := g.offsets.get(tp)
	if !ok {
		return OffsetRecord{}, false
	}
	return OffsetRecord{Tick: int(c.Tick), Group: g.ID, TP: tp, Offset: c.Offset, Generation: int(c.Generation),
		MemberID: c.MemberID, PID: c.PID, State: offsetStates[c.state]}, true
}

// HasPending reports whether a transaction holds pending offsets for tp.
func (g *Group) HasPending(tp wire.TopicPartition) bool {
	for _, m := range g.pending {
		if _, ok := m[tp]; ok {
			return true
		}
	}
	return false
}

func (g *Group) onCommit(p *wire.Packet, r *wire.OffsetCommitRequest) {
	resp := g.env.NewCommitResponse()
	resp.Partitions, resp.Slots, resp.Offsets, resp.Sync = r.Partitions, r.Slots, r.Offsets, r.Sync
	if code := g.kind().validateOffsetCommit(g, r.MemberID, r.InstanceID, r.Generation, false); code != wire.None {
		g.env.Reply(p, code, "", resp)
		return
	}
	rec := OffsetRecord{Tick: g.env.Now(), Group: g.ID, Generation: r.Generation, MemberID: r.MemberID, PID: -1, State: "committed"}
	g.OffsetsLog.appendCommit(rec, r.Partitions, r.Slots, r.Offsets)
	c := committedOffset{MemberID: r.MemberID, PID: -1, Tick: int32(g.env.Now()), Generation: int32(r.Generation), state: offsetStateOf("committed")}
	g.offsets.setCommit(r.Partitions, r.Slots, r.Offsets, c)
	// "%s committed o0@3 o1@5" and its answer "o0@3 o1@5", the offsets
	// kept once for the request, the event and the answer.
	g.env.ReplyText(p, wire.None, g.env.Trace().Committed(wire.ClientOf(r.MemberID), r.MemberID, p.Text, r.Partitions, r.Slots, r.Offsets), resp)
}

// onOffsetFetch answers the committed offsets. A consumer-protocol client
// sends its member id and epoch (OffsetFetch v9+), which a consumer group
// checks (ConsumerGroup.validateOffsetFetch): an unknown member is
// UNKNOWN_MEMBER_ID, another epoch STALE_MEMBER_EPOCH (ILLEGAL_GENERATION
// for a classic member). Classic clients send neither and are not checked.
func (g *Group) onOffsetFetch(p *wire.Packet, r *wire.OffsetFetchRequest) {
	resp := &wire.OffsetFetchResponse{Partitions: r.Partitions}
	if r.HasMember && g.Type == ConsumerGroup {
		code := wire.None
		if gm := g.members[r.MemberID]; gm == nil {
			code = wire.UnknownMemberID
		} else if r.MemberEpoch != gm.MemberEpoch {
			code = wire.StaleMemberEpoch
			if gm.ClassicMember {
				code = wire.IllegalGeneration
			}
		}
		if code != wire.None {
			g.env.Reply(p, code, fmt.Sprintf("%s epoch %d", wire.OrDash(r.MemberID), r.MemberEpoch), resp)
			return
		}
	}
	code := wire.None
	for _, tp := range r.Partitions {
		off := -1
		if rec, ok := g.offsets.get(tp); ok {
			off = rec.Offset
		}
		if g.HasPending(tp) {
			code = wire.UnstableOffsetCommit
		}
		resp.Offsets = append(resp.Offsets, off)
	}
	g.env.Reply(p, code, g.env.Layout().Offsets(resp.Partitions, resp.Offsets), resp)
}

// ReceiveTxnOffsetCommit stores a transaction's offsets as pending, after
// KIP-447's group fence (the producer-epoch fence is the transaction
// coordinator's, before: the World routes it there first).
func (g *Group) ReceiveTxnOffsetCommit(p *wire.Packet) {
	r := p.Body.(*wire.TxnOffsetCommitRequest)
	if code := g.kind().validateOffsetCommit(g, r.MemberID, r.InstanceID, r.Generation, true); code != wire.None {
		g.env.Reply(p, code, fmt.Sprintf("%s gen %d", wire.OrDash(r.MemberID), r.Generation), nil)
		return
	}
	if g.pending[r.PID] == nil {
		store.PutMap(&g.pending, r.PID, map[wire.TopicPartition]OffsetRecord{}) // made at the first transaction's offsets: most groups have none
	}
	for i, tp := range r.Partitions {
		rec := OffsetRecord{Tick: g.env.Now(), Group: g.ID, TP: tp, Offset: r.Offsets[i], Generation: r.Generation,
			MemberID: r.MemberID, PID: r.PID, State: "pending"}
		if g.mutations.CommitOffsetsBeforeMarker {
			rec.State, rec.PID = "committed", -1 // the bug: visible before the marker
			g.OffsetsLog.Append(rec)
			g.setCommitted(rec)
			continue
		}
		g.OffsetsLog.Append(rec)
		g.pending[r.PID][tp] = rec
	}
	g.env.Reply(p, wire.None, "pending "+g.env.Layout().Offsets(r.Partitions, r.Offsets), nil)
}

// completeTxnOffsets is the marker in __consumer_offsets: pending offsets
// of pid become committed (COMMIT) or are dropped (ABORT).
func (g *Group) completeTxnOffsets(pid int64, commit bool) {
	state, marker := "aborted", "ABORT"
	if commit {
		state, marker = "committed", "COMMIT"
	}
	g.OffsetsLog.setPendingState(pid, state)
	for _, tp := range sortedTPKeys(g.pending[pid]) {
		rec := g.pending[pid][tp]
		if commit {
			rec.State = "committed"
			g.setCommitted(rec)
		}
	}
	if commit && len(g.pending[pid]) > 0 {
		var tps []wire.TopicPartition
		var offs []int
		for _, tp := range sortedTPKeys(g.pending[pid]) {
			tps = append(tps, tp)
			offs = append(offs, g.pending[pid][tp].Offset)
		}
		g.env.Trace().Eventf(trace.EvCommitted, "", "COMMIT marker: offsets %s of pid %d committed", g.env.Layout().Offsets(tps, offs), pid)
	}
	delete(g.pending, pid)
	g.OffsetsLog.Append(OffsetRecord{Tick: g.env.Now(), Group: g.ID, PID: pid, State: marker, Marker: true, Offset: -1})
}

func sortedTPKeys(m map[wire.TopicPartition]OffsetRecord) []wire.TopicPartition {
	ks := make([]wire.TopicPartition, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	wire.SortPartitions(ks)
	return ks
}
