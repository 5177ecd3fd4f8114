package sim

import (
	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/txncoord"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Clone returns an independent copy of the world: stepping or changing one
// never shows in the other, and both go on exactly as the original would.
// It is what snapshots are made of (the explorer forks thousands of
// branches from one prefix). Request and response bodies are shared: they
// are never changed once sent. What grows with the world's age (trace,
// events and their texts, log cells, pause series) is shared chunk by chunk
// (see Seq and textArena), so a clone costs the live state, not the history.
func (w *World) Clone() *World { return w.clone(nil) }

// clone is Clone; with r, the copy is made in the storage of r's last copy,
// finished (Reuser.Clone): its World, its arrays of logs, members, group
// members, packets on the wire and member slices, its maps, its scratch
// lists and its free lists. What the copy needs beyond them is allocated.
func (w *World) clone(r *Reuser) *World {
	var sp spare
	var n *World
	plain := r == nil // Clone: no storage to keep for a next copy
	if o := w.reuser; o != nil && o.last == w && o != r {
		// w is a Reuser's last copy, copied before it is finished: the
		// copy may share w's storage (a delivered packet still referenced
		// lives in the Reuser's wire array), so the Reuser must not make
		// its next copy in it. It starts afresh; w keeps its storage.
		*o = Reuser{}
	}
	if r != nil {
		if r.last == w {
			// Copying its own last copy: that one is not finished, and its
			// arrays are the ones about to be read.
			*r = Reuser{}
		}
		if old := r.last; old != nil {
			sp = spare{memberSeq: old.memberSeq, current: old.current, broker: old.broker, procs: old.procs,
				group: old.Group, txn: old.Txn, env: old.env, actBuf: old.actBuf, procBuf: old.procBuf, tpBuf: old.tpBuf, pausedBuf: old.pausedBuf, markBuf: old.markBuf}
			n = old
		}
		r.last = nil
	} else {
		r = &Reuser{} // no storage: every array below is made
	}
	if n == nil {
		n = new(World)
	}
	*n = *w
	n.Cfg = w.Cfg.clone()
	n.clients = store.Copy(w.clients)
	n.memberSeq = store.CopyMapInto(sp.memberSeq, w.memberSeq)
	n.trace = w.trace.Clone(&n.Tick, n)
	n.Packets, n.Events = &n.trace.Packets, &n.trace.Events
	// The environment: drop rules, timers (in the finished copy's arrays
	// if they have the room), process sets and free lists (env.Clone);
	// its packets on the wire below.
	n.env = w.env.Clone(&n.Tick, n.trace, sp.env)
	sending, inflight := w.env.Wire()
	n.Sink = w.Sink.clone()

	// The trace is shared chunk by chunk (its records never change). The
	// live packets still on the wire get their Delivered tick at the next
	// Step, so the copy gets its own of each, and every pointer to one is
	// turned to the copy.
	// The copies, of packets and of the other objects below that a world
	// has a few of, are made in one array per kind: one allocation each
	// rather than one per object.
	r.wire = store.ReuseBuf(r.wire, len(sending)+len(inflight))
	wire := r.wire
	for i, p := range sending {
		wire[i] = *p
	}
	for i, p := range inflight {
		wire[len(sending)+i] = *p
	}
	// re finds a live packet's copy: by a walk of the two lists while they
	// are short (a few packets: no map to make), else in a map.
	var pk map[*Packet]*Packet
	if len(wire) > 32 {
		pk = make(map[*Packet]*Packet, len(wire))
		for i, p := range sending {
			pk[p] = &wire[i]
		}
		for i, p := range inflight {
			pk[p] = &wire[len(sending)+i]
		}
	}
	re := func(p *Packet) *Packet {
		if p == nil {
			return nil
		}
		if pk != nil {
			if c, ok := pk[p]; ok {
				return c
			}
			return p
		}
		for i, q := range sending {
			if q == p {
				return &wire[i]
			}
		}
		for i, q := range inflight {
			if q == p {
				return &wire[len(sending)+i]
			}
		}
		return p
	}
	for i := range wire {
		wire[i].Req = re(wire[i].Req)
	}
	onWire := func(ps []*Packet, at int) []*Packet {
		if ps == nil {
			return nil
		}
		out := make([]*Packet, len(ps))
		for i := range ps {
			out[i] = &wire[at+i]
		}
		return out
	}
	n.env.SetWire(onWire(sending, 0), onWire(inflight, len(sending)))
	n.Group = w.Group.clone(re, sp.group, r)
	n.Txn = w.Txn.Clone(n.env, sp.txn)
	n.broker = w.broker.Clone(n.env, re, n, n.Txn, sp.broker, &r.logs, !plain)

	n.procs = store.ReuseBuf(sp.procs, len(w.procs))
	r.procs = store.ReuseBuf(r.procs, len(w.procs))
	// Every member's positions, processed and committed offsets in one
	// array, their batches in another, their producers' sequence numbers
	// and requests in flight in two more (cutInto).
	var ints, batch, seqs, unacked int
	for _, m := range w.procs {
		ints += len(m.positions.es) + len(m.processed.es) + len(m.committed.es)
		batch += len(m.batch)
		seqs += len(m.prod.seq)
		unacked += len(m.prod.unacked)
	}
	bufs := &r.bufs
	*bufs = memberBufs{ints: store.ReuseBuf(bufs.ints, ints)[:0], batch: store.ReuseBuf(bufs.batch, batch)[:0],
		seqs: store.ReuseBuf(bufs.seqs, seqs)[:0], unacked: store.ReuseBuf(bufs.unacked, unacked)[:0]}
	for i, m := range w.procs {
		c := &r.procs[i]
		m.cloneInto(c, bufs)
		c.lastJoin, c.cg.inFlight, c.cg.commitPkt = re(m.lastJoin), re(m.cg.inFlight), re(m.cg.commitPkt)
		n.procs[i] = c
	}
	n.current = sp.current
	if n.current == nil {
		n.current = make(map[string]*Member, len(w.current))
	}
	clear(n.current)
	for c, m := range w.current {
		n.current[c] = n.procs[m.proc] // a process's copy has its process number
	}
	// The tick loop's scratch lists are private to a world and kept by
	// nothing: a finished copy's serve the new one (nil for a plain copy).
	n.actBuf, n.procBuf, n.tpBuf, n.pausedBuf, n.markBuf = sp.actBuf[:0], sp.procBuf[:0], sp.tpBuf[:0], sp.pausedBuf[:0], sp.markBuf[:0]
	n.Meter = w.Meter.clone()
	r.last = n
	if plain {
		n.reuser = nil
	} else {
		n.reuser = r
	}
	return n
}

// spare is what a finished copy hands to the next (World.clone): its maps
// and pointer lists, its group, its free lists and its scratch lists.
type spare struct {
	memberSeq map[string]int
	current   map[string]*Member
	broker    *broker.Broker
	procs     []*Member
	group     *Group
	txn       *txncoord.Coordinator
	env       *env.Env
	actBuf    []*Member
	procBuf   []int
	tpBuf     []TopicPartition
	pausedBuf []TopicPartition
	markBuf   []bool
}

// memberBufs are the arrays World.Clone copies its members' small slices
// into, one per kind, rather than one allocation per slice (cutInto).
type memberBufs struct {
	ints    []partInt
	batch   []wire.Record
	seqs    []int
	unacked []*wire.ProduceRequest
}

// clone copies the group into dst (a finished copy's group, with its
// members map; nil: a new one), its members into r's array.
func (g *Group) clone(re func(*Packet) *Packet, dst *Group, r *Reuser) *Group {
	var members map[string]*GroupMember
	if dst == nil {
		dst = new(Group)
	} else {
		members = dst.members
	}
	n := dst
	*n = *g
	if members == nil {
		members = make(map[string]*GroupMember, len(g.sorted))
	}
	clear(members)
	n.members = members
	// The copies in one array, in member-id order: the copy's sorted list
	// points into it.
	r.gms = store.ReuseBuf(r.gms, len(g.sorted))
	gms := r.gms
	n.sorted = nil
	if len(g.sorted) > 0 {
		n.sorted = make([]*GroupMember, len(g.sorted))
	}
	for i, gm := range g.sorted {
		// Topics, Owned, Protocols, Assignment, Target and Revoking are
		// shared: each is replaced, never changed in place (see GroupMember).
		c := &gms[i]
		*c = *gm
		c.joinPkt, c.syncPkt = re(gm.joinPkt), re(gm.syncPkt)
		n.members[gm.MemberID] = c
		n.sorted[i] = c
	}
	n.static = store.CopyLazy(g.static)
	n.fenced = store.CopyLazy(g.fenced)
	n.offsets = g.offsets.clone()
	n.pending = nil // made at its first write (putMap), so nil while empty
	if len(g.pending) > 0 {
		n.pending = make(map[int64]map[TopicPartition]OffsetRecord, len(g.pending))
		for pid, m := range g.pending {
			n.pending[pid] = store.CopyMap(m)
		}
	}
	n.OffsetsLog = g.OffsetsLog.clone()
	n.Transitions = g.Transitions.Clone()
	return n
}

func (m *Member) cloneInto(n *Member, bufs *memberBufs) {
	*n = *m
	// Owned is replaced, never changed in place (commits share it too):
	// shared, and with it the slots computed for it (ownedSlots). So is
	// Topics (a JoinGroup carries it; a restart hands it on). The batch's
	// array is reused for the next batch: copied.
	n.revoke, n.batch = store.Copy(m.revoke), store.CutInto(&bufs.batch, m.batch)
	n.positions, n.processed, n.committed = m.positions.cloneIn(&bufs.ints), m.processed.cloneIn(&bufs.ints), m.committed.cloneIn(&bufs.ints)
	n.closeOffs, n.revokeOffs = store.CopyMap(m.closeOffs), store.CopyMap(m.revokeOffs) // pendingCommit is never changed in place: shared
	n.prod.seq = store.CutInto(&bufs.seqs, m.prod.seq)
	n.prod.unacked = store.CutInto(&bufs.unacked, m.prod.unacked) // the requests themselves are never changed
	n.prod.queued = store.Copy(m.prod.queued)
	n.txn.partitions = store.CopyMap(m.txn.partitions)
	n.txn.offs = store.CopyMap(m.txn.offs)
}

func (pm PauseMeter) clone() PauseMeter {
	n := pm
	n.Entries = make([]PauseEntry, len(pm.Entries))
	for i, e := range pm.Entries {
		e.Partitions = store.Copy(e.Partitions)
		n.Entries[i] = e
	}
	n.Series = pm.Series.clone()
	return n
}
