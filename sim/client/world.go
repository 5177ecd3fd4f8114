package client

import (
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// What the World does to and asks of a process: deliver, act, fire, the
// users' commands (close, crash, restart, slow, a changed setting), and
// the questions its observers (metrics, invariants, the implicit
// heartbeat) ask.

// Proc is the process's number in its world (its index among the world's
// processes): packets and timers name it for a lookup-free delivery.
func (m *Member) Proc() int { return m.proc }

// Start begins the process: FindCoordinator, then it joins.
func (m *Member) Start() { m.start() }

// Deliver hands the process a packet addressed to it; it acts on it this
// tick.
func (m *Member) Deliver(p *wire.Packet) {
	m.receive(p)
	m.wakeUp()
}

// Act runs the application thread for this tick.
func (m *Member) Act() { m.act() }

// Fire is one of the process's timers firing.
func (m *Member) Fire(t wire.Timer) { m.fire(t) }

// Crash stops the process at once; stop makes it a stop event (a crash
// after N records, which every form of run halts at).
func (m *Member) Crash(stop bool) { m.crash(stop) }

// Stop ends the process without a word (a restart replaces it).
func (m *Member) Stop() { m.die() }

// Close is close() (now: after the record in hand, skipping the rest of
// the batch); false when the process is closing that way already. A second
// signal during a graceful close breaks out now.
func (m *Member) Close(now bool) bool {
	if m.closing && (m.closeNow || !now) {
		return false
	}
	if m.closing {
		m.closeNow = true
		return true
	}
	m.closing, m.closeNow = true, now
	// Blocked in poll(): wakeup() makes it throw at once. Processing, or in
	// a blocking call (commitSync, flush, commitTransaction): close() runs
	// once the loop is back in poll(), or (now) after the record in hand.
	if m.inPoll() {
		m.finishClose()
	}
	return true
}

// CrashAfter crashes the process once it has finished n more records.
func (m *Member) CrashAfter(n int) { m.crashAfter = n }

// Slow marks the next record slow.
func (m *Member) Slow() { m.slowNext = true }

// Reconfigure gives a live process a changed setting: it takes it at once,
// except group.instance.id, which it read when it started, and the
// producer settings, which it takes at its next batch boundary
// (replaceProducer).
func (m *Member) Reconfigure(cc ClientConfig) {
	inst := m.Cfg.InstanceID
	m.Cfg = cc
	m.Cfg.InstanceID = inst
	m.wakeUp()
}

// Supersede marks the process as no longer its client's newest: a newer
// process of the same client started (it runs on only as a zombie).
func (m *Member) Supersede() { m.superseded = true }

// Superseded reports whether a newer process of the same client exists.
func (m *Member) Superseded() bool { return m.superseded }

// Label names the process in narration ("C2", or "C2 (process 1)" when a
// newer process of C2 exists).
func (m *Member) Label() string { return m.label() }

// Consumer reports whether the process speaks the consumer protocol.
func (m *Member) Consumer() bool { return m.consumer }

// Heartbeats reports whether the classic heartbeat thread sends heartbeats
// now (sim/heartbeat.go).
func (m *Member) Heartbeats() bool { return m.heartbeats() }

// JoinRequest is what the process would send in JoinGroup.
func (m *Member) JoinRequest() *wire.JoinGroupRequest { return m.joinRequest() }

// FetchWaiting reports whether the process waits for its fetch fetchID.
func (m *Member) FetchWaiting(fetchID int) bool {
	return m.Alive && m.fetchID == fetchID && m.loop == LoopFetching
}

// Displaced reports whether the process has lost its place: a zombie, out
// of the group, or replaced by a newer process of its client.
func (m *Member) Displaced() bool { return m.Zombie || m.Phase == PhaseOut || m.superseded }

// HoldsProduce reports whether the producer still holds Produce request r
// among those sent and not settled.
func (m *Member) HoldsProduce(r *wire.ProduceRequest) bool { return m.prod.unacked.get(r.ID) == r }

// Unsettled reports whether the process is inside a blocking call or has a
// produce unanswered: not back in poll() with nothing in flight.
func (m *Member) Unsettled() bool {
	return m.loop != LoopIdle && m.loop != LoopFetching || len(m.prod.unacked) > 0
}

// Fetchable lists the partitions the process would fetch now.
func (m *Member) Fetchable() []wire.TopicPartition { return m.fetchable() }

// FetchesHint reports whether the process would fetch tp now (hint: tp's
// input number, -1 when not known; checked before it is trusted).
func (m *Member) FetchesHint(tp wire.TopicPartition, hint int32) bool { return m.fetchesHint(tp, hint) }

// StartClassicStable puts a process of a world's starting classic group
// in place: Stable in generation 1 with the leader and the partitions
// given, nothing consumed yet.
func (m *Member) StartClassicStable(owned []wire.TopicPartition, leader string) {
	m.Phase = PhaseStable
	m.Leader = leader
	m.nextAuto = m.Cfg.AutoCommitInterval
	m.Owned = owned
	for _, tp := range m.Owned {
		m.positions.set(tp, 0)
		m.processed.set(tp, 0)
	}
	m.wakeUp()
}

// StartConsumerStable puts a process of a world's starting consumer group
// in place: at epoch 1 with the partitions given, a consumer-protocol one
// heartbeating every interval.
func (m *Member) StartConsumerStable(owned []wire.TopicPartition, interval int) {
	m.Generation = 1
	m.Phase = PhaseStable
	m.nextAuto = m.Cfg.AutoCommitInterval
	m.Owned = wire.SortedCopy(owned)
	for _, tp := range m.Owned {
		m.positions.set(tp, 0)
		m.processed.set(tp, 0)
	}
	if m.consumer {
		m.cg.state = cgStable
		m.cg.sentOwned, m.cg.ownedSent = store.Copy(m.Owned), true
		m.cg.interval = max(interval, 1)
		m.armHeartbeat(m.cg.interval)
	}
	// A live classic member needs no timer: its heartbeats are implicit
	// (sim/heartbeat.go) and a dead process is timed from when it stopped.
	m.wakeUp()
}

// StartProducer gives a starting world's process its producer id (and,
// with a transactional id, the epoch the transaction coordinator
// registered it at).
func (m *Member) StartProducer(pid int64) {
	m.prod.pid, m.prod.epoch = pid, 0
	m.prod.mode, m.prod.txnID = m.Cfg.Producer(), m.Cfg.TransactionalID
}

// Bufs is where a world's copies keep their processes: the processes
// themselves and the arrays their small slices are copied into, one per
// kind (positions, processed and committed offsets; batches; producers'
// sequence numbers and requests in flight) rather than one allocation per
// slice.
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
	var ints, batch, seqs, unacked int
	for _, m := range procs {
		ints += len(m.positions.es) + len(m.processed.es) + len(m.committed.es)
		batch += len(m.batch)
		seqs += len(m.prod.seq)
		unacked += len(m.prod.unacked)
	}
	mb := &bufs.mem
	*mb = memberBufs{ints: store.ReuseBuf(mb.ints, ints)[:0], batch: store.ReuseBuf(mb.batch, batch)[:0],
		seqs: store.ReuseBuf(mb.seqs, seqs)[:0], unacked: store.ReuseBuf(mb.unacked, unacked)[:0]}
	for i, m := range procs {
		c := &bufs.procs[i]
		m.cloneInto(c, mb)
		c.lastJoin, c.cg.inFlight, c.cg.commitPkt = re(m.lastJoin), re(m.cg.inFlight), re(m.cg.commitPkt)
		c.env, c.host = e, host
		out[i] = c
	}
	return out
}

// Joining reports whether the process is finding the coordinator, joining,
// syncing, or has a rejoin pending.
func (m *Member) Joining() bool {
	return m.Phase == PhaseFinding || m.Phase == PhaseJoining || m.Phase == PhaseSyncing || m.rejoin
}
