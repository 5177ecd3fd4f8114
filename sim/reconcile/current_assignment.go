// Package reconcile is the consumer group protocol's (KIP-848) reconciliation
// of one member, as Kafka's group coordinator does it in
// org.apache.kafka.coordinator.group.modern.consumer.CurrentAssignmentBuilder:
// given the member's state, epochs and current assignment, the group's target
// assignment and its epoch, what the member's last heartbeat said it owns, and
// which partitions another member still holds, Next computes the member's next
// state. A member moves to the target epoch only after it revoked what it must
// give up (UNREVOKED_PARTITIONS keeps it at its epoch until then); partitions
// another member has not released yet are withheld (UNRELEASED_PARTITIONS)
// and handed over at a later heartbeat. Next is a pure function: the
// coordinator calls it on each heartbeat, each member at its own pace.
//
// This is Kafka 4.0's builder (the mirrored sources, October 2024). Later
// Kafka changed it: KAFKA-19431 (a member that unsubscribes from a topic
// revokes its partitions at once, even at the target epoch), KAFKA-19449 (a
// partition the member itself still has pending revocation is not withheld
// as unreleased) and KAFKA-19974 (4.2: leaving UNREVOKED_PARTITIONS no longer
// bumps the epoch by one); kgrepl does not follow those.
package reconcile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// MemberState is Kafka's MemberState.
type MemberState int

const (
	// Stable: the member has its whole target assignment at the target epoch
	// (or is at an older epoch and has not been reconciled yet).
	Stable MemberState = iota
	// UnrevokedPartitions: the member must revoke PendingRevocation before it
	// can move to a newer epoch.
	UnrevokedPartitions
	// UnreleasedPartitions: the member is at the target epoch but some of its
	// target partitions are still held by other members.
	UnreleasedPartitions
	// Unknown: a state from a newer coordinator; Kafka fences such a member
	// unless it reports owning nothing.
	Unknown
)

// String gives Kafka's name of the state (MemberState's enum constants).
func (s MemberState) String() string {
	switch s {
	case Stable:
		return "STABLE"
	case UnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case UnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

// Member is the reconciliation half of a ConsumerGroupMember.
type Member struct {
	State               MemberState
	MemberEpoch         int
	PreviousMemberEpoch int
	// Assigned is the member's current assignment (assignedPartitions).
	Assigned []assign.TopicPartition
	// PendingRevocation are the partitions the member was asked to revoke
	// (partitionsPendingRevocation).
	PendingRevocation []assign.TopicPartition
}

// Input is what CurrentAssignmentBuilder is built with.
type Input struct {
	Member      Member
	TargetEpoch int                     // the group's assignment epoch
	Target      []assign.TopicPartition // the member's target assignment
	// Owned is what the member's ConsumerGroupHeartbeat said it owns;
	// OwnedSent says whether the heartbeat carried the field at all. Kafka's
	// client leaves it out (null) when nothing changed, and an absent field
	// counts as still owning everything it was asked to revoke.
	Owned     []assign.TopicPartition
	OwnedSent bool
	// HeldByOther reports whether a partition is still in another member's
	// current assignment or pending revocation (Kafka's currentPartitionEpoch
	// is not -1). Nil means no partition is held.
	HeldByOther func(assign.TopicPartition) bool
}

// FencedMemberEpochError is FENCED_MEMBER_EPOCH (110), returned for a member
// in the Unknown state that does not report owning nothing: it must give up
// all its partitions and rejoin with epoch 0.
type FencedMemberEpochError struct{}

func (FencedMemberEpochError) Error() string {
	return "FENCED_MEMBER_EPOCH (110): the consumer group member is in an unknown state; it must abandon all its partitions and rejoin"
}

// Code is the Kafka error code.
func (FencedMemberEpochError) Code() int { return 110 }

// Next is CurrentAssignmentBuilder.build: the member's next state, or the
// member unchanged when it cannot move yet; changed reports whether the
// result differs from in.Member (Kafka then writes the member's new current
// assignment). Partition lists in the result are sorted by (topic, partition);
// a list may be in.Member's or in.Target's own slice: none is to be changed
// in place.
func Next(in Input) (next Member, changed bool, err error) {
	next, err = build(in)
	return next, err == nil && !next.Equal(in.Member), err
}

// Equal reports whether two members have the same state, epochs and
// partitions (in any order).
func (m Member) Equal(o Member) bool {
	return m.State == o.State && m.MemberEpoch == o.MemberEpoch && m.PreviousMemberEpoch == o.PreviousMemberEpoch &&
		sameSet(m.Assigned, o.Assigned) && sameSet(m.PendingRevocation, o.PendingRevocation)
}

func sameSet(a, b []assign.TopicPartition) bool {
	if len(a) <= smallSet && len(b) <= smallSet {
		for _, p := range a {
			if !slices.Contains(b, p) {
				return false
			}
		}
		for _, p := range b {
			if !slices.Contains(a, p) {
				return false
			}
		}
		return true
	}
	if ascending(a) && ascending(b) {
		return slices.Equal(a, b) // sets without repeats, in one order
	}
	sa, sb := set(a), set(b)
	if len(sa) != len(sb) {
		return false
	}
	for p := range sa {
		if !sb[p] {
			return false
		}
	}
	return true
}

func build(in Input) (Member, error) {
	m := in.Member
	switch m.State {
	case Stable:
		// A newer target (epoch) to reconcile towards?
		if m.MemberEpoch != in.TargetEpoch {
			return computeNext(in, m.MemberEpoch), nil
		}
		return m, nil
	case UnrevokedPartitions:
		// Still owns some of what it must revoke: wait.
		if ownsAny(in, m.PendingRevocation) {
			return m, nil
		}
		// Revoked everything: move to the next epoch and reconcile again.
		return computeNext(in, m.MemberEpoch+1), nil
	case UnreleasedPartitions:
		return computeNext(in, m.MemberEpoch), nil
	case Unknown:
		if !in.OwnedSent || len(in.Owned) > 0 {
			return m, FencedMemberEpochError{}
		}
		return computeNext(in, in.TargetEpoch), nil
	}
	return m, fmt.Errorf("member state %d is not one of STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS, UNKNOWN", int(m.State))
}

// ownsAny is ownsRevokedPartitions: whether the heartbeat reports owning any
// of ps (true when it reported nothing).
func ownsAny(in Input, ps []assign.TopicPartition) bool {
	if !in.OwnedSent {
		return true
	}
	pending := lookup(ps)
	for _, p := range in.Owned {
		if pending(p) {
			return true
		}
	}
	return false
}

// computeNext is computeNextAssignment: keep what is still targeted, revoke
// the rest first, then add the targeted partitions nobody else holds.
func computeNext(in Input, memberEpoch int) Member {
	if ascending(in.Member.Assigned) && ascending(in.Target) {
		return computeNextSorted(in, memberEpoch)
	}
	return computeNextAny(in, memberEpoch)
}

// computeNextAny is computeNext for lists in any order.
func computeNextAny(in Input, memberEpoch int) Member {
	target := lookup(in.Target)
	current := lookup(in.Member.Assigned)
	// kept has room for what is added: the new assignment is built in it.
	kept := make([]assign.TopicPartition, 0, len(in.Member.Assigned)+len(in.Target))
	var revoke, add []assign.TopicPartition
	unreleased := false
	for _, p := range in.Member.Assigned {
		if target(p) {
			kept = append(kept, p)
		} else {
			revoke = append(revoke, p)
		}
	}
	for _, p := range in.Target {
		if current(p) {
			continue
		}
		if in.HeldByOther != nil && in.HeldByOther(p) {
			unreleased = true
			continue
		}
		add = append(add, p)
	}
	return settled(in, memberEpoch, sorted(kept), sorted(revoke), sorted(append(kept, add...)), unreleased)
}

// settled is the member computeNext and computeNextSorted give, from the
// partitions it keeps, those to revoke and all it is to own (each sorted
// without repeats): while it still owns one to revoke, it revokes first
// at memberEpoch; else it takes the target epoch and all, Stable or, when
// another member still holds one of them, UnreleasedPartitions.
func settled(in Input, memberEpoch int, kept, revoke, all []assign.TopicPartition, unreleased bool) Member {
	next := in.Member
	next.PreviousMemberEpoch = in.Member.MemberEpoch // Builder.updateMemberEpoch
	if len(revoke) > 0 && ownsAny(in, revoke) {
		// Revoke first, at the current epoch.
		next.State = UnrevokedPartitions
		next.MemberEpoch = memberEpoch
		next.Assigned = kept
		next.PendingRevocation = revoke
		return next
	}
	next.MemberEpoch = in.TargetEpoch
	next.Assigned = all
	next.PendingRevocation = nil
	next.State = Stable
	if unreleased {
		next.State = UnreleasedPartitions
	}
	return next
}

// computeNextSorted is computeNext for an assignment and a target both
// sorted without repeats (as they usually are): one walk of each against
// the other instead of a search of one for each partition of the other,
// and the lists it builds sorted as built. It asks HeldByOther of the same
// partitions in the same order, and gives the same member.
//
// It allocates only for a list that differs from its input: a list that is
// the whole assignment (kept) or the whole target (all) is that slice
// itself (its capacity cut to its length), as the lists are never changed
// in place (coord.ConsumerMember's slices are replaced, never changed). In
// a rolling restart of 1,000 members almost every reconciliation moves a
// member to a new epoch with the target it already owns: the lists it
// built, grown by appends, were a sixth of the roll's allocations and most
// of the pointerful ones the collector scanned.
func computeNextSorted(in Input, memberEpoch int) Member {
	a, t := in.Member.Assigned, in.Target
	if len(a) > 0 && len(a) == len(t) && &a[0] == &t[0] {
		// One list (the assignment is the target it was reconciled to,
		// and the assignor handed that target back): all kept, nothing
		// to revoke or add, no partition asked after.
		return settled(in, memberEpoch, whole(a), nil, whole(t), false)
	}
	nk := 0 // how many of a the target keeps
	for i, j := 0, 0; i < len(a); i++ {
		for j < len(t) && comparePartitions(t[j], a[i]) < 0 {
			j++
		}
		if j < len(t) && t[j] == a[i] {
			nk++
		}
	}
	var kept, revoke []assign.TopicPartition
	if nk == len(a) {
		kept = whole(a)
	} else {
		if nk > 0 {
			kept = make([]assign.TopicPartition, 0, nk)
		}
		revoke = make([]assign.TopicPartition, 0, len(a)-nk)
		for i, j := 0, 0; i < len(a); i++ {
			for j < len(t) && comparePartitions(t[j], a[i]) < 0 {
				j++
			}
			if j < len(t) && t[j] == a[i] {
				kept = append(kept, a[i])
			} else {
				revoke = append(revoke, a[i])
			}
		}
	}
	// all: kept and the targeted partitions added (nobody else holds them),
	// in the target's order; t itself until one is left out
	var all []assign.TopicPartition
	cut := false // all is a list of its own: a partition of t was left out
	unreleased := false
	for i, j := 0, 0; j < len(t); j++ {
		p := t[j]
		for i < len(a) && comparePartitions(a[i], p) < 0 {
			i++
		}
		if !(i < len(a) && a[i] == p) && in.HeldByOther != nil && in.HeldByOther(p) {
			unreleased = true
			if !cut {
				cut = true
				all = append(make([]assign.TopicPartition, 0, len(t)-1), t[:j]...)
			}
			continue
		}
		if cut {
			all = append(all, p)
		}
	}
	if !cut {
		all = whole(t)
	} else if len(all) == 0 {
		all = nil
	}
	return settled(in, memberEpoch, kept, revoke, all, unreleased) // nil where empty, as sorted gives them
}

// whole is ps with its capacity cut to its length (no append may write
// past it into another list's room), nil when empty.
func whole(ps []assign.TopicPartition) []assign.TopicPartition {
	if len(ps) == 0 {
		return nil
	}
	return ps[:len(ps):len(ps)]
}

// ascending reports whether ps is sorted by comparePartitions without
// repeats.
func ascending(ps []assign.TopicPartition) bool {
	for i := 1; i < len(ps); i++ {
		if comparePartitions(ps[i-1], ps[i]) >= 0 {
			return false
		}
	}
	return true
}

// smallSet is the size up to which a list is searched as it is rather than
// made a set: a member's assignment is usually a handful of partitions.
const smallSet = 16

// lookup answers whether a partition is in ps: by searching ps when it is
// small, by binary search when it is sorted (as an assignment usually
// is: a set of 100 partitions made for each member's every reconciliation
// was most of a 1,000-member group's heartbeat work), else from a set.
func lookup(ps []assign.TopicPartition) func(assign.TopicPartition) bool {
	if len(ps) <= smallSet {
		return func(p assign.TopicPartition) bool { return slices.Contains(ps, p) }
	}
	if slices.IsSortedFunc(ps, comparePartitions) {
		return func(p assign.TopicPartition) bool {
			_, found := slices.BinarySearchFunc(ps, p, comparePartitions)
			return found
		}
	}
	s := set(ps)
	return func(p assign.TopicPartition) bool { return s[p] }
}

// comparePartitions orders partitions as assign.SortPartitions does:
// by topic, then partition.
func comparePartitions(a, b assign.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return a.Partition - b.Partition
}

func set(ps []assign.TopicPartition) map[assign.TopicPartition]bool {
	s := make(map[assign.TopicPartition]bool, len(ps))
	for _, p := range ps {
		s[p] = true
	}
	return s
}

// sorted returns a sorted copy without duplicates (nil when empty).
func sorted(ps []assign.TopicPartition) []assign.TopicPartition {
	if len(ps) == 0 {
		return nil
	}
	out := append([]assign.TopicPartition(nil), ps...)
	assign.SortPartitions(out) // a total order: the same result as any sort
	w := 1
	for i := 1; i < len(out); i++ {
		if out[i] != out[w-1] {
			out[w] = out[i]
			w++
		}
	}
	return out[:w]
}
