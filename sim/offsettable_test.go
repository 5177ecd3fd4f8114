package sim

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestOffsetTableMatchesMap: the group's offset table gives the same
// answers as the map[TopicPartition]committedOffset it replaced, for the
// world's input partitions (slots) and for others (its map), under random
// single sets and whole commits; all ranges in (topic, partition) order
// with the input partitions first; a clone is independent of its source.
func TestOffsetTableMatchesMap(t *testing.T) {
	w, _ := New(bigTopology(1, 3, 4), DefaultConfig()) // t0-0 .. t2-3
	known := w.layout.Inputs()
	unknown := []TopicPartition{{Topic: "t0", Partition: 9}, {Topic: "zz", Partition: 0}, {Topic: "a", Partition: 1}}
	pick := func(r *rand.Rand) TopicPartition {
		if r.Intn(5) == 0 {
			return unknown[r.Intn(len(unknown))]
		}
		return known[r.Intn(len(known))]
	}
	for seed := int64(0); seed < 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		tab := offsetTable{index: *w.layout.Input()}
		ref := map[TopicPartition]committedOffset{}
		for op := 0; op < 200; op++ {
			c := committedOffset{Offset: r.Intn(100), MemberID: "C1-1", PID: int64(r.Intn(3)) - 1, Tick: int32(op), Generation: int32(seed)}
			if r.Intn(3) == 0 {
				tp := pick(r)
				tab.set(tp, c)
				ref[tp] = c
			} else {
				var tps []TopicPartition
				for _, tp := range append(slices.Clone(known), unknown...) {
					if r.Intn(3) == 0 {
						tps = append(tps, tp)
					}
				}
				wire.SortPartitions(tps)
				offs := make([]int, len(tps))
				for i := range offs {
					offs[i] = r.Intn(1000)
				}
				tab.setCommit(tps, randomHints(r, &tab.index, tps), offs, c)
				for i, tp := range tps {
					c.Offset = offs[i]
					ref[tp] = c
				}
			}
			if op%50 == 49 {
				cl := tab.clone()
				cl.set(known[0], committedOffset{Offset: -7})
				if got, _ := tab.get(known[0]); got.Offset == -7 {
					t.Fatalf("seed %d: setting a clone changed its source", seed)
				}
			}
		}
		if tab.len() != len(ref) {
			t.Fatalf("seed %d: len %d, map %d", seed, tab.len(), len(ref))
		}
		for _, tp := range append(slices.Clone(known), unknown...) {
			got, ok := tab.get(tp)
			want, wok := ref[tp]
			got.has = false
			if ok != wok || got != want {
				t.Fatalf("seed %d: get(%v) = %+v %v, map %+v %v", seed, tp, got, ok, want, wok)
			}
		}
		var order []TopicPartition
		for tp, c := range tab.all {
			c.has = false
			if c != ref[tp] {
				t.Fatalf("seed %d: all gives %v %+v, map %+v", seed, tp, c, ref[tp])
			}
			order = append(order, tp)
		}
		var want []TopicPartition
		for _, tp := range known {
			if _, ok := ref[tp]; ok {
				want = append(want, tp)
			}
		}
		var rest []TopicPartition
		for tp := range ref {
			if _, ok := tab.index.Slot(tp, nil); !ok {
				rest = append(rest, tp)
			}
		}
		wire.SortPartitions(rest)
		if want = append(want, rest...); !slices.Equal(order, want) {
			t.Fatalf("seed %d: all in order %v, want %v", seed, order, want)
		}
	}
}

// TestTpIndexIsTheInputSlot: World.tpIndex numbers the input partitions
// by their place in inputTPs, the sorted order (so it is topo.InputIndex.slot:
// one numbering for the trace's texts, logAt, the offset table, the
// offsets log and the cells), then the output topic's partitions; tpAt
// inverts it, and tpIndex says false for a partition the world does not
// have. (Until the numberings were unified it numbered the input topics in
// topology order; the trace's materialized texts did not change, as
// TestTraceMaterializedAsBefore checks.)
func TestTpIndexIsTheInputSlot(t *testing.T) {
	topo := Topology{Group: "g", Inputs: []TopicSpec{{Name: "zeta", Partitions: 3}, {Name: "alpha", Partitions: 2}, {Name: "mid", Partitions: 4}}, Output: TopicSpec{Name: "out", Partitions: 2}}
	w, err := New(topo, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tp := func(topic string, p int) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }
	want := []TopicPartition{tp("alpha", 0), tp("alpha", 1), tp("mid", 0), tp("mid", 1), tp("mid", 2), tp("mid", 3),
		tp("zeta", 0), tp("zeta", 1), tp("zeta", 2), tp("out", 0), tp("out", 1)}
	idx := (*w.layout.Input())
	for i, tp := range want {
		if got, ok := w.layout.Number(tp); !ok || got != i {
			t.Errorf("tpIndex(%v) = %d, %v; want %d", tp, got, ok, i)
		}
		if back, input, ok := w.layout.Numbered(uint64(i)); !ok || back != tp || input != (tp.Topic != "out") {
			t.Errorf("tpAt(%d) = %v, %v, %v; want %v", i, back, input, ok, tp)
		}
		if s, ok := idx.Slot(tp, nil); ok != (tp.Topic != "out") || ok && s != i {
			t.Errorf("slot(%v) = %d, %v; tpIndex says %d", tp, s, ok, i)
		}
	}
	if _, _, ok := w.layout.Numbered(uint64(len(want))); ok {
		t.Errorf("tpAt(%d) names a partition past the last", len(want))
	}
	for _, tp := range []TopicPartition{{Topic: "zeta", Partition: 3}, {Topic: "alpha", Partition: -1}, {Topic: "out", Partition: 2}, {Topic: "nope", Partition: 0}} {
		if _, ok := w.layout.Number(tp); ok {
			t.Errorf("tpIndex(%v) says the world has it", tp)
		}
	}
}

// randomHints is a slot list for tps as a commit might carry it: nil, or
// each entry the partition's slot, another partition's, -1, or past the
// end. Whatever the hints, the answers must be the same.
func randomHints(r *rand.Rand, x *topo.InputIndex, tps []TopicPartition) []int32 {
	if r.Intn(4) == 0 {
		return nil
	}
	hints := x.SlotsOf(nil, tps)
	for i := range hints {
		switch r.Intn(5) {
		case 0:
			hints[i] = -1
		case 1:
			hints[i] = int32(r.Intn(x.Len() + 1))
		case 2:
			hints[i] = int32(x.Len() + r.Intn(3))
		}
	}
	return hints
}
