package topo

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestTallyAsSlot: Tally's shares of a run, put together as the producer
// puts them (each output partition's first record, last record and count
// over the run, the partitions in the order of their first records), are
// what Slot says of each record, for runs within a hundred and across
// several, with one Hundred carried from run to run as SlotsFrom's; it
// declines runs that start in hundred 0 and output partitions it keeps no
// tables for (7, 16), and keeps them for 1, 2, 4 and 8.
func TestTallyAsSlot(t *testing.T) {
	for _, outs := range []int{4, 1, 2, 8, 7, 16} {
		t.Run(fmt.Sprint(outs), func(t *testing.T) { tallyAsSlot(t, outs) })
	}
}

type share struct{ first, last, count int }

func tallyAsSlot(t *testing.T, outs int) {
	l := New(Topology{Inputs: []TopicSpec{{Name: "orders", Partitions: 12}, {Name: "t", Partitions: 3}}, Output: TopicSpec{Name: "invoices", Partitions: outs}})
	kept := outs&(outs-1) == 0 && outs <= maxTallyOuts
	r := rand.New(rand.NewSource(13))
	var c Hundred
	told := 0
	for range 20_000 {
		k := r.Intn(len(l.Inputs()))
		p := l.InputPartitioner(int32(k))
		first, count := r.Intn(1_000_000), 1+r.Intn(30)
		switch r.Intn(10) {
		case 0:
			count = 1 + r.Intn(400) // several hundreds
		case 1:
			first = r.Intn(130) // hundred 0 and 1
		case 2:
			first = 100*(1+r.Intn(9999)) - r.Intn(3) // at a hundred's edge
		}
		got := make([]share, outs)
		var order []int32
		ok := p.Tally(first, count, &c, func(out int32, f, last, n int) {
			s := &got[out]
			if s.count == 0 {
				s.first = f
				order = append(order, out)
			}
			s.last, s.count = last, s.count+n
		})
		if want := kept && first >= 100; ok != want {
			t.Fatalf("Tally(%d, %d) with %d output partitions: %v, want %v", first, count, outs, ok, want)
		}
		if !ok {
			if len(order) > 0 {
				t.Fatalf("Tally(%d, %d) declined and told %v", first, count, order)
			}
			continue
		}
		told++
		want := make([]share, outs)
		var wantOrder []int32
		for off := first; off < first+count; off++ {
			s := &want[p.Slot(off)]
			if s.count == 0 {
				s.first = off
				wantOrder = append(wantOrder, int32(p.Slot(off)))
			}
			s.last, s.count = off, s.count+1
		}
		if fmt.Sprint(order) != fmt.Sprint(wantOrder) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s records %d..%d: Tally %v %v, Slot %v %v", l.Inputs()[k], first, first+count-1, order, got, wantOrder, want)
		}
	}
	if kept && told == 0 {
		t.Fatal("no run tallied")
	}
}
