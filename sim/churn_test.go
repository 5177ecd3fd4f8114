package sim

import (
	"strings"
	"testing"
)

// Worlds whose settings keep a group from settling in Kafka too: the
// schedule fuzzers' final check tells them apart (kafkaChurn) instead of
// failing, by what the trace shows and what the settings make certain.

// churnWindow is the stretch at the end of a failed settle that kafkaChurn
// looks at: some 40 rounds of either churn.
const churnWindow = 1000

// kafkaChurn tells apart a world that cannot settle in Kafka either: over
// the ticks from from on, the group rebalanced only because classic
// members were removed while busy with their batches, each removal one of
// two kinds, and the churn goes on to the end (one in the last 200 ticks).
// Any other removal, or none lately, and the world fails as before. n
// counts the removals.
//
// An unread JoinGroup answer: a classic member whose loop between two
// poll() calls outlasts session.timeout.ms (a consume-process-produce
// transaction: its processing and three round trips of the producer,
// AddPartitionsToTxn with AddOffsetsToTxn, Produce with TxnOffsetCommit,
// EndTxn, 7 ticks against 6) cannot get through a rebalance whose
// JoinGroup answer comes while it is busy. The heartbeat thread is off
// from the JoinGroup on (AbstractCoordinator.HeartbeatThread.run:
// state.hasNotJoinedGroup() for PREPARING_REBALANCE, since KAFKA-10134)
// and the producer's calls do not poll the consumer's network client, so
// the answer is read only at the next poll() (ClassicKafkaConsumer.poll:
// updateAssignmentMetadataIfNeeded does not wait for the join, and
// pollForFetches returns the records fetched), when the coordinator has
// removed the member already: it rescheduled every member's heartbeat at
// session.timeout.ms when the join completed
// (GroupMetadataManager.completeClassicGroupJoin,
// rescheduleClassicGroupMemberHeartbeat). The removed member rejoins, the
// one still in the group rejoins from its own batch, and the next round
// removes one of them again: with a backlog (the transactions it aborts
// keep it) Kafka's consumer is even less often in poll() for the answer,
// its fetches pipelined. (FuzzWideSchedules' seed 1440 churns so: each
// round's leader is the member whose own JoinGroup, sent from poll() with
// a Fetch, completed the join; the Fetch answer comes in the same tick as
// the JoinGroup answer and ahead of it, and poll() returns the record, as
// Kafka's consumer returns its buffered records without waiting for the
// answer.) Such a removal is one for silence of a member whose JoinGroup
// answer had come and was followed by no SyncGroup from its process (the
// answer's handler sends one at once: it was unread).
//
// A batch longer than the rebalance timeout: a classic member's
// rebalance timeout is its max.poll.interval.ms (the JoinGroup's
// RebalanceTimeout, ConsumerCoordinator), and the coordinator removes a
// member that has not rejoined by then (GroupMetadataManager
// completeClassicGroupJoin after the join's timeout); a member that learns
// of the rebalance at the start of a full batch whose processing and
// transaction outlast it (loopTicks) rejoins too late, rejoins, and
// starts the next rebalance, which catches the others mid-batch in turn
// (seed -278: five records of 2 ticks and a transaction, 16 ticks against
// 12). In a stable group the member's own heartbeat thread finds the same
// batch outlasting max.poll.interval.ms and sends LeaveGroup
// (HeartbeatThread.run: pollTimeoutExpired, maybeLeaveGroup), and it
// rejoins at its next poll(). wideSpec bounds a batch's processing by
// max.poll.interval.ms but not its transaction's round trips. Such a
// removal is one for not rejoining within the rebalance timeout, or for
// the LeaveGroup of a poll timeout, of a member whose settings make
// loopTicks exceed its max.poll.interval.ms.
//
// Either way the removed process must still run at the end.
func kafkaChurn(w *World, from int) (n int, ok bool) {
	var packets []*Packet
	for _, p := range w.Packets.All() {
		packets = append(packets, p)
	}
	last := -1
	pollTimeout := map[string]int{} // the tick of each client's last poll timeout
	for _, e := range w.Events.All() {
		if e.Kind == EvPollTimeout {
			pollTimeout[e.Member] = e.Tick
		}
		if e.Tick < from || e.Kind != EvRemoved {
			continue
		}
		id, byCoordinator := strings.CutPrefix(e.Text, "coordinator removes ")
		id, reason, _ := strings.Cut(id, ": ")
		if !byCoordinator {
			continue // the member learning it is out, told above
		}
		answer := lastJoinAnswer(packets, e.Member, id, e.Tick)
		m := w.Member(e.Member)
		if answer == nil || m == nil || m.Inc != answer.ToInc || !m.Alive {
			return n, false
		}
		switch {
		case strings.HasPrefix(reason, "session timeout ("):
			if syncedAfter(packets, answer, e.Tick) {
				return n, false
			}
		case strings.HasPrefix(reason, "did not rejoin within the rebalance timeout"),
			reason == "LeaveGroup" && pollTimeout[e.Member] == e.Tick-1:
			if loopTicks(m) <= m.Cfg.MaxPollInterval {
				return n, false
			}
		default:
			return n, false
		}
		n, last = n+1, e.Tick
	}
	return n, n > 0 && last >= w.Tick-churnWindow/5
}

// lastJoinAnswer is the last successful JoinGroup answer to client giving
// it member id, delivered by tick at (nil if none).
func lastJoinAnswer(packets []*Packet, client, id string, at int) *Packet {
	var answer *Packet
	for _, p := range packets {
		if p.Type == JoinGroup && p.Response && p.To == client && p.Error == None && p.Delivered > 0 && p.Delivered <= at &&
			strings.Contains(p.Summary, "member "+id+",") {
			answer = p
		}
	}
	return answer
}

// syncedAfter reports whether the process answer went to sent a SyncGroup
// after it and before tick at, the removal's: one sent in that tick went
// after the removal (World.Step fires the coordinator's timers before the
// members act) and reached the coordinator the tick after (long property
// seed 522: the answer read by the poll() after its batch, in the tick
// the session timed out).
func syncedAfter(packets []*Packet, answer *Packet, at int) bool {
	for _, p := range packets {
		if p.Type == SyncGroup && !p.Response && p.From == answer.To && p.FromInc == answer.ToInc && p.Sent >= answer.Delivered && p.Sent < at {
			return true
		}
	}
	return false
}

// loopTicks is the least a full batch keeps m's application thread out
// of poll(): max.poll.records records of processing and, with a
// transactional producer, the transaction's three round trips after it
// (AddOffsetsToTxn, TxnOffsetCommit, EndTxn, 2 ticks each).
func loopTicks(m *Member) int {
	c := m.Cfg
	per := max(c.ProcessRecords, 1)
	t := (c.MaxPollRecords*c.ProcessTicks + per - 1) / per
	if c.TransactionalID != "" {
		t += 6
	}
	return t
}

// churnWorld is the default world, cooperative-sticky, committing after
// processing, with the settings given besides.
func churnWorld(t *testing.T, kvs ...[2]string) *World {
	t.Helper()
	cfg := DefaultConfig()
	kvs = append([][2]string{{"partition.assignment.strategy", "cooperative-sticky"}, {"commit.mode", "after"}}, kvs...)
	for _, kv := range kvs {
		if err := cfg.Set("", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var txn = [2]string{"transactional.id", "tx-{client}"}

// joinC2 has C2 join at tick 4, with the traffic going on (a record
// every 100 ticks on each input partition: the churn lives on a backlog,
// and ends with it once the records run out), and settles for 3000 ticks,
// reporting whether the group settled.
func joinC2(t *testing.T, w *World) bool {
	t.Helper()
	stepChecked(t, w, NewChecker(), 4)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.ProduceRate(w.Layout().Inputs(), Rate{Records: 1, Ticks: 100}); err != nil {
		t.Fatal(err)
	}
	return settle(t, w, 3000)
}

// An unread JoinGroup answer: C2 joins C1's transactional group, one
// record a poll (7 ticks outside poll() against a session timeout of 6);
// C1 reads its JoinGroup answer only at its next poll(), after a
// transaction, removed by then; the two take turns being removed for
// good, and kafkaChurn tells it apart. The same group committing with
// commitSync (which polls the consumer's network client: the answer is
// read there) settles, and its crashed member's removal, for silence too
// but with no JoinGroup answer waiting, is not taken for the churn.
func TestUnreadJoinAnswerChurnIsToldApart(t *testing.T) {
	w := churnWorld(t, txn, [2]string{"max.poll.records", "1"})
	if joinC2(t, w) {
		t.Fatal("the transactional group settled: the case under test is gone")
	}
	if n, ok := kafkaChurn(w, w.Tick-churnWindow); !ok {
		t.Errorf("tick %d: the churn not told apart (%d removals of its kind, then another or none lately)", w.Tick, n)
	}

	w = churnWorld(t, [2]string{"max.poll.records", "1"})
	if !joinC2(t, w) {
		t.Fatalf("the group committing with commitSync did not settle (group %s, lag %d)", w.Group.State(), totalLag(w))
	}
	if err := w.CrashNow("C2"); err != nil {
		t.Fatal(err)
	}
	stepChecked(t, w, NewChecker(), 3*w.Cfg.Client.SessionTimeout)
	if len(eventsOf(w, EvRemoved, "C2")) == 0 {
		t.Fatal("the crashed C2 was not removed")
	}
	if n, ok := kafkaChurn(w, 0); ok {
		t.Errorf("a crashed member's removal taken for the churn (%d)", n)
	}
}

// A batch longer than the rebalance timeout: five records of 2 ticks and
// a transaction (16 ticks outside poll() against max.poll.interval.ms 12),
// with a backlog of 100 records a partition: members are removed mid-batch,
// for not rejoining in time or by their own poll timeout, for good, and
// kafkaChurn tells it apart. A member removed so for a slow
// record (15 ticks) in a world whose batches fit is not taken for it.
func TestLongBatchChurnIsToldApart(t *testing.T) {
	w := churnWorld(t, txn, [2]string{"max.poll.records", "5"}, [2]string{"processing.ticks", "2"}, [2]string{"records.per.partition", "100"})
	if joinC2(t, w) {
		t.Fatal("the group settled: the case under test is gone")
	}
	n, ok := kafkaChurn(w, w.Tick-churnWindow)
	if !ok {
		t.Errorf("tick %d: the churn not told apart (%d removals of its kind, then another or none lately)", w.Tick, n)
	}
	long := 0
	for _, e := range eventsOf(w, EvRemoved, "") {
		if e.Tick >= w.Tick-churnWindow && (strings.Contains(e.Text, "did not rejoin within the rebalance timeout") || strings.HasSuffix(e.Text, ": LeaveGroup")) {
			long++
		}
	}
	if long == 0 {
		t.Errorf("no member removed for its long batch in the last %d ticks: not the case under test", churnWindow)
	}

	// C2 joined with a JoinGroup, as the churn's members do; its next
	// record is slow.
	w = churnWorld(t, [2]string{"max.poll.records", "1"})
	if !joinC2(t, w) {
		t.Fatalf("the group committing with commitSync did not settle (group %s, lag %d)", w.Group.State(), totalLag(w))
	}
	from := w.Tick
	if err := w.Slow("C2"); err != nil {
		t.Fatal(err)
	}
	for _, tp := range w.Layout().Inputs() {
		if err := w.ProduceInput(tp, 1); err != nil {
			t.Fatal(err)
		}
	}
	stepChecked(t, w, NewChecker(), 30)
	if r := eventsOf(w, EvRemoved, "C2"); len(r) == 0 || !strings.HasSuffix(r[len(r)-1].Text, ": LeaveGroup") || r[len(r)-1].Tick < from {
		t.Fatalf("C2, slow, not removed by its poll timeout: %v", r)
	}
	if n, ok := kafkaChurn(w, from); ok {
		t.Errorf("a slow record's removal taken for the churn (%d)", n)
	}
}
