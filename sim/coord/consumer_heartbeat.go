package coord

// What the coordinator does with a ConsumerGroupHeartbeat: the consumer
// group protocol (KIP-848) on the broker, as Kafka's group coordinator runs
// it in GroupMetadataManager.consumerGroupHeartbeat and
// modern/consumer/ConsumerGroup. There is no JoinGroup, SyncGroup, leader
// or global barrier: each heartbeat (1) creates or updates its member,
// bumping the group epoch when membership or subscriptions change, (2)
// recomputes the target assignment with the server-side assignor when the
// group epoch is ahead of the assignment epoch (sim/assign/server), and (3)
// moves that one member towards its target (sim/reconcile: revoke first,
// withhold what another member still holds). Every member reconciles at its
// own pace.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/assign/server"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/reconcile"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// onHeartbeat is GroupMetadataManager.consumerGroupHeartbeat once the
// group is a consumer group (the Coordinator makes it one first; converted
// says this heartbeat converted it). It reports whether the heartbeat
// succeeded.
func (g *ConsumerGroup) onHeartbeat(p *wire.Packet, r *wire.ConsumerGroupHeartbeatRequest, converted bool) bool {
	if r.MemberEpoch == wire.LeaveGroupMemberEpoch || r.MemberEpoch == wire.LeaveGroupStaticMemberEpoch {
		g.leave(p, r)
		return true
	}
	if code, why := g.throwIfFull(r.MemberID); code != wire.None {
		g.env.Reply(p, code, why, nil)
		return false
	}
	gm, replaced, code := g.heartbeatMember(r)
	if code != wire.None {
		g.env.Reply(p, code, wire.OrDash(r.MemberID)+" epoch "+strconv.Itoa(r.MemberEpoch), nil)
		return false
	}
	before := gm.Assignment // replaced, never changed in place: no copy
	newMember := g.members.get(gm.MemberID) != gm
	// What the group's state depends on (ConsumerGroup.maybeUpdateGroupState):
	// a heartbeat that changes none of it leaves the state as it is, and
	// most heartbeats change nothing (a walk over a thousand members on
	// each would cost most of a large group's tick).
	wasState, wasEpoch, wasGroupEpoch, wasAssignmentEpoch := gm.MemberState, gm.MemberEpoch, g.groupEpoch, g.assignmentEpoch
	// 1. Update the member; a new member or a changed subscription bumps
	// the group epoch (hasMemberSubscriptionChanged). A changed server
	// assignor is stored without a bump: it counts at the next target
	// computation (computePreferredServerAssignor).
	// A group this heartbeat converted has no subscription metadata yet
	// (ConsumerGroup.fromClassicGroup sets none, so
	// ModernGroup.hasMetadataExpired): its first heartbeat bumps the
	// epoch and computes a target, a static member's replacement too.
	// (4.0.1's KAFKA-18687 sets the metadata at conversion: not followed.)
	bump := newMember && replaced == nil || converted
	if r.TopicsSent && !slices.Equal(gm.Topics, r.Topics) {
		gm.Topics = store.Copy(r.Topics)
		bump = true
	}
	if r.Assignor != "" {
		gm.Strategy = r.Assignor
	}
	if r.RebalanceTimeout >= 0 {
		gm.RebalanceTimeout = r.RebalanceTimeout
	}
	// 2. The target assignment, when the group epoch moved on.
	g.admitAndAssign(gm, replaced, newMember, bump, "")
	// 3. Reconcile this member towards its target.
	if err := g.maybeReconcile(gm, r); err != nil {
		g.env.Reply(p, wire.FencedMemberEpoch, gm.MemberID+" is in an unknown state", nil)
		return false
	}
	g.scheduleSessionTimeout(gm)
	if newMember || gm.MemberState != wasState || gm.MemberEpoch != wasEpoch || g.groupEpoch != wasGroupEpoch || g.assignmentEpoch != wasAssignmentEpoch {
		g.updateState()
	}
	g.classic().notify()
	resp := &wire.ConsumerGroupHeartbeatResponse{MemberID: gm.MemberID, MemberEpoch: gm.MemberEpoch, Interval: g.cfg.ConsumerHeartbeatInterval}
	full := r.MemberEpoch == 0 || (r.RebalanceTimeout >= 0 && r.TopicsSent && r.OwnedSent)
	if full || !slices.Equal(before, gm.Assignment) {
		resp.Assignment, resp.HasAssignment = store.Copy(gm.Assignment), true
	}
	// "epoch 2, assigned {o0 o1}, target {o0 o1 o2}": every heartbeat's
	// answer writes it
	text := g.env.Trace().HeartbeatAnswer(gm.MemberEpoch, resp.Assignment, resp.HasAssignment, gm.Target, !slices.Equal(gm.Target, gm.Assignment))
	g.env.ReplyText(p, wire.None, text, resp)
	return true
}

// throwIfFull is GroupMetadataManager.throwIfConsumerGroupIsFull: a group
// of group.consumer.max.size members admits no one new (a static member
// coming back under a new member id included: 4.3's KAFKA-20601 lets it
// in; not followed).
func (g *ConsumerGroup) throwIfFull(memberID string) (wire.ErrorCode, string) {
	if n := g.members.len(); n >= g.cfg.ConsumerMaxSize && (memberID == "" || g.members.get(memberID) == nil) {
		return wire.GroupMaxSizeReached, fmt.Sprintf("group %s has %d members, group.consumer.max.size %d", g.c.id, n, g.cfg.ConsumerMaxSize)
	}
	return wire.None, ""
}

// admitAndAssign puts a new member in (or in place of the static member it
// replaces), bumps the group epoch if asked, and recomputes the target
// assignment when the group epoch is ahead of it: steps 1 and 2 of a
// heartbeat, and of a classic member's JoinGroup. how says how it joined.
func (g *ConsumerGroup) admitAndAssign(gm, replaced *ConsumerMember, newMember, bump bool, how string) {
	if newMember {
		if replaced != nil {
			g.replaceStatic(replaced, gm)
		} else {
			g.putMember(gm)
			if gm.InstanceID != "" {
				store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
			}
			g.env.Trace().Eventf(trace.EvGeneration, gm.ClientID, "%s joins consumer group %s%s", gm.MemberID, g.c.id, how)
		}
	}
	if bump {
		g.bumpGroupEpoch()
	}
	if g.groupEpoch > g.assignmentEpoch {
		g.updateTargetAssignment(gm)
	}
}

// bumpGroupEpoch is a change of membership or subscriptions: a rebalance.
func (g *ConsumerGroup) bumpGroupEpoch() {
	g.groupEpoch++
	g.rebalanced()
	g.env.Trace().Eventf(trace.EvGeneration, "", "group epoch %d: %s", g.groupEpoch, wire.OrDash(consumerMemberIDs(g.members.list())))
}

// heartbeatMember is getOrMaybeSubscribeDynamicConsumerGroupMember and
// getOrMaybeSubscribeStaticConsumerGroupMember: the member the heartbeat is
// from, a new one for epoch 0. For a static member that comes back under a
// new member id, replaced is the member it replaces.
func (g *ConsumerGroup) heartbeatMember(r *wire.ConsumerGroupHeartbeatRequest) (gm, replaced *ConsumerMember, code wire.ErrorCode) {
	create := r.MemberEpoch == 0
	fresh := func() *ConsumerMember {
		return &ConsumerMember{MemberID: r.MemberID, ClientID: r.Client, InstanceID: r.InstanceID, Inc: r.Inc,
			MemberState: reconcile.Stable.String(), RebalanceTimeout: r.RebalanceTimeout, Strategy: r.Assignor}
	}
	if r.InstanceID == "" {
		gm = g.members.get(r.MemberID)
		if gm == nil {
			if !create {
				return nil, nil, wire.UnknownMemberID
			}
			return fresh(), nil, wire.None
		}
		return gm, nil, throwIfMemberEpochIsInvalid(gm, r)
	}
	var existing *ConsumerMember
	if id, ok := g.static[r.InstanceID]; ok {
		existing = g.members.get(id)
	}
	if create {
		if existing == nil {
			return fresh(), nil, wire.None
		}
		if existing.classic == nil && existing.MemberEpoch != wire.LeaveGroupStaticMemberEpoch {
			// throwIfInstanceIdIsUnreleased: only when both the joining
			// and the existing member speak the consumer protocol; a
			// classic static member is replaced at once, alive or not.
			return nil, nil, wire.UnreleasedInstanceID
		}
		// The member under its new id, at epoch 0, speaking the consumer
		// protocol (the heartbeat's updatedMember drops the classic
		// metadata).
		n := existing.copyAs(r.MemberID, r.Client, r.Inc)
		n.classic = nil
		return n, existing, wire.None
	}
	if existing == nil {
		return nil, nil, wire.UnknownMemberID // throwIfStaticMemberIsUnknown
	}
	if existing.MemberID != r.MemberID {
		return nil, nil, wire.FencedInstanceID // throwIfInstanceIdIsFenced
	}
	return existing, nil, throwIfMemberEpochIsInvalid(existing, r)
}

// throwIfMemberEpochIsInvalid is GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid:
// an epoch ahead of the coordinator's is fenced; one behind is accepted
// only if it is the previous epoch and the member owns a subset of its
// current assignment (the answer with the new epoch may have been lost).
func throwIfMemberEpochIsInvalid(gm *ConsumerMember, r *wire.ConsumerGroupHeartbeatRequest) wire.ErrorCode {
	if r.MemberEpoch > gm.MemberEpoch {
		return wire.FencedMemberEpoch
	}
	if r.MemberEpoch < gm.MemberEpoch {
		if r.MemberEpoch != gm.PreviousMemberEpoch || !r.OwnedSent || !subsetOf(r.Owned, gm.Assignment) {
			return wire.FencedMemberEpoch
		}
	}
	return wire.None
}

func subsetOf(a, b []wire.TopicPartition) bool {
	in := map[wire.TopicPartition]bool{}
	for _, tp := range b {
		in[tp] = true
	}
	for _, tp := range a {
		if !in[tp] {
			return false
		}
	}
	return true
}

// replaceStatic swaps a returning static member in for the one that left
// with epoch -2 (GroupMetadataManager.replaceMember): same subscription and
// assignment, no group epoch bump.
func (g *ConsumerGroup) replaceStatic(old, gm *ConsumerMember) {
	if old.classic != nil && g.procs.InGroupAs(old.ClientID, old.Inc, old.MemberID) {
		// The old classic instance, still running, learns it from its next
		// heartbeat: its instance id now goes by another member id
		// (validateConsumerGroupMember: FENCED_INSTANCE_ID).
		g.env.Send(&wire.Packet{From: wire.Broker, To: old.ClientID, ToInc: old.Inc, Type: wire.RebalanceNotification, Response: true,
			Error: wire.FencedInstanceID, Summary: "heartbeat: " + old.InstanceID + " is " + gm.MemberID + " now", Body: &wire.LeaveGroupRequest{MemberID: old.MemberID}})
	}
	g.dropMember(old.MemberID)
	g.putMember(gm)
	store.PutMap(&g.static, gm.InstanceID, gm.MemberID)
	g.env.Trace().Eventf(trace.EvStaticRejoin, gm.ClientID, "static member %s returns as %s, replacing %s: it keeps %s",
		gm.InstanceID, gm.MemberID, old.MemberID, g.env.Layout().PartList(gm.Assignment))
}

// updateTargetAssignment is GroupMetadataManager.updateTargetAssignment:
// the server-side assignor the members prefer computes the target for the
// group epoch, with the heartbeating member as the updated one.
func (g *ConsumerGroup) updateTargetAssignment(updated *ConsumerMember) {
	name := g.preferredAssignor()
	as, err := server.New(name)
	if err != nil {
		as, _ = server.New(server.Names[0])
	}
	in := server.TargetInput{Target: map[string][]assign.TopicPartition{},
		Updated: server.GroupMember{MemberID: updated.MemberID, InstanceID: updated.InstanceID, Topics: updated.Topics}}
	// kgrepl passes the members in member-id order; Kafka iterates its
	// member map, which matters only for member ids in one hash bucket.
	for _, gm := range g.members.list() {
		if gm.MemberID == updated.MemberID {
			continue
		}
		in.Members = append(in.Members, server.GroupMember{MemberID: gm.MemberID, InstanceID: gm.InstanceID, Topics: gm.Topics})
		in.Target[gm.MemberID] = gm.Target
	}
	in.Target[updated.MemberID] = updated.Target
	for _, t := range g.env.Layout().InputTopics() {
		in.Topics = append(in.Topics, server.Topic{Name: t, Partitions: g.env.Layout().Partitions(t)})
	}
	res, err := server.TargetAssignment(as, in)
	if err != nil {
		g.env.Trace().Eventf(trace.EvGeneration, "", "target assignment for epoch %d failed: %v", g.groupEpoch, err)
		return
	}
	g.assignmentEpoch = g.groupEpoch
	g.assignor = as.Name()
	for _, gm := range g.members.list() {
		gm.Target = res.Target[gm.MemberID]
	}
	updated.Target = res.Target[updated.MemberID]
	ids := make([]string, 0, len(res.Target))
	size := 64
	for id, tps := range res.Target {
		ids = append(ids, id)
		size += len(id) + 12*len(tps) + 4 // "topic-12345 ": a guess, grown if short
	}
	sort.Strings(ids)
	// "target assignment epoch 5 (uniform): C1-…={i0 i1} C2-…={i2}",
	// written in one buffer: at 1,000 members over 100,000 partitions it
	// is about 1 MB, and a list a member, joined, then formatted, made
	// it four times over (most of a consumer restart's allocations
	// without traffic).
	b := append(make([]byte, 0, size), "target assignment epoch "...)
	b = strconv.AppendInt(b, int64(g.assignmentEpoch), 10)
	b = append(append(append(b, " ("...), as.Name()...), "): "...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = g.env.Layout().AppendPartList(append(append(b, id...), '='), res.Target[id])
	}
	g.env.Trace().EventBytes(trace.EvAssigned, "", b) // not copied into a string first
}

// preferredAssignor is ConsumerGroup.computePreferredServerAssignor: the
// assignor most members name, else the broker's default (uniform). kgrepl
// breaks a tie by name; Kafka by its map's order. A classic member names
// no server assignor (classicGroupJoinToConsumerGroup sets none): its
// Strategy is its client-side assignor, which does not vote.
func (g *ConsumerGroup) preferredAssignor() string {
	count := map[string]int{}
	for _, gm := range g.members.byID {
		if gm.Strategy != "" && !gm.ClassicMember() {
			count[gm.Strategy]++
		}
	}
	best := ""
	for _, n := range server.Names {
		if count[n] > count[best] || (best == "" && count[n] > 0) {
			best = n
		}
	}
	if best == "" {
		return server.Names[0]
	}
	return best
}

// maybeReconcile is GroupMetadataManager.maybeReconcile: unless the member
// is already reconciled to the assignment epoch, CurrentAssignmentBuilder
// computes its next state; a member left with partitions to revoke gets the
// rebalance timeout, any other the timeout cancelled.
func (g *ConsumerGroup) maybeReconcile(gm *ConsumerMember, r *wire.ConsumerGroupHeartbeatRequest) error {
	if gm.MemberState == reconcile.Stable.String() && gm.MemberEpoch == g.assignmentEpoch {
		return nil
	}
	in := reconcile.Input{
		Member: reconcile.Member{State: memberState(gm.MemberState), MemberEpoch: gm.MemberEpoch,
			PreviousMemberEpoch: gm.PreviousMemberEpoch, Assigned: gm.Assignment, PendingRevocation: gm.Revoking},
		TargetEpoch: g.assignmentEpoch, Target: gm.Target, Owned: r.Owned, OwnedSent: r.OwnedSent,
		HeldByOther: g.heldBy(gm),
	}
	next, changed, err := reconcile.Next(in)
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	gm.MemberState = next.State.String()
	gm.MemberEpoch, gm.PreviousMemberEpoch = next.MemberEpoch, next.PreviousMemberEpoch
	// next's lists are new, or the member's or its target's own (a member
	// moving to a new epoch with the target it owns: most of a rolling
	// restart's reconciliations); none is changed in place, so none is
	// copied.
	gm.Assignment, gm.Revoking = next.Assigned, next.PendingRevocation
	gm.rebalanceTimer = g.nextTimer()
	if next.State == reconcile.UnrevokedPartitions {
		g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: g.env.Now() + gm.RebalanceTimeout, Kind: tmConsumerRebalanceTimeout, Member: gm.MemberID, Key: gm.rebalanceTimer, Arg: gm.MemberEpoch})
	}
	return nil
}

// heldBy is ModernGroup.currentPartitionEpoch != -1: whether a partition is
// in some member's current assignment or pending revocation (Kafka 4.0
// counts the member's own pending revocation too; KAFKA-19449 later
// stopped that).
// The first few questions scan the members' lists, later ones a set built
// once: most reconciliations ask none (a member waiting to revoke, one
// already holding its target) or a handful (the partitions it gains), and
// the set costs as much as thousands of comparisons.
func (g *ConsumerGroup) heldBy(self *ConsumerMember) func(assign.TopicPartition) bool {
	var held *heldSet
	asked, n := 0, -1
	return func(tp assign.TopicPartition) bool {
		if n < 0 {
			n = 0
			for _, gm := range g.members.byID {
				n += len(gm.Assignment) + len(gm.Revoking)
			}
		}
		// A scan looks at n partitions: past heldByScanMost, the set at once.
		if held == nil && asked < heldByScans && n <= heldByScanMost {
			asked++
			for _, gm := range g.members.byID {
				if gm != self && slices.Contains(gm.Assignment, tp) || slices.Contains(gm.Revoking, tp) {
					return true
				}
			}
			return false
		}
		if held == nil {
			held = newHeldSet(g.env.Layout())
			for _, gm := range g.members.byID {
				if gm != self {
					held.add(gm.Assignment)
				}
				held.add(gm.Revoking)
			}
		}
		return held.has(tp)
	}
}

// heldByScanMost is the most partitions the members hold for which heldBy
// scans their lists before it builds its set.
const heldByScanMost = 4096

// heldSet is a set of partitions, a bit for each one the layout numbers
// (a 1,000-member group's 100,000: a map of them cost milliseconds at
// each reconciliation that asked), a map for any other.
type heldSet struct {
	layout *topo.Layout
	bits   []uint64
	other  map[wire.TopicPartition]bool
}

func newHeldSet(l *topo.Layout) *heldSet {
	n := len(l.Inputs()) + len(l.Outputs())
	return &heldSet{layout: l, bits: make([]uint64, (n+63)/64)}
}

// add puts tps in the set; a sorted list looks each topic up once.
func (h *heldSet) add(tps []wire.TopicPartition) {
	topic, span, input := "", topo.Span{}, false
	for _, tp := range tps {
		if tp.Topic != topic || topic == "" {
			topic = tp.Topic
			span, input = h.layout.Span(topic)
		}
		i, ok := 0, false
		if input {
			i, ok = span.Index(tp.Partition)
		} else {
			i, ok = h.layout.Number(tp)
		}
		if !ok {
			if h.other == nil {
				h.other = map[wire.TopicPartition]bool{}
			}
			h.other[tp] = true
			continue
		}
		h.bits[i>>6] |= 1 << (i & 63)
	}
}

func (h *heldSet) has(tp wire.TopicPartition) bool {
	if i, ok := h.layout.Number(tp); ok {
		return h.bits[i>>6]&(1<<(i&63)) != 0
	}
	return h.other[tp]
}

// heldByScans is how many questions heldBy answers by scanning before it
// builds its set.
const heldByScans = 16

func memberState(s string) reconcile.MemberState {
	for _, st := range []reconcile.MemberState{reconcile.Stable, reconcile.UnrevokedPartitions, reconcile.UnreleasedPartitions} {
		if st.String() == s {
			return st
		}
	}
	return reconcile.Unknown
}

// scheduleSessionTimeout restarts the member's session timeout
// (group.consumer.session.timeout.ms): every heartbeat resets it.
func (g *ConsumerGroup) scheduleSessionTimeout(gm *ConsumerMember) {
	g.sessionTimeoutAt(gm, g.env.Now()+g.cfg.ConsumerSessionTimeout)
}

// sessionTimeoutAt schedules the member's session timeout at tick at
// (scheduleConsumerGroupSessionTimeout; a classic member's runs for its
// classic session.timeout.ms).
func (g *ConsumerGroup) sessionTimeoutAt(gm *ConsumerMember, at int) {
	gm.sessionTimer = g.nextTimer()
	g.env.After(wire.Timer{Owner: wire.OwnerGroupCoordinator, At: at, Kind: tmConsumerSessionTimeout, Member: gm.MemberID, Key: gm.sessionTimer})
}

// sessionTimeout fences a member that sent no heartbeat within the
// session timeout (scheduleConsumerGroupSessionTimeout).
func (g *ConsumerGroup) sessionTimeout(id string, seq int) {
	gm := g.members.get(id)
	if gm == nil || gm.sessionTimer != seq {
		return
	}
	timeout := g.cfg.ConsumerSessionTimeout
	if gm.classic != nil {
		timeout = gm.classic.SessionTimeout // its classic session.timeout.ms
	}
	g.fenceMember(gm, fmt.Sprintf("session timeout (no heartbeat for %d ticks)", timeout))
}

// rebalanceTimeout fences a member still at the epoch where it was asked
// to revoke (scheduleConsumerGroupRebalanceTimeout).
func (g *ConsumerGroup) rebalanceTimeout(id string, seq, epoch int) {
	gm := g.members.get(id)
	if gm == nil || gm.rebalanceTimer != seq || gm.MemberEpoch != epoch {
		return
	}
	g.fenceMember(gm, fmt.Sprintf("it did not revoke %s within the rebalance timeout (%d)", g.env.Layout().PartList(gm.Revoking), gm.RebalanceTimeout))
}

// leave is GroupMetadataManager.consumerGroupLeave: epoch -1 removes the
// member; -2 from a static member keeps it, with its assignment, at epoch
// -2 until it comes back or its session times out.
func (g *ConsumerGroup) leave(p *wire.Packet, r *wire.ConsumerGroupHeartbeatRequest) {
	var gm *ConsumerMember
	if r.InstanceID == "" {
		gm = g.members.get(r.MemberID)
		if gm == nil {
			g.env.Reply(p, wire.UnknownMemberID, "", nil)
			return
		}
	} else {
		if id, ok := g.static[r.InstanceID]; ok {
			gm = g.members.get(id)
		}
		if gm == nil {
			g.env.Reply(p, wire.UnknownMemberID, "", nil)
			return
		}
		if gm.MemberID != r.MemberID {
			g.env.Reply(p, wire.FencedInstanceID, "", nil)
			return
		}
		if r.MemberEpoch == wire.LeaveGroupStaticMemberEpoch {
			// consumerGroupStaticMemberGroupLeave.
			gm.MemberEpoch = wire.LeaveGroupStaticMemberEpoch
			gm.Revoking = nil
			g.env.Trace().Eventf(trace.EvRemoved, gm.ClientID, "static member %s (%s) leaves for now (epoch -2): it keeps %s until it returns or its session times out",
				gm.InstanceID, gm.MemberID, g.env.Layout().PartList(gm.Assignment))
			g.updateState()
			g.env.Reply(p, wire.None, "epoch -2", &wire.ConsumerGroupHeartbeatResponse{MemberID: gm.MemberID, MemberEpoch: wire.LeaveGroupStaticMemberEpoch})
			return
		}
	}
	g.fenceMember(gm, "left the group (epoch -1)")
	g.env.Reply(p, wire.None, "epoch -1", &wire.ConsumerGroupHeartbeatResponse{MemberID: r.MemberID, MemberEpoch: wire.LeaveGroupMemberEpoch})
}

// fenceMember is GroupMetadataManager.consumerGroupFenceMember: the member
// and its target are removed and the group epoch is bumped; the others get
// the new target at their next heartbeats. When it leaves only classic
// members, the group may become a classic group instead (maybeDowngrade):
// then g is no longer the group id's group.
func (g *ConsumerGroup) fenceMember(gm *ConsumerMember, why string) {
	if g.maybeDowngrade(gm, why) {
		return
	}
	if gm.classic != nil && g.procs.InGroupAs(gm.ClientID, gm.Inc, gm.MemberID) {
		// A classic member learns it from its next heartbeat.
		g.env.Send(&wire.Packet{From: wire.Broker, To: gm.ClientID, ToInc: gm.Inc, Type: wire.RebalanceNotification, Response: true,
			Error: wire.UnknownMemberID, Summary: "heartbeat: " + gm.MemberID + " is not a member", Body: &wire.LeaveGroupRequest{MemberID: gm.MemberID}})
	}
	g.removeMember(gm)
	g.env.Trace().Eventf(trace.EvRemoved, gm.ClientID, "coordinator removes %s: %s", gm.MemberID, why)
	g.bumpGroupEpoch()
	g.updateState()
	g.classic().notify()
}

// removeMember takes gm out of the group, its timers cancelled.
func (g *ConsumerGroup) removeMember(gm *ConsumerMember) {
	g.dropMember(gm.MemberID)
	if gm.InstanceID != "" && g.static[gm.InstanceID] == gm.MemberID {
		delete(g.static, gm.InstanceID)
	}
	gm.sessionTimer, gm.rebalanceTimer = 0, 0
	if gm.classic != nil {
		gm.classic.joinTimer, gm.classic.syncTimer = 0, 0
	}
}
