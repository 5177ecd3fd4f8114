package coord

import (
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// offsetTable is the group's offsets cache (OffsetMetadataManager.offsets):
// each partition's latest committed offset. The world's input partitions
// (all that members consume) have a slot each, in World.inputTPs order, so
// that a commit of thousands of partitions writes in place instead of
// hashing each one, and a clone copies one array instead of rebuilding a
// map. Any other partition (a test's group without a world) is kept in a
// map. The zero table keeps everything in the map.
type offsetTable struct {
	index topo.InputIndex
	slots []committedOffset
	n     int // slots in use
	other map[wire.TopicPartition]committedOffset
	// version counts the writes to slots, so an observer (the world's
	// time lag) can tell in one comparison whether any input partition's
	// committed offset may have changed since it last looked.
	version uint64
	// journal: touched lists the slots written since the observer last
	// took them (TakeTouched), so that one that follows every partition
	// (the world's most lag under steady production) reads only those.
	// Off until asked for (JournalSlots): nobody would take them.
	journal bool
	touched []int32
}

func (t *offsetTable) get(tp wire.TopicPartition) (committedOffset, bool) {
	if i, ok := t.index.Slot(tp, nil); ok {
		if i < len(t.slots) && t.slots[i].has {
			return t.slots[i], true
		}
		return committedOffset{}, false
	}
	c, ok := t.other[tp]
	return c, ok
}

// getCached is get with tc holding the span of the topic looked up last
// (a list's partitions come topic by topic: one lookup a topic).
func (t *offsetTable) getCached(tp wire.TopicPartition, tc *topo.TopicCache) (committedOffset, bool) {
	if i, ok := t.index.Slot(tp, tc); ok {
		return t.atSlot(i)
	}
	c, ok := t.other[tp]
	return c, ok
}

// atSlot is get of the input partition in slot i.
func (t *offsetTable) atSlot(i int) (committedOffset, bool) {
	if i < len(t.slots) && t.slots[i].has {
		return t.slots[i], true
	}
	return committedOffset{}, false
}

func (t *offsetTable) set(tp wire.TopicPartition, c committedOffset) {
	if i, ok := t.index.Slot(tp, nil); ok {
		t.setSlot(i, c)
		return
	}
	if t.other == nil {
		t.other = map[wire.TopicPartition]committedOffset{}
	}
	t.other[tp] = c
}

func (t *offsetTable) setSlot(i int, c committedOffset) {
	if t.slots == nil {
		t.slots = make([]committedOffset, t.index.Len())
	}
	if !t.slots[i].has {
		t.n++
	}
	c.has = true
	t.slots[i] = c
	t.version++
	if t.journal {
		t.touched = append(t.touched, int32(i))
	}
}

// setCommit records one OffsetCommit: tps[i] at offs[i], the rest as c.
// slots[i], when given, is tps[i]'s slot as the member knew it (checked);
// otherwise its partitions come in (topic, partition) order, so each topic
// is looked up once per run of its partitions.
func (t *offsetTable) setCommit(tps []wire.TopicPartition, slots []int32, offs []int, c committedOffset) {
	var tc topo.TopicCache
	for i, tp := range tps {
		c.Offset = offs[i]
		if s, ok := t.index.SlotCached(tp, topo.SlotAt(slots, i), &tc); ok {
			t.setSlot(s, c)
		} else {
			t.set(tp, c)
		}
	}
}

// len is the number of partitions with a committed offset.
func (t *offsetTable) len() int { return t.n + len(t.other) }

// all ranges over the committed partitions: the world's input partitions
// in their order, then any other in (topic, partition) order.
func (t *offsetTable) all(yield func(wire.TopicPartition, committedOffset) bool) {
	for i := range t.slots {
		if t.slots[i].has && !yield(t.index.At(i), t.slots[i]) {
			return
		}
	}
	if len(t.other) == 0 {
		return
	}
	ks := make([]wire.TopicPartition, 0, len(t.other))
	for tp := range t.other {
		ks = append(ks, tp)
	}
	wire.SortPartitions(ks)
	for _, tp := range ks {
		if !yield(tp, t.other[tp]) {
			return
		}
	}
}

func (t *offsetTable) clone() offsetTable {
	n := *t
	n.slots = store.Copy(t.slots)
	n.touched = store.Copy(t.touched)
	n.other = store.CopyMap(t.other)
	return n
}
