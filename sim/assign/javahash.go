package assign

import (
	"cmp"
	"slices"
	"unicode/utf16"
)

// Java's hashed collections iterate in an order that is an accident of
// hashing but fully deterministic. Kafka's sticky assignor walks some of them
// (the member -> subscription map the leader builds, the sets of moved
// partitions), so to give Kafka's answers member by member we reproduce that
// order. These are facts of OpenJDK's java.util.HashMap (HashSet is a HashMap
// of keys), Java 8 and later:
//
//   - hash(key) = h ^ (h >>> 16), h = key.hashCode(); bucket = hash & (n-1)
//     with n the table size, a power of two.
//   - The table is allocated at the first put with the initial capacity
//     rounded up to a power of two (16 by default) and doubles whenever the
//     count passes 0.75 n. It never shrinks (removals leave n as it is).
//   - A new key goes to the tail of its bucket's list. A resize splits each
//     bucket into two, each keeping the relative order, so a bucket lists its
//     keys in insertion order (a key removed and put again counts as new).
//   - A put that makes a bucket longer than 8 (TREEIFY_THRESHOLD) doubles the
//     table instead while n < 64 (MIN_TREEIFY_CAPACITY); with n >= 64 the
//     bucket becomes a red-black tree whose iteration order is not insertion
//     order. We do not model tree bins: they need nine keys in one bucket of a
//     table of at least 64, which the groups this simulator builds do not
//     reach; in such a bucket we keep insertion order.
//   - Iteration visits buckets in ascending index, each list front to back.

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units, in 32-bit arithmetic.
func javaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			h = 0
			for _, u := range utf16.Encode([]rune(s)) {
				h = 31*h + int32(u)
			}
			return h
		}
		h = 31*h + int32(s[i])
	}
	return h
}

// javaTopicPartitionHash is org.apache.kafka.common.TopicPartition.hashCode:
// 31 * (31 + partition) + topic.hashCode().
func javaTopicPartitionHash(topic string, partition int) int32 {
	return 31*(31+int32(partition)) + javaStringHash(topic)
}

// javaSpread is HashMap.hash: h ^ (h >>> 16).
func javaSpread(h int32) uint32 {
	u := uint32(h)
	return u ^ u>>16
}

// javaTableSizeFor is HashMap.tableSizeFor: the smallest power of two >= c
// (at least 1).
func javaTableSizeFor(c int) int {
	n := 1
	for n < c {
		n <<= 1
	}
	return n
}

// javaHashOrder gives the iteration order of a java.util.HashMap (or HashSet)
// with the given initial capacity (16 for new HashMap<>()) into which keys
// with the given hashCode values were put in index order, none removed. It
// returns the indices in iteration order.
// Each key is a distinct entry (equal hash codes are not taken for equal
// keys). It takes O(k log k) for k keys.
func javaHashOrder(hashes []int32, capacity int) []int {
	n := javaTableSizeFor(max(capacity, 1))
	spread := make([]uint32, len(hashes))
	for i, h := range hashes {
		spread[i] = javaSpread(h)
	}
	bins := make([]int32, n) // keys per bucket at the current table size
	grow := func(count int) {
		n <<= 1
		bins = make([]int32, n)
		for _, h := range spread[:count] {
			bins[h&uint32(n-1)]++
		}
	}
	for i, h := range spread {
		b := h & uint32(n-1)
		bins[b]++
		if bins[b] > 8 && n < 64 { // treeifyBin on a small table resizes instead
			grow(i + 1)
		}
		if i+1 > n*3/4 {
			grow(i + 1)
		}
	}
	order := make([]int, len(hashes))
	for i := range order {
		order[i] = i
	}
	mask := uint32(n - 1)
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(spread[a]&mask, spread[b]&mask)
	})
	return order
}

// javaHashSet follows the iteration order of one java.util.HashSet (or a
// HashMap's key set) under puts and removals. Keys are small ints chosen by
// the caller, each with its Java hashCode. It is meant for small sets: each
// operation scans the set.
type javaHashSet struct {
	n    int // table size; 0 until the first put
	cap0 int // initial capacity
	seq  int // insertion counter
	keys []javaHashKey
}

type javaHashKey struct {
	key  int32
	hash uint32 // spread
	seq  int    // order of insertion
}

func (s *javaHashSet) init(capacity int) {
	*s = javaHashSet{cap0: max(capacity, 1)}
}

func (s *javaHashSet) len() int { return len(s.keys) }

func (s *javaHashSet) index(key int32) int {
	for i, k := range s.keys {
		if k.key == key {
			return i
		}
	}
	return -1
}

// add puts key (hashCode h) unless present, resizing as HashMap.putVal does.
func (s *javaHashSet) add(key int32, h int32) {
	if s.index(key) >= 0 {
		return
	}
	if s.n == 0 {
		s.n = javaTableSizeFor(s.cap0)
	}
	hash := javaSpread(h)
	bin := 0
	for _, k := range s.keys {
		if k.hash&uint32(s.n-1) == hash&uint32(s.n-1) {
			bin++
		}
	}
	s.seq++
	s.keys = append(s.keys, javaHashKey{key, hash, s.seq})
	if bin >= 8 && s.n < 64 { // treeifyBin on a small table resizes instead
		s.n <<= 1
	}
	if len(s.keys) > s.n*3/4 {
		s.n <<= 1
	}
}

// remove deletes key if present; the table keeps its size.
func (s *javaHashSet) remove(key int32) {
	if i := s.index(key); i >= 0 {
		s.keys = slices.Delete(s.keys, i, i+1)
	}
}

func (s *javaHashSet) before(a, b javaHashKey) bool {
	ba, bb := a.hash&uint32(s.n-1), b.hash&uint32(s.n-1)
	if ba != bb {
		return ba < bb
	}
	return a.seq < b.seq
}

// first is what iterator().next() returns; -1 when empty.
func (s *javaHashSet) first() int32 {
	if len(s.keys) == 0 {
		return -1
	}
	best := s.keys[0]
	for _, k := range s.keys[1:] {
		if s.before(k, best) {
			best = k
		}
	}
	return best.key
}

// order lists the keys in iteration order.
func (s *javaHashSet) order() []int {
	ks := slices.Clone(s.keys)
	slices.SortFunc(ks, func(a, b javaHashKey) int {
		if s.before(a, b) {
			return -1
		}
		if s.before(b, a) {
			return 1
		}
		return 0
	})
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = int(k.key)
	}
	return out
}
