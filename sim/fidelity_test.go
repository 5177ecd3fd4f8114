package sim

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// stepChecked advances the world n ticks, checking invariants every tick.
func stepChecked(t *testing.T, w *World, c *Checker, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatal(err)
		}
	}
}

// stepUntil advances until cond holds (at most bound ticks).
func stepUntil(t *testing.T, w *World, c *Checker, bound int, cond func() bool) {
	t.Helper()
	for i := 0; i < bound && !cond(); i++ {
		stepChecked(t, w, c, 1)
	}
	if !cond() {
		t.Fatalf("tick %d: condition not reached in %d ticks", w.Tick, bound)
	}
}

// A commit already on the wire when the coordinator removes the member is
// refused by the coordinator (GroupMetadataManager's classic offset commit
// validation: UNKNOWN_MEMBER_ID); only a commit made after the client knows
// its generation is gone fails without a request.
func TestCommitInFlightRefusedByCoordinator(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Set("", "commit.mode", "after"); err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	inFlight := func() bool {
		for _, p := range w.InFlight() {
			if p.Type == OffsetCommit && !p.Response {
				return true
			}
		}
		return false
	}
	stepUntil(t, w, c, 20, inFlight)
	w.Group.Hooks().RemoveMember("C1-1", "removed by the test")
	stepChecked(t, w, c, 3)
	var refused *Packet
	for _, p := range w.Packets.All() {
		if p.Type == OffsetCommit && p.Response && p.To == "C1" {
			refused = p
		}
	}
	if refused == nil || refused.Error != UnknownMemberID {
		t.Fatalf("the commit in flight: %+v, want refused with UNKNOWN_MEMBER_ID", refused)
	}
	found := false
	for _, e := range w.Events.All() {
		if e.Kind == EvCommitFailed && strings.Contains(e.Text, "refused with UNKNOWN_MEMBER_ID") {
			found = true
		}
	}
	if !found {
		t.Error("no CommitFailedException for the refused commit")
	}
}

// TransactionCoordinator.endTransaction: EndTxn with nothing open, or
// with the opposite result of a transaction already preparing or complete,
// answers INVALID_TXN_STATE; the same result while preparing answers
// CONCURRENT_TRANSACTIONS (the client retries).
func TestEndTxnStates(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client.TransactionalID = "tx-" + ClientPlaceholder
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := w.Txn.Entry("tx-C1")
	if e == nil {
		t.Fatal("tx-C1 not registered")
	}
	for _, tc := range []struct {
		state  TxnState
		commit bool
		want   ErrorCode
	}{
		{TxnEmpty, true, InvalidTxnState},
		{TxnEmpty, false, InvalidTxnState},
		{TxnPrepareCommit, false, InvalidTxnState},
		{TxnPrepareCommit, true, ConcurrentTransactions},
		{TxnPrepareAbort, true, InvalidTxnState},
		{TxnPrepareAbort, false, ConcurrentTransactions},
		{TxnCompleteCommit, true, None},
		{TxnCompleteCommit, false, InvalidTxnState},
		{TxnCompleteAbort, false, None},
		{TxnCompleteAbort, true, InvalidTxnState},
	} {
		e.State = tc.state
		req := &Packet{From: "C1", FromInc: 1, To: Broker, Type: EndTxn,
			Body: &wire.EndTxnRequest{TransactionalID: "tx-C1", PID: e.PID, Epoch: e.Epoch, Commit: tc.commit}}
		w.Txn.Receive(req)
		got := w.env.Sending()[len(w.env.Sending())-1]
		if got.Req != req || got.Error != tc.want {
			t.Errorf("EndTxn commit=%v in %s: %s, want %s", tc.commit, tc.state, got.Error, tc.want)
		}
	}
}

// A refused OffsetCommit throws only from the application's commitSync.
// The client's own auto-commits log the failure and go on
// (ConsumerCoordinator.autoCommitOffsetsAsync's callback and
// maybeAutoCommitOffsetsSync in close(); CommitRequestManager's
// autoCommitCallback and AsyncKafkaConsumer's close under the consumer
// protocol). Each case puts a commit of one kind on the wire, has the
// coordinator drop the member, and reads what the client says.
func TestRefusedCommitThrownOnlyByCommitSync(t *testing.T) {
	for _, proto := range []GroupType{ClassicGroup, ConsumerGroup} {
		for _, tc := range []struct {
			name, mode string
			close      bool
			want       string
		}{
			{"auto-commit in poll", "auto", false, "asynchronous auto-commit refused with UNKNOWN_MEMBER_ID: logged as a warning, nothing thrown"},
			{"commitSync", "after", false, "OffsetCommit refused with UNKNOWN_MEMBER_ID: CommitFailedException"},
			{"auto-commit in close", "auto", true, "auto-commit in close() refused with UNKNOWN_MEMBER_ID: logged as a warning, close() goes on"},
		} {
			t.Run(string(proto)+"/"+tc.name, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Client.GroupProtocol = string(proto)
				w, err := New(DefaultTopology(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Set("", "commit.mode", tc.mode); err != nil {
					t.Fatal(err)
				}
				c := NewChecker()
				// Consuming first, so that there is a position to commit.
				stepUntil(t, w, c, 40, func() bool {
					return w.Member("C1").Hooks().AnyPositioned() && w.Member("C1").Hooks().Loop() == LoopProcessing
				})
				if tc.close {
					if err := w.Close("C1"); err != nil {
						t.Fatal(err)
					}
				}
				sent := -1
				stepUntil(t, w, c, 40, func() bool {
					for _, p := range w.InFlight() {
						if p.Type == OffsetCommit && !p.Response && p.From == "C1" {
							sent = p.ID
							return true
						}
					}
					return false
				})
				if gm := w.Group.MemberByID("C1-1"); proto == ConsumerGroup {
					w.Group.Hooks().FenceMember(gm.MemberID, "removed by the test")
				} else {
					w.Group.Hooks().RemoveMember("C1-1", "removed by the test")
				}
				stepChecked(t, w, c, 3)
				answered := false
				for _, p := range w.Packets.All() {
					if p.Response && p.Req != nil && p.Req.ID == sent {
						answered = p.Error == UnknownMemberID
					}
				}
				if !answered {
					t.Fatalf("the commit on the wire was not refused with UNKNOWN_MEMBER_ID")
				}
				onlyCommitFailed(t, w, "C1: "+tc.want)
			})
		}
	}
}

// The classic client's auto-commit before it rejoins (onJoinPrepare) waits
// for its answer, but a refusal is only logged ("Asynchronous auto-commit
// of offsets failed: ... Will continue to join group") and the rejoin goes
// on: the client sends its JoinGroup.
func TestRefusedAutoCommitBeforeRejoinIsLogged(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	m := w.Member("C1")
	stepUntil(t, w, c, 40, func() bool { return m.Hooks().AnyPositioned() && m.Hooks().Loop() == LoopProcessing })
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	sent := -1
	stepUntil(t, w, c, 60, func() bool {
		if !m.Hooks().CommitSyncOnJoinPrepare() {
			return false
		}
		for _, p := range w.InFlight() {
			if p.Type == OffsetCommit && !p.Response && p.From == "C1" {
				sent = p.ID
				return true
			}
		}
		return false
	})
	w.Group.Hooks().RemoveMember("C1-1", "removed by the test")
	stepChecked(t, w, c, 3)
	onlyCommitFailed(t, w, "C1: auto-commit before rejoining refused with UNKNOWN_MEMBER_ID: logged, the rejoin goes on")
	rejoined := false
	for _, p := range w.Packets.All() {
		if p.ID > sent && p.Type == JoinGroup && !p.Response && p.From == "C1" {
			rejoined = true
		}
	}
	if !rejoined {
		t.Error("C1 sent no JoinGroup after its refused auto-commit")
	}
}

// A classic client whose asynchronous auto-commit is refused with
// FENCED_INSTANCE_ID in the generation it sent is the one case where an
// auto-commit's failure reaches the application
// (ConsumerCoordinator.doCommitOffsetsAsync: asyncCommitFenced, thrown by
// the next poll()); the member stops.
func TestFencedAsyncAutoCommitThrowsAtNextPoll(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Set("C1", "group.instance.id", "i1"); err != nil {
		t.Fatal(err)
	}
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	m := w.Member("C1")
	stepUntil(t, w, c, 40, func() bool { return m.Hooks().AnyPositioned() && m.Hooks().Loop() == LoopProcessing })
	stepUntil(t, w, c, 40, func() bool {
		for _, p := range w.InFlight() {
			if p.Type == OffsetCommit && !p.Response && p.From == "C1" {
				return true
			}
		}
		return false
	})
	w.Group.Hooks().Fence(m.MemberID) // the coordinator fenced this member id
	stepChecked(t, w, c, 3)
	onlyCommitFailed(t, w, "C1: asynchronous auto-commit refused with FENCED_INSTANCE_ID: the next poll() throws FencedInstanceIdException")
	if !m.Zombie {
		t.Error("C1 goes on after FENCED_INSTANCE_ID")
	}
}

// onlyCommitFailed checks that C1's one commit-failed event reads want.
func onlyCommitFailed(t *testing.T, w *World, want string) {
	t.Helper()
	var got []string
	for _, e := range w.Events.All() {
		if e.Kind == EvCommitFailed && e.Member == "C1" {
			got = append(got, e.Text)
		}
	}
	if len(got) != 1 || got[0] != want {
		t.Errorf("commit-failed events %q, want [%q]", got, want)
	}
}

// removedAt is the tick the coordinator removed member id for a session
// timeout, -1 if it did not.
func removedAt(w *World, id string) int {
	for _, e := range w.Events.All() {
		if e.Kind == EvRemoved && strings.HasPrefix(e.Text, "coordinator removes "+id+": session timeout") {
			return e.Tick
		}
	}
	return -1
}

// The classic heartbeat thread runs only while the member is
// COMPLETING_REBALANCE or STABLE (AbstractCoordinator.HeartbeatThread.run
// disables itself while state.hasNotJoinedGroup(): UNJOINED or
// PREPARING_REBALANCE), and it is the thread that checks
// max.poll.interval.ms. A cooperative member sends its JoinGroup from
// poll() and goes on consuming; its answer waits in the socket while it
// works through a slow record. The coordinator reschedules the member's
// heartbeat when the join completes (GroupMetadataManager.completeClassicGroupJoin:
// rescheduleClassicGroupMemberHeartbeat) and, hearing nothing, removes it
// session.timeout.ms later (expireClassicGroupMemberHeartbeat: not awaiting
// join or sync). The member sends no LeaveGroup for its long poll gap.
func TestHeartbeatsStopWhileJoining(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Set("", "partition.assignment.strategy", "cooperative-sticky"); err != nil {
		t.Fatal(err)
	}
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	m := w.Member("C1")
	stepUntil(t, w, c, 200, func() bool { return w.CaughtUp() && m.Hooks().Loop() == LoopFetching })
	if err := w.Slow("C1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 10, func() bool { return m.Phase == PhaseJoining })
	if err := w.ProduceInput(w.Layout().Inputs()[0], 1); err != nil { // the record C1 gets stuck in
		t.Fatal(err)
	}
	stepUntil(t, w, c, 10, func() bool { return w.Group.State() == CompletingRebalance })
	completed := w.Tick
	stepChecked(t, w, c, 25)
	if got, want := removedAt(w, "C1-1"), completed+w.Cfg.Client.SessionTimeout; got != want {
		t.Errorf("C1-1 removed for a session timeout at tick %d, want %d (session.timeout.ms after generation 2 completed at %d)", got, want, completed)
	}
	for _, p := range w.Packets.All() {
		if p.Type == LeaveGroup && p.From == "C1" {
			t.Errorf("tick %d: C1 sent LeaveGroup (%s); the heartbeat thread does not check max.poll.interval.ms while the member is joining", p.Sent, p.Summary)
		}
	}
}

// After a reset that keeps the member id (ILLEGAL_GENERATION:
// resetStateAndGeneration with shouldResetMemberId false) the member is
// UNJOINED and sends no heartbeats until its next JoinGroup is answered. A
// member busy with a slow record when the reset comes is removed by the
// coordinator session.timeout.ms later; the same member without the reset
// keeps heartbeating (STABLE) and is still in the group then.
func TestHeartbeatsStopAfterResetKeepingID(t *testing.T) {
	for _, reset := range []bool{false, true} {
		w, err := New(DefaultTopology(), DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		c := NewChecker()
		m := w.Member("C1")
		if err := w.Slow("C1"); err != nil {
			t.Fatal(err)
		}
		stepUntil(t, w, c, 40, func() bool { return m.Hooks().SlowNow() })
		at := w.Tick
		if reset {
			// The answer to a commit of this generation: ILLEGAL_GENERATION.
			m.Hooks().OnCommitRefused(IllegalGeneration, true)
		}
		stepChecked(t, w, c, w.Cfg.Client.SessionTimeout+1)
		got := removedAt(w, "C1-1")
		switch {
		case reset && got != at+w.Cfg.Client.SessionTimeout:
			t.Errorf("after the reset at %d: C1-1 removed for a session timeout at %d, want %d", at, got, at+w.Cfg.Client.SessionTimeout)
		case !reset && got >= 0:
			t.Errorf("without a reset C1-1 was removed at %d: a STABLE member heartbeats through its slow record", got)
		}
	}
}

// GroupMetadataManager answers a JoinGroup still waiting at the
// coordinator with UNKNOWN_MEMBER_ID before it removes the member
// (removeMemberAndUpdateClassicGroup when its session expires,
// removeCurrentMemberFromClassicGroup for a LeaveGroup; kgrepl's
// removeMember serves both), so a client that is still there rejoins.
func TestRemovedMemberJoinAnswered(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	if err := w.Slow("C1"); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 40, func() bool { return w.Member("C1").Hooks().SlowNow() })
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	// C2's JoinGroup waits for C1, busy with its slow record.
	stepUntil(t, w, c, 10, func() bool { join, _ := w.Group.Hooks().Waiting("C2-1"); return join != nil })
	join, _ := w.Group.Hooks().Waiting("C2-1")
	w.Group.Hooks().RemoveMember("C2-1", "removed by the test")
	for _, p := range w.env.Sending() {
		if p.Req == join {
			if p.Error != UnknownMemberID {
				t.Errorf("the waiting JoinGroup answered %s, want UNKNOWN_MEMBER_ID", p.Error)
			}
			return
		}
	}
	t.Error("the waiting JoinGroup was not answered when its member was removed")
}

// ClassicGroup.replaceStaticMember (a new instance of a static member
// joins) answers the old instance's waiting JoinGroup and SyncGroup with
// FENCED_INSTANCE_ID before it swaps the member id; the old instance's
// client, reading it, stops (fatal in JoinGroupResponseHandler and
// SyncGroupResponseHandler).
func TestStaticReplaceFencesOldInstance(t *testing.T) {
	for _, phase := range []Phase{PhaseJoining, PhaseSyncing} {
		t.Run(phase.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			if err := cfg.Set("C1", "group.instance.id", "i1"); err != nil {
				t.Fatal(err)
			}
			w, err := New(DefaultTopology(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := NewChecker()
			m := w.Member("C1")
			stepUntil(t, w, c, 40, func() bool { return w.GroupSettled() && m.Phase == PhaseStable })
			oldID := m.MemberID
			// The old instance's request waits at the coordinator.
			join, sync := inFlightJoin(m, phase)
			m.Phase = phase
			waiting := join
			if phase == PhaseJoining {
				w.Group.Hooks().SetWaiting(oldID, join, nil)
			} else {
				w.Group.Hooks().SetWaiting(oldID, nil, sync)
				waiting = sync
			}
			r := *m.JoinRequest()
			r.MemberID, r.Inc = "", m.Inc+1 // a new instance with the same group.instance.id
			newJoin := &Packet{ID: 990, From: m.Client, FromInc: r.Inc, To: Broker, Type: JoinGroup, Body: &r}
			w.Group.Hooks().StaticRejoin(newJoin, &r, oldID)
			var answer *Packet
			for _, p := range w.env.Sending() {
				if p.Req == waiting {
					answer = p
				}
			}
			if answer == nil || answer.Error != FencedInstanceID {
				t.Fatalf("the old instance's waiting %s answered %v, want FENCED_INSTANCE_ID", waiting.Type, answer)
			}
			m.Hooks().Receive(answer)
			if m.Alive {
				m.Act()
			}
			if m.Alive {
				t.Errorf("the old instance read FENCED_INSTANCE_ID on its %s and goes on (%s)", waiting.Type, m.Phase)
			}
		})
	}
}

// GroupMetadataManager.propagateAssignment restarts the session of every
// member whose SyncGroup it answers, the leader's own included
// (rescheduleClassicGroupMemberHeartbeat). A leader that crashes with its
// SyncGroup in flight is removed session.timeout.ms after that answer,
// not after its crash.
func TestLeaderSyncRestartsItsSession(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	stepUntil(t, w, c, 40, func() bool { return w.GroupSettled() })
	if err := w.Join("C5", false, nil); err != nil {
		t.Fatal(err)
	}
	var leader string
	stepUntil(t, w, c, 40, func() bool {
		for _, p := range w.env.Sending() {
			if r, ok := p.Body.(*wire.SyncGroupRequest); ok && !p.Response && len(r.Plan) > 0 {
				leader = p.From
				return true
			}
		}
		return false
	})
	id := w.Member(leader).MemberID
	if err := w.CrashNow(leader); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, w, c, 5, func() bool { return w.Group.State() == Stable })
	answered := w.Tick
	stepChecked(t, w, c, w.Cfg.Client.SessionTimeout+1)
	if got, want := removedAt(w, id), answered+w.Cfg.Client.SessionTimeout; got != want {
		t.Errorf("leader %s, crashed with its SyncGroup in flight, answered at %d: removed at %d, want %d", id, answered, got, want)
	}
}

// GroupMetadataManager.completeClassicGroupJoin restarts the session of
// every member left in the group (rescheduleClassicGroupMemberHeartbeat
// over allMembers), a static member that did not rejoin too: its session
// runs from the join's completion, not from when it went quiet.
func TestCompleteJoinRestartsStaticMemberSession(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Set("C1", "group.instance.id", "i1"); err != nil {
		t.Fatal(err)
	}
	topo := DefaultTopology()
	topo.Members = 3
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	stepUntil(t, w, c, 40, func() bool { return w.GroupSettled() })
	g := w.Group
	id := w.Member("C1").MemberID
	if err := w.CrashNow("C1"); err != nil { // silent from now, kept through the round as static
		t.Fatal(err)
	}
	since := g.Hooks().SilentSince(id)
	stepChecked(t, w, c, 2)
	g.Hooks().PrepareRebalance("the test")
	for _, gm := range g.Members() {
		g.Hooks().SetJoined(gm.MemberID, gm.MemberID != id) // every other member rejoined
	}
	g.Hooks().CompleteJoin()
	gm := g.MemberByID(id)
	if gm == nil || g.Hooks().SilentSince(id) != w.Tick {
		t.Fatalf("static %s after the join completed at %d: %+v, want in the group, its session from %d", id, w.Tick, gm, w.Tick)
	}
	g.Hooks().SessionExpiry(id, since) // the timer of its old session
	if g.MemberByID(id) == nil {
		t.Errorf("static %s removed by the session that ran from %d, restarted at %d", id, since, w.Tick)
	}
}

// A member whose SyncGroup waits at the coordinator for the leader's plan
// counts as heard though its heartbeats stopped
// (ClassicGroupMember.hasSatisfiedHeartbeat: isAwaitingSync), so its
// session expiring then does not remove it; once the SyncGroup is
// answered, the same silence does.
func TestWaitingSyncGroupCountsAsHeard(t *testing.T) {
	topo := DefaultTopology()
	topo.Members = 2
	w, err := New(topo, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker()
	stepChecked(t, w, c, 3)
	g := w.Group
	id := w.Member("C2").MemberID
	gm := g.MemberByID(id)
	if err := w.CrashNow("C2"); err != nil { // its heartbeats stop
		t.Fatal(err)
	}
	since := g.Hooks().SilentSince(id)
	if since < 0 {
		t.Fatalf("%s not silent after its process stopped", id)
	}
	g.Hooks().SetWaiting(id, nil, &Packet{ID: 950, From: "C2", FromInc: gm.Inc, To: Broker, Type: SyncGroup, Body: &wire.SyncGroupRequest{MemberID: id, Generation: g.Describe().Generation}})
	g.Hooks().SessionExpiry(id, since)
	if g.MemberByID(id) == nil {
		t.Fatalf("%s removed for its session while its SyncGroup waited", id)
	}
	g.Hooks().SetWaiting(id, nil, nil)
	g.Hooks().SessionExpiry(id, since)
	if g.MemberByID(id) != nil {
		t.Errorf("%s, silent since %d with no request waiting, not removed when its session expired", id, since)
	}
}
