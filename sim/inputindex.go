package sim

import "github.com/kgrepl/kgrepl/sim/internal/store"

// inputIndex numbers the world's input partitions by their place in
// World.inputTPs, so that per-partition state can live in slices instead
// of maps keyed by TopicPartition. Both fields are the world's own,
// read-only and shared by clones. The zero inputIndex numbers nothing.
type inputIndex struct {
	at  topicSpans       // World.inputAt
	tps []TopicPartition // World.inputTPs
}

// topicCache remembers the last topic an inputIndex looked up: lists in
// (topic, partition) order then look each topic up once.
type topicCache struct {
	topic        string
	in           span
	known, valid bool
}

// slot is tp's number (false when tp is not an input partition of the
// world). c may be nil.
func (x inputIndex) slot(tp TopicPartition, c *topicCache) (int, bool) {
	if c == nil {
		in, ok := x.at.get(tp.Topic)
		if !ok {
			return 0, false
		}
		return in.index(tp.Partition)
	}
	if !c.valid || c.topic != tp.Topic {
		in, known := x.at.get(tp.Topic)
		*c = topicCache{topic: tp.Topic, in: in, known: known, valid: true}
	}
	if !c.known {
		return 0, false
	}
	return c.in.index(tp.Partition)
}

// slotCached is slot, trying hint first: a number carried with tp
// (Member's ownedSlots, a commit's Slots) is used only if it is tp's, so a
// stale or missing hint (-1) costs a lookup, never a wrong answer (the
// check is one TopicPartition compare, whose topic strings are usually the
// same string). c (may be nil) remembers the last topic looked up when the
// hint is not tp's.
func (x *inputIndex) slotCached(tp TopicPartition, hint int32, c *topicCache) (int, bool) {
	if x.is(tp, hint) {
		return int(hint), true
	}
	return x.slot(tp, c)
}

// is reports whether hint is tp's slot.
func (x *inputIndex) is(tp TopicPartition, hint int32) bool {
	if hint < 0 || int(hint) >= len(x.tps) {
		return false
	}
	at := &x.tps[hint]
	return at.Partition == tp.Partition && store.SameStr(at.Topic, tp.Topic)
}

// slotsOf appends the slot of each of tps to dst, -1 for a partition the
// world does not number (each topic looked up once per run of its
// partitions).
func (x *inputIndex) slotsOf(dst []int32, tps []TopicPartition) []int32 {
	var c topicCache
	for _, tp := range tps {
		s, ok := -1, false
		if x != nil {
			s, ok = x.slot(tp, &c)
		}
		if !ok {
			s = -1
		}
		dst = append(dst, int32(s))
	}
	return dst
}

// slotAt is slots[i], or -1 (no hint) past the end of slots (nil when a
// list came without its slots).
func slotAt(slots []int32, i int) int32 {
	if i < len(slots) {
		return slots[i]
	}
	return -1
}
