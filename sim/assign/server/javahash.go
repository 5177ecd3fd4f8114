package server

import (
	"cmp"
	"slices"
	"unicode/utf16"
)

// This file reproduces the iteration order of java.util.HashMap and HashSet
// (OpenJDK 8 and later), so that where Kafka's assignors walk a hashed
// collection kgrepl walks it in the same order (SPEC §4's rule for hashed
// collections). Java keeps a table of 2^k buckets; a key goes to bucket
// (h ^ (h >>> 16)) & (2^k - 1) with h its hashCode; keys in one bucket are
// kept in insertion order; the table starts at 16 buckets (or at the power of
// two at or above a requested initial capacity) and doubles whenever the
// count passes 0.75 of it, and a resize keeps the relative order of the keys
// in each bucket. A bucket reaching 9 keys makes a table of fewer than 64
// buckets double; in a larger table Java turns the bucket into a red-black
// tree whose iteration order this file does not follow: hashMap.treeified
// reports it. For the key sets kgrepl builds (topic ids, member ids,
// partition numbers of one member) that takes nine keys with equal low bits in
// one set of at least 48, which does not happen in the seed's world or the demos.

// hashEntry is one key and its Java hashCode.
type hashEntry[K comparable] struct {
	key  K
	hash int32
}

// hashMap is the bucket layout of one java.util.HashMap (or the HashMap inside
// a HashSet): only keys, as only their order matters here.
type hashMap[K comparable] struct {
	table     [][]hashEntry[K]
	size      int
	threshold int
	// treeified is set when a bucket reached 9 keys in a table of 64 or more
	// buckets: Java would then iterate that bucket in an order Keys does not
	// reproduce.
	treeified bool
}

// defaultCapacity asks for `new HashMap<>()`: 16 buckets on the first put.
const defaultCapacity = -1

// newHashMap is `new HashMap<>(initialCapacity)`, or `new HashMap<>()` for
// defaultCapacity.
func newHashMap[K comparable](initialCapacity int) *hashMap[K] {
	m := &hashMap[K]{}
	if initialCapacity >= 0 {
		m.threshold = tableSizeFor(initialCapacity)
	}
	return m
}

// collectionCapacity is the initial capacity `new HashSet<>(c)` and
// `new HashMap<>(m)`-style copies ask for: max((int) (n / .75f) + 1, 16).
func collectionCapacity(n int) int {
	c := int(float32(n)/float32(0.75)) + 1
	if c < 16 {
		c = 16
	}
	return c
}

// tableSizeFor is HashMap.tableSizeFor: the power of two at or above c.
func tableSizeFor(c int) int {
	n := 1
	for n < c && n < 1<<30 {
		n <<= 1
	}
	return n
}

// spread is HashMap.hash: h ^ (h >>> 16).
func spread(h int32) uint32 {
	u := uint32(h)
	return u ^ u>>16
}

// resize is HashMap.resize.
func (m *hashMap[K]) resize() {
	oldCap, oldThr := len(m.table), m.threshold
	newCap, newThr := 0, 0
	switch {
	case oldCap > 0:
		newCap = oldCap << 1
		if oldCap >= 16 {
			newThr = oldThr << 1
		}
	case oldThr > 0:
		newCap = oldThr
	default:
		newCap, newThr = 16, 12
	}
	if newThr == 0 {
		newThr = int(float32(newCap) * float32(0.75))
	}
	m.threshold = newThr
	table := make([][]hashEntry[K], newCap)
	// Walking the old buckets in order and appending keeps each new bucket's
	// keys in their old relative order, as Java's lo/hi split does.
	for _, bucket := range m.table {
		for _, e := range bucket {
			i := spread(e.hash) & uint32(newCap-1)
			table[i] = append(table[i], e)
		}
	}
	m.table = table
}

// put is HashMap.put for a key with hash code h; a key already present keeps
// its place.
func (m *hashMap[K]) put(key K, h int32) {
	if m.table == nil {
		m.resize()
	}
	i := spread(h) & uint32(len(m.table)-1)
	for _, e := range m.table[i] {
		if e.hash == h && e.key == key {
			return
		}
	}
	m.table[i] = append(m.table[i], hashEntry[K]{key, h})
	if len(m.table[i]) >= 9 { // TREEIFY_THRESHOLD (8) exceeded: treeifyBin
		if len(m.table) < 64 { // MIN_TREEIFY_CAPACITY: resize instead
			m.resize()
		} else {
			m.treeified = true
		}
	}
	m.size++
	if m.size > m.threshold {
		m.resize()
	}
}

// remove is HashMap.remove; the table never shrinks.
func (m *hashMap[K]) remove(key K, h int32) {
	if m.table == nil {
		return
	}
	i := spread(h) & uint32(len(m.table)-1)
	b := m.table[i]
	for j, e := range b {
		if e.hash == h && e.key == key {
			m.table[i] = append(b[:j:j], b[j+1:]...)
			m.size--
			return
		}
	}
}

// keys lists the keys in Java's iteration order.
func (m *hashMap[K]) keys() []K {
	out := make([]K, 0, m.size)
	for _, b := range m.table {
		for _, e := range b {
			out = append(out, e.key)
		}
	}
	return out
}

// Order returns keys in the order Java iterates a HashMap or HashSet built
// with the given initial capacity (defaultCapacity for `new HashMap<>()`)
// into which keys were put in the given order; hash gives each key's Java
// hashCode. Duplicates keep their first place. ok is false when Java would
// have turned a bucket into a tree, whose order Order does not reproduce.
//
// Java keeps each bucket in insertion order through every resize, so the
// order is the keys stably sorted by their bucket in the final table; Order
// only replays the table's growth (thresholds, and the resizes a crowded
// bucket of a small table causes) to learn the final size. hashMap is the
// bucket-by-bucket model it is tested against.
func Order[K comparable](keys []K, hash func(K) int32, initialCapacity int) (order []K, ok bool) {
	if len(keys) <= 1 {
		return slices.Clone(keys), true
	}
	type entry struct {
		key    K
		hash   int32
		bucket uint32
	}
	entries := make([]entry, 0, len(keys))
	var seen map[K]bool
	if len(keys) > 16 {
		seen = make(map[K]bool, len(keys))
	}
	for _, k := range keys {
		if seen != nil {
			if seen[k] {
				continue
			}
			seen[k] = true
		} else if slices.ContainsFunc(entries, func(e entry) bool { return e.key == k }) {
			continue
		}
		entries = append(entries, entry{key: k, hash: hash(k)})
	}

	// Replay HashMap.putVal's growth.
	table, threshold := 0, 0
	if initialCapacity >= 0 {
		threshold = tableSizeFor(initialCapacity)
	}
	var counts []int32
	resize := func(inserted int) { // HashMap.resize, then recount the buckets
		newCap, newThr := 0, 0
		switch {
		case table > 0:
			newCap = table << 1
			if table >= 16 {
				newThr = threshold << 1
			}
		case threshold > 0:
			newCap = threshold
		default:
			newCap, newThr = 16, 12
		}
		if newThr == 0 {
			newThr = int(float32(newCap) * float32(0.75))
		}
		table, threshold = newCap, newThr
		counts = make([]int32, table)
		for _, e := range entries[:inserted] {
			counts[spread(e.hash)&uint32(table-1)]++
		}
	}
	ok = true
	for i, e := range entries {
		if table == 0 {
			resize(0)
		}
		b := spread(e.hash) & uint32(table-1)
		counts[b]++
		if counts[b] >= 9 { // treeifyBin
			if table < 64 {
				resize(i + 1)
			} else {
				ok = false
			}
		}
		if i+1 > threshold {
			resize(i + 1)
		}
	}
	for i := range entries {
		entries[i].bucket = spread(entries[i].hash) & uint32(table-1)
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.bucket, b.bucket) })
	order = make([]K, len(entries))
	for i, e := range entries {
		order[i] = e.key
	}
	return order, ok
}

// StringHash is java.lang.String.hashCode over the string's UTF-16 code units.
func StringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		r1, r2 := utf16.EncodeRune(r)
		h = 31*h + int32(r1)
		h = 31*h + int32(r2)
	}
	return h
}

// IntegerHash is java.lang.Integer.hashCode: the value itself.
func IntegerHash(i int) int32 { return int32(i) }

// UuidHash is Uuid.hashCode as a function value for Order.
func UuidHash(u Uuid) int32 { return u.HashCode() }

// utf16Units is the string as Java holds it.
func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }
