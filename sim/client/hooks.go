package client

import "github.com/kgrepl/kgrepl/sim/wire"

// Hooks reach into a process for the engine's own tests: they put it in
// states a scenario reaches only by luck (an answer arriving while a
// JoinGroup is out, a commit refused mid-transaction) and read what it
// keeps to itself. Nothing else calls them.
type Hooks struct{ m *Member }

// Hooks are the process's test hooks.
func (m *Member) Hooks() Hooks { return Hooks{m} }

// Receive hands the process a packet without waking it.
func (h Hooks) Receive(p *wire.Packet) { h.m.receive(p) }

// Send sends a request from the process.
func (h Hooks) Send(p *wire.Packet) *wire.Packet { return h.m.send(p) }

// Loop is where the application thread stands; SetLoop puts it there.
func (h Hooks) Loop() Loop     { return h.m.loop }
func (h Hooks) SetLoop(l Loop) { h.m.loop = l }

// InCommitSyncOnJoinPrepare puts the application thread in a commitSync
// made before rejoining (the loop goes back inside poll() when it returns).
func (h Hooks) InCommitSyncOnJoinPrepare() { h.m.loop, h.m.afterCommit = LoopCommitting, contIdle }

// CommitSyncOnJoinPrepare reports whether the application thread is in
// such a commitSync.
func (h Hooks) CommitSyncOnJoinPrepare() bool {
	return h.m.loop == LoopCommitting && h.m.afterCommit == contIdle
}

// JoinSeq counts the JoinGroups sent; LastJoin is the last one.
func (h Hooks) JoinSeq() int           { return h.m.joinSeq }
func (h Hooks) LastJoin() *wire.Packet { return h.m.lastJoin }
func (h Hooks) JoinFuture() int        { return h.m.joinFuture }
func (h Hooks) WaitJoinFuture() bool   { return h.m.waitJoinFuture() }
func (h Hooks) JoinTimeoutTicks() int  { return h.m.joinTimeoutTicks() }
func (h Hooks) TakeJoinAnswer()        { h.m.takeJoinAnswer() }
func (h Hooks) OnCommitRefused(code wire.ErrorCode, unchanged bool) {
	h.m.onCommitRefused(code, unchanged)
}

// SetJoinInFlight makes join the JoinGroup the process waits on; and
// SetSyncInFlight the SyncGroup.
func (h Hooks) SetJoinInFlight(join *wire.Packet) { h.m.lastJoin, h.m.joinFuture = join, join.ID+1 }
func (h Hooks) SetSyncInFlight(sync *wire.Packet) { h.m.joinFuture = sync.ID + 1 }

// Rejoin: a rejoin is asked for; Lost: its generation is gone; Unjoined:
// the generation was reset keeping the member id.
func (h Hooks) Rejoin() bool     { return h.m.rejoin }
func (h Hooks) SetRejoin(b bool) { h.m.rejoin = b }
func (h Hooks) Lost() bool       { return h.m.lost }
func (h Hooks) Unjoined() bool   { return h.m.unjoined }

// SetPosition and SetProcessed set a partition's fetch position and
// processed offset.
func (h Hooks) SetPosition(tp wire.TopicPartition, off int)  { h.m.positions.set(tp, off) }
func (h Hooks) SetProcessed(tp wire.TopicPartition, off int) { h.m.processed.set(tp, off) }

// InTxnOffsets puts the application thread in sendOffsetsToTransaction of
// an open transaction holding tp's offset off.
func (h Hooks) InTxnOffsets(tp wire.TopicPartition, off int) {
	h.m.txn = clientTxn{open: true, partitions: map[wire.TopicPartition]bool{}, offs: map[wire.TopicPartition]int{tp: off}, then: contIdle}
	h.m.loop = LoopTxnOffsets
}

// TxnOpen reports whether the transactional producer has a transaction
// open; ProducerPID is its producer id.
func (h Hooks) TxnOpen() bool      { return h.m.txn.open }
func (h Hooks) ProducerPID() int64 { return h.m.prod.pid }

// LeftPollAt is the tick the application last returned from poll().
func (h Hooks) LeftPollAt() int     { return h.m.leftPollAt }
func (h Hooks) SetLeftPollAt(t int) { h.m.leftPollAt = t }
func (h Hooks) InPoll() bool        { return h.m.inPoll() }

// ArmPollTimer starts the max.poll.interval check of the stretch outside
// poll() that began at LeftPollAt; PollCheck is the latest check's key
// and stretch, and whether a timer stands in the queue for it.
func (h Hooks) ArmPollTimer() { h.m.armPollTimer() }
func (h Hooks) PollCheck() (seq, since int, queued bool) {
	return h.m.pollSeq, h.m.pollSince, h.m.pollQueued
}

// CommitWait reports whether the consumer-protocol client waits for its
// commit before revoking, CommitPacket is that commit, and
// HeartbeatInFlight the heartbeat waiting for its answer.
func (h Hooks) CommitWait() bool                 { return h.m.cg.commitWait }
func (h Hooks) CommitPacket() *wire.Packet       { return h.m.cg.commitPkt }
func (h Hooks) HeartbeatInFlight() *wire.Packet  { return h.m.cg.inFlight }
func (h Hooks) Owns(tp wire.TopicPartition) bool { return h.m.owns(tp) }
func (h Hooks) Closing() bool                    { return h.m.closing }

// Positions spells the fetch positions (a fingerprint's).
func (h Hooks) Positions() string { return h.m.positions.String() }

// SlowNow reports whether the process is in the middle of a slow record.
func (h Hooks) SlowNow() bool { return h.m.slowNow }

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
