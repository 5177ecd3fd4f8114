package client

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestFetchPositionList: the ordered position lists of the auto-commit
// and of commitSync are what sorting the fetchPositions and
// processedPositions maps gives, whether Owned is sorted, unsorted,
// repeats a partition, or has partitions not yet positioned (also between
// two that are out of order), without a processed offset, or not of the
// world; with and without the world's numbering. Their slots, when given,
// are the partitions' own.
func TestFetchPositionList(t *testing.T) {
	tp := func(topic string, p int) wire.TopicPartition { return wire.TopicPartition{Topic: topic, Partition: p} }
	layout := topo.New(topo.Topology{Group: "g", Inputs: []topo.TopicSpec{{Name: "b", Partitions: 3}, {Name: "a", Partitions: 2}}, Output: topo.TopicSpec{Name: "out", Partitions: 1}})
	for _, idx := range []*topo.InputIndex{nil, layout.Input()} {
		for _, owned := range [][]wire.TopicPartition{
			nil,
			{tp("a", 0), tp("a", 1), tp("b", 0)},
			{tp("a", 1), tp("b", 0), tp("b", 2)},
			{tp("b", 0), tp("a", 1), tp("a", 0)},
			{tp("a", 1), tp("a", 1), tp("a", 0)},
			{tp("a", 1), tp("x", 9), tp("b", 2)},
			{tp("a", 1), tp("b", 2), tp("x", 9)},
			{tp("b", 0), tp("a", 0), tp("a", 1)}, // a-0 not positioned: b-0 and a-1 are listed out of order
			{tp("b", 1), tp("b", 2)},             // b-1 positioned, not processed
		} {
			m := &Member{subscription: subscription{Owned: owned}}
			if idx != nil {
				m.useIndex(idx)
			}
			for _, e := range []struct {
				tp wire.TopicPartition
				v  int
			}{{tp("a", 1), 7}, {tp("b", 0), 1}, {tp("b", 1), 2}, {tp("b", 2), 3}, {tp("x", 9), 5}} {
				m.Hooks().SetPosition(e.tp, e.v)
				if e.tp != tp("b", 1) {
					m.Hooks().SetProcessed(e.tp, e.v+10)
				}
			}
			m.positions.delAll([]wire.TopicPartition{tp("x", 9)})
			for _, c := range []struct {
				name string
				got  commitList
				want map[wire.TopicPartition]int
			}{{"fetch", m.fetchPositionList([]int{99, 98}), m.fetchPositions()}, {"processed", m.processedPositionList(), m.processedPositions()}} {
				want := listOf(c.want)
				if !slices.Equal(c.got.tps, want.tps) || !slices.Equal(c.got.offs, want.offs) {
					t.Fatalf("Owned %v, %s: got %v %v, want %v %v", owned, c.name, c.got.tps, c.got.offs, want.tps, want.offs)
				}
				for i, tp := range c.got.tps {
					if s := topo.SlotAt(c.got.slots, i); s >= 0 && (idx == nil || idx.At(int(s)) != tp) {
						t.Fatalf("Owned %v, %s: slot %d of %v is not its own", owned, c.name, s, tp)
					}
				}
			}
			if m.Hooks().AnyPositioned() != (len(m.fetchPositions()) > 0) {
				t.Fatalf("Owned %v: anyPositioned %v", owned, m.Hooks().AnyPositioned())
			}
		}
	}
}

// TestPositionListLeavesOutMissing: positionList lists the owned
// partitions that have a value, in partition order, with their values,
// whether every owned partition has one (Owned itself is the list) or
// some do not (the ones listed gathered in its one walk): the same list
// as the map of positions sorted, and the processed positions likewise.
func TestPositionListLeavesOutMissing(t *testing.T) {
	// C1's partitions, all positioned and processed, as after a while of
	// consuming the default world
	layout := topo.New(topo.Default())
	m := &Member{subscription: subscription{Owned: layout.Inputs()}}
	m.useIndex(layout.Input())
	for i, tp := range m.Owned {
		m.positions.set(tp, 10+i)
		m.processed.set(tp, 8+i)
	}
	check := func(what string) {
		t.Helper()
		for _, c := range []struct {
			name string
			got  commitList
			want map[wire.TopicPartition]int
		}{{"positions", m.positionList(&m.positions, nil), m.fetchPositions()}, {"processed", m.positionList(&m.processed, nil), m.processedPositions()}} {
			want := listOf(c.want)
			if !slices.Equal(c.got.tps, want.tps) || !slices.Equal(c.got.offs, want.offs) {
				t.Fatalf("%s: %s list %v %v, want %v %v", what, c.name, c.got.tps, c.got.offs, want.tps, want.offs)
			}
		}
	}
	check("all positioned")
	for _, i := range []int{1, 0, len(m.Owned) - 1} { // one missing in the middle, then first and last too
		m.positions.delAll([]wire.TopicPartition{m.Owned[i]})
		check(fmt.Sprint("without ", m.Owned[i]))
	}
}

// TestPropertyOwnsSlotAsOwns: ownsSlot, with its cursor carried along a
// list (as onFetchResponse carries it along a Fetch's answer), answers as
// owns for every partition, whatever the list's order (sorted, shuffled,
// repeating partitions), Owned's (sorted, or not, so its slots do not
// ascend, or with a partition the world does not number) and the slots
// given (the partition's, -1).
func TestPropertyOwnsSlotAsOwns(t *testing.T) {
	layout := topo.New(topo.Topology{Group: "g", Inputs: []topo.TopicSpec{{Name: "b", Partitions: 6}, {Name: "a", Partitions: 5}}, Output: topo.TopicSpec{Name: "out", Partitions: 1}})
	x := layout.Input()
	all := append(slices.Clone(layout.Inputs()), wire.TopicPartition{Topic: "x", Partition: 1})
	r := rand.New(rand.NewSource(7))
	for round := 0; round < 400; round++ {
		var owned []wire.TopicPartition
		for _, tp := range all {
			if r.Intn(2) == 0 {
				owned = append(owned, tp)
			}
		}
		if r.Intn(3) == 0 {
			r.Shuffle(len(owned), func(i, j int) { owned[i], owned[j] = owned[j], owned[i] })
		}
		m := &Member{subscription: subscription{Owned: owned}}
		m.useIndex(x)
		var list []wire.TopicPartition
		for _, tp := range all {
			for k := r.Intn(3); k > 0; k-- {
				list = append(list, tp)
			}
		}
		if r.Intn(2) == 0 {
			r.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		}
		at := 0
		for _, tp := range list {
			k := int32(-1)
			if r.Intn(4) > 0 {
				if s, ok := x.Slot(tp, nil); ok {
					k = int32(s)
				}
			}
			if got, want := m.ownsSlot(tp, k, &at), m.owns(tp); got != want {
				t.Fatalf("round %d: Owned %v: ownsSlot(%v, %d) = %v, owns %v", round, owned, tp, k, got, want)
			}
		}
	}
}
