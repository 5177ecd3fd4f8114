package sim

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
