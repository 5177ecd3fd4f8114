package topo

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestFnvNameAsSpelled: the partitioner's hash of a record's name, taken
// without spelling it, is FNV-1a of the name as appendName spells it, for
// the default topics' short names and any others, at edge offsets too.
func TestFnvNameAsSpelled(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	offs := []int{0, 9, 10, 99, 100, 1<<31 - 1, 1 << 40, int(^uint(0) >> 1)}
	for _, short := range []bool{true, false} {
		n := Layout{short: short}
		for i := 0; i < 3000; i++ {
			tp := wire.TopicPartition{Topic: []string{"orders", "payments", "t0", "a-b"}[r.Intn(4)], Partition: r.Intn(1200)}
			off := r.Intn(1_000_000)
			if i < len(offs) {
				off = offs[i]
			}
			want := uint32(FNVBasis)
			for _, c := range n.AppendName(nil, tp, off) {
				want = (want ^ uint32(c)) * FNVPrime
			}
			if got := n.FNVName(FNVBasis, tp, off); got != want {
				t.Fatalf("short %v: fnvName(%v, %d) = %d, FNV of %q is %d", short, tp, off, got, n.AppendName(nil, tp, off), want)
			}
			// the partitioner, its partition hashed once, picks by the same hash
			n.outputTPs = make([]wire.TopicPartition, 1+r.Intn(40))
			n.outsM = reciprocal(uint32(len(n.outputTPs))) // as New sets it
			if got := n.Partitioner(tp).Slot(off); got != int(want%uint32(len(n.outputTPs))) {
				t.Fatalf("short %v: Partitioner(%v).Slot(%d) = %d, want %d of %d", short, tp, off, got, want%uint32(len(n.outputTPs)), len(n.outputTPs))
			}
		}
	}
}

// TestSlotsAsSlot: Slots gives each record of a run the output partition
// Slot gives it, across every digit boundary (9 to 10, 99 to 100, ...),
// for runs starting anywhere in a ten.
func TestSlotsAsSlot(t *testing.T) {
	l := New(Topology{Inputs: []TopicSpec{{Name: "orders", Partitions: 3}, {Name: "t", Partitions: 2}}, Output: TopicSpec{Name: "invoices", Partitions: 7}})
	r := rand.New(rand.NewSource(5))
	for _, tp := range l.Inputs() {
		p := l.Partitioner(tp)
		starts := []int{0, 1, 5, 9, 10, 95, 99, 100, 998, 999_990, 1<<31 - 20}
		for range 200 {
			starts = append(starts, r.Intn(1_000_000))
		}
		for _, first := range starts {
			out := make([]int32, 1+r.Intn(40))
			p.Slots(first, out)
			for i, got := range out {
				if want := p.Slot(first + i); int(got) != want {
					t.Fatalf("%s record %d: Slots %d, Slot %d", tp, first+i, got, want)
				}
			}
		}
	}
}

// TestPartitionerOf: the partitioner of an input partition found by its
// number is the one hashed from its name, whatever the number given (its
// own, another partition's, out of range, -1), as is InputPartitioner
// of its number, and the two agree record for record.
func TestPartitionerOf(t *testing.T) {
	for _, short := range []bool{true, false} {
		top := Topology{Inputs: []TopicSpec{{Name: "orders", Partitions: 3}, {Name: "payments", Partitions: 12}}, Output: TopicSpec{Name: "invoices", Partitions: 5}}
		if !short {
			top.Inputs = append(top.Inputs, TopicSpec{Name: "t", Partitions: 2})
		}
		l := New(top)
		n := int32(len(l.Inputs()))
		for i, tp := range l.Inputs() {
			want := l.Partitioner(tp)
			if got := l.InputPartitioner(int32(i)); got != want {
				t.Fatalf("short %v: InputPartitioner(%d) = %+v, Partitioner(%v) %+v", short, i, got, tp, want)
			}
			for _, k := range []int32{int32(i), (int32(i) + 1) % n, -1, n, n + 7} {
				got := l.PartitionerOf(tp, k)
				if got != want {
					t.Fatalf("short %v: PartitionerOf(%v, %d) = %+v, Partitioner %+v", short, tp, k, got, want)
				}
			}
			for off := 0; off < 150; off++ {
				if a, b := l.PartitionerOf(tp, int32(i)).Slot(off), want.Slot(off); a != b || a != int(l.FNVName(FNVBasis, tp, off)%5) {
					t.Fatalf("short %v: %v record %d: slots %d and %d", short, tp, off, a, b)
				}
			}
		}
	}
}

// TestSlotsFromAsSlot: SlotsFrom gives each record the output partition
// Slot gives it, with one Hundred carried from run to run whatever it last
// held: the partition's previous run (in the same hundred, the next one,
// or far away), another partition's run (same topic, other topic), a
// hundred 0 (offsets under 100, whose tens have no leading digits); for
// output partitions of any number and of a power of two (SlotsFrom's
// remainder by the hash's low bits, and its hundreds copied from the
// layout's slotPattern) and one.
func TestSlotsFromAsSlot(t *testing.T) {
	for _, outs := range []int{7, 4, 16, 1} {
		t.Run(fmt.Sprint(outs), func(t *testing.T) { slotsFromAsSlot(t, outs) })
	}
}

func slotsFromAsSlot(t *testing.T, outs int) {
	l := New(Topology{Inputs: []TopicSpec{{Name: "orders", Partitions: 12}, {Name: "t", Partitions: 3}}, Output: TopicSpec{Name: "invoices", Partitions: outs}})
	if has, want := l.pattern() != nil, outs&(outs-1) == 0; has != want {
		t.Fatalf("%d output partitions: a slot pattern %v, want %v", outs, has, want)
	}
	r := rand.New(rand.NewSource(11))
	var c Hundred
	next := make([]int, len(l.Inputs()))
	for i := range next {
		next[i] = r.Intn(150)
	}
	k := 0
	for range 20_000 {
		if r.Intn(2) == 0 { // else the same partition's next run
			k = r.Intn(len(l.Inputs()))
		}
		tp := l.Inputs()[k]
		p := l.PartitionerOf(tp, int32(k))
		first := next[k]
		switch r.Intn(10) {
		case 0:
			first = r.Intn(1_000_000)
		case 1:
			first = r.Intn(120)
		}
		out := make([]int32, 1+r.Intn(25))
		p.SlotsFrom(first, out, &c)
		for i, got := range out {
			if want := p.Slot(first + i); int(got) != want {
				t.Fatalf("%s records %d..: record %d: SlotsFrom %d, Slot %d", tp, first, first+i, got, want)
			}
		}
		next[k] = first + len(out)
	}
}

// TestModAsRemainder: the partitioner's remainder without a division is
// h % outs for every divisor a world may have (1, powers of two, primes,
// the largest) and hashes at the edges (0, the divisor's neighbours and
// multiples, the largest) and at random.
func TestModAsRemainder(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	divisors := []uint32{1, 2, 3, 4, 5, 7, 10, 16, 100, 1000, 65537, 1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<32 - 1}
	for range 50 {
		divisors = append(divisors, 1+uint32(r.Intn(10_000)), r.Uint32()|1)
	}
	for _, d := range divisors {
		p := Partitioner{outs: d, m: reciprocal(d)}
		hs := []uint32{0, 1, d - 1, d, d + 1, 2*d - 1, 2 * d, 1<<32 - 1, 1<<32 - 2, 1 << 31, 1<<31 - 1}
		for range 2000 {
			hs = append(hs, r.Uint32())
		}
		for _, h := range hs {
			if got, want := p.mod(h), h%d; got != want {
				t.Fatalf("mod(%d) by %d = %d, want %d", h, d, got, want)
			}
		}
	}
}

// TestNoneInAsSlot: NoneIn says that no record between two offsets goes to
// a slot exactly when Slot says so of each, with or without a hundred
// kept and a buffer too small; it says false past most records asked, and
// for one output partition whenever any record is between.
func TestNoneInAsSlot(t *testing.T) {
	l := New(Topology{Inputs: []TopicSpec{{Name: "orders", Partitions: 2}}, Output: TopicSpec{Name: "invoices", Partitions: 5}})
	r := rand.New(rand.NewSource(7))
	p := l.Partitioner(l.Inputs()[1])
	var c Hundred
	var buf []int32
	nones := 0
	for range 2000 {
		from := r.Intn(100_000)
		to := from + r.Intn(12)
		slot := r.Intn(5)
		want := true
		for off := from; off < to; off++ {
			want = want && p.Slot(off) != slot
		}
		if want && to > from {
			nones++
		}
		got, b := p.NoneIn(slot, 5, from, to, 8, buf, &c)
		buf = b
		if to-from > 8 {
			want = false
		}
		if fresh, _ := p.NoneIn(slot, 5, from, to, 8, nil, nil); got != want || fresh != want {
			t.Fatalf("records %d..%d, slot %d: NoneIn %v (fresh %v), want %v", from, to-1, slot, got, fresh, want)
		}
		if one, _ := p.NoneIn(0, 1, from, to, 8, nil, nil); one != (from == to) {
			t.Fatalf("one output partition, records %d..%d: NoneIn %v", from, to-1, one)
		}
	}
	if nones < 100 {
		t.Fatalf("only %d gaps with none of their slot: the test no longer covers a true answer", nones)
	}
}
