package client

import "github.com/kgrepl/kgrepl/sim/wire"

// membership is the group-protocol half of a process, as the poll loop,
// commits and transactions call it: the classic protocol's
// (classicMember: Kafka's ConsumerCoordinator and AbstractCoordinator) or
// the consumer protocol's (consumerMember: ConsumerMembershipManager and
// ConsumerHeartbeatRequestManager). A process keeps the protocol it
// started with (group.protocol); a client moves to the other by a
// restart, which starts a process with the other implementation. Each
// keeps its own state; what the rest of the process reads of it (the
// member id, the generation or member epoch, the phase) is on Member.
type membership interface {
	// protocol is the group protocol spoken.
	protocol() wire.GroupProtocol
	// memberEpochs reports whether the group knows the member by member
	// epoch (KIP-848: commits and OffsetFetch carry it) rather than by
	// generation.
	memberEpochs() bool

	// join starts membership once FindCoordinator is answered.
	join(m *Member)
	// receive handles the protocol's own answers and notifications.
	receive(m *Member, p *wire.Packet)
	// fire is one of the protocol's own timers firing.
	fire(m *Member, t wire.Timer)
	// poll runs the group work at the start of poll(); handled means
	// poll() stops there, again whether the loop runs again this tick.
	poll(m *Member) (handled, again bool)
	// pollTimeout: max.poll.interval.ms passed outside poll().
	pollTimeout(m *Member, since int)
	// leave is close() leaving the group.
	leave(m *Member)

	// commitRefusedLocally says why a commitSync now fails in the client
	// with nothing sent ("": it is sent).
	commitRefusedLocally(m *Member) string
	// autoCommits reports whether the interval auto-commit may go now.
	autoCommits(m *Member) bool
	// commitEpoch is the generation or member epoch OffsetCommit (and,
	// consumer, OffsetFetch) carries now.
	commitEpoch(m *Member) int
	// commitException is what commitSync throws for an OffsetCommit
	// refused with code (unchanged: the member's generation, or member
	// epoch, and member id are still those the request carried), and what
	// the next poll() throws for an asynchronous commit refused so ("":
	// nothing).
	commitException(m *Member, code wire.ErrorCode, unchanged bool) (sync, async string)
	// onCommitRefused reacts to an OffsetCommit refused by the group.
	onCommitRefused(m *Member, code wire.ErrorCode, unchanged bool)
	// revokeCommitted: the commit onPartitionsRevoked made is answered
	// and the application thread is back in poll().
	revokeCommitted(m *Member)

	// rejoinNeeded reports whether a rejoin is asked for.
	rejoinNeeded() bool
	// settled reports whether the member holds its final assignment.
	settled(m *Member) bool
	// heartbeats reports whether the classic heartbeat thread sends
	// heartbeats now (the implicit heartbeat, sim/heartbeat.go).
	heartbeats(m *Member) bool
	// startStable puts a starting world's member in place, stable with
	// its assignment (leader: the classic group's leader; interval: the
	// consumer group's heartbeat interval).
	startStable(m *Member, leader string, interval int)
}

// newProcess is a blank process with the membership a process of config
// cc starts with (group.protocol), the two in one allocation (the
// membership lives as long as the process).
func newProcess(cc ClientConfig) *Member {
	if cc.GroupProtocol == string(wire.Consumer) {
		p := new(struct {
			m Member
			g consumerMember
		})
		p.m.group = &p.g
		return &p.m
	}
	p := new(struct {
		m Member
		g classicMember
	})
	p.m.group = &p.g
	return &p.m
}

// Phase is where a member stands in the group protocol, as the client sees it.
type Phase int

const (
	PhaseFinding         Phase = iota // FindCoordinator in flight
	PhaseJoining                      // JoinGroup sent, waiting for the answer
	PhaseSyncing                      // SyncGroup sent
	PhaseFetchingOffsets              // OffsetFetch for new partitions in flight
	PhaseStable                       // member of the generation, with its assignment
	PhaseOut                          // not in the group: left after a poll timeout or found itself removed
	PhaseClosed                       // closed or crashed
)

func (p Phase) String() string {
	return [...]string{"FindingCoordinator", "Joining", "Syncing", "FetchingOffsets", "Stable", "OutOfGroup", "Closed"}[p]
}
