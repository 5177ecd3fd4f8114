package coord

// What both kinds of group share. Kafka's group coordinator keeps two group
// types side by side (group/classic/ClassicGroup and
// group/modern/consumer/ConsumerGroup) behind one Group interface; so does
// kgrepl: the Coordinator holds the group id's current group, a
// *ClassicGroup or a *ConsumerGroup, and asks it through Group what every
// group answers.

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// GroupType is the group protocol a group speaks (Kafka's Group.GroupType).
type GroupType = wire.GroupProtocol

// GroupState is the group coordinator's state of the group, with Kafka's
// names: a classic group is Empty, PreparingRebalance, CompletingRebalance,
// Stable or Dead (ClassicGroupState); a consumer group is Empty, Assigning,
// Reconciling, Stable or Dead (ConsumerGroup.ConsumerGroupState).
type GroupState string

const (
	Empty               GroupState = "Empty"
	PreparingRebalance  GroupState = "PreparingRebalance"
	CompletingRebalance GroupState = "CompletingRebalance"
	Stable              GroupState = "Stable"
	Dead                GroupState = "Dead"
	// Assigning: a consumer group whose target assignment is behind its
	// group epoch (ConsumerGroupState.ASSIGNING).
	Assigning GroupState = "Assigning"
	// Reconciling: a consumer group whose target is computed but some
	// member has not reached it (ConsumerGroupState.RECONCILING).
	Reconciling GroupState = "Reconciling"
)

// Group is what the coordinator asks of either kind of group (Kafka's
// Group interface). What only one kind does (a JoinGroup round, a
// ConsumerGroupHeartbeat) the coordinator asks of that kind, as
// GroupMetadataManager does.
type Group interface {
	Type() GroupType
	State() GroupState
	// Epoch is the number each rebalance moves on: a classic group's
	// generation, a consumer group's group epoch.
	Epoch() int
	// validateOffsetCommit answers whether memberID may commit offsets:
	// classic by generation (ClassicGroup.validateOffsetCommit), consumer
	// by member epoch (ConsumerGroup.validateOffsetCommit). epoch is the
	// generation or member epoch the request carries; txn marks a
	// TxnOffsetCommit.
	validateOffsetCommit(memberID, instanceID string, epoch int, txn bool) wire.ErrorCode
	// validateOffsetFetch answers an OffsetFetch that names its member
	// (Group.validateOffsetFetch).
	validateOffsetFetch(memberID string, epoch int) wire.ErrorCode
	// tick ends the group's part of a tick.
	tick()
	// Describe is the group as the admin client's describe shows it.
	Describe() Description
	// described yields each member as Describe shows it, in member-id
	// order, without making the list.
	described(yield func(DescribedMember) bool)
	// hasMember reports whether the group has a member with member id
	// id, looked up, not described.
	hasMember(id string) bool
}

// Description is a group as DescribeGroups and ConsumerGroupDescribe
// answer it: what the views show, read alike for both kinds.
type Description struct {
	ID    string
	Type  GroupType
	State GroupState
	// Generation is a classic group's generation; GroupEpoch and
	// AssignmentEpoch are a consumer group's (ConsumerGroup.groupEpoch,
	// assignmentEpoch). Each is 0 in the other kind.
	Generation, GroupEpoch, AssignmentEpoch int
	// Epoch is Generation or GroupEpoch, whichever the group's kind has.
	Epoch int
	// Assignor is a classic group's protocol for the generation (the
	// client-side assignor its leader runs), a consumer group's server-side
	// assignor of the target assignment.
	Assignor string
	// Leader is a classic group's leader's member id.
	Leader  string
	Members []DescribedMember // in member-id order
}

// Member is the member with member id id, or nil.
func (d *Description) Member(id string) *DescribedMember {
	i, ok := sort.Find(len(d.Members), func(i int) int { return strings.Compare(id, d.Members[i].MemberID) })
	if !ok {
		return nil
	}
	return &d.Members[i]
}

// DescribedMember is one member as a Description shows it. Its slices are
// the group's (replaced, never changed in place): read them, never write.
type DescribedMember struct {
	MemberID, ClientID, InstanceID string
	Inc                            int
	Topics                         []string
	// Strategy is the assignor the member names: a classic member's
	// client-side one, a consumer-protocol member's server-side one.
	Strategy   string
	Assignment []wire.TopicPartition
	// A classic member's JoinGroup metadata: the assignors it supports,
	// the partitions it said it owned and their generation (a classic
	// member inside a consumer group too).
	Protocols []string
	Owned     []wire.TopicPartition
	OwnedGen  int
	// Joined: a classic group's member that sent JoinGroup in the current
	// round.
	Joined bool
	// A consumer group's member: its epochs, its reconciliation state,
	// its target, what it must still revoke, and whether it speaks the
	// classic protocol (ConsumerGroupMember.useClassicProtocol).
	MemberEpoch, PreviousMemberEpoch int
	MemberState                      string
	Target, Revoking                 []wire.TopicPartition
	ClassicMember                    bool
}

// groupTransitions lists, for each state, the states Kafka lets a classic
// group move to (ClassicGroupState's validPreviousStates, read the other
// way round).
var groupTransitions = map[GroupState][]GroupState{
	Empty:               {PreparingRebalance, Dead},
	PreparingRebalance:  {CompletingRebalance, Empty, Dead},
	CompletingRebalance: {PreparingRebalance, Stable, Dead},
	Stable:              {PreparingRebalance, Dead},
	Dead:                {},
}

// consumerStates: Kafka does not restrict a consumer group's state changes
// (ConsumerGroup.maybeUpdateGroupState computes the state afresh), so any
// change among its states is legal.
var consumerStates = map[GroupState]bool{Empty: true, Assigning: true, Reconciling: true, Stable: true, Dead: true}

// LegalTransition reports whether Kafka allows a group of type t to move
// from -> to.
func LegalTransition(t GroupType, from, to GroupState) bool {
	if t == wire.Consumer {
		return consumerStates[from] && consumerStates[to] && from != Dead
	}
	return LegalGroupTransition(from, to)
}

// LegalGroupTransition reports whether Kafka allows a classic group to move
// from -> to.
func LegalGroupTransition(from, to GroupState) bool {
	for _, s := range groupTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// GroupTransition is one coordinator state change.
type GroupTransition struct {
	Tick     int
	Type     GroupType // the group's type when it moved
	From, To GroupState
	Reason   string
}

// groupBase is what a group of either kind keeps alike: the coordinator
// that holds it and what it was handed (environment, settings, what it may
// learn of the processes), its state, and its static members. A group
// converted to the other kind hands its base on (the static members stay);
// a group made anew in place of an empty one starts a new base.
type groupBase struct {
	c     *Coordinator
	env   *env.Env
	cfg   *Config
	procs Processes
	state GroupState
	// static maps group.instance.id to member id (Kafka's
	// staticMembers); fenced holds the member ids a static rejoin
	// replaced. Both nil until their first write (putMap).
	static map[string]string
	fenced map[string]bool
}

func (b *groupBase) State() GroupState { return b.state }

// transition moves the group of type t to state s, for the trace and the
// invariant checks.
func (b *groupBase) transition(t GroupType, s GroupState, reason string) {
	if b.state == s {
		return
	}
	b.c.Transitions.Append(GroupTransition{Tick: b.env.Now(), Type: t, From: b.state, To: s, Reason: reason})
	b.env.Trace().GroupState(b.c.id, string(b.state), string(s), reason)
	b.state = s
}

// rebalanced counts one rebalance: a classic group's entry into
// PreparingRebalance, a consumer group's group epoch bump (Kafka's
// consumer-group-rebalances sensor counts those).
func (b *groupBase) rebalanced() { b.c.RebalanceStarts++ }

// nextTimer numbers a member timer (a timer that fires with another number
// than its member holds was cancelled). The numbers run on across the
// group id's groups, so a timer of an earlier group never matches.
func (b *groupBase) nextTimer() int {
	b.c.timerSeq++
	return b.c.timerSeq
}

// memberSet is a group's members by member id, with the list of them in
// member-id order made anew at every change: callers read the list and
// never change it, and one handed out earlier stays as it was, so ranging
// over it while adding or removing members sees the members from before.
// A heartbeat, a join or a sync asks for the list several times a tick;
// membership changes far more rarely.
type memberSet[M any] struct {
	byID   map[string]*M
	sorted []*M
}

func newMemberSet[M any]() memberSet[M] { return memberSet[M]{byID: map[string]*M{}} }

func (s *memberSet[M]) get(id string) *M { return s.byID[id] }
func (s *memberSet[M]) list() []*M       { return s.sorted }
func (s *memberSet[M]) len() int         { return len(s.byID) }

func (s *memberSet[M]) put(id string, m *M) {
	s.byID[id] = m
	s.changed()
}

func (s *memberSet[M]) drop(id string) {
	delete(s.byID, id)
	s.changed()
}

func (s *memberSet[M]) changed() {
	s.sorted = nil
	if len(s.byID) > 0 {
		s.sorted = store.ValuesByKey(s.byID)
	}
}

// clone copies the set into dst's map (a finished copy's, reused; nil: a
// new one), each member copied by copyMember into bufs, in member-id
// order; it returns the buffer for the next copy to reuse.
func (s *memberSet[M]) clone(dst map[string]*M, bufs []M, copyMember func(dst, src *M) string) (memberSet[M], []M) {
	if dst == nil {
		dst = make(map[string]*M, len(s.sorted))
	}
	clear(dst)
	n := memberSet[M]{byID: dst}
	bufs = store.ReuseBuf(bufs, len(s.sorted))
	if len(s.sorted) > 0 {
		n.sorted = make([]*M, len(s.sorted))
	}
	for i, m := range s.sorted {
		c := &bufs[i]
		n.byID[copyMember(c, m)] = c
		n.sorted[i] = c
	}
	return n, bufs
}

// listedMembers is how many member ids an event's member list spells
// out: a list longer than that names its first listedMembers and counts
// the rest. An event naming every member of a group of n would keep O(n)
// bytes of text at every generation (or group epoch, bumped at each of n
// joins: O(n²) for a group forming), so a large group's rebalances would
// fill the heap with member lists; the groups of the demos and the goldens
// are far smaller and print whole.
const listedMembers = 100

func memberIDs[M any](ms []*M, id func(*M) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range ms {
		if i == listedMembers {
			b.WriteString(" and " + strconv.Itoa(len(ms)-listedMembers) + " more")
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id(m))
	}
	b.WriteByte(']')
	return b.String()
}
