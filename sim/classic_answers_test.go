package sim

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// answerCase puts C1 of answerWorld (generation 1, member C1-1, owning
// partitions) into a state, hands it one crafted
// answer, lets it run its next poll(), and reads what it did. The rules
// are the table beside onCommitRefused (Kafka's AbstractCoordinator and
// ConsumerCoordinator response handlers).
type answerCase struct {
	name  string
	phase Phase // the member's state when the answer comes
	gen   int   // the member's generation then (the requests were sent in 1)
	api   API
	code  ErrorCode

	wantGen  int    // the member's generation after the answer
	wantJoin string // the member id its next JoinGroup carries; "none": no JoinGroup
	wantLost bool   // its partitions are given up as lost (onPartitionsLost)
	wantText string // in its commit-failed event ("" for none)
	wantStop bool   // the process stops (FencedInstanceIdException)
}

const noJoin = "none"

func TestClassicAnswersFollowKafka(t *testing.T) {
	cases := []answerCase{
		// ConsumerCoordinator.OffsetCommitResponseHandler.handle.
		{name: "commit ILLEGAL_GENERATION, stable, same generation", phase: PhaseStable, gen: 1, api: OffsetCommit, code: IllegalGeneration,
			wantGen: -1, wantJoin: "C1-1", wantLost: true, wantText: "CommitFailedException"},
		{name: "commit ILLEGAL_GENERATION, stable in a newer generation", phase: PhaseStable, gen: 2, api: OffsetCommit, code: IllegalGeneration,
			wantGen: -1, wantJoin: "C1-1", wantLost: true, wantText: "CommitFailedException"},
		// A reset with a JoinGroup or SyncGroup in flight: the next poll()
		// runs onJoinPrepare (the partitions are lost) and then waits for
		// that answer (AbstractCoordinator.initiateJoinGroup keeps
		// joinFuture); TestResetWaitsForTheJoinInFlight follows it further.
		{name: "commit ILLEGAL_GENERATION, syncing a newer generation", phase: PhaseSyncing, gen: 2, api: OffsetCommit, code: IllegalGeneration,
			wantGen: -1, wantJoin: noJoin, wantLost: true, wantText: "CommitFailedException"},
		{name: "commit ILLEGAL_GENERATION, joining after a newer generation", phase: PhaseJoining, gen: 2, api: OffsetCommit, code: IllegalGeneration,
			wantGen: 2, wantJoin: noJoin, wantText: "RebalanceInProgressException"},
		{name: "commit ILLEGAL_GENERATION, joining in the same generation", phase: PhaseJoining, gen: 1, api: OffsetCommit, code: IllegalGeneration,
			wantGen: -1, wantJoin: noJoin, wantLost: true, wantText: "CommitFailedException"},
		{name: "commit UNKNOWN_MEMBER_ID, stable, same generation", phase: PhaseStable, gen: 1, api: OffsetCommit, code: UnknownMemberID,
			wantGen: -1, wantJoin: "", wantLost: true, wantText: "CommitFailedException"},
		{name: "commit UNKNOWN_MEMBER_ID, stable in a newer generation", phase: PhaseStable, gen: 2, api: OffsetCommit, code: UnknownMemberID,
			wantGen: -1, wantJoin: "", wantLost: true, wantText: "CommitFailedException"},
		{name: "commit UNKNOWN_MEMBER_ID, joining after a newer generation", phase: PhaseJoining, gen: 2, api: OffsetCommit, code: UnknownMemberID,
			wantGen: 2, wantJoin: noJoin, wantText: "RebalanceInProgressException"},
		{name: "commit FENCED_INSTANCE_ID, same generation", phase: PhaseStable, gen: 1, api: OffsetCommit, code: FencedInstanceID,
			wantGen: 1, wantJoin: noJoin, wantText: "FencedInstanceIdException", wantStop: true},
		{name: "commit FENCED_INSTANCE_ID, stable in a newer generation", phase: PhaseStable, gen: 2, api: OffsetCommit, code: FencedInstanceID,
			wantGen: 2, wantJoin: noJoin, wantText: "CommitFailedException"},
		{name: "commit FENCED_INSTANCE_ID, joining after a newer generation", phase: PhaseJoining, gen: 2, api: OffsetCommit, code: FencedInstanceID,
			wantGen: 2, wantJoin: noJoin, wantText: "RebalanceInProgressException"},
		{name: "commit REBALANCE_IN_PROGRESS, stable", phase: PhaseStable, gen: 1, api: OffsetCommit, code: RebalanceInProgress,
			wantGen: 1, wantJoin: "C1-1", wantText: "RebalanceInProgressException"},
		// AbstractCoordinator.JoinGroupResponseHandler and joinGroupIfNeeded.
		{name: "JoinGroup UNKNOWN_MEMBER_ID", phase: PhaseJoining, gen: 1, api: JoinGroup, code: UnknownMemberID,
			wantGen: -1, wantJoin: "", wantLost: true},
		{name: "JoinGroup REBALANCE_IN_PROGRESS", phase: PhaseJoining, gen: 1, api: JoinGroup, code: RebalanceInProgress,
			wantGen: 1, wantJoin: "C1-1"},
		// AbstractCoordinator.SyncGroupResponseHandler.
		{name: "SyncGroup ILLEGAL_GENERATION", phase: PhaseSyncing, gen: 2, api: SyncGroup, code: IllegalGeneration,
			wantGen: -1, wantJoin: "C1-1", wantLost: true},
		{name: "SyncGroup UNKNOWN_MEMBER_ID", phase: PhaseSyncing, gen: 2, api: SyncGroup, code: UnknownMemberID,
			wantGen: -1, wantJoin: "", wantLost: true},
		{name: "SyncGroup REBALANCE_IN_PROGRESS", phase: PhaseSyncing, gen: 2, api: SyncGroup, code: RebalanceInProgress,
			wantGen: 2, wantJoin: "C1-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, m := answerWorld(t)
			owned := m.Owned
			m.Generation, m.Phase = tc.gen, tc.phase
			joinReqPkt, syncReqPkt := inFlightJoin(m, tc.phase)
			answer := &Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: tc.api, Response: true, Error: tc.code}
			switch tc.api {
			case OffsetCommit:
				// The application's commitSync, sent in generation 1.
				req := &wire.OffsetCommitRequest{MemberID: "C1-1", Generation: 1, Partitions: owned, Offsets: make([]int, len(owned)), Sync: true}
				answer.Req = &Packet{From: m.Client, FromInc: m.Inc, To: Broker, Type: OffsetCommit, Body: req}
				answer.Body = &wire.OffsetCommitResponse{Partitions: owned, Offsets: req.Offsets, Sync: true}
				m.Hooks().InCommitSyncOnJoinPrepare()
			case JoinGroup:
				answer.Req = joinReqPkt
			case SyncGroup:
				answer.Req = syncReqPkt
			}
			seq, events := m.Hooks().JoinSeq(), w.Events.Len()
			m.Hooks().Receive(answer)
			m.Act() // its next poll()

			if m.Generation != tc.wantGen {
				t.Errorf("generation %d, want %d", m.Generation, tc.wantGen)
			}
			if m.Alive == tc.wantStop {
				t.Errorf("alive %v, want %v", m.Alive, !tc.wantStop)
			}
			switch {
			case tc.wantJoin == noJoin && m.Hooks().JoinSeq() != seq:
				t.Errorf("sent a JoinGroup (member id %q), want none", m.Hooks().LastJoin().Body.(*wire.JoinGroupRequest).MemberID)
			case tc.wantJoin != noJoin && m.Hooks().JoinSeq() == seq:
				t.Errorf("sent no JoinGroup, want one with member id %q", tc.wantJoin)
			case tc.wantJoin != noJoin:
				r := m.Hooks().LastJoin().Body.(*wire.JoinGroupRequest)
				if r.MemberID != tc.wantJoin || m.MemberID != tc.wantJoin {
					t.Errorf("JoinGroup with member id %q (the member goes by %q), want %q", r.MemberID, m.MemberID, tc.wantJoin)
				}
				// onJoinPrepare with no generation: nothing is owned any
				// more, so the JoinGroup says it owns nothing.
				if lost := len(r.Owned) == 0; lost != tc.wantLost {
					t.Errorf("JoinGroup owns %s, want lost %v", w.layout.PartList(r.Owned), tc.wantLost)
				}
			}
			if lost := len(m.Owned) == 0; lost != tc.wantLost {
				t.Errorf("owns %s, want lost %v", w.layout.PartList(m.Owned), tc.wantLost)
			}
			var failed []string
			lostSaid := false
			for _, e := range w.Events.Slice(events, w.Events.Len()) {
				switch {
				case e.Kind == EvCommitFailed:
					failed = append(failed, e.Text)
				case e.Kind == EvRevoked && strings.HasPrefix(e.Text, "C1 loses "+w.layout.PartList(owned)+" "):
					lostSaid = true
				}
			}
			if lostSaid != tc.wantLost {
				t.Errorf("onPartitionsLost said %v, want %v", lostSaid, tc.wantLost)
			}
			switch {
			case tc.wantText == "" && len(failed) > 0:
				t.Errorf("commit-failed events %q, want none", failed)
			case tc.wantText != "" && (len(failed) != 1 || !strings.HasSuffix(failed[0], ": "+tc.wantText)):
				t.Errorf("commit-failed events %q, want one ending in %s", failed, tc.wantText)
			}
		})
	}
}

// inFlightJoin gives a member put by hand in PhaseJoining or PhaseSyncing
// the request its join future waits on, as sendJoin and handleJoinAnswer
// would have (IDs far from the world's own packets), and returns the
// JoinGroup and SyncGroup requests.
func inFlightJoin(m *Member, phase Phase) (join, sync *Packet) {
	join = &Packet{ID: 900, From: m.Client, FromInc: m.Inc, To: Broker, Type: JoinGroup, Body: m.JoinRequest()}
	sync = &Packet{ID: 950, From: m.Client, FromInc: m.Inc, To: Broker, Type: SyncGroup, Body: &wire.SyncGroupRequest{MemberID: m.MemberID, Generation: m.Generation}}
	switch phase {
	case PhaseJoining:
		m.Hooks().SetJoinInFlight(join)
	case PhaseSyncing:
		m.Hooks().SetSyncInFlight(sync)
	}
	return join, sync
}

// answerWorld is the default world with C1 on cooperative-sticky,
// committing after processing (so a rejoin does not wait for onJoinPrepare's
// auto-commit), stable in generation 1 as C1-1 and owning partitions.
func answerWorld(t *testing.T) (*World, *Member) {
	t.Helper()
	cfg := DefaultConfig()
	for _, kv := range [][2]string{{"partition.assignment.strategy", "cooperative-sticky"}, {"commit.mode", "after"}} {
		if err := cfg.Set("", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := w.Member("C1")
	if m.MemberID != "C1-1" || m.Generation != 1 || m.Phase != PhaseStable || len(m.Owned) == 0 {
		t.Fatalf("C1: %s gen %d %s owning %s, want C1-1 gen 1 stable owning partitions", m.MemberID, m.Generation, m.Phase, w.layout.PartList(m.Owned))
	}
	return w, m
}

// A successful SyncGroup ends the rebalance: a rejoin asked for while it
// was under way (an OffsetCommit answered REBALANCE_IN_PROGRESS during
// the sync) is done with (SyncGroupResponseHandler: rejoinNeeded = false).
func TestSyncGroupSuccessClearsRejoin(t *testing.T) {
	_, m := answerWorld(t)
	owned := m.Owned
	m.Generation, m.Phase = 2, PhaseSyncing
	_, req := inFlightJoin(m, PhaseSyncing)
	m.Hooks().OnCommitRefused(RebalanceInProgress, true)
	if !m.Hooks().Rejoin() {
		t.Fatal("REBALANCE_IN_PROGRESS on a commit asks for no rejoin")
	}
	m.Hooks().Receive(&Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: SyncGroup, Response: true, Req: req,
		Body: &wire.SyncGroupResponse{Assignment: owned}})
	if m.Phase != PhaseStable || m.Hooks().Rejoin() {
		t.Errorf("after the SyncGroup answer: %s, rejoin %v; want Stable with no rejoin", m.Phase, m.Hooks().Rejoin())
	}
}

// A TxnOffsetCommit refused by the group makes the producer's transaction
// abortable (TransactionManager.TxnOffsetCommitHandler: abortableError);
// the consumer half is not told: its generation, member id and partitions
// stay, and it asks for no rejoin. The application aborts and rewinds to
// the committed offsets: earliest for a partition with none committed.
func TestRefusedTxnOffsetCommitLeavesTheConsumerAlone(t *testing.T) {
	for _, code := range []ErrorCode{IllegalGeneration, UnknownMemberID, FencedInstanceID} {
		t.Run(code.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Client.TransactionalID = "tx-" + ClientPlaceholder
			w, err := New(DefaultTopology(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := w.Member("C1")
			owned := m.Owned
			tp := owned[0]
			m.Hooks().SetPosition(tp, 3)
			m.Hooks().SetProcessed(tp, 3)
			req := &Packet{From: m.Client, FromInc: m.Inc, To: Broker, Type: TxnOffsetCommit, Body: m.Hooks().InTxnOffsets(tp, 3)}
			m.Hooks().Receive(&Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: TxnOffsetCommit, Response: true, Error: code, Req: req})
			if m.Generation != 1 || m.MemberID != "C1-1" || m.Phase != PhaseStable || m.Hooks().Rejoin() || m.Hooks().Lost() || m.Zombie ||
				w.layout.PartList(m.Owned) != w.layout.PartList(owned) {
				t.Errorf("the consumer changed: %s gen %d %s rejoin %v lost %v zombie %v owning %s",
					m.MemberID, m.Generation, m.Phase, m.Hooks().Rejoin(), m.Hooks().Lost(), m.Zombie, w.layout.PartList(m.Owned))
			}
			if m.Hooks().Loop() != LoopTxnEnd {
				t.Fatalf("loop %v, want the EndTxn(ABORT) out", m.Hooks().Loop())
			}
			end := &Packet{From: m.Client, FromInc: m.Inc, To: Broker, Type: EndTxn, Body: &wire.EndTxnRequest{TransactionalID: "tx-C1", Commit: false}}
			m.Hooks().Receive(&Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: EndTxn, Response: true, Req: end})
			if pos, _ := m.Position(tp); pos != 0 {
				t.Errorf("after the abort %s is at %d, want 0 (nothing committed: earliest)", tp, pos)
			}
		})
	}
}

// SyncGroup answered REBALANCE_IN_PROGRESS: joinGroupIfNeeded joins again
// from poll(). A cooperative member busy with its batch sends the JoinGroup
// at its next poll(), not when the answer comes; it keeps its generation,
// member id and partitions.
func TestSyncRebalanceInProgressRejoinsFromPoll(t *testing.T) {
	w, m := answerWorld(t)
	owned := m.Owned
	m.Generation, m.Phase = 2, PhaseSyncing
	m.Hooks().SetLoop(LoopProcessing)
	seq := m.Hooks().JoinSeq()
	_, req := inFlightJoin(m, PhaseSyncing)
	m.Hooks().Receive(&Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: SyncGroup, Response: true, Error: RebalanceInProgress, Req: req})
	if m.Hooks().JoinSeq() != seq {
		t.Fatal("a member busy with its batch sent its JoinGroup when the answer came")
	}
	m.Hooks().SetLoop(LoopIdle) // the batch is done: back in poll()
	m.Act()
	if m.Hooks().JoinSeq() == seq {
		t.Fatal("no JoinGroup at the next poll()")
	}
	if r := m.Hooks().LastJoin().Body.(*wire.JoinGroupRequest); r.MemberID != "C1-1" || w.layout.PartList(r.Owned) != w.layout.PartList(owned) || m.Generation != 2 {
		t.Errorf("JoinGroup as %q owning %s, generation %d; want C1-1 owning %s, generation 2", r.MemberID, w.layout.PartList(r.Owned), m.Generation, w.layout.PartList(owned))
	}
}

// A reset of the generation while a JoinGroup, or the SyncGroup that
// follows it, is in flight: Kafka's next poll() runs onJoinPrepare (the
// partitions are lost) and then waits for that answer, because
// AbstractCoordinator.initiateJoinGroup returns the joinFuture it keeps
// rather than send another JoinGroup. The answer fails the future
// (JoinGroupResponseHandler: UnjoinedGroupException when the member is no
// longer PREPARING_REBALANCE; SyncGroupResponseHandler: a success after a
// reset raised as ILLEGAL_GENERATION), joinGroupIfNeeded resets the future,
// and the next JoinGroup goes out from that poll(), with the member id the
// reset kept (none after UNKNOWN_MEMBER_ID). The answer's assignment is
// never taken.
func TestResetWaitsForTheJoinInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		phase  Phase
		code   ErrorCode
		wantID string
	}{
		{"JoinGroup in flight, ILLEGAL_GENERATION", PhaseJoining, IllegalGeneration, "C1-1"},
		{"JoinGroup in flight, UNKNOWN_MEMBER_ID", PhaseJoining, UnknownMemberID, ""},
		{"SyncGroup in flight, ILLEGAL_GENERATION", PhaseSyncing, IllegalGeneration, "C1-1"},
		{"SyncGroup in flight, UNKNOWN_MEMBER_ID", PhaseSyncing, UnknownMemberID, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, m := answerWorld(t)
			owned := m.Owned
			join, sync := inFlightJoin(m, tc.phase)
			m.Phase = tc.phase
			// A commit of generation 1 refused in generation 1: the reset.
			m.Hooks().OnCommitRefused(tc.code, true)
			seq := m.Hooks().JoinSeq()
			m.Act() // the next poll(): onJoinPrepare, then it waits
			if m.Hooks().JoinSeq() != seq {
				t.Fatalf("a JoinGroup went out with the %s still unanswered", map[Phase]string{PhaseJoining: "JoinGroup", PhaseSyncing: "SyncGroup"}[tc.phase])
			}
			if len(m.Owned) != 0 {
				t.Errorf("owns %s after onJoinPrepare with no generation, want nothing (lost)", w.layout.PartList(m.Owned))
			}
			// The answer comes: a success, as the coordinator still has the
			// member in its rebalance.
			answer := &Packet{From: Broker, To: m.Client, ToInc: m.Inc, Response: true}
			if tc.phase == PhaseJoining {
				answer.Type, answer.Req = JoinGroup, join
				answer.Body = &wire.JoinGroupResponse{MemberID: "C1-1", Generation: 2, Leader: "C9-1", Protocol: "cooperative-sticky"}
			} else {
				answer.Type, answer.Req = SyncGroup, sync
				answer.Body = &wire.SyncGroupResponse{Assignment: owned}
			}
			m.Hooks().Receive(answer)
			m.Act()
			if m.Hooks().JoinSeq() == seq {
				t.Fatal("no JoinGroup once the answer in flight came")
			}
			r := m.Hooks().LastJoin().Body.(*wire.JoinGroupRequest)
			if r.MemberID != tc.wantID || len(r.Owned) != 0 {
				t.Errorf("JoinGroup as %q owning %s, want %q owning nothing", r.MemberID, w.layout.PartList(r.Owned), tc.wantID)
			}
			if m.Generation != -1 || len(m.Owned) != 0 {
				t.Errorf("generation %d owning %s: the answer's generation or assignment was taken", m.Generation, w.layout.PartList(m.Owned))
			}
		})
	}
}

// FENCED_INSTANCE_ID answering the JoinGroup or SyncGroup a reset left in
// flight is still fatal: AbstractCoordinator.JoinGroupResponseHandler and
// SyncGroupResponseHandler raise it whatever the generation ("even if the
// generation has changed we would not expect the instance id gets
// fenced"), and joinGroupIfNeeded throws it as not retriable; so is
// INCONSISTENT_GROUP_PROTOCOL on JoinGroup. The member stops instead of
// rejoining.
func TestFatalAnswerAfterResetStops(t *testing.T) {
	for _, tc := range []struct {
		phase Phase
		code  ErrorCode
	}{
		{PhaseJoining, FencedInstanceID},
		{PhaseJoining, InconsistentGroupProtocol},
		{PhaseSyncing, FencedInstanceID},
	} {
		t.Run(tc.phase.String()+" "+tc.code.String(), func(t *testing.T) {
			_, m := answerWorld(t)
			join, sync := inFlightJoin(m, tc.phase)
			m.Phase = tc.phase
			m.Hooks().OnCommitRefused(IllegalGeneration, true) // the reset
			m.Act()                                            // its next poll() waits for the answer
			seq := m.Hooks().JoinSeq()
			answer := &Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: JoinGroup, Response: true, Error: tc.code, Req: join}
			if tc.phase == PhaseSyncing {
				answer.Type, answer.Req = SyncGroup, sync
			}
			m.Hooks().Receive(answer)
			if m.Alive {
				m.Act()
			}
			if m.Alive || m.Hooks().JoinSeq() != seq {
				t.Errorf("after %s on the %s in flight: alive %v, %d JoinGroups sent; want stopped, none", tc.code, answer.Type, m.Alive, m.Hooks().JoinSeq()-seq)
			}
		})
	}
}

// AbstractCoordinator.maybeLeaveGroup sends LeaveGroup only when the
// member is not UNJOINED: after a reset that kept the member id
// (ILLEGAL_GENERATION) close() sends none, while the same close without
// the reset does.
func TestCloseWhileUnjoinedSendsNoLeaveGroup(t *testing.T) {
	for _, reset := range []bool{false, true} {
		w, m := answerWorld(t)
		if reset {
			m.Hooks().OnCommitRefused(IllegalGeneration, true)
			if !m.Hooks().Unjoined() || m.MemberID == "" {
				t.Fatalf("after ILLEGAL_GENERATION: unjoined %v, member id %q; want unjoined keeping the id", m.Hooks().Unjoined(), m.MemberID)
			}
		}
		from := w.Packets.Len()
		if err := w.Close("C1"); err != nil {
			t.Fatal(err)
		}
		stepChecked(t, w, NewChecker(), 5)
		sent := false
		for i, p := range w.Packets.All() {
			if i >= from && p.Type == LeaveGroup && p.From == "C1" {
				sent = true
			}
		}
		if sent == reset {
			t.Errorf("reset %v: LeaveGroup sent %v, want %v", reset, sent, !reset)
		}
	}
}

// A JoinGroup lost after a reset left the join future waiting on it: the
// request times out (joinGroupIfNeeded treats it as retriable, and
// resetJoinGroupFuture), so the member joins again once the timeout
// passes instead of waiting for ever.
func TestLostJoinAfterResetTimesOut(t *testing.T) {
	w, m := answerWorld(t)
	c := NewChecker()
	w.Drop(DropRule{Type: JoinGroup, From: "C1", Count: 1})
	m.Hooks().SetRejoin(true)
	stepUntil(t, w, c, 10, func() bool { return m.Phase == PhaseJoining && m.Hooks().JoinFuture() != 0 })
	sent, seq := w.Tick, m.Hooks().JoinSeq()
	m.Hooks().OnCommitRefused(IllegalGeneration, true) // the reset, with the JoinGroup out
	if !m.Hooks().WaitJoinFuture() {
		t.Fatal("the reset did not leave the join future waiting on the lost JoinGroup")
	}
	stepUntil(t, w, c, m.Hooks().JoinTimeoutTicks()+5, func() bool { return m.Hooks().JoinSeq() > seq })
	if w.Tick < sent+m.Hooks().JoinTimeoutTicks() {
		t.Errorf("the next JoinGroup went out at tick %d, before the lost one's timeout at %d", w.Tick, sent+m.Hooks().JoinTimeoutTicks())
	}
}

// HeartbeatThread.enable, when a JoinGroup answer moves the member to
// COMPLETING_REBALANCE, resets the heartbeat's timers, max.poll.interval.ms
// among them: an answer read inside commitSync (outside poll()) starts the
// poll interval anew.
func TestJoinAnswerInCommitSyncRestartsPollTimer(t *testing.T) {
	w, m := answerWorld(t)
	stepChecked(t, w, NewChecker(), 5)
	m.Phase = PhaseJoining
	join, _ := inFlightJoin(m, PhaseJoining)
	m.Hooks().SetLoop(LoopCommitting) // inside commitSync, not poll()
	if m.Hooks().InPoll() {
		t.Fatal("a member in commitSync counts as in poll()")
	}
	m.Hooks().SetLeftPollAt(w.Tick - 4)
	m.Hooks().Receive(&Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: JoinGroup, Response: true, Req: join,
		Body: &wire.JoinGroupResponse{MemberID: m.MemberID, Generation: 2, Leader: "C9-1", Protocol: m.Cfg.Assignor}})
	if m.Phase != PhaseSyncing {
		t.Fatalf("%s after the JoinGroup answer read in commitSync, want Syncing", m.Phase)
	}
	if m.Hooks().LeftPollAt() != w.Tick {
		t.Errorf("the poll interval runs from tick %d, want %d (the answer read in commitSync)", m.Hooks().LeftPollAt(), w.Tick)
	}
}
