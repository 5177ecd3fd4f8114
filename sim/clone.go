package sim

// Clone returns an independent copy of the world: stepping or changing one
// never shows in the other, and both go on exactly as the original would.
// It is what snapshots are made of (the explorer forks thousands of
// branches from one prefix). Request and response bodies are shared: they
// are never changed once sent. What grows with the world's age (trace,
// events and their texts, log cells, pause series) is shared chunk by chunk
// (see Seq and textArena), so a clone costs the live state, not the history.
func (w *World) Clone() *World {
	n := *w
	n.Cfg = w.Cfg.clone()
	n.clients = cp(w.clients)
	n.memberSeq = cpMap(w.memberSeq)
	n.Events = EventLog{recs: w.Events.recs.clone(), w: &n}
	n.Packets = PacketLog{recs: w.Packets.recs.clone(), w: &n}
	n.texts = w.texts.clone()
	n.parties = w.parties.clone()
	n.scratch, n.keep = nil, nil
	// What is alive now may be shared from here on: neither world recycles
	// it (freelist.go); the copy starts lists of its own.
	w.free.renew()
	n.free = newFreeLists()
	n.drops = cp(w.drops)
	// The timer heap with room to grow (timerQueue.clone).
	n.timers = w.timers.clone()
	n.Sink = w.Sink.clone()

	// The trace is shared chunk by chunk (its records never change). The
	// live packets still on the wire get their Delivered tick at the next
	// Step, so the copy gets its own of each, and every pointer to one is
	// turned to the copy.
	// The copies, of packets and of the other objects below that a world
	// has a few of, are made in one array per kind: one allocation each
	// rather than one per object.
	pk := make(map[*Packet]*Packet, len(w.sending)+len(w.inflight))
	wire := make([]Packet, 0, len(w.sending)+len(w.inflight))
	for _, ps := range [][]*Packet{w.sending, w.inflight} {
		for _, p := range ps {
			wire = append(wire, *p)
			pk[p] = &wire[len(wire)-1]
		}
	}
	re := func(p *Packet) *Packet {
		if c, ok := pk[p]; ok {
			return c
		}
		return p
	}
	for _, c := range pk {
		c.Req = re(c.Req)
	}
	remap := func(ps []*Packet) []*Packet {
		if ps == nil {
			return nil
		}
		out := make([]*Packet, len(ps))
		for i, p := range ps {
			out[i] = re(p)
		}
		return out
	}
	n.inflight, n.sending = remap(w.inflight), remap(w.sending)
	n.parked = make([]parkedFetch, len(w.parked))
	for i, pf := range w.parked {
		n.parked[i] = parkedFetch{pkt: re(pf.pkt)}
	}

	// Every log is in logAt (the input partitions and the output's), found
	// by tpIndex (World.logOf): one pass copies them, no map to rebuild.
	n.logAt = make([]*PartitionLog, len(w.logAt))
	logs := make([]PartitionLog, len(w.logAt))
	for i, l := range w.logAt {
		c := &logs[i]
		l.cloneInto(c)
		n.logAt[i] = c
	}
	n.Group = w.Group.clone(re)
	n.Txn = w.Txn.clone()

	n.procs = make([]*Member, len(w.procs))
	procs := make([]Member, len(w.procs))
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
	bufs := memberBufs{ints: make([]partInt, 0, ints), batch: make([]fetched, 0, batch),
		seqs: make([]int, 0, seqs), unacked: make([]*produceReq, 0, unacked)}
	for i, m := range w.procs {
		m.cloneInto(&procs[i], &bufs)
		n.procs[i] = &procs[i]
		n.procs[i].lastJoin = re(m.lastJoin)
		n.procs[i].cg.inFlight = re(m.cg.inFlight)
		n.procs[i].cg.commitPkt = re(m.cg.commitPkt)
	}
	n.current = make(map[string]*Member, len(w.current))
	for c, m := range w.current {
		n.current[c] = n.procs[m.proc] // a process's copy has its process number
	}
	n.wake, n.busy = w.wake.clone(), w.busy.clone()
	n.actBuf, n.tpBuf, n.pausedBuf, n.markBuf = nil, nil, nil, nil
	n.Meter = w.Meter.clone()
	return &n
}

// memberBufs are the arrays World.Clone copies its members' small slices
// into, one per kind, rather than one allocation per slice (cutInto).
type memberBufs struct {
	ints    []partInt
	batch   []fetched
	seqs    []int
	unacked []*produceReq
}

// cutInto appends s to *buf and returns its copy there, cut to its length,
// so that an append or insert to it reallocates and an element write or a
// delete stays within it; nil for nil.
func cutInto[T any](buf *[]T, s []T) []T {
	if s == nil {
		return nil
	}
	at := len(*buf)
	*buf = append(*buf, s...)
	return (*buf)[at:len(*buf):len(*buf)]
}

func cp[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func cpMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// cpLazy copies a map that is made at its first write (putMap): an empty
// one is copied as nil, no allocation.
func cpLazy[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return cpMap(m)
}

// putMap sets (*m)[k], making the map first if it is nil: for the maps most
// worlds never write (static members, fenced ids, the transaction
// coordinator's), which World.Clone then copies as nil (cpLazy).
func putMap[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}

func (l *PartitionLog) cloneInto(n *PartitionLog) {
	*n = *l
	n.Cells = l.Cells.clone()
	// Most logs never see an idempotent or transactional producer: their
	// maps stay nil (made at the first write), so a copy makes none.
	n.openTxn, n.producers = cpLazy(l.openTxn), nil
	n.Aborted = cp(l.Aborted)
	if len(l.producers) == 0 {
		return
	}
	// The entries in one array and their batches in another, each entry's
	// cut to its length (appends past it reallocate; the window slides
	// within it): three allocations a log, not two an entry.
	n.producers = make(map[int64]*producerEntry, len(l.producers))
	total := 0
	for _, e := range l.producers {
		total += len(e.batches)
	}
	ents := make([]producerEntry, 0, len(l.producers))
	batches := make([]batchRecord, 0, total)
	for pid, e := range l.producers {
		ents = append(ents, producerEntry{epoch: e.epoch, batches: cutInto(&batches, e.batches)})
		n.producers[pid] = &ents[len(ents)-1]
	}
}

func (g *Group) clone(re func(*Packet) *Packet) *Group {
	n := *g
	n.members = make(map[string]*GroupMember, len(g.sorted))
	// The copies in one array, in member-id order: the copy's sorted list
	// points into it.
	gms := make([]GroupMember, len(g.sorted))
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
	n.static = cpLazy(g.static)
	n.fenced = cpLazy(g.fenced)
	n.offsets = g.offsets.clone()
	n.pending = nil // made at its first write (putMap), so nil while empty
	if len(g.pending) > 0 {
		n.pending = make(map[int64]map[TopicPartition]OffsetRecord, len(g.pending))
		for pid, m := range g.pending {
			n.pending[pid] = cpMap(m)
		}
	}
	n.OffsetsLog = g.OffsetsLog.clone()
	n.Transitions = g.Transitions.clone()
	return &n
}

func (t *TxnCoordinator) clone() *TxnCoordinator {
	n := *t
	// Most worlds have no transactional producer: the maps stay nil
	// (putMap makes them at the first register).
	n.entries, n.byPID = nil, nil
	if len(t.entries) > 0 {
		n.entries = make(map[string]*TxnEntry, len(t.entries))
		n.byPID = make(map[int64]*TxnEntry, len(t.byPID))
		old := make(map[*TxnEntry]*TxnEntry, len(t.entries))
		for id, e := range t.entries {
			c := *e
			c.Partitions = cp(e.Partitions)
			n.entries[id] = &c
			old[e] = &c
		}
		for pid, e := range t.byPID {
			n.byPID[pid] = old[e]
		}
	}
	n.Log = t.Log.clone()
	n.Transitions = t.Transitions.clone()
	return &n
}

func (m *Member) cloneInto(n *Member, bufs *memberBufs) {
	*n = *m
	// Owned is replaced, never changed in place (commits share it too):
	// shared, and with it the slots computed for it (ownedSlots). So is
	// Topics (a JoinGroup carries it; a restart hands it on). The batch's
	// array is reused for the next batch: copied.
	n.revoke, n.batch = cp(m.revoke), cutInto(&bufs.batch, m.batch)
	n.positions, n.processed, n.committed = m.positions.cloneIn(&bufs.ints), m.processed.cloneIn(&bufs.ints), m.committed.cloneIn(&bufs.ints)
	n.closeOffs, n.revokeOffs = cpMap(m.closeOffs), cpMap(m.revokeOffs) // pendingCommit is never changed in place: shared
	n.prod.seq = cutInto(&bufs.seqs, m.prod.seq)
	n.prod.unacked = cutInto(&bufs.unacked, m.prod.unacked) // the requests themselves are never changed
	n.prod.queued = cp(m.prod.queued)
	n.txn.partitions = cpMap(m.txn.partitions)
	n.txn.offs = cpMap(m.txn.offs)
}

func (pm PauseMeter) clone() PauseMeter {
	n := pm
	n.Entries = make([]PauseEntry, len(pm.Entries))
	for i, e := range pm.Entries {
		e.Partitions = cp(e.Partitions)
		n.Entries[i] = e
	}
	n.Series = pm.Series.clone()
	return n
}
