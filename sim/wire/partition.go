package wire

import (
	"slices"
	"strconv"
	"strings"
)

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int
}

// String gives Kafka's spelling, e.g. "orders-2".
func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(tp.Partition) }

// Less orders partitions by topic name, then partition number: the order in
// which the seed names them (o0 o1 o2 p0 p1 p2).
func (tp TopicPartition) Less(o TopicPartition) bool {
	if tp.Topic != o.Topic {
		return tp.Topic < o.Topic
	}
	return tp.Partition < o.Partition
}

// ComparePartitions orders partitions by (topic, partition), a total order.
func ComparePartitions(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return a.Partition - b.Partition
}

// SortPartitions sorts in place by (topic, partition). The order is total,
// so the result does not depend on the sort; slices.SortFunc, unlike
// sort.Slice, allocates nothing.
func SortPartitions(ps []TopicPartition) { slices.SortFunc(ps, ComparePartitions) }
