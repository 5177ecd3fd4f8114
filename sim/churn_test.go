package sim

import "testing"

// churnWorld is the default world with a consume-process-produce loop that
// outlasts session.timeout.ms: cooperative-sticky, a transaction per poll()
// of one record (processing, then AddPartitionsToTxn with AddOffsetsToTxn,
// Produce with TxnOffsetCommit and EndTxn: 7 ticks outside poll(), against
// a session timeout of 6), with txn false the same loop committing after
// processing (commitSync polls the consumer's network client: a JoinGroup
// answer is read there).
func churnWorld(t *testing.T, txn bool) *World {
	t.Helper()
	cfg := DefaultConfig()
	kvs := [][2]string{{"partition.assignment.strategy", "cooperative-sticky"}, {"commit.mode", "after"}, {"max.poll.records", "1"}}
	if txn {
		kvs = append(kvs, [2]string{"transactional.id", "tx-{client}"})
	}
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

// A world that cannot settle in Kafka either is told apart
// (unreadJoinAnswerChurn), and only that world: C2 joins C1's
// transactional group; C1 reads its JoinGroup answer only at its next
// poll(), after a transaction, and the coordinator has removed it by
// then; the two take turns being removed for good. The same group
// committing with commitSync settles; a member that crashes is removed for
// silence too, but with no JoinGroup answer waiting, and is not taken for
// that churn.
func TestUnreadJoinAnswerChurnIsToldApart(t *testing.T) {
	w := churnWorld(t, true)
	stepChecked(t, w, NewChecker(), 4)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	if settle(t, w, 3000) {
		t.Fatal("the transactional group settled: the case under test is gone")
	}
	if n, ok := unreadJoinAnswerChurn(w, w.Tick-churnWindow); !ok {
		t.Errorf("tick %d: the churn not told apart (%d removals of its kind, then another or none lately)", w.Tick, n)
	}

	w = churnWorld(t, false)
	stepChecked(t, w, NewChecker(), 4)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	if !settle(t, w, 3000) {
		t.Fatalf("the group committing with commitSync did not settle (group %s, lag %d)", w.Group.State(), totalLag(w))
	}
	if err := w.CrashNow("C2"); err != nil {
		t.Fatal(err)
	}
	stepChecked(t, w, NewChecker(), 3*w.Cfg.Client.SessionTimeout)
	if len(eventsOf(w, EvRemoved, "C2")) == 0 {
		t.Fatal("the crashed C2 was not removed")
	}
	if n, ok := unreadJoinAnswerChurn(w, 0); ok {
		t.Errorf("a crashed member's removal taken for the churn (%d)", n)
	}
}
