package javaorder

// java.util.HashMap's table: its buckets as lists, its resizes, puts and
// removals, and its iteration (treebin.go holds the buckets Java turns
// into trees).

import (
	"cmp"
	"slices"
)

// hashNode is HashMap.Node, and TreeNode when t is set.
type hashNode[K comparable] struct {
	key  K
	hash int32 // HashMap.hash(key): the spread hash code, as Java stores it
	next *hashNode[K]
	t    *treeLinks[K] // nil in a list bin
}

// Map is one java.util.HashMap (or the HashMap inside a HashSet) under puts
// and removals: only keys, as only their order matters here. The caller
// gives each key's Java hashCode with every put and remove.
type Map[K comparable] struct {
	table     []*hashNode[K]
	size      int
	threshold int
	// compare is the keys' compareTo, which orders keys with equal hash
	// codes inside a tree bin; nil when the keys are not Comparable.
	compare func(a, b K) int
	// inexact is set when Java would break a tie by identity hash code or a
	// key left a tree bin: keys then may not be Java's order.
	inexact bool

	// A small map keeps its keys in flat, in insertion order, instead of in
	// table, which stays nil; flatLen is then the table's size (0 before
	// the first put). As each bucket lists its keys in insertion order, the
	// iteration order is flat stably sorted by bucket. A map moves its keys
	// to the table when it outgrows flatMax keys, before any bucket could
	// become crowded enough to resize or to turn into a tree. (This keeps
	// the many small sets the sticky assignor builds and drops cheap.)
	flat    []flatEntry[K]
	flatLen int
}

// flatMax is the most keys a map keeps flat: fewer than the 9 keys of one
// bucket that make Java resize a small table or build a tree bin.
const flatMax = 8

type flatEntry[K comparable] struct {
	key  K
	hash int32 // spread, as hashNode.hash
}

// DefaultCapacity asks for `new HashMap<>()`: 16 buckets on the first put.
const DefaultCapacity = -1

// NewMap is `new HashMap<>(initialCapacity)`, or `new HashMap<>()` for
// DefaultCapacity.
func NewMap[K comparable](initialCapacity int, compare func(a, b K) int) *Map[K] {
	m := &Map[K]{compare: compare}
	if initialCapacity >= 0 {
		m.threshold = TableSizeFor(initialCapacity)
	}
	return m
}

// CollectionCapacity is the initial capacity `new HashSet<>(c)` and
// `new HashMap<>(m)`-style copies ask for: max((int) (n / .75f) + 1, 16).
func CollectionCapacity(n int) int {
	c := int(float32(n)/float32(0.75)) + 1
	if c < 16 {
		c = 16
	}
	return c
}

// TableSizeFor is HashMap.TableSizeFor: the power of two at or above c.
func TableSizeFor(c int) int {
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

// nextSize is the table size and threshold HashMap.resize moves to.
func nextSize(table, threshold int) (newCap, newThr int) {
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
	return newCap, newThr
}

func (m *Map[K]) index(hash int32) int { return int(uint32(hash) & uint32(len(m.table)-1)) }

// resize is HashMap.resize.
func (m *Map[K]) resize() {
	old := m.table
	newCap, newThr := nextSize(len(old), m.threshold)
	m.threshold = newThr
	m.table = make([]*hashNode[K], newCap)
	for j, e := range old {
		switch {
		case e == nil:
		case e.next == nil:
			m.table[m.index(e.hash)] = e
		case e.t != nil:
			m.split(e, j, len(old))
		default:
			var loHead, loTail, hiHead, hiTail *hashNode[K]
			for ; e != nil; e = e.next {
				if uint32(e.hash)&uint32(len(old)) == 0 {
					if loTail == nil {
						loHead = e
					} else {
						loTail.next = e
					}
					loTail = e
				} else {
					if hiTail == nil {
						hiHead = e
					} else {
						hiTail.next = e
					}
					hiTail = e
				}
			}
			if loTail != nil {
				loTail.next = nil
				m.table[j] = loHead
			}
			if hiTail != nil {
				hiTail.next = nil
				m.table[j+len(old)] = hiHead
			}
		}
	}
}

// Put is HashMap.putVal for a key with hash code h; a key already present
// keeps its place.
func (m *Map[K]) Put(key K, h int32) {
	hash := int32(spread(h))
	if m.table == nil {
		if m.putFlat(key, hash) {
			return
		}
		m.toTable()
	}
	i := m.index(hash)
	p := m.table[i]
	switch {
	case p == nil:
		m.table[i] = m.node(key, hash, nil)
	case p.hash == hash && p.key == key:
		return
	case p.t != nil:
		if !m.putTreeVal(p, hash, key) {
			return
		}
	default:
		for binCount := 0; ; binCount++ {
			e := p.next
			if e == nil {
				p.next = m.node(key, hash, nil)
				if binCount >= 7 { // TREEIFY_THRESHOLD - 1
					m.treeifyBin(hash)
				}
				break
			}
			if e.hash == hash && e.key == key {
				return
			}
			p = e
		}
	}
	m.size++
	if m.size > m.threshold {
		m.resize()
	}
}

// putFlat is Put while the map is flat; it reports false, having done
// nothing, when the key needs the table.
func (m *Map[K]) putFlat(key K, hash int32) bool {
	for _, e := range m.flat {
		if e.hash == hash && e.key == key {
			return true
		}
	}
	if len(m.flat) == flatMax {
		return false
	}
	if m.flatLen == 0 { // the first put's resize
		m.flatLen, m.threshold = nextSize(0, m.threshold)
	}
	n := len(m.flat)
	// Grown by hand: with append, escape analysis would let all that m
	// holds (compare too) escape, costing callers an allocation.
	if n == cap(m.flat) {
		flat := make([]flatEntry[K], n, max(2*n, 1))
		copy(flat, m.flat)
		m.flat = flat
	}
	m.flat = m.flat[:n+1]
	m.flat[n] = flatEntry[K]{key, hash}
	m.size++
	if m.size > m.threshold {
		m.flatLen, m.threshold = nextSize(m.flatLen, m.threshold)
	}
	return true
}

// toTable moves a flat map's keys into a table of its size, each to the
// tail of its bucket in insertion order: the lists putVal would have built.
func (m *Map[K]) toTable() {
	if m.flatLen == 0 {
		m.resize()
		return
	}
	m.table = make([]*hashNode[K], m.flatLen)
	for _, e := range m.flat {
		n := m.node(e.key, e.hash, nil)
		i := m.index(e.hash)
		if p := m.table[i]; p == nil {
			m.table[i] = n
		} else {
			for p.next != nil {
				p = p.next
			}
			p.next = n
		}
	}
	m.flat = nil
}

// flatBucket is a flat map key's bucket.
func (m *Map[K]) flatBucket(e flatEntry[K]) uint32 { return uint32(e.hash) & uint32(m.flatLen-1) }

// node makes a list node.
func (m *Map[K]) node(key K, hash int32, next *hashNode[K]) *hashNode[K] {
	return &hashNode[K]{key: key, hash: hash, next: next}
}

// Remove is HashMap.remove of key (hash code h); the table never shrinks. Removing from a tree
// bin (removeTreeNode, which may also turn the bin back into a list) is not
// modelled: the key leaves the linked order, the bin becomes a list and the
// map turns inexact.
func (m *Map[K]) Remove(key K, h int32) {
	hash := int32(spread(h))
	if m.table == nil {
		for i, e := range m.flat {
			if e.hash == hash && e.key == key {
				copy(m.flat[i:], m.flat[i+1:])
				m.flat = m.flat[:len(m.flat)-1]
				m.size--
				return
			}
		}
		return
	}
	i := m.index(hash)
	var prev *hashNode[K]
	for e := m.table[i]; e != nil; prev, e = e, e.next {
		if e.hash != hash || e.key != key {
			continue
		}
		if prev == nil {
			m.table[i] = e.next
		} else {
			prev.next = e.next
		}
		if e.t != nil {
			// Keep the linked order, as a list from now on.
			m.inexact = true
			untreeify(m.table[i])
		}
		m.size--
		return
	}
}

// Len is the number of keys.
func (m *Map[K]) Len() int { return m.size }

// Exact reports whether Keys and First are Java's order: false once Java
// would have broken a tie by identity hash code or a key left a tree bin.
func (m *Map[K]) Exact() bool { return !m.inexact }

// First is what iterator().next() returns; ok is false when the map is
// empty.
func (m *Map[K]) First() (key K, ok bool) {
	if m.size == 0 {
		return key, false
	}
	if m.table == nil {
		first := m.flat[0]
		for _, e := range m.flat[1:] {
			if m.flatBucket(e) < m.flatBucket(first) {
				first = e
			}
		}
		return first.key, true
	}
	for _, e := range m.table {
		if e != nil {
			return e.key, true
		}
	}
	return key, false
}

// Keys lists the keys in Java's iteration order.
func (m *Map[K]) Keys() []K {
	out := make([]K, 0, m.size)
	if m.table == nil {
		flat := slices.Clone(m.flat)
		slices.SortStableFunc(flat, func(a, b flatEntry[K]) int { return cmp.Compare(m.flatBucket(a), m.flatBucket(b)) })
		for _, e := range flat {
			out = append(out, e.key)
		}
		return out
	}
	for _, e := range m.table {
		for ; e != nil; e = e.next {
			out = append(out, e.key)
		}
	}
	return out
}
