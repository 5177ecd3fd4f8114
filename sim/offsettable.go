package sim

// offsetTable is the group's offsets cache (OffsetMetadataManager.offsets):
// each partition's latest committed offset. The world's input partitions
// (all that members consume) have a slot each, in World.inputTPs order, so
// that a commit of thousands of partitions writes in place instead of
// hashing each one, and a clone copies one array instead of rebuilding a
// map. Any other partition (a test's group without a world) is kept in a
// map. The zero table keeps everything in the map.
type offsetTable struct {
	at    map[string]span  // the world's inputAt: read-only, shared by clones
	tps   []TopicPartition // the world's inputTPs: read-only, shared by clones
	slots []committedOffset
	n     int // slots in use
	other map[TopicPartition]committedOffset
}

func newOffsetTable(at map[string]span, tps []TopicPartition) offsetTable {
	return offsetTable{at: at, tps: tps}
}

// slot is tp's index in slots (false when tp has none).
func (t *offsetTable) slot(tp TopicPartition) (int, bool) {
	in, ok := t.at[tp.Topic]
	if !ok {
		return 0, false
	}
	return in.index(tp.Partition)
}

func (t *offsetTable) get(tp TopicPartition) (committedOffset, bool) {
	if i, ok := t.slot(tp); ok {
		if i < len(t.slots) && t.slots[i].has {
			return t.slots[i], true
		}
		return committedOffset{}, false
	}
	c, ok := t.other[tp]
	return c, ok
}

func (t *offsetTable) set(tp TopicPartition, c committedOffset) {
	if i, ok := t.slot(tp); ok {
		t.setSlot(i, c)
		return
	}
	if t.other == nil {
		t.other = map[TopicPartition]committedOffset{}
	}
	t.other[tp] = c
}

func (t *offsetTable) setSlot(i int, c committedOffset) {
	if t.slots == nil {
		t.slots = make([]committedOffset, len(t.tps))
	}
	if !t.slots[i].has {
		t.n++
	}
	c.has = true
	t.slots[i] = c
}

// setCommit records one OffsetCommit: tps[i] at offs[i], the rest as c.
// Its partitions come in (topic, partition) order, so each topic is looked
// up once per run of its partitions.
func (t *offsetTable) setCommit(tps []TopicPartition, offs []int, c committedOffset) {
	topic, in, known := "", span{}, false
	for i, tp := range tps {
		c.Offset = offs[i]
		if i == 0 || tp.Topic != topic {
			topic = tp.Topic
			in, known = t.at[topic]
		}
		if s, ok := in.index(tp.Partition); known && ok {
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
func (t *offsetTable) all(yield func(TopicPartition, committedOffset) bool) {
	for i := range t.slots {
		if t.slots[i].has && !yield(t.tps[i], t.slots[i]) {
			return
		}
	}
	if len(t.other) == 0 {
		return
	}
	ks := make([]TopicPartition, 0, len(t.other))
	for tp := range t.other {
		ks = append(ks, tp)
	}
	sortTPs(ks)
	for _, tp := range ks {
		if !yield(tp, t.other[tp]) {
			return
		}
	}
}

func (t *offsetTable) clone() offsetTable {
	n := *t
	n.slots = cp(t.slots)
	n.other = cpMap(t.other)
	return n
}
