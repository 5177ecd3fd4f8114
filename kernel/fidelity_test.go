package kernel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// Scenario tests for the engine's fidelity to Kafka 4.x (issue 10), each
// run with the invariant checker on every tick.

func execAll(t *testing.T, s *Session, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := s.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
}

func eventsOf(w *sim.World, kind sim.EventKind, member, text string) []sim.Event {
	var out []sim.Event
	for _, e := range w.Events.All() {
		if e.Kind == kind && (member == "" || e.Member == member) && strings.Contains(e.Text, text) {
			out = append(out, e)
		}
	}
	return out
}

// A heartbeat answered UNKNOWN_MEMBER_ID resets the generation
// (AbstractCoordinator.resetGenerationOnResponseError): the commitSync
// that follows fails in the client with CommitFailedException and sends
// nothing (ConsumerCoordinator.sendOffsetCommitRequest).
func TestCommitAfterHeartbeatUnknownMemberFailsLocally(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set commit after", "join C2", "run until stable",
		// C2 told the coordinator a rebalance timeout of 12; its own poll
		// timer now waits 40, so the coordinator removes it first.
		"set C2.max.poll.interval.ms 40", "set C2.slow.processing.ticks 20",
		"run until polled o2.3", "slow C2", "join C3", "step", "run until tick 80")
	w := s.World()
	learnt := eventsOf(w, sim.EvRemoved, "C2", "learns it is out of the group")
	if len(learnt) == 0 {
		t.Fatal("C2 never learned it was removed")
	}
	failed := eventsOf(w, sim.EvCommitFailed, "C2", "CommitFailedException, nothing sent")
	if len(failed) != 1 {
		t.Fatalf("%d local commit failures of C2, want 1", len(failed))
	}
	for _, p := range packets(w, sim.OffsetCommit, false) {
		if p.From == "C2" && p.Sent >= learnt[0].Tick && p.Sent <= failed[0].Tick {
			t.Errorf("C2 sent OffsetCommit at %d between learning at %d and failing at %d", p.Sent, learnt[0].Tick, failed[0].Tick)
		}
	}
}

// close is the graceful shutdown (wakeup(), the batch finished and
// committed, then close()): nothing is lost under auto-commit. close --now
// breaks out after the record in hand, and close() auto-commits the
// positions poll() returned: the rest of the batch is lost (SPEC §3).
func TestCloseGracefulAndNow(t *testing.T) {
	for _, tc := range []struct {
		cmd, lost string
	}{
		{"close C1", "[]"},
		{"close C1 --now", "[o0.2]"},
	} {
		s := checkedSession(t)
		execAll(t, s, "run until polled o0.0", "step", tc.cmd, "run until tick 20")
		w := s.World()
		c := w.Delivery("read_uncommitted")
		if got := fmt.Sprint(c.LostNames); got != tc.lost {
			t.Errorf("%s: lost %s, want %s", tc.cmd, got, tc.lost)
		}
		if len(eventsOf(w, sim.EvClosed, "C1", "closed")) != 1 {
			t.Errorf("%s: C1 did not close", tc.cmd)
		}
		leave := 0
		for _, p := range packets(w, sim.LeaveGroup, false) {
			if p.From == "C1" {
				leave++
			}
		}
		if leave != 1 {
			t.Errorf("%s: %d LeaveGroup, want 1", tc.cmd, leave)
		}
	}
}

// Auto-commit commits subscriptions.allConsumed() every interval, whether
// or not a position moved (ConsumerCoordinator.maybeAutoCommitOffsetsAsync).
func TestAutoCommitEveryInterval(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "run until tick 160")
	w := s.World()
	var ticks []int
	for _, p := range packets(w, sim.OffsetCommit, false) {
		if p.From == "C1" && p.Sent > 130 {
			ticks = append(ticks, p.Sent)
		}
	}
	// C1 has read all 60 records by tick 130; its positions no longer move.
	if w.Lag(sim.TopicPartition{Topic: "orders", Partition: 0}) != 0 {
		t.Fatal("C1 has not caught up by tick 130")
	}
	if len(ticks) < 3 {
		t.Fatalf("auto-commits by C1 after tick 130 at %v, want one every 5 ticks", ticks)
	}
	for i := 1; i < len(ticks); i++ {
		if ticks[i]-ticks[i-1] != 5 {
			t.Errorf("auto-commits at %v, want every auto.commit.interval.ms (5)", ticks)
		}
	}
}

// A member with no assignor in common with the group is refused with
// INCONSISTENT_GROUP_PROTOCOL (ClassicGroup.supportsProtocols); a switch
// of every member's assignor still works (SPEC §4 skips the rolling upgrade).
func TestInconsistentGroupProtocol(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set C2.partition.assignment.strategy cooperative-sticky", "join C2", "run until tick 20")
	w := s.World()
	var refused *sim.Packet
	for _, p := range packets(w, sim.JoinGroup, true) {
		if p.To == "C2" {
			refused = p
		}
	}
	if refused == nil || refused.Error != sim.InconsistentGroupProtocol {
		t.Fatalf("C2's JoinGroup answer: %+v, want INCONSISTENT_GROUP_PROTOCOL", refused)
	}
	if w.Member("C2").Alive || w.Group.Describe().Generation != 1 || len(w.Group.Members()) != 1 {
		t.Errorf("C2 alive %v, generation %d, %d members: want C2 stopped and the group untouched",
			w.Member("C2").Alive, w.Group.Describe().Generation, len(w.Group.Members()))
	}
	s = checkedSession(t)
	execAll(t, s, "set partition.assignment.strategy cooperative-sticky", "join C2", "run until stable")
	if g := s.World().Group.Describe(); g.Assignor != "cooperative-sticky" || len(g.Members) != 2 {
		t.Errorf("after a switch of every member: protocol %s, %d members; want cooperative-sticky with both", g.Assignor, len(g.Members))
	}
}

// group.initial.rebalance.delay.ms: the first rebalance of an empty group
// waits the delay, waits again when a member joined during it (within the
// rebalance timeout), and never completes early
// (GroupMetadataManager.prepareRebalance,
// tryCompleteInitialRebalanceElseSchedule, maybeCompleteJoinPhase).
func TestInitialRebalanceDelay(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "new --members 0", "set group.initial.rebalance.delay.ms 3", "join C1", "step", "join C2", "run until stable")
	w := s.World()
	var completed []int
	var started int
	for _, tr := range w.Group.Transitions.All() {
		if tr.To == sim.CompletingRebalance {
			completed = append(completed, tr.Tick)
		}
		if tr.From == sim.Empty && tr.To == sim.PreparingRebalance {
			started = tr.Tick
		}
	}
	// C1's JoinGroup starts the round; C2's arrives a tick later, during the
	// delay, so the round waits a second delay: 3 + 3 ticks.
	if len(completed) != 1 || completed[0] != started+6 || w.Group.Describe().Generation != 1 || len(w.Group.Members()) != 2 {
		t.Errorf("round started %d, completed at %v, generation %d, %d members: want one generation with both at %d",
			started, completed, w.Group.Describe().Generation, len(w.Group.Members()), started+6)
	}
	// Without the delay (kgrepl's default) C2 arrives a tick late: two rounds.
	s = checkedSession(t)
	execAll(t, s, "new --members 0", "join C1", "step", "join C2", "run until stable")
	if g := s.World().Group.Describe().Generation; g != 2 {
		t.Errorf("without the delay: generation %d, want 2", g)
	}
	out, err := s.Exec("show config")
	if err != nil || !strings.Contains(out, "group.initial.rebalance.delay.ms") {
		t.Errorf("show config does not list group.initial.rebalance.delay.ms: %v", err)
	}
}

// Markers go to every partition added to the transaction, also one whose
// records never landed (TransactionCoordinator -> WriteTxnMarkers per
// partition of the transaction).
func TestMarkersToEveryAddedPartition(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set producer transactional", "drop Produce request C1 10", "run until processed o0.0",
		"step 3", "crash C1 now", "run until tick 60")
	w := s.World()
	l := w.Log(sim.TopicPartition{Topic: "invoices", Partition: 0})
	markers, data := 0, 0
	for _, c := range l.Cells.All() {
		if c.Control == "ABORT" {
			markers++
		} else if c.IsData() {
			data++
		}
	}
	if markers != 1 || data != 0 {
		t.Errorf("invoices-0: %d ABORT markers, %d records; want the marker of the timed-out transaction and no record", markers, data)
	}
}

// PrepareEpochFence is a pending state in Kafka
// (TransactionMetadata.prepareFenceProducerEpoch): a new instance's
// InitProducerId takes the open transaction from Ongoing straight to
// PrepareAbort with the bumped epoch; nothing logs PrepareEpochFence.
func TestEpochFenceIsNotLogged(t *testing.T) {
	w := runDemo(t, 12).World()
	fencedAbort := false
	for _, tr := range w.Txn.Transitions.All() {
		if tr.To == sim.TxnPrepareEpochFence || tr.From == sim.TxnPrepareEpochFence {
			t.Errorf("transition %+v: PrepareEpochFence is never a logged state", tr)
		}
	}
	for _, r := range w.Txn.Log.All() {
		if r.State == sim.TxnPrepareEpochFence {
			t.Errorf("__transaction_state record %+v holds PrepareEpochFence", r)
		}
	}
	last := map[string]sim.TxnLogRecord{}
	for _, r := range w.Txn.Log.All() {
		prev, ok := last[r.TransactionalID]
		if ok && r.State == sim.TxnPrepareAbort && prev.State == sim.TxnOngoing && r.Epoch == prev.Epoch+1 {
			fencedAbort = true
		}
		last[r.TransactionalID] = r
	}
	if !fencedAbort {
		t.Error("no Ongoing -> PrepareAbort with the bumped epoch in __transaction_state")
	}
}

// A static member returning in Stable with a changed subscription is not
// rebalanced at once (updateStaticMemberThenRebalanceOrCompleteJoin: only a
// change of the group's protocol does); it gets its old assignment, which
// does not match its subscription (checkAssignmentMatchedSubscription), and
// rejoins: that JoinGroup carries new metadata and starts the rebalance.
func TestStaticReturnWithChangedSubscription(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "join C2 --static", "run until stable", "crash C2 now", "step 2",
		"join C2 --static --topics orders", "run until stable")
	w := s.World()
	rejoin := eventsOf(w, sim.EvStaticRejoin, "C2", "swapped in")
	if len(rejoin) != 1 {
		t.Fatalf("%d static rejoins, want 1", len(rejoin))
	}
	mismatch := eventsOf(w, sim.EvAssigned, "C2", "outside its subscription")
	if len(mismatch) != 1 {
		t.Fatalf("C2 did not find its old assignment outside its subscription")
	}
	for _, tr := range w.Group.Transitions.All() {
		if tr.To == sim.PreparingRebalance && tr.Tick >= rejoin[0].Tick && tr.Tick <= mismatch[0].Tick {
			t.Errorf("rebalance at %d (%s) before C2 saw its old assignment at %d", tr.Tick, tr.Reason, mismatch[0].Tick)
		}
	}
	for _, gm := range w.Group.Members() {
		if gm.ClientID == "C2" {
			for _, tp := range gm.Assignment {
				if tp.Topic != "orders" {
					t.Errorf("C2 ends with %s, outside its subscription", w.Layout().PartList(gm.Assignment))
				}
			}
			if len(gm.Assignment) == 0 {
				t.Error("C2 ends with nothing")
			}
		}
	}
}

// The eager StickyAssignor remembers its last assignment and generation
// (StickyAssignor.onAssignment) and sends them as subscription user data
// after revoking everything, so the leader's second run is sticky. The
// expected answer is real Kafka's (issue 10's fixture).
func TestEagerStickyKeepsPreviousAssignment(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "new --topics t1:3,t2:4 --members 0", "set partition.assignment.strategy sticky", "set sticky.rules kafka",
		"join C1", "join C2", "run until stable", "join C3", "join C4", "run until stable")
	wantAssignment(t, s.World(), map[string]string{
		"C1": "{t1-0 t2-1}", "C2": "{t1-1 t2-0}", "C3": "{t1-2 t2-3}", "C4": "{t2-2}",
	})
}

// A JoinGroup answer is read only inside poll() (or a commitSync): the
// heartbeat thread is disabled while the join is in flight
// (AbstractCoordinator.HeartbeatThread, state.hasNotJoinedGroup()). A
// cooperative leader busy with its batch sends the plan only at its next
// poll(), and the followers' SyncGroup answers wait for it.
func TestJoinAnswerWaitsForPoll(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set partition.assignment.strategy cooperative-sticky", "join C2", "run until stable")
	w := s.World()
	checked := 0
	for _, jr := range packets(w, sim.JoinGroup, true) {
		if jr.To != "C1" || jr.Error != sim.None || jr.Delivered < 0 {
			continue
		}
		var sync *sim.Packet
		for _, p := range packets(w, sim.SyncGroup, false) {
			if p.From == "C1" && p.Sent >= jr.Delivered {
				sync = p
				break
			}
		}
		if sync == nil {
			t.Fatalf("C1 sent no SyncGroup after its JoinGroup answer at %d", jr.Delivered)
		}
		busy := 0
		for _, e := range w.Events.All() {
			if e.Kind == sim.EvProcessed && e.Member == "C1" && e.Tick >= jr.Delivered && e.Tick <= sync.Sent {
				busy++
			}
		}
		polled := false
		for _, e := range w.Events.All() {
			if e.Kind == sim.EvPolled && e.Member == "C1" && e.Tick > jr.Delivered && e.Tick < sync.Sent {
				polled = true
			}
		}
		if polled {
			t.Errorf("C1 returned from poll() between its JoinGroup answer (%d) and its SyncGroup (%d)", jr.Delivered, sync.Sent)
		}
		if busy > 0 {
			checked++
			if sync.Sent == jr.Delivered {
				t.Errorf("C1 was processing when its JoinGroup answer came at %d but sent SyncGroup the same tick", jr.Delivered)
			}
			for _, sr := range packets(w, sim.SyncGroup, true) {
				if sr.To == "C2" && sr.Error == sim.None && sr.Sent > jr.Delivered && sr.Sent < sync.Delivered {
					t.Errorf("C2's SyncGroup answered at %d, before the leader's plan arrived at %d", sr.Sent, sync.Delivered)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no round where the leader C1 was busy when its JoinGroup answer came: the test shows nothing")
	}
}

// processedBy counts the records a client processed after tick from.
func processedBy(w *sim.World, client string, from int) int {
	n := 0
	for _, e := range w.Events.All() {
		if e.Kind == sim.EvProcessed && e.Member == client && e.Tick > from {
			n++
		}
	}
	return n
}

// A lost JoinGroup answer no longer hangs the member: the coordinator hears
// no heartbeat with the member id it handed out (the client never took it;
// ClassicGroupMember.hasSatisfiedHeartbeat) and removes it after the session
// timeout, and the client joins again when its JoinGroup times out
// (rebalance timeout + a margin).
func TestLostJoinGroupAnswer(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "join C2", "drop JoinGroup response C2", "run until tick 80")
	w := s.World()
	if len(eventsOf(w, sim.EvRemoved, "C2", "never took that member id")) != 1 {
		t.Error("the coordinator did not remove C2-1, whose id the client never took")
	}
	if len(eventsOf(w, sim.EvRetry, "C2", "no answer to JoinGroup")) != 1 {
		t.Error("C2 did not join again after its JoinGroup timed out")
	}
	wantAssignment(t, w, map[string]string{"C1": "{o0 o1 p0 p1}", "C2": "{o2 p2}"})
	if m := w.Member("C2"); m.MemberID != "C2-2" || processedBy(w, "C2", 0) == 0 {
		t.Errorf("C2 goes by %q and processed %d records: want C2-2, consuming", m.MemberID, processedBy(w, "C2", 0))
	}
}

// Every other lost answer (or request) on the way into the group is
// retried after request.timeout.ms, and the member ends up consuming.
func TestLostAnswersAreRetried(t *testing.T) {
	for _, tc := range []struct{ drop, retry string }{
		{"JoinGroup request", "no answer to JoinGroup"},
		{"SyncGroup request", "no answer to SyncGroup"},
		{"SyncGroup response", "no answer to SyncGroup"},
		{"OffsetFetch request", "no answer to OffsetFetch"},
		{"OffsetFetch response", "no answer to OffsetFetch"},
		{"Fetch request", "no answer to Fetch"},
		{"Fetch response", "no answer to Fetch"},
	} {
		s := checkedSession(t)
		execAll(t, s, "join C2", "drop "+tc.drop+" C2", "run until tick 80")
		w := s.World()
		retries := eventsOf(w, sim.EvRetry, "C2", tc.retry)
		if len(retries) != 1 {
			t.Errorf("drop %s: %d retries %q, want 1", tc.drop, len(retries), tc.retry)
			continue
		}
		wantAssignment(t, w, map[string]string{"C1": "{o0 o1 p0 p1}", "C2": "{o2 p2}"})
		if processedBy(w, "C2", retries[0].Tick) == 0 {
			t.Errorf("drop %s: C2 processed nothing after retrying", tc.drop)
		}
	}
}

// The coordinator removes members that send no SyncGroup within the
// rebalance timeout (GroupMetadataManager.expirePendingSync).
func TestPendingSyncExpires(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "join C2", "drop SyncGroup request C2 2", "run until tick 60")
	w := s.World()
	if len(eventsOf(w, sim.EvRemoved, "C2", "no SyncGroup within the rebalance timeout")) != 1 {
		t.Fatal("C2-1 was not removed for its missing SyncGroup")
	}
	wantAssignment(t, w, map[string]string{"C1": "{o0 o1 p0 p1}", "C2": "{o2 p2}"})
}

// A lost EndTxn answer: the producer sends EndTxn again after
// request.timeout.ms; the coordinator, already CompleteCommit, answers it
// as done, and the loop goes on.
func TestLostEndTxnAnswer(t *testing.T) {
	s := checkedSession(t)
	execAll(t, s, "set producer transactional", "drop EndTxn response C1", "run until tick 60")
	w := s.World()
	retries := eventsOf(w, sim.EvRetry, "C1", "no answer to EndTxn")
	if len(retries) != 1 {
		t.Fatalf("%d EndTxn retries, want 1", len(retries))
	}
	if !w.Member("C1").Alive || processedBy(w, "C1", retries[0].Tick) == 0 {
		t.Error("C1 did not go on after the retried EndTxn")
	}
	if c := w.Delivery("read_committed"); c.Duplicates != 0 || c.Lost != 0 {
		t.Errorf("duplicates %v lost %v, want none", c.DuplicateNames, c.LostNames)
	}
}
