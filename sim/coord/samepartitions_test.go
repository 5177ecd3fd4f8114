package coord

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestSamePartitions: one list, or two holding the same partitions in
// any order, are the same; lists of one length that differ are not.
func TestSamePartitions(t *testing.T) {
	a := []wire.TopicPartition{{Topic: "in", Partition: 0}, {Topic: "in", Partition: 1}, {Topic: "x", Partition: 0}}
	b := []wire.TopicPartition{{Topic: "x", Partition: 0}, {Topic: "in", Partition: 0}, {Topic: "in", Partition: 1}}
	c := []wire.TopicPartition{{Topic: "in", Partition: 0}, {Topic: "in", Partition: 2}, {Topic: "x", Partition: 0}}
	for _, k := range []struct {
		a, b []wire.TopicPartition
		want bool
	}{{a, a, true}, {a, append([]wire.TopicPartition(nil), a...), true}, {a, b, true}, {nil, nil, true},
		{a, c, false}, {c, b, false}, {a[:2], a, false}, {a[1:], a[:2], false}} {
		if got := samePartitions(k.a, k.b); got != k.want {
			t.Errorf("samePartitions(%v, %v) = %v", k.a, k.b, got)
		}
	}
}
