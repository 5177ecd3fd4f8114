package client

import "github.com/kgrepl/kgrepl/sim/wire"

// Hooks reach into a process for the engine's own tests: they put it in
// states a scenario reaches only by luck (an answer arriving while a
// JoinGroup is out, a commit refused mid-transaction) and read what it
// keeps to itself. Nothing else calls them.
type Hooks struct{ m *Member }

// Hooks are the process's test hooks.
func (m *Member) Hooks() Hooks { return Hooks{m} }

// classicOf is a process's classic membership; a consumer-protocol
// process has none, and gets a blank one (its fields read as zero, and
// what is written to it is dropped).
func classicOf(m *Member) *classicMember {
	if c, ok := m.group.(*classicMember); ok {
		return c
	}
	return &classicMember{}
}

// consumerOf is a process's consumer membership (blank for a
// classic-protocol process).
func consumerOf(m *Member) *consumerMember {
	if c, ok := m.group.(*consumerMember); ok {
		return c
	}
	return &consumerMember{}
}

// Receive hands the process a packet without waking it.
func (h Hooks) Receive(p *wire.Packet) { h.m.receive(p) }

// Send sends a request from the process.
func (h Hooks) Send(p *wire.Packet) *wire.Packet { return h.m.send(p) }

// Loop is where the application thread stands; SetLoop puts it there.
func (h Hooks) Loop() Loop     { return h.m.loop.state }
func (h Hooks) SetLoop(l Loop) { h.m.loop.state = l }

// InCommitSyncOnJoinPrepare puts the application thread in a commitSync
// made before rejoining (the loop goes back inside poll() when it returns).
func (h Hooks) InCommitSyncOnJoinPrepare() {
	h.m.loop.state, h.m.loop.afterCommit = LoopCommitting, contIdle
}

// CommitSyncOnJoinPrepare reports whether the application thread is in
// such a commitSync.
func (h Hooks) CommitSyncOnJoinPrepare() bool {
	return h.m.loop.state == LoopCommitting && h.m.loop.afterCommit == contIdle
}

// JoinSeq counts the JoinGroups sent; LastJoin is the last one.
func (h Hooks) JoinSeq() int           { return classicOf(h.m).joinSeq }
func (h Hooks) LastJoin() *wire.Packet { return classicOf(h.m).lastJoin }
func (h Hooks) JoinFuture() int        { return classicOf(h.m).joinFuture }
func (h Hooks) WaitJoinFuture() bool   { return classicOf(h.m).waitJoinFuture() }
func (h Hooks) JoinTimeoutTicks() int  { return h.m.Cfg.joinTimeoutTicks() }
func (h Hooks) TakeJoinAnswer()        { classicOf(h.m).takeJoinAnswer(h.m) }
func (h Hooks) OnCommitRefused(code wire.ErrorCode, unchanged bool) {
	h.m.group.onCommitRefused(h.m, code, unchanged)
}

// SetJoinInFlight makes join the JoinGroup the process waits on; and
// SetSyncInFlight the SyncGroup.
func (h Hooks) SetJoinInFlight(join *wire.Packet) {
	c := classicOf(h.m)
	c.lastJoin, c.joinFuture = join, join.ID+1
}
func (h Hooks) SetSyncInFlight(sync *wire.Packet) { classicOf(h.m).joinFuture = sync.ID + 1 }

// Rejoin: a rejoin is asked for; Lost: its generation is gone; Unjoined:
// the generation was reset keeping the member id.
func (h Hooks) Rejoin() bool     { return classicOf(h.m).rejoin }
func (h Hooks) SetRejoin(b bool) { classicOf(h.m).rejoin = b }
func (h Hooks) Lost() bool       { return classicOf(h.m).lost }
func (h Hooks) Unjoined() bool   { return classicOf(h.m).unjoined }

// SetPosition and SetProcessed set a partition's fetch position and
// processed offset.
func (h Hooks) SetPosition(tp wire.TopicPartition, off int)  { h.m.positions.set(tp, off) }
func (h Hooks) SetProcessed(tp wire.TopicPartition, off int) { h.m.processed.set(tp, off) }

// InTxnOffsets puts the application thread in sendOffsetsToTransaction of
// an open transaction holding tp's offset off, its TxnOffsetCommit sent
// and waiting for its answer: the request, for the answer to name.
func (h Hooks) InTxnOffsets(tp wire.TopicPartition, off int) *wire.TxnOffsetCommitRequest {
	m := h.m
	m.prod.txn = clientTxn{open: true, partitions: map[wire.TopicPartition]bool{}, offs: map[wire.TopicPartition]int{tp: off}, then: contIdle}
	m.loop.state = LoopTxnOffsets
	req := &wire.TxnOffsetCommitRequest{TransactionalID: m.prod.txnID, PID: m.prod.pid, Epoch: m.prod.epoch, MemberID: m.MemberID, Generation: m.Generation,
		Partitions: []wire.TopicPartition{tp}, Offsets: []int{off}, Call: m.prod.coord.next()}
	if m.prod.coord.waiting == nil {
		m.prod.coord.waiting = new([callKinds]coordCall)
	}
	m.prod.coord.waiting[callTxnOffsetCommit] = coordCall{body: req}
	return req
}

// TxnOpen reports whether the transactional producer has a transaction
// open; ProducerPID is its producer id.
func (h Hooks) TxnOpen() bool      { return h.m.prod.txn.open }
func (h Hooks) ProducerPID() int64 { return h.m.prod.pid }

// LeftPollAt is the tick the application last returned from poll().
func (h Hooks) LeftPollAt() int     { return h.m.loop.leftPollAt }
func (h Hooks) SetLeftPollAt(t int) { h.m.loop.leftPollAt = t }
func (h Hooks) InPoll() bool        { return h.m.loop.inPoll() }

// ArmPollTimer starts the max.poll.interval check of the stretch outside
// poll() that began at LeftPollAt; PollCheck is the latest check's key
// and stretch, and whether a timer stands in the queue for it.
func (h Hooks) ArmPollTimer() { h.m.loop.armPollTimer(h.m) }
func (h Hooks) PollCheck() (seq, since int, queued bool) {
	return h.m.loop.timer.seq, h.m.loop.timer.since, h.m.loop.timer.queued
}

// CommitWait reports whether the consumer-protocol client waits for its
// commit before revoking, CommitPacket is that commit, and
// HeartbeatInFlight the heartbeat waiting for its answer.
func (h Hooks) CommitWait() bool                 { return consumerOf(h.m).commitWait }
func (h Hooks) CommitPacket() *wire.Packet       { return consumerOf(h.m).commitPkt }
func (h Hooks) HeartbeatInFlight() *wire.Packet  { return consumerOf(h.m).inFlight }
func (h Hooks) Owns(tp wire.TopicPartition) bool { return h.m.owns(tp) }
func (h Hooks) Closing() bool                    { return h.m.loop.closing }

// Positions spells the fetch positions (a fingerprint's).
func (h Hooks) Positions() string { return h.m.positions.String() }

// SlowNow reports whether the process is in the middle of a slow record.
func (h Hooks) SlowNow() bool { return h.m.loop.slowNow }

// AnyPositioned reports whether some owned partition has a fetch position.
func (h Hooks) AnyPositioned() bool { return h.m.anyPositioned() }

// SetEagerPollTimers gives every max.poll.interval check a timer of its
// own (a test's reference for the standing timer), and returns the
// function that restores the default.
func SetEagerPollTimers(eager bool) (restore func()) {
	old := eagerPollTimers
	eagerPollTimers = eager
	return func() { eagerPollTimers = old }
}

// TimerPollTimeoutForTest is the kind of a max.poll.interval check's timer.
const TimerPollTimeoutForTest = tmPollTimeout
