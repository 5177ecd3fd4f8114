package client

// The subscription state, Kafka's SubscriptionState: the topics the
// process subscribes to, the partitions assigned to it, its fetch
// positions, what the application has processed, what it knows to be
// committed; and the assigned / revoked / lost changes both group
// protocols make to it (assign, revoke, lose).

import (
	"slices"
	"sort"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// subscription is a process's subscription state. Owned is replaced,
// never changed in place (commits and clones share it).
type subscription struct {
	Topics    []string
	Owned     []wire.TopicPartition // the assignment in force, sorted
	positions partInts
	processed partInts
	committed partInts
	// pendingRevocation: cooperative classic, the partitions the new
	// assignment dropped, revoked at the next poll and not fetched
	// meanwhile (SubscriptionState.markPendingRevocation).
	pendingRevocation []wire.TopicPartition
	// The fetcher's rotation: fetches start after the last partition the
	// previous poll read from (SubscriptionState.movePartitionToEnd).
	rotate    wire.TopicPartition
	hasRotate bool

	// ownedSlots' cache: the slots of the Owned list starting at slotsFor
	// (Owned is replaced, never changed in place; a stale entry would only
	// cost lookups, as every slot is checked where it is used).
	slotsFor *wire.TopicPartition
	slots    []int32
	// slotsAscend: slots ascend with Owned (and number every partition),
	// as they do when the input topics are named in order; ownsHint can
	// then search them as numbers.
	slotsAscend bool
}

// useIndex gives a new process the world's numbering of its input
// partitions, which its positions, processed and committed offsets are
// kept by.
func (s *subscription) useIndex(x *topo.InputIndex) {
	s.positions.useIndex(x)
	s.processed.useIndex(x)
	s.committed.useIndex(x)
}

// ownedSlots is the slot of each partition of Owned (-1 for one the world
// does not number), computed once per Owned list: the auto-commit reads
// its positions and commits its partitions by these numbers.
func (s *subscription) ownedSlots() []int32 {
	if len(s.Owned) == 0 {
		return nil
	}
	if s.slotsFor != &s.Owned[0] || len(s.slots) != len(s.Owned) {
		s.slots = s.positions.idx.SlotsOf(make([]int32, 0, len(s.Owned)), s.Owned)
		s.slotsFor = &s.Owned[0]
		s.slotsAscend = s.slots[0] >= 0
		for i := 1; i < len(s.slots) && s.slotsAscend; i++ {
			s.slotsAscend = s.slots[i] > s.slots[i-1]
		}
	}
	return s.slots
}

// Position is the fetch position on tp (false when not positioned).
func (s *subscription) Position(tp wire.TopicPartition) (int, bool) {
	p, ok := s.positions.get(tp)
	return p, ok
}

func (s *subscription) owns(tp wire.TopicPartition) bool {
	i := sort.Search(len(s.Owned), func(i int) bool { return !s.Owned[i].Less(tp) })
	return i < len(s.Owned) && s.Owned[i] == tp
}

// ownsHint is owns for a partition whose slot may be known (hint; -1: not,
// and a wrong one is not trusted): a binary search of Owned's slots when
// they ascend with it, comparing numbers instead of topic names.
func (s *subscription) ownsHint(tp wire.TopicPartition, hint int32) bool {
	if k := s.positions.slotOf(tp, hint); k >= 0 && len(s.Owned) > 0 {
		if slots := s.ownedSlots(); s.slotsAscend {
			_, ok := slices.BinarySearch(slots, k)
			return ok
		}
	}
	return s.owns(tp)
}

// ownsSlot is ownsHint for a partition whose slot k is already checked
// (slotOf; -1: not known), in a list in slot order: at is a cursor in
// Owned's slots, where the previous one was found plus one, so that the
// next is usually right there.
func (s *subscription) ownsSlot(tp wire.TopicPartition, k int32, at *int) bool {
	if k >= 0 && len(s.Owned) > 0 {
		if slots := s.ownedSlots(); s.slotsAscend {
			i := *at
			if i >= len(slots) || slots[i] != k {
				var ok bool
				if i, ok = slices.BinarySearch(slots, k); !ok {
					return false
				}
			}
			*at = i + 1
			return true
		}
	}
	return s.owns(tp)
}

// roomFor is the capacity to make a request's array of n partitions
// with: the free lists hand a request's arrays from one member to the
// next, and a rebalance moves members between n and n+1 partitions (T2's
// 1,000 members own 100 of 100,000 each, 101 for some while one is
// gone), where arrays made at their size were made again at every such
// turn.
func roomFor(n int) int { return n + n/8 + 4 }

// fetchableInto is Fetchable appending to dst[:0] (a recycled request's
// array; scratch is the world's scratch buffer), with each partition's position appended to offs[:0] in the same
// order: the positions are read in the one walk of Owned, by the slots
// ownedSlots numbers them with. hints, if not nil (the world's scratch
// too), gets those slots in the same order, for the Fetch's text.
func (s *subscription) fetchableInto(scratch *[]wire.TopicPartition, hints *[]int32, dst []wire.TopicPartition, offs []int) ([]wire.TopicPartition, []int) {
	all, offs := (*scratch)[:0], offs[:0]
	var sl []int32
	if hints != nil {
		sl = (*hints)[:0]
	}
	if cap(offs) < len(s.Owned) {
		offs = make([]int, 0, roomFor(len(s.Owned))) // at most one an owned partition: made once, not grown
	}
	slots, at := s.ownedSlots(), 0 // at: getSlot's cursor in positions
	for i, tp := range s.Owned {
		if pos, k, ok := s.positions.getHinted(tp, slots[i], &at); ok && !s.revoking(tp) {
			all, offs = append(all, tp), append(offs, pos)
			if hints != nil {
				sl = append(sl, k) // checked, or -1
			}
		}
	}
	*scratch = all
	if hints != nil {
		*hints = sl
	}
	if len(all) == 0 {
		return dst[:0], offs
	}
	if cap(dst) < len(all) {
		dst = make([]wire.TopicPartition, 0, roomFor(len(all))) // at its size and a little more, not grown
	}
	i := 0
	if s.hasRotate && len(all) > 1 {
		i = sort.Search(len(all), func(i int) bool { return s.rotate.Less(all[i]) })
	}
	// both rotated to start after the last partition polled: the
	// positions in place (three reversals), the partitions into dst
	slices.Reverse(offs[:i])
	slices.Reverse(offs[i:])
	slices.Reverse(offs)
	if hints != nil {
		slices.Reverse(sl[:i])
		slices.Reverse(sl[i:])
		slices.Reverse(sl)
	}
	return append(append(dst[:0], all[i:]...), all[:i]...), offs
}

// FetchesHint reports whether the process would fetch tp now (Fetchable
// includes it): owned, it has a position and is not being revoked. hint
// is tp's slot (-1: not known; checked before it is trusted).
func (s *subscription) FetchesHint(tp wire.TopicPartition, hint int32) bool {
	_, ok := s.positions.getHint(tp, hint)
	return ok && !s.revoking(tp)
}

// dropOwned forgets a partition that was assigned but never positioned.
func (s *subscription) dropOwned(tp wire.TopicPartition) {
	var keep []wire.TopicPartition
	for _, t := range s.Owned {
		if t != tp {
			keep = append(keep, t)
		}
	}
	s.Owned = keep
}

// FetchSig is what FetchesHint answers for the partitions of Owned
// depend on: the Owned list (replaced, never changed in place), the
// partitions pendingRevocation holds and which partitions have a
// position. Equal signatures, taken of the same process, give the same
// answers; the world's metrics keep, per process, the partitions it
// fetched and look again only when its signature moved (consumedSet). It
// holds the lists it points at, so their arrays are not reused meanwhile.
type FetchSig struct {
	owned     *wire.TopicPartition
	nOwned    int
	revoking  *wire.TopicPartition
	nRevoking int
	positions uint32
}

// FetchSig is the process's FetchSig now.
func (s *subscription) FetchSig() FetchSig {
	g := FetchSig{nOwned: len(s.Owned), nRevoking: len(s.pendingRevocation), positions: s.positions.keys}
	if len(s.Owned) > 0 {
		g.owned = &s.Owned[0]
	}
	if len(s.pendingRevocation) > 0 {
		g.revoking = &s.pendingRevocation[0]
	}
	return g
}

func (s *subscription) revoking(tp wire.TopicPartition) bool {
	for _, r := range s.pendingRevocation {
		if r == tp {
			return true
		}
	}
	return false
}

// unpositioned lists the owned partitions without a fetch position (still
// waiting for their committed offsets), in partition order.
func (s *subscription) unpositioned() []wire.TopicPartition {
	var out []wire.TopicPartition
	for _, tp := range s.Owned {
		if _, ok := s.positions.get(tp); !ok {
			out = append(out, tp)
		}
	}
	return out
}

// anyPositioned reports whether fetchPositions would be non-empty.
func (s *subscription) anyPositioned() bool {
	for _, tp := range s.Owned {
		if _, ok := s.positions.get(tp); ok {
			return true
		}
	}
	return false
}

// commitList is what one OffsetCommit commits: parallel lists in
// partition order, the partitions' slots hints (or nil). Never changed once
// built: a request and a clone may share it.
type commitList struct {
	tps   []wire.TopicPartition
	slots []int32
	offs  []int
}

// listOf is offs as a commitList (the order sendCommit gave a map).
func listOf(offs map[wire.TopicPartition]int) commitList {
	l := commitList{tps: sortedKeys(offs)}
	for _, tp := range l.tps {
		l.offs = append(l.offs, offs[tp])
	}
	return l
}

// fetchPositionList is fetchPositions as a commitList (what listOf makes
// of the map), without the map; the positions are appended to offs[:0].
func (s *subscription) fetchPositionList(offs []int) commitList {
	return s.positionList(&s.positions, offs)
}

// processedPositionList is processedPositions as a commitList, without the
// map.
func (s *subscription) processedPositionList() commitList {
	return s.positionList(&s.processed, nil)
}

// positionList lists every owned partition with a position, in partition
// order, with its value in from (positions or processed; one without a
// value there is left out), appended to offs[:0]. Owned is usually sorted
// already, so the map and sort are only a fallback. When Owned is strictly
// in order and every owned partition is listed (the steady state), the
// partition list is Owned itself and the slots ownedSlots, capped: both
// are replaced, never changed in place, so the request may keep them.
func (s *subscription) positionList(from *partInts, offs []int) commitList {
	offs = offs[:0]
	if cap(offs) < len(s.Owned) {
		offs = make([]int, 0, roomFor(len(s.Owned))) // at most one an owned partition: made once, not grown
	}
	slots := s.ownedSlots()
	inOrder, all := true, true
	var tps []wire.TopicPartition       // the listed partitions, made at the first one left out
	at, atFrom, prev := 0, 0, int32(-1) // cursors in positions and from; the slot of Owned[i-1] if checked
	for i, tp := range s.Owned {
		k := s.positions.slotOf(tp, slots[i])
		v, ok := s.positions.getSlot(tp, k, &at)
		if ok && i > 0 {
			if k >= 0 && prev >= 0 {
				inOrder = inOrder && prev < k // slots are in (topic, partition) order
			} else if !s.Owned[i-1].Less(tp) {
				inOrder = false // unsorted or repeated
			}
		}
		prev = k
		if ok && from != &s.positions {
			v, ok = from.getSlot(tp, k, &atFrom)
		}
		if !ok {
			if all {
				tps, all = append(make([]wire.TopicPartition, 0, len(s.Owned)), s.Owned[:i]...), false
			}
			continue
		}
		offs = append(offs, v)
		if !all {
			tps = append(tps, tp)
		}
	}
	if inOrder && all {
		n := len(s.Owned)
		return commitList{s.Owned[:n:n], slots[:n:n], offs}
	}
	if inOrder {
		// The check above compared neighbours in Owned; those listed
		// (gathered in the one walk, not looked up again) must be in
		// order among themselves.
		for j := 1; j < len(tps) && inOrder; j++ {
			inOrder = tps[j-1].Less(tps[j])
		}
		if inOrder {
			return commitList{tps: tps, offs: offs}
		}
	}
	var mp map[wire.TopicPartition]int
	if from == &s.positions {
		mp = s.fetchPositions()
	} else {
		mp = s.processedPositions()
	}
	l := listOf(mp)
	l.offs = append(offs[:0], l.offs...)
	return l
}

func (s *subscription) fetchPositions() map[wire.TopicPartition]int {
	out := map[wire.TopicPartition]int{}
	for _, tp := range s.Owned {
		if p, ok := s.positions.get(tp); ok {
			out[tp] = p
		}
	}
	return out
}

// processedPositions is what commit-after and transactions commit: the
// next record to process on each partition this assignment has positioned
// (one still waiting for its committed offset has nothing to commit yet).
func (s *subscription) processedPositions() map[wire.TopicPartition]int {
	out := map[wire.TopicPartition]int{}
	for _, tp := range s.Owned {
		if _, positioned := s.positions.get(tp); !positioned {
			continue
		}
		if p, ok := s.processed.get(tp); ok {
			out[tp] = p
		}
	}
	return out
}

func sortedKeys(m map[wire.TopicPartition]int) []wire.TopicPartition {
	ks := make([]wire.TopicPartition, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	wire.SortPartitions(ks)
	return ks
}

// startFromZero gives a starting world's member its assignment, every
// partition positioned (and processed) at offset 0.
func (s *subscription) startFromZero(owned []wire.TopicPartition) {
	s.Owned = owned
	for _, tp := range s.Owned {
		s.positions.set(tp, 0)
		s.processed.set(tp, 0)
	}
}

// The changes both group protocols make to the assignment, as the
// ConsumerRebalanceListener callbacks see them: partitions assigned,
// revoked (after onPartitionsRevoked, which may commit them first) and
// lost (onPartitionsLost: nothing committed).

// assignAll replaces the assignment with tps (eager: everything was
// revoked before the rebalance), positions and processed offsets
// forgotten; it returns the new assignment, every partition of which is new.
func (s *subscription) assignAll(tps []wire.TopicPartition) []wire.TopicPartition {
	s.Owned = append([]wire.TopicPartition{}, tps...)
	s.positions.reset()
	s.processed.reset()
	return s.Owned
}

// assign adds the partitions of target the member does not own yet to
// Owned, kept sorted, and returns them (onPartitionsAssigned's).
func (s *subscription) assign(target []wire.TopicPartition) (added []wire.TopicPartition) {
	own := map[wire.TopicPartition]bool{}
	for _, tp := range s.Owned {
		own[tp] = true
	}
	owned := slices.Clip(s.Owned) // Owned is replaced, never changed in place: commits share it
	for _, tp := range target {
		if !own[tp] {
			added = append(added, tp)
			owned = append(owned, tp)
		}
	}
	if !wire.Sorted(owned) {
		if len(added) == 0 {
			owned = slices.Clone(owned)
		}
		wire.SortPartitions(owned)
	}
	s.Owned = owned
	return added
}

// revoke gives up the partitions of tps the member owns, with their
// positions and processed offsets.
func (s *subscription) revoke(tps []wire.TopicPartition) {
	drop := map[wire.TopicPartition]bool{}
	for _, tp := range tps {
		drop[tp] = true
	}
	var keep, gone []wire.TopicPartition
	for _, tp := range s.Owned {
		if !drop[tp] {
			keep = append(keep, tp)
		} else {
			gone = append(gone, tp)
		}
	}
	s.positions.delAll(gone) // one pass each, however many go
	s.processed.delAll(gone)
	s.Owned = keep
}

// revokeAll gives up every partition (eager revocation before a rebalance).
func (s *subscription) revokeAll() {
	s.Owned = nil
	s.positions.reset()
	s.processed.reset()
}

// lose is onPartitionsLost: every partition is given up, nothing
// committed; why says why, in the trace.
func (s *subscription) lose(m *Member, why string) {
	if len(s.Owned) > 0 {
		m.env.Trace().Eventf(trace.EvRevoked, m.Client, "%s loses %s (%s)", m.Label(), trace.Parts{L: m.env.Layout(), TPs: s.Owned}, why)
	}
	s.Owned, s.pendingRevocation = nil, nil
	s.positions.reset()
	s.processed.reset()
}

// unsubscribed finds a partition of a topic the member does not subscribe to.
func (s *subscription) unsubscribed(tps []wire.TopicPartition) (wire.TopicPartition, bool) {
	for _, tp := range tps {
		found := false
		for _, t := range s.Topics {
			if t == tp.Topic {
				found = true
			}
		}
		if !found {
			return tp, true
		}
	}
	return wire.TopicPartition{}, false
}
