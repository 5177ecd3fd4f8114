package client

import (
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// The max.poll.interval.ms check (Kafka: Heartbeat.pollTimer, checked by
// the classic heartbeat thread, and by ConsumerHeartbeatRequestManager
// under the consumer protocol): a member outside poll() for longer than
// the setting leaves the group.

// pollTimer is the check of the latest stretch outside poll()
// (armPollTimer): the due tick and sequence number its timer was given
// and the stretch's start; whether a timer of this process's stands in
// the queue for it (due no later), and that timer's key.
type pollTimer struct {
	at, seq, since int
	queued         bool
	qAt, qSeq      int
}

// armPollTimer starts the heartbeat thread's max.poll.interval check for the
// stretch outside poll() that began at leftPollAt.
//
// A member polls every few ticks and each check is due
// max.poll.interval.ms later, so nearly every check finds a later stretch
// begun and does nothing (pollTimeout). The check of the latest stretch is
// therefore kept on the member, with the due tick and sequence number
// reserved for it now, and one timer of the process's stands in the queue
// for it, due no later (pollQueued): when it fires for a stretch that is
// over, it is set again under the latest check's key (firePollTimer). So
// the check that may act fires at the very tick and sequence number, among
// the other timers, that a timer set now would, and the queue holds a
// timer or two a member instead of one per poll() of the last
// max.poll.interval.ms. A check due before the standing timer (the setting
// lowered) gets a standing timer of its own, and the old one is dropped
// when it fires; a second stretch begun in the same tick (the same
// leftPollAt) is checked by a timer of its own, as before.
func (l *pollLoop) armPollTimer(m *Member) {
	at, seq := m.env.Reserve(l.leftPollAt + m.Cfg.MaxPollInterval)
	t := wire.Timer{Owner: wire.OwnerClient, At: at, Seq: seq, Kind: tmPollTimeout, Client: m.Client, Inc: m.Inc, Proc: int32(m.proc + 1), Key: l.leftPollAt}
	if l.timer.queued && l.timer.since == l.leftPollAt || eagerPollTimers {
		m.env.Push(t) // a second check of the same stretch: a timer of its own (m 0)
		return
	}
	l.timer.at, l.timer.seq, l.timer.since = at, seq, l.leftPollAt
	if !l.timer.queued || env.KeyLess(at, seq, l.timer.qAt, l.timer.qSeq) {
		l.standPollTimer(m, t)
	}
}

// eagerPollTimers: every check a timer of its own (a test's reference for
// the standing timer, TestPollTimersAsEager); never set otherwise.
var eagerPollTimers = false

// standPollTimer queues t as the timer standing for the latest check (m 1).
func (l *pollLoop) standPollTimer(m *Member, t wire.Timer) {
	t.Arg = 1
	l.timer.queued, l.timer.qAt, l.timer.qSeq = true, t.At, t.Seq
	m.env.Push(t)
}

// firePollTimer is a max.poll.interval timer firing: a timer of its own
// (m 0) checks its stretch; the one standing for the latest check (m 1)
// checks it if it is that check's, and is otherwise set again for it. A
// standing timer another replaced does nothing.
func (l *pollLoop) firePollTimer(m *Member, t wire.Timer) {
	if t.Arg == 1 {
		if !l.timer.queued || t.At != l.timer.qAt || t.Seq != l.timer.qSeq {
			return
		}
		l.timer.queued = false
		if t.At != l.timer.at || t.Seq != l.timer.seq {
			t.At, t.Seq, t.Key = l.timer.at, l.timer.seq, l.timer.since
			l.standPollTimer(m, t)
			return
		}
	}
	l.pollTimeout(m, t.Key)
}

// pollTimeout is the heartbeat thread's check: still outside poll() since
// the stretch that began at since?
func (l *pollLoop) pollTimeout(m *Member, since int) {
	if !m.Alive || l.leftPollAt != since || l.inPoll() || !m.InGroup() {
		return
	}
	m.group.pollTimeout(m, since)
}
