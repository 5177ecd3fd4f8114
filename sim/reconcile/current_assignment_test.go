package reconcile

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// tps parses "a-1 a-2 b-4" (topicId1 and topicId2 of Kafka's tests are a and b).
func tps(spec string) []assign.TopicPartition {
	ps, err := assign.ParsePartitions(spec)
	if err != nil {
		panic(err)
	}
	return ps
}

func heldBy(all bool, topic string) func(assign.TopicPartition) bool {
	return func(p assign.TopicPartition) bool { return all || p.Topic == topic }
}

// owned is a heartbeat's owned partitions; nil means the field was absent.
func owned(spec *string) ([]assign.TopicPartition, bool) {
	if spec == nil {
		return nil, false
	}
	return tps(*spec), true
}

func str(s string) *string { return &s }

// The cases of Kafka's CurrentAssignmentBuilderTest (group-coordinator,
// modern/consumer), one row per assertion. Kafka's currentPartitionEpoch
// lambdas become HeldByOther: "-> 10" or "-> 11" is every partition held,
// "-> -1" none, "topicId2.equals(topicId) ? 10 : -1" the partitions of b.
func TestKafkaCurrentAssignmentBuilderCases(t *testing.T) {
	type st = MemberState
	cases := []struct {
		name        string
		state       st
		epoch, prev int
		assigned    string
		pending     string
		targetEpoch int
		target      string
		held        func(assign.TopicPartition) bool
		owned       *string
		// want; wantSame means Kafka returns the member unchanged.
		wantSame            bool
		wantFenced          bool
		wState              st
		wEpoch, wPrev       int
		wAssigned, wPending string
	}{
		{name: "testStableToStable", state: Stable, epoch: 10, prev: 10, assigned: "a-1 a-2 a-3 b-4 b-5 b-6",
			targetEpoch: 11, target: "a-1 a-2 a-3 b-4 b-5 b-6", held: heldBy(true, ""),
			wState: Stable, wEpoch: 11, wPrev: 10, wAssigned: "a-1 a-2 a-3 b-4 b-5 b-6"},
		{name: "testStableToStableWithNewPartitions", state: Stable, epoch: 10, prev: 10, assigned: "a-1 a-2 a-3 b-4 b-5 b-6",
			targetEpoch: 11, target: "a-1 a-2 a-3 a-4 b-4 b-5 b-6 b-7", held: heldBy(false, ""),
			wState: Stable, wEpoch: 11, wPrev: 10, wAssigned: "a-1 a-2 a-3 a-4 b-4 b-5 b-6 b-7"},
		{name: "testStableToUnrevokedPartitions", state: Stable, epoch: 10, prev: 10, assigned: "a-1 a-2 a-3 b-4 b-5 b-6",
			targetEpoch: 11, target: "a-2 a-3 a-4 b-5 b-6 b-7", held: heldBy(false, ""),
			wState: UnrevokedPartitions, wEpoch: 10, wPrev: 10, wAssigned: "a-2 a-3 b-5 b-6", wPending: "a-1 b-4"},
		{name: "testStableToUnreleasedPartitions", state: Stable, epoch: 10, prev: 10, assigned: "a-1 a-2 a-3 b-4 b-5 b-6",
			targetEpoch: 11, target: "a-1 a-2 a-3 a-4 b-4 b-5 b-6 b-7", held: heldBy(true, ""),
			wState: UnreleasedPartitions, wEpoch: 11, wPrev: 10, wAssigned: "a-1 a-2 a-3 b-4 b-5 b-6"},
		{name: "testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions", state: Stable, epoch: 10, prev: 10,
			assigned: "a-1 a-2 a-3 b-4 b-5 b-6", targetEpoch: 11, target: "a-1 a-2 a-3 b-4 b-5 b-7", held: heldBy(false, "b"), owned: str(""),
			wState: UnreleasedPartitions, wEpoch: 11, wPrev: 10, wAssigned: "a-1 a-2 a-3 b-4 b-5"},
		{name: "testUnrevokedPartitionsToStable", state: UnrevokedPartitions, epoch: 10, prev: 10, assigned: "a-2 a-3 b-5 b-6", pending: "a-1 b-4",
			targetEpoch: 11, target: "a-2 a-3 b-5 b-6", held: heldBy(false, ""), owned: str("a-2 a-3 b-5 b-6"),
			wState: Stable, wEpoch: 11, wPrev: 10, wAssigned: "a-2 a-3 b-5 b-6"},
		{name: "testRemainsInUnrevokedPartitions (owned absent)", state: UnrevokedPartitions, epoch: 10, prev: 10, assigned: "a-2 a-3 b-5 b-6", pending: "a-1 b-4",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(false, ""), wantSame: true},
		{name: "testRemainsInUnrevokedPartitions (still owns a-1)", state: UnrevokedPartitions, epoch: 10, prev: 10, assigned: "a-2 a-3 b-5 b-6", pending: "a-1 b-4",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(false, ""), owned: str("a-1 a-2 a-3 b-5 b-6"), wantSame: true},
		{name: "testRemainsInUnrevokedPartitions (still owns b-4)", state: UnrevokedPartitions, epoch: 10, prev: 10, assigned: "a-2 a-3 b-5 b-6", pending: "a-1 b-4",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(false, ""), owned: str("a-2 a-3 b-4 b-5 b-6"), wantSame: true},
		{name: "testUnrevokedPartitionsToUnrevokedPartitions", state: UnrevokedPartitions, epoch: 10, prev: 10, assigned: "a-2 a-3 b-5 b-6", pending: "a-1 b-4",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(false, ""), owned: str("a-2 a-3 b-5 b-6"),
			wState: UnrevokedPartitions, wEpoch: 11, wPrev: 10, wAssigned: "a-3 b-6", wPending: "a-2 b-5"},
		{name: "testUnrevokedPartitionsToUnreleasedPartitions", state: UnrevokedPartitions, epoch: 11, prev: 10, assigned: "a-2 a-3 b-5 b-6",
			targetEpoch: 11, target: "a-2 a-3 a-4 b-5 b-6 b-7", held: heldBy(true, ""), owned: str("a-2 a-3 b-5 b-6"),
			wState: UnreleasedPartitions, wEpoch: 11, wPrev: 11, wAssigned: "a-2 a-3 b-5 b-6"},
		{name: "testUnreleasedPartitionsToStable", state: UnreleasedPartitions, epoch: 11, prev: 11, assigned: "a-2 a-3 b-5 b-6",
			targetEpoch: 12, target: "a-2 a-3 b-5 b-6", held: heldBy(true, ""),
			wState: Stable, wEpoch: 12, wPrev: 11, wAssigned: "a-2 a-3 b-5 b-6"},
		{name: "testUnreleasedPartitionsToStableWithNewPartitions", state: UnreleasedPartitions, epoch: 11, prev: 11, assigned: "a-2 a-3 b-5 b-6",
			targetEpoch: 11, target: "a-2 a-3 a-4 b-5 b-6 b-7", held: heldBy(false, ""),
			wState: Stable, wEpoch: 11, wPrev: 11, wAssigned: "a-2 a-3 a-4 b-5 b-6 b-7"},
		{name: "testUnreleasedPartitionsToUnreleasedPartitions", state: UnreleasedPartitions, epoch: 11, prev: 11, assigned: "a-2 a-3 b-5 b-6",
			targetEpoch: 11, target: "a-2 a-3 a-4 b-5 b-6 b-7", held: heldBy(true, ""), wantSame: true},
		{name: "testUnreleasedPartitionsToUnrevokedPartitions", state: UnreleasedPartitions, epoch: 11, prev: 11, assigned: "a-2 a-3 b-5 b-6",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(true, ""),
			wState: UnrevokedPartitions, wEpoch: 11, wPrev: 11, wAssigned: "a-3 b-6", wPending: "a-2 b-5"},
		{name: "testUnknownState (owned absent)", state: Unknown, epoch: 11, prev: 11, assigned: "a-3 b-6", pending: "a-2 b-5",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(true, ""), wantFenced: true},
		{name: "testUnknownState (owns nothing)", state: Unknown, epoch: 11, prev: 11, assigned: "a-3 b-6", pending: "a-2 b-5",
			targetEpoch: 12, target: "a-3 b-6", held: heldBy(true, ""), owned: str(""),
			wState: Stable, wEpoch: 12, wPrev: 11, wAssigned: "a-3 b-6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Member{State: c.state, MemberEpoch: c.epoch, PreviousMemberEpoch: c.prev,
				Assigned: tps(c.assigned), PendingRevocation: tps(c.pending)}
			in := Input{Member: m, TargetEpoch: c.targetEpoch, Target: tps(c.target), HeldByOther: c.held}
			in.Owned, in.OwnedSent = owned(c.owned)
			got, changed, err := Next(in)
			if c.wantFenced {
				var fenced FencedMemberEpochError
				if !errors.As(err, &fenced) || fenced.Code() != 110 {
					t.Fatalf("got %v, %v; Kafka throws FencedMemberEpochException", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := m
			if !c.wantSame {
				want = Member{State: c.wState, MemberEpoch: c.wEpoch, PreviousMemberEpoch: c.wPrev,
					Assigned: tps(c.wAssigned), PendingRevocation: tps(c.wPending)}
			}
			if !got.Equal(want) {
				t.Errorf("got %+v\nKafka: %+v", got, want)
			}
			if changed == c.wantSame {
				t.Errorf("changed = %v", changed)
			}
		})
	}
}

// reference is the reconciliation rule written down as KIP-848 states it,
// with sets: keep what is still targeted; if something must go and the member
// may still own it, stay at the epoch and ask for it; otherwise move to the
// target epoch with what is kept plus every targeted partition nobody else
// holds, STABLE if that is all of the target and UNRELEASED_PARTITIONS if not.
func reference(in Input) (Member, error) {
	m := in.Member
	has := func(ps []assign.TopicPartition, p assign.TopicPartition) bool {
		for _, q := range ps {
			if q == p {
				return true
			}
		}
		return false
	}
	// An absent owned field counts as still owning everything.
	stillOwns := func(ps []assign.TopicPartition) bool {
		if !in.OwnedSent {
			return true
		}
		for _, p := range ps {
			if has(in.Owned, p) {
				return true
			}
		}
		return false
	}
	epoch := m.MemberEpoch
	switch m.State {
	case Stable:
		if m.MemberEpoch == in.TargetEpoch {
			return m, nil
		}
	case UnrevokedPartitions:
		if stillOwns(m.PendingRevocation) {
			return m, nil
		}
		epoch++
	case UnreleasedPartitions:
	case Unknown:
		if !in.OwnedSent || len(in.Owned) > 0 {
			return m, FencedMemberEpochError{}
		}
		epoch = in.TargetEpoch
	}
	var keep, revoke, take []assign.TopicPartition
	for _, p := range m.Assigned {
		if has(in.Target, p) {
			keep = append(keep, p)
		} else {
			revoke = append(revoke, p)
		}
	}
	for _, p := range in.Target {
		if !has(m.Assigned, p) && (in.HeldByOther == nil || !in.HeldByOther(p)) {
			take = append(take, p)
		}
	}
	next := Member{PreviousMemberEpoch: m.MemberEpoch}
	if len(revoke) > 0 && stillOwns(revoke) {
		next.State, next.MemberEpoch, next.Assigned, next.PendingRevocation = UnrevokedPartitions, epoch, keep, revoke
		return next, nil
	}
	next.MemberEpoch, next.Assigned = in.TargetEpoch, append(keep, take...)
	next.State = Stable
	if len(keep)+len(take) < len(sorted(in.Target)) {
		next.State = UnreleasedPartitions
	}
	return next, nil
}

// scenario is a random reconciliation input for testing/quick: partitions of
// topics a and b numbered 0..5, random subsets for each role.
type scenario struct{ in Input }

func (scenario) Generate(r *rand.Rand, _ int) reflect.Value {
	pick := func() []assign.TopicPartition {
		var ps []assign.TopicPartition
		for _, t := range []string{"a", "b"} {
			for p := 0; p < 6; p++ {
				if r.Intn(3) == 0 {
					ps = append(ps, assign.TopicPartition{Topic: t, Partition: p})
				}
			}
		}
		r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		return ps
	}
	epoch := r.Intn(5)
	m := Member{State: MemberState(r.Intn(4)), MemberEpoch: epoch, PreviousMemberEpoch: epoch - r.Intn(2),
		Assigned: pick()}
	if m.State == UnrevokedPartitions {
		// Pending revocation is disjoint from the assignment.
		for _, p := range pick() {
			if !set(m.Assigned)[p] {
				m.PendingRevocation = append(m.PendingRevocation, p)
			}
		}
	}
	held := set(pick())
	// The coordinator's assignment epoch is never behind a member's, and a
	// member waiting to revoke is behind it.
	targetEpoch := epoch + r.Intn(3)
	if m.State == UnrevokedPartitions {
		targetEpoch = epoch + 1 + r.Intn(2)
	}
	in := Input{Member: m, TargetEpoch: targetEpoch, Target: pick(),
		HeldByOther: func(p assign.TopicPartition) bool { return held[p] }}
	if r.Intn(4) > 0 {
		in.Owned, in.OwnedSent = pick(), true
	}
	return reflect.ValueOf(scenario{in})
}

func (s scenario) String() string { return fmt.Sprintf("%+v", s.in) }

// TestNextAgainstReference checks Next against the set-based reference with
// testing/quick, as raft's quorum/quick_test.go checks its fast path.
func TestNextAgainstReference(t *testing.T) {
	f := func(s scenario) bool {
		got, _, err1 := Next(s.in)
		want, err2 := reference(s.in)
		if (err1 == nil) != (err2 == nil) {
			t.Logf("%v: errors %v vs %v", s, err1, err2)
			return false
		}
		if err1 == nil && !got.Equal(want) {
			t.Logf("%v:\n got %+v\nwant %+v", s, got, want)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000, Rand: rand.New(rand.NewSource(848))}); err != nil {
		t.Fatal(err)
	}
}

// TestNextInvariants: the epoch never goes down nor past the target epoch;
// when the member changes, it never gets a partition another member holds
// unless it already had it, it is only assigned targeted partitions, and what
// it must revoke is neither targeted nor still assigned.
func TestNextInvariants(t *testing.T) {
	f := func(s scenario) bool {
		in := s.in
		got, changed, err := Next(in)
		if err != nil {
			return in.Member.State == Unknown
		}
		ok := got.MemberEpoch >= in.Member.MemberEpoch && got.MemberEpoch <= in.TargetEpoch
		if !changed {
			return ok
		}
		had, target := set(in.Member.Assigned), set(in.Target)
		for _, p := range got.Assigned {
			ok = ok && target[p] && (had[p] || !in.HeldByOther(p))
		}
		for _, p := range got.PendingRevocation {
			ok = ok && !target[p] && !set(got.Assigned)[p]
		}
		if !ok {
			t.Logf("%v -> %+v", s, got)
		}
		return ok
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000, Rand: rand.New(rand.NewSource(110))}); err != nil {
		t.Fatal(err)
	}
}

// TestComputeNextSortedAsAny: for an assignment and a target sorted
// without repeats, the one-walk computeNextSorted gives exactly what the
// search-based computeNextAny gives (the same lists, nil where it gives
// nil) and asks HeldByOther of the same partitions in the same order.
func TestComputeNextSortedAsAny(t *testing.T) {
	f := func(s scenario) bool {
		in := s.in
		in.Member.Assigned, in.Target = sorted(in.Member.Assigned), sorted(in.Target)
		if s.in.Member.MemberEpoch%3 == 0 {
			in.Target = in.Member.Assigned // one list, as a member reconciled to its target holds it
		}
		held := in.HeldByOther
		var asked [2][]assign.TopicPartition
		var got [2]Member
		for k, next := range []func(Input, int) Member{computeNextSorted, computeNextAny} {
			in.HeldByOther = func(p assign.TopicPartition) bool {
				asked[k] = append(asked[k], p)
				return held(p)
			}
			got[k] = next(in, in.Member.MemberEpoch+1)
		}
		if !reflect.DeepEqual(got[0], got[1]) || !reflect.DeepEqual(asked[0], asked[1]) {
			t.Logf("%v:\n sorted %+v asked %v\n    any %+v asked %v", s, got[0], asked[0], got[1], asked[1])
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000, Rand: rand.New(rand.NewSource(26))}); err != nil {
		t.Fatal(err)
	}
}

// TestComputeNextAllocatesOnlyWhatChanges: a member moving to a new epoch
// with the target it already owns (almost every reconciliation of a
// rolling restart), or gaining a partition nobody holds, gets its lists
// back without a copy; one gaining a partition another member still holds
// gets one new list (all, made once at its size); one losing a partition
// kept and revoke, each made once, and ownsAny's lookup.
func TestComputeNextAllocatesOnlyWhatChanges(t *testing.T) {
	var owns []assign.TopicPartition
	for p := range 100 {
		owns = append(owns, assign.TopicPartition{Topic: "in", Partition: p})
	}
	member := Member{State: Stable, MemberEpoch: 4, PreviousMemberEpoch: 3, Assigned: owns}
	gain := append(append([]assign.TopicPartition(nil), owns...), assign.TopicPartition{Topic: "in", Partition: 100})
	for _, c := range []struct {
		name   string
		target []assign.TopicPartition
		held   bool // partition 100 held by another member
		allocs float64
	}{
		{"same", owns[:len(owns):len(owns)], false, 0},
		{"gain", gain, false, 0},
		{"gain-held", gain, true, 1},
		{"lose", owns[1:], false, 3},
	} {
		in := Input{Member: member, TargetEpoch: 5, Target: c.target, Owned: owns, OwnedSent: true,
			HeldByOther: func(p assign.TopicPartition) bool { return c.held && p.Partition == 100 }}
		var next Member
		if got := testing.AllocsPerRun(20, func() { next, _, _ = Next(in) }); got != c.allocs {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.allocs)
		}
		if c.allocs == 0 && (next.MemberEpoch != 5 || &next.Assigned[0] != &c.target[0] || cap(next.Assigned) != len(c.target)) {
			t.Errorf("%s: %+v is not the target itself at epoch 5", c.name, next)
		}
	}
}
