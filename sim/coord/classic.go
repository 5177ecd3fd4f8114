package coord

// The classic group (Kafka's group/classic/ClassicGroup): its members, its
// generation, its leader and the protocol chosen for the generation. What
// it does with JoinGroup, SyncGroup and LeaveGroup is in classic_join.go,
// its members' sessions in classic_session.go.

import (
	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
	"slices"
)

// ClassicMember is the coordinator's record of one classic member (Kafka's
// ClassicGroupMember). Its slices are replaced, never changed in place (no
// element write, no sort, no append to one): they may be a request's
// (JoinGroup's topics and owned partitions), an assignor's answer, and a
// world's copy shares them.
type ClassicMember struct {
	MemberID, ClientID, InstanceID string
	Inc                            int
	Topics                         []string
	// Strategy is the assignor the member's JoinGroup lists first (its
	// whole list is Protocols).
	Strategy string
	ClassicMemberMetadata
	RebalanceTimeout int
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
}

// ClassicMemberMetadata is what a classic member's JoinGroup says beyond
// its topics and assignor (Kafka keeps it on a classic member inside a
// consumer group as ConsumerGroupMember.classicMemberMetadata: the session
// timeout and the supported protocols, whose metadata carries the owned
// partitions and their generation).
type ClassicMemberMetadata struct {
	// Protocols are the assignors the member supports, in its order of
	// preference (ClassicGroupMember.supportedProtocols), as the
	// coordinator counts them (ClassicGroup.supportedProtocols) and as the
	// member votes (ClassicGroupMember.vote).
	Protocols []string
	Owned     []wire.TopicPartition
	OwnedGen  int
	// SessionTimeout is the member's session.timeout.ms.
	SessionTimeout int
}

// ClassicGroup is a classic group on B1.
type ClassicGroup struct {
	groupBase
	members memberSet[ClassicMember]
	// generation, leader (member id) and protocol (the assignor chosen
	// for the generation) as ClassicGroup keeps them (generationId,
	// leaderId, protocolName).
	generation int
	leader     string
	protocol   string
	// The join round in progress: when it began, when its rebalance
	// timeout runs out, and the order members joined in.
	roundStart int
	deadline   int
	joinSeq    int
	// The initial rebalance of an empty group, delayed by
	// group.initial.rebalance.delay.ms (GroupMetadataManager.prepareRebalance
	// with the group Empty): it never completes early; each delay that saw a
	// new member is followed by another, within the rebalance timeout.
	initialRound     bool
	newMemberAdded   bool
	initialRemaining int
	// protocols is the assignor list a member joined with last: a member
	// joining with an equal list keeps this one (sharedProtocols), so the
	// members of a deployment, which list the same assignors, share one
	// list and supportsProtocols compares them by identity.
	protocols []string
	// supported is supportsProtocols' distinct lists of the members, for
	// the member list it read (memberSet makes the list anew at every
	// change: known by its first element and length) and protoVer, which
	// moves whenever a member's list is replaced in place (a rejoin with
	// another list, Coordinator.ReplaceProtocols). A rolling restart's
	// 1,000 rejoins, each with the list it had, read one walk of the
	// 1,000 members, not one each.
	supported struct {
		at    **ClassicMember
		n     int
		ver   uint64
		lists [][]string
	}
	protoVer uint64
}

func newClassicGroup(b groupBase) *ClassicGroup {
	return &ClassicGroup{groupBase: b, members: newMemberSet[ClassicMember]()}
}

func (g *ClassicGroup) Type() GroupType { return wire.Classic }
func (g *ClassicGroup) Epoch() int      { return g.generation }

// transition moves the group to state s.
func (g *ClassicGroup) transition(s GroupState, reason string) {
	g.groupBase.transition(wire.Classic, s, reason)
}

// Describe is the group as DescribeGroups answers it.
func (g *ClassicGroup) Describe() Description {
	d := Description{ID: g.c.id, Type: wire.Classic, State: g.state, Generation: g.generation, Epoch: g.generation,
		Assignor: g.protocol, Leader: g.leader}
	for m := range g.described {
		d.Members = append(d.Members, m)
	}
	return d
}

func (g *ClassicGroup) hasMember(id string) bool { return g.members.get(id) != nil }

func (g *ClassicGroup) described(yield func(DescribedMember) bool) {
	for _, gm := range g.members.list() {
		if !yield(DescribedMember{MemberID: gm.MemberID, ClientID: gm.ClientID, InstanceID: gm.InstanceID,
			Inc: gm.Inc, Topics: gm.Topics, Strategy: gm.Strategy, Assignment: gm.Assignment, Protocols: gm.Protocols,
			Owned: gm.Owned, OwnedGen: gm.OwnedGen, Joined: gm.Joined}) {
			return
		}
	}
}

func classicMemberIDs(ms []*ClassicMember) string {
	return memberIDs(ms, func(m *ClassicMember) string { return m.MemberID })
}

func (g *ClassicGroup) addMember(r *wire.JoinGroupRequest) *ClassicMember {
	g.joinSeq++
	gm := &ClassicMember{MemberID: r.MemberID, ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc,
		Topics: r.Topics, Strategy: r.First(), RebalanceTimeout: r.RebalanceTimeout, Joined: true,
		ClassicMemberMetadata: ClassicMemberMetadata{Owned: r.Owned, OwnedGen: r.OwnedGen, Protocols: g.sharedProtocols(r.Protocols),
			SessionTimeout: r.SessionTimeout},
		joinOrder: g.joinSeq, silentSince: -1}
	g.members.put(gm.MemberID, gm)
	if gm.InstanceID != "" {
		store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
	}
	return gm
}

// checkMember validates member id, instance id and generation the way Kafka
// does for commits and SyncGroup: the member first, then the generation.
func (g *ClassicGroup) checkMember(memberID, instanceID string, generation int) wire.ErrorCode {
	if instanceID != "" {
		if cur, ok := g.static[instanceID]; ok && cur != memberID {
			return wire.FencedInstanceID
		}
	}
	if g.fenced[memberID] {
		return wire.FencedInstanceID
	}
	if g.members.get(memberID) == nil {
		return wire.UnknownMemberID
	}
	if generation != g.generation {
		return wire.IllegalGeneration
	}
	return wire.None
}

// validateOffsetCommit is ClassicGroup.validateOffsetCommit: the member,
// then the generation; a plain commit while the group is
// CompletingRebalance is refused with REBALANCE_IN_PROGRESS.
func (g *ClassicGroup) validateOffsetCommit(memberID, instanceID string, gen int, txn bool) wire.ErrorCode {
	code := g.checkMember(memberID, instanceID, gen)
	if code == wire.None && !txn && g.state == CompletingRebalance {
		code = wire.RebalanceInProgress
	}
	return code
}

// validateOffsetFetch: kgrepl's classic clients send no member id in
// OffsetFetch, so a classic group checks none.
func (g *ClassicGroup) validateOffsetFetch(string, int) wire.ErrorCode { return wire.None }

// supportsProtocols is ClassicGroup.supportsProtocols: an Empty group
// takes any list; otherwise some assignor of the list must be listed by
// every member, counted as the group holds them before this JoinGroup (a
// rejoining member with its earlier list, a static member's new instance
// with the old instance's). Kafka keeps a count per name
// (supportedProtocols); kgrepl counts over the members when asked, which
// gives the same answer.
func (g *ClassicGroup) supportsProtocols(list []string) bool {
	if len(list) == 0 {
		return false
	}
	if g.state == Empty || g.members.len() == 0 {
		return true
	}
	ms, c := g.members.list(), &g.supported
	if c.at != &ms[0] || c.n != len(ms) || c.ver != g.protoVer {
		// A list equal to the one before it once: every member of a
		// deployment lists the same assignors, and the join of each of
		// 1,000 members looked its names up in all 1,000 lists. A new
		// array: a copy of the group shares the last one.
		var lists [][]string
		for _, gm := range ms {
			if len(lists) == 0 || !sameList(lists[len(lists)-1], gm.Protocols) && !slices.Equal(lists[len(lists)-1], gm.Protocols) {
				lists = append(lists, gm.Protocols)
			}
		}
		c.at, c.n, c.ver, c.lists = &ms[0], len(ms), g.protoVer, lists
	}
	return assign.Supports(c.lists, list)
}

// setProtocols replaces member gm's assignor list in place (a rejoin),
// by the shared list when equal to it (sharedProtocols).
func (g *ClassicGroup) setProtocols(gm *ClassicMember, list []string) {
	l := g.sharedProtocols(list)
	if !sameList(gm.Protocols, l) {
		g.protoVer++ // supportsProtocols walks the members again
	}
	gm.Protocols = l
}

// sharedProtocols is list, or the equal list the last member to join
// brought (ClassicGroup.protocols): a member's list is replaced, never
// changed in place (ClassicMember), so members may share one.
func (g *ClassicGroup) sharedProtocols(list []string) []string {
	if sameList(g.protocols, list) || slices.Equal(g.protocols, list) && (g.protocols == nil) == (list == nil) {
		return g.protocols
	}
	g.protocols = list
	return list
}

// sameList reports whether a and b are the same non-empty list (one
// array, one length).
func sameList(a, b []string) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// selectProtocol is ClassicGroup.selectProtocol (assign.SelectProtocol):
// every member, joined or not, votes for the first assignor of its list
// that every member lists; the most votes win, a tie going to the name
// Java's HashMap of votes iterates first. A group whose members share none
// (Kafka never admits one) keeps the protocol it has.
func (g *ClassicGroup) selectProtocol() string {
	if p, ok := assign.SelectProtocol(g.protocolLists()); ok {
		return p
	}
	return g.protocol
}

// protocolLists are the members' assignor lists, in member id order.
func (g *ClassicGroup) protocolLists() [][]string {
	lists := make([][]string, 0, g.members.len())
	for _, gm := range g.members.list() {
		lists = append(lists, gm.Protocols)
	}
	return lists
}

// withheld reports whether a subscribed partition has no owner in the
// generation (the cooperative protocol's first round holds some back).
func (g *ClassicGroup) withheld() bool {
	subscribed := map[string]bool{}
	owned := map[wire.TopicPartition]bool{}
	for _, gm := range g.members.byID {
		for _, t := range gm.Topics {
			subscribed[t] = true
		}
		for _, tp := range gm.Assignment {
			owned[tp] = true
		}
	}
	for _, tp := range g.env.Layout().Inputs() {
		if subscribed[tp.Topic] && !owned[tp] {
			return true
		}
	}
	return false
}

func (g *ClassicGroup) anyJoined() bool {
	for _, gm := range g.members.byID {
		if gm.Joined {
			return true
		}
	}
	return false
}

// clone copies the group for a world's copy, its members into bufs; re
// gives the copy of a packet on the wire (a JoinGroup or SyncGroup the
// group holds).
func (g *ClassicGroup) clone(b groupBase, dst *ClassicGroup, re func(*wire.Packet) *wire.Packet, bufs *Bufs) *ClassicGroup {
	var members map[string]*ClassicMember
	if dst == nil {
		dst = new(ClassicGroup)
	} else {
		members = dst.members.byID
	}
	*dst = *g
	dst.groupBase = b
	dst.members, bufs.classic = g.members.clone(members, bufs.classic, func(c, gm *ClassicMember) string {
		// Topics, Owned, Protocols and Assignment are shared: each is
		// replaced, never changed in place (see ClassicMember).
		*c = *gm
		c.joinPkt, c.syncPkt = re(gm.joinPkt), re(gm.syncPkt)
		return c.MemberID
	})
	return dst
}
