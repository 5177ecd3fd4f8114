package javaorder

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Expected orders printed by OpenJDK 17's java.util.HashMap and HashSet (a
// throwaway Java program; the keys and operations are reproduced here).
// These facts were first checked for the classic sticky assignor.

func TestJavaStringHash(t *testing.T) {
	// "a".hashCode() = 97, "ab" = 97*31+98, "C1-1" and the overflowing "consumer1"
	// computed by Java; "é" is one UTF-16 unit, "😀" two.
	cases := map[string]int32{"": 0, "a": 97, "ab": 3105, "C1-1": 2044530, "consumer1": -421004549, "é": 233, "😀": 1772899}
	for s, want := range cases {
		if got := StringHash(s); got != want {
			t.Errorf("StringHash(%q) = %d, want %d", s, got, want)
		}
	}
	if got := TopicPartitionHash("orders", 3); got != 31*(31+3)+StringHash("orders") {
		t.Errorf("TopicPartitionHash = %d", got)
	}
}

func stringOrder(keys []string) []string {
	hs := make([]int32, len(keys))
	for i, k := range keys {
		hs[i] = StringHash(k)
	}
	order, _ := Indices(hs, func(i, j int) int { return StringCompare(keys[i], keys[j]) }, 16)
	var out []string
	for _, i := range order {
		out = append(out, keys[i])
	}
	return out
}

func TestJavaHashMapOrder(t *testing.T) {
	cases := []struct{ put, want string }{
		{"C1-1 C2-1 C3-1 C4-1", "C4-1 C3-1 C2-1 C1-1"},
		{"consumer1 consumer2 consumer3", "consumer3 consumer2 consumer1"},
		// 15 keys: the table doubles to 32 at the 13th.
		{"C4-1 C3-1 C2-1 C1-1 C10-1 C11-1 C12-1 C13-1 C5-1 C6-1 C7-1 C8-1 C9-1 C14-1 C20-2",
			"C11-1 C10-1 C20-2 C9-1 C8-1 C7-1 C6-1 C5-1 C4-1 C3-1 C2-1 C1-1 C14-1 C13-1 C12-1"},
		// 40 keys in a scrambled order: table 64, insertion order within buckets.
		{"C5-3 C28-2 C9-1 C26-3 C34-2 C8-3 C22-2 C21-1 C32-3 C11-3 C14-3 C33-1 C6-1 C4-2 C15-1 C27-1 C18-1 C31-2 C20-3 C40-2 C7-2 C16-2 C12-1 C10-2 C36-1 C38-3 C17-3 C25-2 C13-2 C1-2 C24-1 C23-3 C30-1 C19-2 C35-3 C29-3 C3-1 C2-3 C39-1 C37-2",
			"C32-3 C10-2 C34-2 C36-1 C35-3 C37-2 C39-1 C38-3 C17-3 C18-1 C16-2 C14-3 C15-1 C30-1 C13-2 C11-3 C31-2 C33-1 C12-1 C19-2 C20-3 C21-1 C8-3 C9-1 C7-2 C5-3 C6-1 C28-2 C4-2 C26-3 C2-3 C27-1 C3-1 C40-2 C25-2 C1-2 C23-3 C24-1 C22-2 C29-3"},
	}
	for _, c := range cases {
		if got := strings.Join(stringOrder(strings.Fields(c.put)), " "); got != c.want {
			t.Errorf("put %s\n got %s\nwant %s", c.put, got, c.want)
		}
	}
	// Integer keys (hashCode = value): ten in bucket 0 make the table grow
	// 16 -> 32 -> 64 without reaching the load factor; 1<<20 spreads to bucket 16.
	keys := []int32{0, 64, 128, 192, 256, 320, 384, 448, 512, 576, 3, 1 << 20}
	var got []int32
	for _, i := range int32Order(keys) {
		got = append(got, keys[i])
	}
	if want := []int32{0, 64, 128, 192, 256, 320, 384, 448, 512, 576, 3, 1 << 20}; !slices.Equal(got, want) {
		t.Errorf("colliding Integer keys: got %v, want %v", got, want)
	}
	// Eight in bucket 0, then 3, then 1<<20, which also falls in bucket 0 of 16
	// buckets: the ninth in the bucket doubles the table and 1<<20 moves to 16.
	keys = []int32{0, 64, 128, 192, 256, 320, 384, 448, 3, 1 << 20}
	got = got[:0]
	for _, i := range int32Order(keys) {
		got = append(got, keys[i])
	}
	if want := []int32{0, 64, 128, 192, 256, 320, 384, 448, 3, 1 << 20}; !slices.Equal(got, want) {
		t.Errorf("eight colliding keys: got %v, want %v", got, want)
	}
}

// A HashSet<TopicPartition> of one topic under 300 random adds (+p) and
// removes (-p): iterator().next() after each step, and the final order.
func TestJavaHashSetTopicPartitions(t *testing.T) {
	ops := strings.Fields("+14 +30 -48 +9 +19 +45 +17 +21 -36 +46 -31 +25 +58 +17 +26 +38 -42 -32 -21 +33 +37 +32 +50 +8 +4 -39 +57 +9 +27 -30 +26 +55 -31 -55 +50 +5 -46 +10 +23 +20 +59 -4 +46 +38 +32 +0 +29 +59 +54 +27 +59 +56 +53 +1 +33 +13 -46 -9 +48 +57 -6 +43 -55 -46 +29 +28 +19 +48 +18 +24 +47 +38 +59 -1 +19 +19 +15 +54 -55 +0 +42 +31 -55 +4 +13 +8 -46 +45 -8 +48 +25 +22 +1 -9 -50 +1 +0 +20 -39 +19 +14 -15 +14 -57 +16 +14 +40 +51 +3 +17 +4 +4 -31 +18 +30 +55 +22 -44 -6 -17 +11 -13 +32 +6 -5 +57 -0 +43 -35 +41 +1 +42 +7 -40 -7 +7 +41 -50 -11 -22 +3 +41 -43 +24 +16 +38 +8 +53 -31 +22 +37 +49 +55 +35 +31 +33 +17 +18 +52 +49 +27 -44 +50 +21 +21 +47 -19 +49 +47 -15 +44 -54 +32 +55 +32 -8 +26 +3 -52 +36 +21 +14 +58 +33 -3 +7 +27 +36 +6 -41 +47 +10 -43 -4 +25 -35 +19 -3 +26 +6 +22 -2 -36 +5 -29 -15 -40 +59 +33 +59 +51 -25 -43 -39 +30 +4 +28 -32 +39 +11 +20 -17 +25 +51 +56 +6 +8 +44 +34 +17 +51 +15 +33 +50 -55 -59 +19 +56 +19 -46 +32 +51 +52 +19 +43 +34 +8 +10 +25 -16 -9 -34 +26 +20 +1 +35 +26 +50 -44 -6 +9 +57 +39 +3 +13 +20 +17 -2 +6 +51 -45 +24 +20 +26 +4 +32 +26 +46 +50 -21 -51 -25 +18 +12 +1 +39 +12 +4 -16 +59 +44 -50 +17 -58 +9 -23 -21 +4 -57 +23")
	firsts := strings.Fields("14 14 14 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 8 41 41 41 41 41 41 41 41 41 41 41 41 41 41 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39")
	final := "39 8 10 43 12 14 47 49 18 20 53 22 24 26 59 28 30 32 1 3 5 38 7 9 42 11 44 13 46 15 48 17 19 52 23 56 27 31 33 35 4 37 6"
	s := NewMap[int32](DefaultCapacity, nil) // TopicPartition is not Comparable
	for i, op := range ops {
		p, err := strconv.Atoi(op[1:])
		if err != nil {
			t.Fatal(err)
		}
		if op[0] == '-' {
			s.Remove(int32(p), TopicPartitionHash("orders", p))
		} else {
			s.Put(int32(p), TopicPartitionHash("orders", p))
		}
		if first, _ := s.First(); strconv.Itoa(int(first)) != firsts[i] {
			t.Fatalf("after %v: first = %d, Java %s", ops[:i+1], first, firsts[i])
		}
	}
	var got []string
	for _, k := range s.Keys() {
		got = append(got, strconv.Itoa(int(k)))
	}
	if strings.Join(got, " ") != final || !s.Exact() {
		t.Errorf("final order\n got %s\nwant %s", strings.Join(got, " "), final)
	}
}

// Indices (the fast path for maps filled once) and Map (puts and removes)
// model the same table; they agree on random keys, many of them crowding a
// few buckets so that small tables grow early (and larger ones build tree
// bins).
func TestJavaHashOrderAgreesWithSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		k := r.IntN(200)
		hashes := make([]int32, k)
		for j := range hashes {
			if i%2 == 0 {
				hashes[j] = int32(r.IntN(8) * 1024) // few buckets
			} else {
				hashes[j] = int32(r.Uint32())
			}
		}
		s := NewMap[int](16, cmp.Compare[int])
		for j, h := range hashes {
			s.Put(j, h)
		}
		got, ok := Indices(hashes, cmp.Compare[int], 16)
		if want := s.Keys(); !slices.Equal(got, want) || ok != s.Exact() {
			t.Fatalf("case %d: Indices %v (ok %v), Map %v (ok %v)", i, got, ok, want, s.Exact())
		}
	}
}

// int32Order is the iteration order of new HashMap<>() with Integer keys
// put in index order.
func int32Order(keys []int32) []int {
	order, _ := Indices(keys, func(i, j int) int { return cmp.Compare(keys[i], keys[j]) }, DefaultCapacity)
	return order
}
