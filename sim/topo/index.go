package topo

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// InputIndex numbers the world's input partitions by their place in
// Layout.Inputs, so that per-partition state can live in slices instead
// of maps keyed by TopicPartition. Both fields are the world's own,
// read-only and shared by clones. The zero InputIndex numbers nothing.
type InputIndex struct {
	at  topicSpans            // where each topic starts
	tps []wire.TopicPartition // Layout.Inputs
}

// TopicCache remembers the last topic an InputIndex looked up: lists in
// (topic, partition) order then look each topic up once.
type TopicCache struct {
	topic        string
	in           Span
	known, valid bool
}

// Slot is tp's number (false when tp is not an input partition of the
// world). c may be nil.
func (x InputIndex) Slot(tp wire.TopicPartition, c *TopicCache) (int, bool) {
	if c == nil {
		in, ok := x.at.get(tp.Topic)
		if !ok {
			return 0, false
		}
		return in.Index(tp.Partition)
	}
	if !c.valid || c.topic != tp.Topic {
		in, known := x.at.get(tp.Topic)
		*c = TopicCache{topic: tp.Topic, in: in, known: known, valid: true}
	}
	if !c.known {
		return 0, false
	}
	return c.in.Index(tp.Partition)
}

// SlotCached is Slot, trying hint first: a number carried with tp
// (a member's owned slots, a commit's Slots) is used only if it is tp's, so a
// stale or missing hint (-1) costs a lookup, never a wrong answer (the
// check is one TopicPartition compare, whose topic strings are usually the
// same string). c (may be nil) remembers the last topic looked up when the
// hint is not tp's.
func (x *InputIndex) SlotCached(tp wire.TopicPartition, hint int32, c *TopicCache) (int, bool) {
	if x.Is(tp, hint) {
		return int(hint), true
	}
	return x.Slot(tp, c)
}

// Is reports whether hint is tp's slot.
func (x *InputIndex) Is(tp wire.TopicPartition, hint int32) bool {
	if hint < 0 || int(hint) >= len(x.tps) {
		return false
	}
	at := &x.tps[hint]
	return at.Partition == tp.Partition && store.SameStr(at.Topic, tp.Topic)
}

// SlotsOf appends the slot of each of tps to dst, -1 for a partition the
// world does not number (each topic looked up once per run of its
// partitions).
func (x *InputIndex) SlotsOf(dst []int32, tps []wire.TopicPartition) []int32 {
	var c TopicCache
	for _, tp := range tps {
		s, ok := -1, false
		if x != nil {
			s, ok = x.Slot(tp, &c)
		}
		if !ok {
			s = -1
		}
		dst = append(dst, int32(s))
	}
	return dst
}

// SlotAt is slots[i], or -1 (no hint) past the end of slots (nil when a
// list came without its slots).
func SlotAt(slots []int32, i int) int32 {
	if i < len(slots) {
		return slots[i]
	}
	return -1
}

// Span is where a topic's partitions 0..n-1 lie in inputTPs, one after
// another from index at.
type Span struct{ At, N int }

// topicSpans finds an input topic's Span: by a scan of a short list when
// the world has a few input topics (the default world has two; a string
// compare, usually of different lengths, is cheaper than hashing the
// name), by the map when it has more.
type topicSpans struct {
	few []namedSpan
	m   map[string]Span
}

type namedSpan struct {
	name string
	s    Span
}

// fewTopics is the most input topics scanned rather than hashed.
const fewTopics = 8

func newTopicSpans(inputs []TopicSpec, m map[string]Span) topicSpans {
	if len(m) > fewTopics {
		return topicSpans{m: m}
	}
	t := topicSpans{few: make([]namedSpan, 0, len(m))}
	for _, in := range inputs {
		if s, ok := m[in.Name]; ok && !t.has(in.Name) {
			t.few = append(t.few, namedSpan{in.Name, s})
		}
	}
	return t
}

func (t topicSpans) has(topic string) bool {
	_, ok := t.get(topic)
	return ok
}

func (t topicSpans) get(topic string) (Span, bool) {
	if t.m != nil {
		s, ok := t.m[topic]
		return s, ok
	}
	for _, n := range t.few {
		if n.name == topic {
			return n.s, true
		}
	}
	return Span{}, false
}

// Index is partition p's index in inputTPs (ok false when the topic has no
// partition p).
func (s Span) Index(p int) (int, bool) { return s.At + p, p >= 0 && p < s.N }

// Len is the number of input partitions numbered.
func (x *InputIndex) Len() int { return len(x.tps) }

// At is the input partition numbered i.
func (x *InputIndex) At(i int) wire.TopicPartition { return x.tps[i] }
