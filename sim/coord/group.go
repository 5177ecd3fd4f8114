package coord

// The group coordinator's shared group types. Kafka's group coordinator
// keeps two group types side by side (group/classic and group/modern/consumer);
// kgrepl's Group carries what both need, and groupKind is what differs.

import (
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// GroupType is the group protocol a group speaks (Kafka's Group.GroupType).
type GroupType = wire.GroupProtocol

const (
	// ClassicGroup: JoinGroup/SyncGroup with a client-side leader.
	ClassicGroup = wire.Classic
	// ConsumerGroup: KIP-848's ConsumerGroupHeartbeat, server-side assignor.
	ConsumerGroup = wire.Consumer
)

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

// groupTransitions lists, for each state, the states Kafka lets it move to
// (GroupMetadata's validPreviousStates, read the other way round).
var groupTransitions = map[GroupState][]GroupState{
	Empty:               {PreparingRebalance, Dead},
	PreparingRebalance:  {CompletingRebalance, Empty, Dead},
	CompletingRebalance: {PreparingRebalance, Stable, Dead},
	Stable:              {PreparingRebalance, Dead},
	Dead:                {},
}

// LegalTransition reports whether Kafka allows a group of type t to move
// from -> to.
func LegalTransition(t GroupType, from, to GroupState) bool {
	if t == ConsumerGroup {
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

// GroupMember is the coordinator's record of one member. Its slices
// (Topics, Owned, Protocols, Assignment, Target, Revoking) are replaced,
// never changed in place (no element write, no sort, no append to one):
// they may be a request's (JoinGroup's topics and owned partitions), the
// member's Owned, an assignor's answer, and World.Clone shares them
// between the copies.
type GroupMember struct {
	MemberID, ClientID, InstanceID string
	Inc                            int
	Topics                         []string
	Owned                          []wire.TopicPartition
	OwnedGen                       int
	Strategy                       string
	// Protocols are the assignors the member supports, as the coordinator
	// counts them (ClassicGroup.supportedProtocols).
	Protocols        []string
	RebalanceTimeout int
	SessionTimeout   int
	Assignment       []wire.TopicPartition
	// Joined is true once the member sent JoinGroup in the current round.
	Joined    bool
	joinOrder int
	joinPkt   *wire.Packet // the JoinGroup to answer when the round completes
	syncPkt   *wire.Packet // a follower's SyncGroup waiting for the leader's plan
	// silentSince is the tick the member's session was last started (it
	// was last heard, or the coordinator rescheduled it), or -1 while it
	// is heard every tick (heartbeats are implicit). It does not mean the
	// process is gone: a live member that sent a JoinGroup is silent too.
	silentSince int
	// pendingSync: answered in the current generation's join round, no
	// SyncGroup received yet (ClassicGroup.pendingSyncMembers).
	pendingSync bool

	// Consumer groups (ConsumerGroupMember). Assignment above is the
	// member's current assignment (assigned and acknowledged).

	// MemberEpoch is the epoch of the member's current assignment;
	// PreviousMemberEpoch the one before (a heartbeat carrying it is still
	// accepted when it owns what the current assignment says:
	// GroupMetadataManager.throwIfMemberEpochIsInvalid).
	MemberEpoch, PreviousMemberEpoch int
	// MemberState is sim/reconcile's state: STABLE, UNREVOKED_PARTITIONS,
	// UNRELEASED_PARTITIONS or UNKNOWN (Kafka's MemberState).
	MemberState string
	// Target is the member's share of the group's target assignment.
	Target []wire.TopicPartition
	// Revoking lists what the member must still revoke before it moves to
	// the next epoch (ConsumerGroupMember.partitionsPendingRevocation).
	Revoking []wire.TopicPartition
	// ClassicMember: a classic-protocol member inside a consumer group
	// (online migration; ConsumerGroupMember.useClassicProtocol).
	ClassicMember bool
	// The session and rebalance timers in force (Group.timerSeq numbers;
	// a timer that fires with another number was cancelled).
	sessionTimer, rebalanceTimer int
	// notified: the change a classic member inside a consumer group was
	// last told to rejoin for.
	notified string
	// A classic member inside a consumer group: its join and sync timers
	// in force (Group.timerSeq numbers; 0 when none), as Kafka's
	// consumerGroupJoinKey and consumerGroupSyncKey timers. Clone copies
	// them with the struct.
	joinTimer, syncTimer int
}

// Group is the group coordinator's state for one group on B1.
type Group struct {
	ID    string
	Type  GroupType // classic or consumer
	State GroupState
	// Generation is the classic group's generation id.
	Generation int
	// GroupEpoch is the consumer group's epoch: bumped on every change of
	// membership or subscriptions (ConsumerGroup.groupEpoch).
	GroupEpoch int
	// AssignmentEpoch is the epoch of the target assignment
	// (ConsumerGroup.assignmentEpoch); below GroupEpoch while Assigning.
	AssignmentEpoch int
	Assignor        string // the assignor chosen for the generation (classic: the JoinGroup protocol name)
	Leader          string // member id
	members         map[string]*GroupMember
	// sorted is members' values in member-id order (Members), made anew
	// by putMember and dropMember at every change of the map, never
	// changed in place: a list handed out earlier stays as it was.
	sorted     []*GroupMember
	static     map[string]string // group.instance.id -> member id; nil until the first (putMap)
	fenced     map[string]bool   // member ids replaced by a static rejoin; nil until the first (putMap)
	roundStart int
	deadline   int
	// The initial rebalance of an empty group, delayed by
	// group.initial.rebalance.delay.ms (GroupMetadataManager.prepareRebalance
	// with the group Empty): it never completes early; each delay that saw a
	// new member is followed by another, within the rebalance timeout.
	initialRound     bool
	newMemberAdded   bool
	initialRemaining int
	joinSeq          int
	// Committed offsets; pending transactional offsets by PID (made at
	// the first TxnOffsetCommit, putMap).
	offsets    offsetTable
	pending    map[int64]map[wire.TopicPartition]OffsetRecord
	OffsetsLog OffsetsLog
	// Transitions lists every state change, for the invariant checks.
	Transitions store.Seq[GroupTransition]
	// RebalanceStarts counts the rebalances: a classic group's entries into
	// PreparingRebalance, a consumer group's group epoch bumps (Kafka's
	// consumer-group-rebalances sensor counts those).
	RebalanceStarts int
	timerSeq        int // numbers the consumer group's member timers
	// Incarnation counts how many times the group id's empty group was
	// deleted and made anew with the other type (recreate): each new group
	// starts at generation and epoch 0, so those numbers only grow within
	// one incarnation. Clone copies it with the struct.
	Incarnation int
	// numClassic counts the members with ClassicMember set
	// (ConsumerGroup.numClassicProtocolMembers): every change of the
	// members map goes through putMember and dropMember, every change of
	// the flag through setClassicMember. Clone copies it with the struct.
	numClassic int

	env       *env.Env
	cfg       *Config
	mutations *Mutations
	procs     Processes
}

// GroupTransition is one coordinator state change.
type GroupTransition struct {
	Tick     int
	Type     GroupType // the group's type when it moved
	From, To GroupState
	Reason   string
}

// New is the group coordinator's group id, empty, classic: a world's
// group before any member joins. It is handed the world's environment, the
// broker's group settings (read as they change), the deliberate bugs a
// test may switch on, and what it may learn of the members' processes.
func New(id string, e *env.Env, cfg *Config, mutations *Mutations, procs Processes) *Group {
	g := &Group{ID: id, Type: ClassicGroup, State: Empty, members: map[string]*GroupMember{},
		env: e, cfg: cfg, mutations: mutations, procs: procs}
	g.offsets.index = *e.Layout().Input()
	g.OffsetsLog.index = *e.Layout().Input()
	return g
}

func (g *Group) transition(s GroupState, reason string) {
	if g.State == s {
		return
	}
	g.Transitions.Append(GroupTransition{Tick: g.env.Now(), Type: g.Type, From: g.State, To: s, Reason: reason})
	g.env.Trace().GroupState(g.ID, string(g.State), string(s), reason)
	g.State = s
}

// Members lists the coordinator's members in member-id order. The list is
// the group's (a heartbeat, a join or a sync asks for it several times a
// tick, and membership changes far more rarely): callers read it and never
// change it; it is replaced, not changed, when the members change, so
// ranging over it while adding or removing members sees the list from
// before.
func (g *Group) Members() []*GroupMember { return g.sorted }

// membersChanged makes the member-id-ordered list anew after a change of
// the members map (putMember, dropMember).
func (g *Group) membersChanged() {
	g.sorted = nil
	if len(g.members) > 0 {
		g.sorted = store.ValuesByKey(g.members)
	}
}

// MemberByID looks a member up.
func (g *Group) MemberByID(id string) *GroupMember { return g.members[id] }

// groupKind is what differs between the two group types. Everything else
// (members, states, the offset store) is shared.
type groupKind interface {
	// validateOffsetCommit answers whether memberID may commit offsets:
	// classic by generation (ClassicGroup.validateOffsetCommit), consumer
	// by member epoch (ConsumerGroup.validateOffsetCommit). epoch is the
	// generation or member epoch the request carries; txn marks a
	// TxnOffsetCommit.
	validateOffsetCommit(g *Group, memberID, instanceID string, epoch int, txn bool) wire.ErrorCode
	// tick ends the coordinator's part of a tick.
	tick(g *Group)
}

// kind is the group's groupKind, from its Type (stateless, so a World
// copies without it).
func (g *Group) kind() groupKind {
	if g.Type == ConsumerGroup {
		return consumerKind{}
	}
	return classicKind{}
}

// receive handles a group request.
// Receive handles a group request (JoinGroup, SyncGroup, LeaveGroup,
// OffsetCommit, OffsetFetch, ConsumerGroupHeartbeat).
func (g *Group) Receive(p *wire.Packet) {
	if g.Type == ConsumerGroup {
		switch p.Type {
		case wire.SyncGroup:
			g.classicSyncToConsumerGroup(p, p.Body.(*wire.SyncGroupRequest))
			return
		case wire.LeaveGroup:
			g.classicLeaveToConsumerGroup(p, p.Body.(*wire.LeaveGroupRequest))
			return
		}
	}
	switch p.Type {
	case wire.JoinGroup:
		g.onJoin(p, p.Body.(*wire.JoinGroupRequest))
	case wire.SyncGroup:
		g.onSync(p, p.Body.(*wire.SyncGroupRequest))
	case wire.LeaveGroup:
		g.onLeave(p, p.Body.(*wire.LeaveGroupRequest))
	case wire.OffsetCommit:
		g.onCommit(p, p.Body.(*wire.OffsetCommitRequest))
	case wire.OffsetFetch:
		g.onOffsetFetch(p, p.Body.(*wire.OffsetFetchRequest))
	case wire.ConsumerGroupHeartbeat:
		g.onConsumerHeartbeat(p, p.Body.(*wire.ConsumerGroupHeartbeatRequest))
	}
}

func memberIDs(ms []*GroupMember) string {
	s := "["
	for i, m := range ms {
		if i > 0 {
			s += " "
		}
		s += m.MemberID
	}
	return s + "]"
}

// clone copies the group into dst (a finished copy's group, with its
// members map; nil: a new one), its members into r's array.
// Bufs is where a world's copies, made one after another in the storage
// of the one before (sim.Reuser), keep the group's member records.
type Bufs struct{ gms []GroupMember }

// Clone is a copy of g for a world whose environment, settings and
// processes are the copy's, made in dst (a finished copy's group) when
// given, its member records in bufs; re gives the copy of a packet on the
// wire (a JoinGroup or SyncGroup the coordinator holds).
func (g *Group) Clone(re func(*wire.Packet) *wire.Packet, e *env.Env, cfg *Config, mutations *Mutations, procs Processes, dst *Group, r *Bufs) *Group {
	var members map[string]*GroupMember
	if dst == nil {
		dst = new(Group)
	} else {
		members = dst.members
	}
	n := dst
	*n = *g
	if members == nil {
		members = make(map[string]*GroupMember, len(g.sorted))
	}
	clear(members)
	n.members = members
	// The copies in one array, in member-id order: the copy's sorted list
	// points into it.
	r.gms = store.ReuseBuf(r.gms, len(g.sorted))
	gms := r.gms
	n.sorted = nil
	if len(g.sorted) > 0 {
		n.sorted = make([]*GroupMember, len(g.sorted))
	}
	for i, gm := range g.sorted {
		// Topics, Owned, Protocols, Assignment, Target and Revoking are
		// shared: each is replaced, never changed in place (see GroupMember).
		c := &gms[i]
		*c = *gm
		c.joinPkt, c.syncPkt = re(gm.joinPkt), re(gm.syncPkt)
		n.members[gm.MemberID] = c
		n.sorted[i] = c
	}
	n.static = store.CopyLazy(g.static)
	n.fenced = store.CopyLazy(g.fenced)
	n.offsets = g.offsets.clone()
	n.pending = nil // made at its first write (putMap), so nil while empty
	if len(g.pending) > 0 {
		n.pending = make(map[int64]map[wire.TopicPartition]OffsetRecord, len(g.pending))
		for pid, m := range g.pending {
			n.pending[pid] = store.CopyMap(m)
		}
	}
	n.OffsetsLog = g.OffsetsLog.clone()
	n.Transitions = g.Transitions.Clone()
	n.env, n.cfg, n.mutations, n.procs = e, cfg, mutations, procs
	return n
}

// The group coordinator's timers (wire.OwnerGroupCoordinator).
const (
	tmRebalanceDeadline        uint8 = iota // the join round that began at Key ends
	tmSessionExpiry                         // Member silent since Key
	tmInitialRebalance                      // the initial join round that began at Key: its delay of Arg ticks is over
	tmHeartbeatCheck                        // Member answered in generation Key: heard with it since?
	tmPendingSync                           // generation Key of the group's incarnation Arg: members that sent no SyncGroup are removed
	tmConsumerSessionTimeout                // consumer group Member: session timer number Key
	tmConsumerRebalanceTimeout              // consumer group Member: rebalance timer number Key, at member epoch Arg
	tmClassicJoinTimeout                    // consumer group classic Member: join timer number Key (told to rejoin)
	tmClassicSyncTimeout                    // consumer group classic Member: sync timer number Key (JoinGroup answered)
)

// Fire is one of the coordinator's timers firing.
func (g *Group) Fire(t wire.Timer) {
	switch t.Kind {
	case tmRebalanceDeadline:
		if g.Type == ClassicGroup && g.State == PreparingRebalance && g.roundStart == t.Key {
			g.completeJoin()
		}
	case tmSessionExpiry:
		g.sessionExpiry(t.Member, t.Key)
	case tmInitialRebalance:
		g.initialDelayOver(t.Key, t.Arg)
	case tmHeartbeatCheck:
		g.heartbeatCheck(t.Member, t.Key)
	case tmPendingSync:
		g.expirePendingSync(t.Key, t.Arg)
	case tmConsumerSessionTimeout:
		g.consumerSessionTimeout(t.Member, t.Key)
	case tmConsumerRebalanceTimeout:
		g.consumerRebalanceTimeout(t.Member, t.Key, t.Arg)
	case tmClassicJoinTimeout, tmClassicSyncTimeout:
		g.classicMemberTimeout(t.Member, t.Key, t.Kind == tmClassicSyncTimeout)
	}
}
