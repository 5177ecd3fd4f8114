package topo

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestTpIndexIsTheInputSlot: Layout.Number numbers the input partitions
// by their place in Inputs, the sorted order (so it is topo.InputIndex.slot:
// one numbering for the trace's texts, logAt, the offset table, the
// offsets log and the cells), then the output topic's partitions; tpAt
// inverts it, and tpIndex says false for a partition the world does not
// have. (Until the numberings were unified it numbered the input topics in
// topology order; the trace's materialized texts did not change, as
// TestTraceMaterializedAsBefore checks.)
func TestTpIndexIsTheInputSlot(t *testing.T) {
	layout := New(Topology{Group: "g", Inputs: []TopicSpec{{Name: "zeta", Partitions: 3}, {Name: "alpha", Partitions: 2}, {Name: "mid", Partitions: 4}}, Output: TopicSpec{Name: "out", Partitions: 2}})
	tp := func(topic string, p int) wire.TopicPartition { return wire.TopicPartition{Topic: topic, Partition: p} }
	want := []wire.TopicPartition{tp("alpha", 0), tp("alpha", 1), tp("mid", 0), tp("mid", 1), tp("mid", 2), tp("mid", 3),
		tp("zeta", 0), tp("zeta", 1), tp("zeta", 2), tp("out", 0), tp("out", 1)}
	idx := layout.Input()
	for i, tp := range want {
		if got, ok := layout.Number(tp); !ok || got != i {
			t.Errorf("tpIndex(%v) = %d, %v; want %d", tp, got, ok, i)
		}
		if back, input, ok := layout.Numbered(uint64(i)); !ok || back != tp || input != (tp.Topic != "out") {
			t.Errorf("tpAt(%d) = %v, %v, %v; want %v", i, back, input, ok, tp)
		}
		if s, ok := idx.Slot(tp, nil); ok != (tp.Topic != "out") || ok && s != i {
			t.Errorf("slot(%v) = %d, %v; tpIndex says %d", tp, s, ok, i)
		}
	}
	if _, _, ok := layout.Numbered(uint64(len(want))); ok {
		t.Errorf("tpAt(%d) names a partition past the last", len(want))
	}
	for _, tp := range []wire.TopicPartition{{Topic: "zeta", Partition: 3}, {Topic: "alpha", Partition: -1}, {Topic: "out", Partition: 2}, {Topic: "nope", Partition: 0}} {
		if _, ok := layout.Number(tp); ok {
			t.Errorf("tpIndex(%v) says the world has it", tp)
		}
	}
}
