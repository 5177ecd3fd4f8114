package coord

import (
	"fmt"
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
	layout := topo.New(bigTopology(1, 3, 4)) // t0-0 .. t2-3
	known := layout.Inputs()
	unknown := []wire.TopicPartition{{Topic: "t0", Partition: 9}, {Topic: "zz", Partition: 0}, {Topic: "a", Partition: 1}}
	pick := func(r *rand.Rand) wire.TopicPartition {
		if r.Intn(5) == 0 {
			return unknown[r.Intn(len(unknown))]
		}
		return known[r.Intn(len(known))]
	}
	for seed := int64(0); seed < 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		tab := offsetTable{index: *layout.Input()}
		ref := map[wire.TopicPartition]committedOffset{}
		for op := 0; op < 200; op++ {
			c := committedOffset{Offset: r.Intn(100), MemberID: "C1-1", PID: int64(r.Intn(3)) - 1, Tick: int32(op), Generation: int32(seed)}
			if r.Intn(3) == 0 {
				tp := pick(r)
				tab.set(tp, c)
				ref[tp] = c
			} else {
				var tps []wire.TopicPartition
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
		var order []wire.TopicPartition
		for tp, c := range tab.all {
			c.has = false
			if c != ref[tp] {
				t.Fatalf("seed %d: all gives %v %+v, map %+v", seed, tp, c, ref[tp])
			}
			order = append(order, tp)
		}
		var want []wire.TopicPartition
		for _, tp := range known {
			if _, ok := ref[tp]; ok {
				want = append(want, tp)
			}
		}
		var rest []wire.TopicPartition
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

// randomHints is a slot list for tps as a commit might carry it: nil, or
// each entry the partition's slot, another partition's, -1, or past the
// end. Whatever the hints, the answers must be the same.
func randomHints(r *rand.Rand, x *topo.InputIndex, tps []wire.TopicPartition) []int32 {
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

// bigTopology is members members over topics input topics t0.. of parts
// partitions each, and an output topic of 4.
func bigTopology(members, topics, parts int) topo.Topology {
	t := topo.Topology{Group: "g", Output: topo.TopicSpec{Name: "out", Partitions: 4}, Members: members}
	for i := 0; i < topics; i++ {
		t.Inputs = append(t.Inputs, topo.TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: parts})
	}
	return t
}
