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

// Sorted reports whether tps is in (topic, partition) order.
func Sorted(tps []TopicPartition) bool {
	for i := 1; i < len(tps); i++ {
		if tps[i].Less(tps[i-1]) {
			return false
		}
	}
	return true
}

// SortedCopy is a sorted copy of tps (nil for nil).
func SortedCopy(tps []TopicPartition) []TopicPartition {
	if tps == nil {
		return nil
	}
	out := append(make([]TopicPartition, 0, len(tps)), tps...)
	SortPartitions(out)
	return out
}

// SortedView is SortedCopy for reading only: tps itself when it is sorted
// already (the usual case), so the checks run every tick allocate nothing.
func SortedView(tps []TopicPartition) []TopicPartition {
	if !Sorted(tps) {
		return SortedCopy(tps)
	}
	return tps
}

// ContainsPartition reports whether tp is in tps.
func ContainsPartition(tps []TopicPartition, tp TopicPartition) bool {
	for _, t := range tps {
		if t == tp {
			return true
		}
	}
	return false
}

// OrDash is s, or "-" for the empty string: Kafka's tools print a missing
// value so.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ClientOf turns a member id C2-3 into its client id C2.
func ClientOf(memberID string) string {
	if i := strings.LastIndexByte(memberID, '-'); i > 0 {
		return memberID[:i]
	}
	return memberID
}
