package client

import (
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// What the World does to and asks of a process beyond its own jobs
// (process.go: Start, Fire, Crash, Stop): deliver, act, the users'
// commands (close, crash after N records, slow, a changed setting), a
// starting world's members put in place, and the questions its observers
// (metrics, invariants, views, the implicit heartbeat) ask.

// Proc is the process's number in its world (its index among the world's
// processes): packets and timers name it for a lookup-free delivery.
func (m *Member) Proc() int { return m.proc }

// Deliver hands the process a packet addressed to it; it acts on it this
// tick.
func (m *Member) Deliver(p *wire.Packet) {
	m.receive(p)
	m.wakeUp()
}

// Act runs the application thread for this tick.
func (m *Member) Act() { m.loop.act(m) }

// Close is close() (now: after the record in hand, skipping the rest of
// the batch); false when the process is closing that way already. A second
// signal during a graceful close breaks out now.
func (m *Member) Close(now bool) bool {
	if m.loop.closing && (m.loop.closeNow || !now) {
		return false
	}
	if m.loop.closing {
		m.loop.closeNow = true
		return true
	}
	m.loop.closing, m.loop.closeNow = true, now
	// Blocked in poll(): wakeup() makes it throw at once. Processing, or in
	// a blocking call (commitSync, flush, commitTransaction): close() runs
	// once the loop is back in poll(), or (now) after the record in hand.
	if m.loop.inPoll() {
		m.loop.finishClose(m)
	}
	return true
}

// Closing reports whether the process is shutting down: close() was
// called (the batch in hand is being finished, or close() commits) and the
// process has not stopped yet.
func (m *Member) Closing() bool { return m.Alive && m.loop.closing }

// CrashAfter crashes the process once it has finished n more records.
func (m *Member) CrashAfter(n int) { m.loop.crashAfter = n }

// Slow marks the next record slow.
func (m *Member) Slow() { m.loop.slowNext = true }

// Reconfigure gives a live process a changed setting: it takes it at once,
// except group.instance.id and partition.assignment.strategy, which it
// read when it started (the assignors too unless switchAssignors, the
// seed's shortcut of a switch for every member), and the producer
// settings, which it takes at its next batch boundary (producer.replace).
func (m *Member) Reconfigure(cc ClientConfig, switchAssignors bool) {
	inst, assignors := m.Cfg.InstanceID, m.Cfg.Assignor
	m.Cfg = cc
	m.Cfg.InstanceID = inst
	if !switchAssignors {
		m.Cfg.Assignor = assignors
	}
	m.wakeUp()
}

// Supersede marks the process as no longer its client's newest: a newer
// process of the same client started (it runs on only as a zombie).
func (m *Member) Supersede() { m.superseded = true }

// Superseded reports whether a newer process of the same client exists.
func (m *Member) Superseded() bool { return m.superseded }

// Consumer reports whether the process speaks the consumer protocol.
func (m *Member) Consumer() bool { return m.group.protocol() == wire.Consumer }

// Heartbeats reports whether the classic heartbeat thread sends heartbeats
// now (sim/heartbeat.go).
func (m *Member) Heartbeats() bool { return m.group.heartbeats(m) }

// HeartbeatSchedule is a classic process's heartbeat thread when it sends
// a heartbeat every heartbeat.interval.ms (Cfg.HeartbeatInterval > 0): the
// tick it was last enabled, and the interval. HeartbeatThread.enable
// resets the heartbeat timer (Heartbeat.resetTimeouts), so the first
// heartbeat goes one interval after it, and Heartbeat.sentHeartbeat resets
// the timer at each send: one every interval from then on. ok is false for
// the implicit heartbeat (interval 0: heard every tick) and for a
// consumer-protocol process.
func (m *Member) HeartbeatSchedule() (since, every int, ok bool) {
	c, classic := m.group.(*classicMember)
	if !classic || m.Cfg.HeartbeatInterval <= 0 {
		return 0, 0, false
	}
	return c.beatSince, m.Cfg.HeartbeatInterval, true
}

// JoinRequest is what the process would send in JoinGroup (nil for a
// consumer-protocol process, which sends none).
func (m *Member) JoinRequest() *wire.JoinGroupRequest {
	if c, ok := m.group.(*classicMember); ok {
		return c.joinRequest(m)
	}
	return nil
}

// FetchWaiting reports whether the process waits for its fetch fetchID.
func (m *Member) FetchWaiting(fetchID int) bool {
	return m.Alive && m.loop.fetchID == fetchID && m.loop.state == LoopFetching
}

// HeldFetchLost: the answer to the process's fetch fetchID, held at the
// broker until data arrived, was lost (pollLoop.heldFetchLost).
func (m *Member) HeldFetchLost(fetchID int, timeoutAt int) {
	m.loop.heldFetchLost(m, fetchID, timeoutAt)
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
	return m.loop.state != LoopIdle && m.loop.state != LoopFetching || len(m.prod.unacked) > 0
}

// Fetchable lists the partitions the process would fetch now: owned,
// positioned partitions, starting after the last partition the previous
// poll read from (the fetcher's rotation). The list is gathered in the
// world's scratch buffer and copied once, rotated, at its exact size.
func (m *Member) Fetchable() []wire.TopicPartition {
	tps, _ := m.fetchableInto(m.env.PartitionScratch(), nil, nil, nil)
	return tps
}

// StartClassicStable puts a process of a world's starting classic group
// in place: Stable in generation 1 with the leader and the partitions
// given, nothing consumed yet.
func (m *Member) StartClassicStable(owned []wire.TopicPartition, leader string) {
	m.Phase = PhaseStable
	m.commits.nextAuto = m.Cfg.AutoCommitInterval
	m.startFromZero(owned)
	m.group.startStable(m, leader, 0)
	m.wakeUp()
}

// StartConsumerStable puts a process of a world's starting consumer group
// in place: at epoch 1 with the partitions given, a consumer-protocol one
// heartbeating every interval (a classic-protocol one is a classic member
// of the consumer group, with no leader).
func (m *Member) StartConsumerStable(owned []wire.TopicPartition, interval int) {
	m.Generation = 1
	m.Phase = PhaseStable
	m.commits.nextAuto = m.Cfg.AutoCommitInterval
	m.startFromZero(wire.SortedCopy(owned))
	m.group.startStable(m, "", interval)
	m.wakeUp()
}

// StartProducer gives a starting world's process its producer id (and,
// with a transactional id, the epoch the transaction coordinator
// registered it at).
func (m *Member) StartProducer(pid int64) {
	m.prod.pid, m.prod.epoch = pid, 0
	m.prod.mode, m.prod.txnID = m.Cfg.Producer(), m.Cfg.TransactionalID
}

// Joining reports whether the process is finding the coordinator, joining,
// syncing, or has a rejoin pending.
func (m *Member) Joining() bool {
	return m.Phase == PhaseFinding || m.Phase == PhaseJoining || m.Phase == PhaseSyncing || m.group.rejoinNeeded()
}

// GroupProtocol is the group protocol this process speaks.
func (m *Member) GroupProtocol() wire.GroupProtocol { return m.group.protocol() }

// ConsumerState is the client's member state under the consumer protocol
// (JOINING, RECONCILING, ACKNOWLEDGING, STABLE, STALE, ...), "" under classic.
func (m *Member) ConsumerState() string {
	if c, ok := m.group.(*consumerMember); ok {
		return c.state
	}
	return ""
}

// Static reports whether the member has a group.instance.id.
func (m *Member) Static() bool { return m.Cfg.InstanceID != "" }

// LoopState reports the application thread's state.
func (m *Member) LoopState() Loop { return m.loop.state }

// Batch lists the records of the batch in hand and how far processing got.
func (m *Member) Batch() (records []string, done int) {
	for i, f := range m.loop.batch {
		if i == m.loop.batchIdx {
			done = len(records) + m.loop.runAt
		}
		if f.Len() == 1 {
			records = append(records, f.ValueIn(m.env.Layout()))
			continue
		}
		for off := f.Offset; off < f.End(); off++ {
			records = append(records, m.env.Layout().Name(f.TP, off))
		}
	}
	if m.loop.batchIdx >= len(m.loop.batch) {
		done = len(records)
	}
	return records, done
}

// BatchText spells the batch in hand as the trace spells records, and how
// far processing got, in records. Records that follow each other in one
// input partition are a run; a run of up to trace.SpellRunMax records
// names each (o0.3 o0.4 o0.5, the page's batches), a longer one reads
// first..last (t-20.260..t-20.759): a poll of a steady partition holds up
// to max.poll.records records, and a view naming each made rows of
// kilobytes for every member.
func (m *Member) BatchText() (text string, done int) {
	var out []byte
	names := m.env.Layout()
	n := 0
	batch := m.loop.batch
	for i := 0; i < len(batch); {
		f := &batch[i]
		if len(out) > 0 {
			out = append(out, ' ')
		}
		if !f.Named {
			if i == m.loop.batchIdx {
				done = n + m.loop.runAt
			}
			out = append(out, f.ValueIn(names)...)
			n++
			i++
			continue
		}
		// The run goes on through the entries that continue it.
		j, end := i+1, f.End()
		for j < len(batch) && batch[j].Named && batch[j].TP == f.TP && batch[j].Offset == end {
			end = batch[j].End()
			j++
		}
		switch count := end - f.Offset; {
		case count > trace.SpellRunMax:
			out = append(names.AppendName(out, f.TP, f.Offset), ".."...)
			out = names.AppendName(out, f.TP, end-1)
		default:
			for off := f.Offset; off < end; off++ {
				if off > f.Offset {
					out = append(out, ' ')
				}
				out = names.AppendName(out, f.TP, off)
			}
		}
		for k := i; k < j; k++ {
			if k == m.loop.batchIdx {
				done = n + m.loop.runAt
			}
			n += batch[k].Len()
		}
		i = j
	}
	if m.loop.batchIdx >= len(batch) {
		done = n
	}
	return string(out), done
}

// Processing reports whether the member has a record in hand, and whether it is slow.
func (m *Member) Processing() (bool, bool) { return m.loop.state == LoopProcessing, m.loop.slowNow }

// InGroup reports whether the member believes it belongs to the group.
func (m *Member) InGroup() bool {
	return m.Alive && m.MemberID != "" && m.Phase != PhaseOut && m.Phase != PhaseClosed
}

// Settled reports whether the member holds its final assignment: stable,
// nothing to revoke, no rejoin pending, offsets fetched.
func (m *Member) Settled() bool { return m.group.settled(m) }

// ProduceInvoiceRunForTest sends the invoices of input records first ..
// first+count-1 of tp as the member's producer batches them
// (produceInvoiceRun); with perRecord, one Produce a record
// (produceInvoice), as before batches. Tests only: they compare the two.
// It sends only where the member sends invoices, while it processes a
// batch (in a transaction, when transactional), and reports whether it
// did.
func (m *Member) ProduceInvoiceRunForTest(tp wire.TopicPartition, tpi int32, first, count int, perRecord bool) bool {
	if !m.Alive || m.loop.state != LoopProcessing || m.prod.mode == ProducerTransactional && !m.prod.txn.open {
		return false
	}
	if perRecord {
		for off := first; off < first+count; off++ {
			m.prod.produceInvoice(m, wire.Record{TP: tp, Offset: off, Named: true, TPI: tpi})
		}
		return true
	}
	m.prod.produceInvoiceRun(m, tp, tpi, first, count)
	m.prod.drainLinger(m) // with linger.ms > 0, as at the end of the member's turn
	return true
}
