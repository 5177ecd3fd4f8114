package client

// The classic client's errors: what an answer refused with an error does
// to the member (resetting its generation, rejoining, fencing), and what
// a refused commit throws.

import (
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// commitException is what commitSync throws for a refused commit
// (ConsumerCoordinator.OffsetCommitResponseHandler.handle):
// REBALANCE_IN_PROGRESS is RebalanceInProgressException (and a rejoin);
// UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION and FENCED_INSTANCE_ID are
// RebalanceInProgressException when the member has moved to another
// generation since it sent the commit and is rejoining, else
// FENCED_INSTANCE_ID is FencedInstanceIdException (fatal) and the other two
// CommitFailedException. An asynchronous commit fenced by
// FENCED_INSTANCE_ID in the generation it was sent in makes the next
// poll() throw FencedInstanceIdException (asyncCommitFenced).
func (c *classicMember) commitException(m *Member, code wire.ErrorCode, unchanged bool) (sync, async string) {
	if code == wire.FencedInstanceID && unchanged {
		async = "FencedInstanceIdException"
	}
	switch {
	case code == wire.RebalanceInProgress, !unchanged && m.Phase == PhaseJoining:
		return "RebalanceInProgressException", async
	case code == wire.FencedInstanceID && unchanged:
		return "FencedInstanceIdException", async
	}
	return "CommitFailedException", async
}

// The classic client's answer handlers, error by error (Kafka's
// AbstractCoordinator and ConsumerCoordinator). "unchanged" is
// CoordinatorResponseHandler.generationUnchanged: the client's generation
// (generation id, member id, protocol) is still the one the request was
// sent in. "reset" is resetStateOnResponseError -> resetStateAndRejoin ->
// resetStateAndGeneration: state UNJOINED (heartbeats stop), generation
// NO_GENERATION with the member id kept only where the table says so,
// rejoinNeeded and needsJoinPrepare, so the next poll()'s onJoinPrepare
// finds no generation and gives every partition up as lost
// (onPartitionsLost) before it sends the JoinGroup; with a JoinGroup or
// SyncGroup still out, it first waits for that answer (joinFuture; kgrepl:
// waitJoinFuture). "rejoin at once" is joinGroupIfNeeded's continue: the
// next JoinGroup goes out with no onJoinPrepare and no backoff. kgrepl's
// rule is resetGeneration.
//
//	API / error            Kafka                                       kgrepl
//	JoinGroup (JoinGroupResponseHandler)
//	 UNKNOWN_MEMBER_ID     unchanged: reset (member id too); changed:  resetGeneration(drop id); an answer
//	                       no reset; rejoin at once either way         after a reset (changed) ends the join
//	                                                                   future only: rejoin (joinFutureDone)
//	 NONE after a reset    UnjoinedGroupException: rejoin              the same (the id handed out unused)
//	 REBALANCE_IN_PROGRESS rejoin at once, no reset                    the same
//	 FENCED_INSTANCE_ID,   fatal, whatever the state and generation    the same (fatal), also in an answer
//	 INCONSISTENT_GROUP_   (joinGroupIfNeeded throws: not retriable)   after a reset (handleJoinAnswer
//	 PROTOCOL                                                          checks them first)
//	 MEMBER_ID_REQUIRED    take the member id given, rejoin at once    not produced: the first answer gives
//	                                                                   the member id (KIP-394's trip skipped)
//	 COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: markCoordinatorUnknown, find it again, retry after the
//	                       backoff                                     not produced: one broker, always the
//	                                                                   coordinator (the same for every row)
//	SyncGroup (SyncGroupResponseHandler)
//	 UNKNOWN_MEMBER_ID,    unchanged: reset (member id kept for        resetGeneration (the same ids); an
//	 ILLEGAL_GENERATION    ILLEGAL_GENERATION); changed: no reset;     answer after a reset (changed) ends
//	                       rejoin either way                           the join future only: rejoin
//	 REBALANCE_IN_PROGRESS rejoin at once (from poll()), no reset      the same; a member busy with its batch
//	                                                                   rejoins at its next poll()
//	 FENCED_INSTANCE_ID    fatal, whatever the generation              the same, also in an answer after a
//	                                                                   reset (checked before it)
//	 NONE after a reset    raised as ILLEGAL_GENERATION: rejoin        the same: the assignment is not taken
//	                       (a success clears rejoinNeeded)             (joinFutureDone); a success clears
//	                                                                   c.rejoin
//	Heartbeat (HeartbeatResponseHandler; kgrepl's heartbeats are implicit,
//	sent while classicMember.heartbeats: COMPLETING_REBALANCE and STABLE)
//	 REBALANCE_IN_PROGRESS STABLE: requestRejoin; else ignored         the same (Stable, FetchingOffsets)
//	 UNKNOWN_MEMBER_ID,    unchanged: reset (member id kept for        UNKNOWN_MEMBER_ID only, for the member
//	 ILLEGAL_GENERATION,   ILLEGAL_GENERATION); changed: ignored.      id it still goes by: leaveGroupState;
//	 FENCED_INSTANCE_ID    FENCED_INSTANCE_ID also fails the heartbeat the others are not produced
//	                       thread: the next poll() throws it (fatal)
//	LeaveGroup (LeaveGroupResponseHandler)
//	 any                   logged; maybeLeaveGroup reset already       answers not read
//	OffsetCommit (ConsumerCoordinator.OffsetCommitResponseHandler)
//	 UNKNOWN_MEMBER_ID,    changed and PREPARING_REBALANCE (a JoinGroup onCommitRefused; the exception is
//	 ILLEGAL_GENERATION    out): RebalanceInProgressException, no      commitSyncException's
//	                       reset; otherwise reset (member id kept for
//	                       ILLEGAL_GENERATION), CommitFailedException
//	 FENCED_INSTANCE_ID    unchanged: FencedInstanceIdException        unchanged: the process stops at its next
//	                       (fatal); changed: RebalanceInProgress-      poll (Zombie); changed: nothing
//	                       Exception while PREPARING_REBALANCE, else
//	                       CommitFailedException; never a reset
//	 REBALANCE_IN_PROGRESS requestRejoin, RebalanceInProgressException the same
//	OffsetFetch (OffsetFetchResponseHandler: no member id or generation in the classic request)
//	 UNKNOWN_MEMBER_ID,    not retriable: "Unexpected error in fetch   not produced for a classic member
//	 ILLEGAL_GENERATION,   offset response", thrown from poll(); no
//	 REBALANCE_IN_PROGRESS reset
//	TxnOffsetCommit (TransactionManager.TxnOffsetCommitHandler)
//	 UNKNOWN_MEMBER_ID,    the transaction becomes abortable; the      the same (onTxnOffsetCommitResponse)
//	 ILLEGAL_GENERATION,   consumer's coordinator is not told: it
//	 FENCED_INSTANCE_ID    learns from its own next answer
//
// onCommitRefused is the OffsetCommit rows: unchanged says the member's
// generation and member id are those the commit carried.
func (c *classicMember) onCommitRefused(m *Member, code wire.ErrorCode, unchanged bool) {
	switch code {
	case wire.UnknownMemberID, wire.IllegalGeneration:
		if !unchanged && m.Phase == PhaseJoining {
			return // RebalanceInProgressException: the member is rejoining already
		}
		c.resetGeneration(m, code == wire.IllegalGeneration)
	case wire.FencedInstanceID:
		if unchanged && m.Phase != PhaseOut && m.Phase != PhaseClosed {
			// FencedInstanceIdException: another instance took the static
			// member's place; this process stops at its next poll().
			m.Phase = PhaseOut
			m.Zombie = true
		}
	case wire.RebalanceInProgress:
		c.rejoin = true
	}
}

// resetGeneration is resetStateAndRejoin after an error answer: the
// generation is gone, the state UNJOINED (the heartbeats stop: see
// heartbeats), and the member rejoins at its next poll(). Without its
// member id it is out of the group (PhaseOut: the next poll joins as a new
// member); keeping it (ILLEGAL_GENERATION), it gives its partitions up as
// lost at the next poll and rejoins with that id. A JoinGroup or
// SyncGroup still out no longer counts, but its join future stays:
// Kafka's next poll runs onJoinPrepare and then waits for that answer
// before it sends the next JoinGroup (waitJoinFuture).
func (c *classicMember) resetGeneration(m *Member, keepID bool) {
	if m.Phase == PhaseOut || m.Phase == PhaseClosed {
		return
	}
	was := c.heartbeats(m)
	m.Generation = -1
	if !keepID {
		m.Phase = PhaseOut
		c.beatChange(m, was, m.MemberID)
		return
	}
	if m.Phase == PhaseJoining || m.Phase == PhaseSyncing {
		m.Phase = PhaseStable
	}
	c.rejoin, c.lost, c.unjoined = true, true, true
	c.beatChange(m, was, m.MemberID)
}

// setMemberID changes the member id this process goes by. The one it drops
// is heard no more (heartbeats carry the new one), so if the coordinator
// still has it, its session timeout starts now.
func (c *classicMember) setMemberID(m *Member, id string) {
	if m.MemberID != "" && m.MemberID != id {
		m.host.MemberIDDropped(m.MemberID)
	}
	m.MemberID = id
}

// leaveGroupState marks the member out of the group; it rejoins at its next poll.
func (c *classicMember) leaveGroupState(m *Member, why string) {
	if m.Phase == PhaseOut || m.Phase == PhaseClosed {
		return
	}
	m.env.Trace().Eventf(trace.EvRemoved, m.Client, "%s learns it is out of the group: %s", m.Client, why)
	was := c.heartbeats(m)
	m.Phase = PhaseOut
	c.beatChange(m, was, m.MemberID)
}
