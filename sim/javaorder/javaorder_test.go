package javaorder

import (
	"cmp"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// The expected values in this file are what OpenJDK 17 printed for the
// same operations (java.util.HashMap/HashSet, String.hashCode, Kafka's
// TopicPartition from the mirrored sources), by throwaway Java programs;
// the keys and operations are reproduced here.

func TestStringHashAsJava(t *testing.T) {
	if h := StringHash("C1-1"); h != 2044530 {
		t.Errorf(`StringHash("C1-1") = %d; Java: 2044530`, h)
	}
	// é is one UTF-16 unit, 𝄞 (U+1D11E) a surrogate pair.
	if h := StringHash("héllo𝄞"); h != 291563960 {
		t.Errorf(`StringHash("héllo𝄞") = %d; Java: 291563960`, h)
	}
}

func ints(xs []int) string { return strings.Trim(fmt.Sprint(xs), "[]") }

func TestOrderAsJavaHashMap(t *testing.T) {
	// new HashMap<>() with "C1-1" .. "C20-1" put in order: one resize (at 13).
	var ids []string
	for i := 1; i <= 20; i++ {
		ids = append(ids, fmt.Sprintf("C%d-1", i))
	}
	got, ok := Order(ids, StringHash, StringCompare, DefaultCapacity)
	if want := "C11-1 C10-1 C20-1 C9-1 C8-1 C7-1 C6-1 C19-1 C5-1 C18-1 C4-1 C17-1 C3-1 C16-1 C2-1 C15-1 C1-1 C14-1 C13-1 C12-1"; strings.Join(got, " ") != want || !ok {
		t.Errorf("member ids: got %v\nJava: %s", got, want)
	}

	// new HashSet<>(List.of(...)): 16 buckets, values past 65535 spread.
	l := []int{0, 16, 32, 5, 21, 1000, 65536, 70000, 3, 19}
	gotI, _ := Order(l, IntegerHash, cmp.Compare[int], CollectionCapacity(len(l)))
	if want := "0 16 32 65536 70000 3 19 5 21 1000"; ints(gotI) != want {
		t.Errorf("HashSet(list): got %v, Java: %s", gotI, want)
	}

	// Nine keys in one bucket of a 16-table: Java doubles the table instead of
	// building a tree, so 33 lands after 1 and 17 in its own bucket.
	var keys []int
	for i := 1; i <= 9; i++ {
		keys = append(keys, i*32)
	}
	keys = append(keys, 1, 33, 17, 2, 50)
	gotI, ok = Order(keys, IntegerHash, cmp.Compare[int], DefaultCapacity)
	if want := "32 64 96 128 160 192 224 256 288 1 33 2 17 50"; ints(gotI) != want || !ok {
		t.Errorf("collisions: got %v (ok %v), Java: %s", gotI, ok, want)
	}

	// Removals keep the table; later puts go to their buckets' ends.
	m := NewMap[int](DefaultCapacity, cmp.Compare[int])
	for i := 0; i < 40; i++ {
		k := (i * 7919) % 1000
		m.Put(k, IntegerHash(k))
	}
	m.Remove(919, 919)
	m.Remove(838, 838)
	for i := 0; i < 5; i++ {
		m.Put(2000+i*64, IntegerHash(2000+i*64))
	}
	if want := "0 704 514 3 327 137 841 651 461 271 975 2000 2064 2128 2192 2256 785 595 84 408 218 922 28 732 542 352 866 676 165 489 299 109 813 623 433 947 757 246 56 570 380 190 894"; ints(m.Keys()) != want {
		t.Errorf("after removals: got %v\nJava: %s", m.Keys(), want)
	}

	// new HashMap<>(3): a 4-bucket table, threshold 3, then 8 and 16.
	got, _ = Order([]string{"orders", "payments", "invoices", "Aa", "BB", "clicks"}, StringHash, StringCompare, 3)
	if want := "Aa BB clicks orders invoices payments"; strings.Join(got, " ") != want {
		t.Errorf("small initial capacity: got %v, Java: %s", got, want)
	}
}

func TestOrderFollowsTreeBins(t *testing.T) {
	seq := func(from, to, step int) []int {
		var out []int
		for k := from; k <= to; k += step {
			out = append(out, k)
		}
		return out
	}
	// 1..50, then nine keys in bucket 0 of a 128-bucket table: Java builds a
	// red-black tree there and moves its root (4096) to the front.
	keys := append(seq(1, 50, 1), seq(1024, 9216, 1024)...)
	got, ok := Order(keys, IntegerHash, cmp.Compare[int], DefaultCapacity)
	if want := "4096 1024 2048 3072 5120 6144 7168 8192 9216 " + ints(seq(1, 50, 1)); ints(got) != want || !ok {
		t.Errorf("tree bin: got %v (ok %v)\nJava: %s", got, ok, want)
	}

	// Sixteen keys in bucket 0 (128·k), then growth to 256 buckets splits
	// the tree into two trees of eight; each is built again from its list.
	keys = append(append(seq(1, 50, 1), seq(128, 2048, 128)...), seq(51, 120, 1)...)
	got, ok = Order(keys, IntegerHash, cmp.Compare[int], DefaultCapacity)
	if want := "1024 512 256 768 1280 1536 1792 2048 " + ints(seq(1, 120, 1)) + " 896 128 384 640 1152 1408 1664 1920"; ints(got) != want || !ok {
		t.Errorf("split tree bins: got %v (ok %v)\nJava: %s", got, ok, want)
	}

	// Strings of equal hash codes ("Aa" and "BB" hash alike) fill one
	// bucket: inside the tree Java orders them by compareTo.
	var names []string
	for i := 0; i < 50; i++ {
		names = append(names, fmt.Sprintf("k%d", i))
	}
	names = append(names, "AaAaAaAa", "AaAaAaBB", "AaAaBBAa", "AaAaBBBB", "AaBBAaAa", "AaBBAaBB", "AaBBBBAa", "AaBBBBBB", "BBAaAaAa", "BBAaAaBB", "BBAaBBAa")
	gotS, ok := Order(names, StringHash, StringCompare, DefaultCapacity)
	if want := "k31 k30 k33 k32 k35 k34 k37 k36 k39 k38 k0 k1 k40 k2 k3 k42 k4 k41 k5 k44 k6 k43 k7 k46 k8 k45 k9 k48 k47 k49 AaAaBBBB AaAaAaAa AaAaAaBB AaAaBBAa AaBBAaAa AaBBAaBB AaBBBBAa AaBBBBBB BBAaAaAa BBAaAaBB BBAaBBAa k11 k10 k13 k12 k15 k14 k17 k16 k19 k18 k20 k22 k21 k24 k23 k26 k25 k28 k27 k29"; strings.Join(gotS, " ") != want || !ok {
		t.Errorf("equal hash codes: got %v (ok %v)\nJava: %s", gotS, ok, want)
	}

	// Removing a key from a tree bin is not modelled: the map says so.
	m := NewMap[int](DefaultCapacity, cmp.Compare[int])
	for _, k := range append(seq(1, 50, 1), seq(1024, 9216, 1024)...) {
		m.Put(k, IntegerHash(k))
	}
	m.Remove(3072, IntegerHash(3072))
	if m.Exact() || len(m.Keys()) != 58 {
		t.Errorf("removal from a tree bin: inexact %v, %d keys", !m.Exact(), len(m.Keys()))
	}
}

func TestOrderMatchesBucketModel(t *testing.T) {
	// Order's replay of the table's growth against the bucket-by-bucket
	// model, on random key sets: small and large, sparse and crowded (keys
	// that share low bits, so that buckets of small tables fill up and make
	// Java resize, and buckets of large ones become tree bins).
	r := rand.New(rand.NewSource(16))
	for i := 0; i < 3000; i++ {
		n := 1 + r.Intn(200)
		stride := []int{1, 16, 32, 64, 1024, 65536}[r.Intn(6)]
		keys := make([]int, n)
		for j := range keys {
			keys[j] = r.Intn(n*2) * stride
			if r.Intn(4) == 0 {
				keys[j] = r.Intn(1 << 30)
			}
		}
		capacity := []int{DefaultCapacity, 0, 1, 3, CollectionCapacity(n), n}[r.Intn(6)]
		got, ok := Order(keys, IntegerHash, cmp.Compare[int], capacity)
		m := NewMap[int](capacity, cmp.Compare[int])
		for _, k := range keys {
			m.Put(k, IntegerHash(k))
		}
		if ok != m.Exact() || (ok && ints(got) != ints(m.Keys())) {
			t.Fatalf("keys %v capacity %d:\nOrder %v (ok %v)\nmodel %v (ok %v)", keys, capacity, got, ok, m.Keys(), m.Exact())
		}
	}
}

func TestFlatMapAgreesWithTable(t *testing.T) {
	// A map keeps up to flatMax keys in insertion order rather than in its
	// table; under random puts and removals (and the move to the table
	// when it outgrows flatMax) it must behave as a map that used its table
	// from the start.
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		capacity := []int{DefaultCapacity, 0, 1, 3, 16}[r.Intn(5)]
		stride := []int{1, 16, 1024}[i%3]
		flat, table := NewMap[int](capacity, cmp.Compare[int]), NewMap[int](capacity, cmp.Compare[int])
		table.toTable()
		var ops []string
		for op := 0; op < 30; op++ {
			k := r.Intn(12) * stride
			if r.Intn(3) == 0 {
				ops = append(ops, fmt.Sprint("-", k))
				flat.Remove(k, IntegerHash(k))
				table.Remove(k, IntegerHash(k))
			} else {
				ops = append(ops, fmt.Sprint("+", k))
				flat.Put(k, IntegerHash(k))
				table.Put(k, IntegerHash(k))
			}
			f1, ok1 := flat.First()
			f2, ok2 := table.First()
			if ints(flat.Keys()) != ints(table.Keys()) || f1 != f2 || ok1 != ok2 || flat.Len() != table.Len() {
				t.Fatalf("capacity %d after %v:\nflat  %v first %d %v len %d\ntable %v first %d %v len %d",
					capacity, ops, flat.Keys(), f1, ok1, flat.Len(), table.Keys(), f2, ok2, table.Len())
			}
		}
	}
}
