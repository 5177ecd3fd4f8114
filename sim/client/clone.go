package client

import (
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Bufs is where a world's copies keep their processes: the processes
// themselves and the arrays their small slices are copied into, one per
// kind (positions, processed and committed offsets; batches; producers'
// sequence numbers and requests in flight; the memberships of each group
// protocol) rather than one allocation per slice.
type Bufs struct {
	procs []Member
	mem   memberBufs
}

// CloneAll copies a world's processes into bufs (made anew or reused, as
// sim.Reuser does: keep says whether the storage is a Reuser's) and into
// dst (reused when it has the room), each for the environment e and host,
// with re giving the copy of a packet on the wire a process holds (its
// JoinGroup in flight, its heartbeat, its commit before revoking).
func CloneAll(procs []*Member, dst []*Member, bufs *Bufs, e *env.Env, host Host, re func(*wire.Packet) *wire.Packet) []*Member {
	out := store.ReuseBuf(dst, len(procs))
	bufs.procs = store.ReuseBuf(bufs.procs, len(procs))
	var ints, batch, seqs, unacked, consumers int
	for _, m := range procs {
		ints += len(m.positions.es) + len(m.processed.es) + len(m.committed.es)
		batch += len(m.loop.batch)
		seqs += len(m.prod.seq)
		unacked += len(m.prod.unacked)
		if _, ok := m.group.(*consumerMember); ok {
			consumers++
		}
	}
	mb := &bufs.mem
	*mb = memberBufs{ints: store.ReuseBuf(mb.ints, ints)[:0], batch: store.ReuseBuf(mb.batch, batch)[:0],
		seqs: store.ReuseBuf(mb.seqs, seqs)[:0], unacked: store.ReuseBuf(mb.unacked, unacked)[:0],
		classics: store.ReuseBuf(mb.classics, len(procs)-consumers)[:0], consumers: store.ReuseBuf(mb.consumers, consumers)[:0]}
	for i, m := range procs {
		c := &bufs.procs[i]
		mb.cloneMember(c, m)
		// Each membership is copied into the array of its kind, its
		// packets through re (here, not behind the interface: re would
		// escape to the heap).
		switch g := m.group.(type) {
		case *classicMember:
			n := mb.classic()
			*n = *g
			n.lastJoin = re(g.lastJoin)
			c.group = n
		case *consumerMember:
			n := mb.consumer()
			*n = *g
			n.inFlight, n.commitPkt = re(g.inFlight), re(g.commitPkt)
			c.group = n
		}
		c.env, c.host = e, host
		out[i] = c
	}
	return out
}

// memberBufs are the arrays World.Clone copies its members' small slices
// into, one per kind, rather than one allocation per slice (cutInto).
type memberBufs struct {
	ints      []partInt
	batch     []wire.Record
	seqs      []int
	unacked   []*wire.ProduceRequest
	classics  []classicMember  // room counted: the pointers handed out stay valid
	consumers []consumerMember // the same
}

// classic is the next classicMember of the array.
func (b *memberBufs) classic() *classicMember {
	b.classics = b.classics[:len(b.classics)+1]
	return &b.classics[len(b.classics)-1]
}

// consumer is the next consumerMember of the array.
func (b *memberBufs) consumer() *consumerMember {
	b.consumers = b.consumers[:len(b.consumers)+1]
	return &b.consumers[len(b.consumers)-1]
}

// cloneMember copies m into n, its small slices into the arrays (the
// membership is copied apart, in CloneAll).
func (bufs *memberBufs) cloneMember(n, m *Member) {
	*n = *m
	// Owned is replaced, never changed in place (commits share it too):
	// shared, and with it the slots computed for it (ownedSlots). So is
	// Topics (a JoinGroup carries it; a restart hands it on). The batch's
	// array is reused for the next batch: copied.
	n.pendingRevocation, n.loop.batch = store.Copy(m.pendingRevocation), store.CutInto(&bufs.batch, m.loop.batch)
	n.positions, n.processed, n.committed = m.positions.cloneIn(&bufs.ints), m.processed.cloneIn(&bufs.ints), m.committed.cloneIn(&bufs.ints)
	n.loop.closeOffs = store.CopyMap(m.loop.closeOffs) // commits.pending is never changed in place: shared
	n.prod.seq = store.CutInto(&bufs.seqs, m.prod.seq)
	n.prod.unacked = store.CutInto(&bufs.unacked, m.prod.unacked) // the requests themselves are never changed
	n.prod.queued = store.Copy(m.prod.queued)
	n.prod.flight, n.prod.held = store.Copy(m.prod.flight), store.Copy(m.prod.held)
	// No batch is open between turns (drainLinger): the clone opens its
	// own, in arrays of its own or its world's (scratch), and makes its
	// own work space.
	n.prod.open, n.prod.outs, n.prod.order, n.prod.slots, n.prod.hundreds = nil, nil, nil, nil, nil
	n.prod.scratch = false
	n.prod.txn.partitions = store.CopyMap(m.prod.txn.partitions)
	n.prod.txn.offs = store.CopyMap(m.prod.txn.offs)
	n.prod.coord = m.prod.coord.clone()
}
