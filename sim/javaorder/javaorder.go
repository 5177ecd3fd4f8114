// Package javaorder reproduces the iteration order of java.util.HashMap and
// HashSet (a HashSet is a HashMap of keys), OpenJDK 8 and later, so that
// where Kafka walks a hashed collection kgrepl walks it in the same order
// (SPEC §4's rule for hashed collections). The classic sticky assignor (its
// member map, its sets of moved partitions) and the consumer protocol's
// server-side assignors (their topic and partition sets, the target
// assignment's member map) both use it. The code follows OpenJDK's HashMap;
// the expected orders in its tests were printed by OpenJDK 17.
//
// These are the facts it models:
//
//   - hash(key) = h ^ (h >>> 16), h = key.hashCode(); a key goes to bucket
//     hash & (n-1) of a table of n = 2^k buckets.
//   - The table is allocated at the first put: 16 buckets for
//     `new HashMap<>()`, else the power of two at or above the requested
//     initial capacity; it doubles whenever the count passes 0.75 n and
//     never shrinks (removals leave n as it is).
//   - A new key goes to the tail of its bucket's list; a resize splits each
//     bucket in two, each half keeping the relative order, so a list bucket
//     holds its keys in insertion order (a key removed and put again counts
//     as new).
//   - A put that makes a bucket longer than 8 (TREEIFY_THRESHOLD) doubles a
//     table of fewer than 64 buckets (MIN_TREEIFY_CAPACITY); in a larger
//     table Java turns the bucket into a red-black tree (TreeNode) whose
//     linked order changes as keys go in (the root moves to the front, a new
//     key follows its tree parent), ordered by hash and then compareTo; a
//     resize splits a tree bin and turns halves of 6 keys or fewer back into
//     lists.
//   - Iteration visits buckets in ascending index, each front to back.
//
// What it does not follow (and reports as inexact): ties Java breaks by
// System.identityHashCode (keys with equal hash codes that compareTo calls
// equal, or that are not Comparable), and removing a key from a tree bin.
package javaorder

import (
	"cmp"
	"slices"
	"unicode/utf16"
)

// hashNode is HashMap.Node, and TreeNode when t is set.
type hashNode[K comparable] struct {
	key  K
	hash int32 // HashMap.hash(key): the spread hash code, as Java stores it
	next *hashNode[K]
	t    *treeLinks[K] // nil in a list bin
}

// treeLinks are TreeNode's fields beyond Node's, kept apart so that list
// nodes (nearly all of them) stay small.
type treeLinks[K comparable] struct {
	parent, left, right, prev *hashNode[K]
	red                       bool
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

// treeifyBin is HashMap.treeifyBin.
func (m *Map[K]) treeifyBin(hash int32) {
	if len(m.table) < 64 { // MIN_TREEIFY_CAPACITY
		m.resize()
		return
	}
	first := m.table[m.index(hash)]
	var prev *hashNode[K]
	for e := first; e != nil; e = e.next {
		e.t = &treeLinks[K]{prev: prev}
		prev = e
	}
	m.treeify(first)
}

// dir orders key k (hash h) against tree node p: -1 left, 1 right.
func (m *Map[K]) dir(h int32, k K, p *hashNode[K]) int {
	switch {
	case p.hash > h:
		return -1
	case p.hash < h:
		return 1
	}
	if m.compare != nil {
		if c := m.compare(k, p.key); c != 0 {
			return c
		}
	}
	m.inexact = true // tieBreakOrder: class names, then identity hash codes
	return -1
}

// treeify is TreeNode.treeify of the bin starting at first.
func (m *Map[K]) treeify(first *hashNode[K]) {
	var root *hashNode[K]
	for x := first; x != nil; {
		next := x.next
		x.t.left, x.t.right = nil, nil
		if root == nil {
			x.t.parent, x.t.red, root = nil, false, x
		} else {
			for p := root; ; {
				d := m.dir(x.hash, x.key, p)
				xp := p
				if d <= 0 {
					p = p.t.left
				} else {
					p = p.t.right
				}
				if p == nil {
					x.t.parent = xp
					if d <= 0 {
						xp.t.left = x
					} else {
						xp.t.right = x
					}
					root = balanceInsertion(root, x)
					break
				}
			}
		}
		x = next
	}
	m.moveRootToFront(root)
}

// putTreeVal is TreeNode.putTreeVal; it reports whether the key was new.
func (m *Map[K]) putTreeVal(first *hashNode[K], h int32, k K) bool {
	root := first
	for root.t.parent != nil {
		root = root.t.parent
	}
	for p := root; ; {
		if p.hash == h && p.key == k {
			return false
		}
		var d int
		if p.hash == h {
			if found := findInTree(p, h, k); found {
				return false
			}
		}
		d = m.dir(h, k, p)
		xp := p
		if d <= 0 {
			p = p.t.left
		} else {
			p = p.t.right
		}
		if p == nil {
			xpn := xp.next
			x := m.node(k, h, xpn)
			x.t = &treeLinks[K]{parent: xp, prev: xp}
			if d <= 0 {
				xp.t.left = x
			} else {
				xp.t.right = x
			}
			xp.next = x
			if xpn != nil {
				xpn.t.prev = x
			}
			m.moveRootToFront(balanceInsertion(root, x))
			return true
		}
	}
}

// findInTree reports whether key k with hash h is in the subtree at p.
func findInTree[K comparable](p *hashNode[K], h int32, k K) bool {
	if p == nil {
		return false
	}
	if p.hash == h && p.key == k {
		return true
	}
	return findInTree(p.t.left, h, k) || findInTree(p.t.right, h, k)
}

// moveRootToFront is TreeNode.moveRootToFront.
func (m *Map[K]) moveRootToFront(root *hashNode[K]) {
	if root == nil {
		return
	}
	i := m.index(root.hash)
	first := m.table[i]
	if root == first {
		return
	}
	m.table[i] = root
	rp, rn := root.t.prev, root.next
	if rn != nil {
		rn.t.prev = rp
	}
	if rp != nil {
		rp.next = rn
	}
	if first != nil {
		first.t.prev = root
	}
	root.next, root.t.prev = first, nil
}

// split is TreeNode.split: the tree bin at old index j goes to j and
// j+bit, each half a list again when it has 6 keys or fewer.
func (m *Map[K]) split(b *hashNode[K], j, bit int) {
	var loHead, loTail, hiHead, hiTail *hashNode[K]
	lc, hc := 0, 0
	for e := b; e != nil; {
		next := e.next
		e.next = nil
		if uint32(e.hash)&uint32(bit) == 0 {
			if e.t.prev = loTail; loTail == nil {
				loHead = e
			} else {
				loTail.next = e
			}
			loTail = e
			lc++
		} else {
			if e.t.prev = hiTail; hiTail == nil {
				hiHead = e
			} else {
				hiTail.next = e
			}
			hiTail = e
			hc++
		}
		e = next
	}
	if loHead != nil {
		m.table[j] = loHead
		if lc <= 6 { // UNTREEIFY_THRESHOLD
			untreeify(loHead)
		} else if hiHead != nil {
			m.treeify(loHead)
		}
	}
	if hiHead != nil {
		m.table[j+bit] = hiHead
		if hc <= 6 {
			untreeify(hiHead)
		} else if loHead != nil {
			m.treeify(hiHead)
		}
	}
}

// untreeify turns a tree bin back into a list, keeping its linked order.
func untreeify[K comparable](first *hashNode[K]) {
	for e := first; e != nil; e = e.next {
		e.t = nil
	}
}

// rotateLeft is TreeNode.rotateLeft.
func rotateLeft[K comparable](root, p *hashNode[K]) *hashNode[K] {
	if p == nil || p.t.right == nil {
		return root
	}
	r := p.t.right
	p.t.right = r.t.left
	if p.t.right != nil {
		p.t.right.t.parent = p
	}
	r.t.parent = p.t.parent
	switch pp := r.t.parent; {
	case pp == nil:
		root = r
		r.t.red = false
	case pp.t.left == p:
		pp.t.left = r
	default:
		pp.t.right = r
	}
	r.t.left, p.t.parent = p, r
	return root
}

// rotateRight is TreeNode.rotateRight.
func rotateRight[K comparable](root, p *hashNode[K]) *hashNode[K] {
	if p == nil || p.t.left == nil {
		return root
	}
	l := p.t.left
	p.t.left = l.t.right
	if p.t.left != nil {
		p.t.left.t.parent = p
	}
	l.t.parent = p.t.parent
	switch pp := l.t.parent; {
	case pp == nil:
		root = l
		l.t.red = false
	case pp.t.right == p:
		pp.t.right = l
	default:
		pp.t.left = l
	}
	l.t.right, p.t.parent = p, l
	return root
}

// balanceInsertion is TreeNode.balanceInsertion.
func balanceInsertion[K comparable](root, x *hashNode[K]) *hashNode[K] {
	x.t.red = true
	for {
		xp := x.t.parent
		if xp == nil {
			x.t.red = false
			return x
		}
		xpp := xp.t.parent
		if !xp.t.red || xpp == nil {
			return root
		}
		if xppl := xpp.t.left; xp == xppl {
			if xppr := xpp.t.right; xppr != nil && xppr.t.red {
				xppr.t.red, xp.t.red, xpp.t.red = false, false, true
				x = xpp
				continue
			}
			if x == xp.t.right {
				x = xp
				root = rotateLeft(root, x)
				if xp = x.t.parent; xp == nil {
					xpp = nil
				} else {
					xpp = xp.t.parent
				}
			}
			if xp != nil {
				xp.t.red = false
				if xpp != nil {
					xpp.t.red = true
					root = rotateRight(root, xpp)
				}
			}
		} else {
			if xppl != nil && xppl.t.red {
				xppl.t.red, xp.t.red, xpp.t.red = false, false, true
				x = xpp
				continue
			}
			if x == xp.t.left {
				x = xp
				root = rotateRight(root, x)
				if xp = x.t.parent; xp == nil {
					xpp = nil
				} else {
					xpp = xp.t.parent
				}
			}
			if xp != nil {
				xp.t.red = false
				if xpp != nil {
					xpp.t.red = true
					root = rotateLeft(root, xpp)
				}
			}
		}
	}
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

// Order returns keys in the order Java iterates a HashMap or HashSet built
// with the given initial capacity (DefaultCapacity for `new HashMap<>()`)
// into which keys were put in the given order; hash gives each key's Java
// hashCode and compare the keys' compareTo (nil if they are not
// Comparable), which Java consults only inside tree bins. Duplicates keep
// their first place. ok is false where the order may not be Java's (see
// Map.Exact).
func Order[K comparable](keys []K, hash func(K) int32, compare func(a, b K) int, initialCapacity int) (order []K, ok bool) {
	if len(keys) <= 1 {
		return slices.Clone(keys), true
	}
	type entry struct {
		key  K
		hash int32
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
	if !listOrder(entries, func(e entry) int32 { return e.hash }, initialCapacity) {
		m := NewMap(initialCapacity, compare)
		for _, e := range entries {
			m.Put(e.key, e.hash)
		}
		return m.Keys(), m.Exact()
	}
	order = make([]K, len(entries))
	for i, e := range entries {
		order[i] = e.key
	}
	return order, true
}

// Indices is Order for keys known only by their hash codes: distinct keys
// 0..len(hashes)-1 put in index order, key i with hashCode hashes[i];
// compare orders two keys by their compareTo (nil if they are not
// Comparable). It returns the indices in iteration order.
func Indices(hashes []int32, compare func(i, j int) int, initialCapacity int) (order []int, ok bool) {
	order = make([]int, len(hashes))
	for i := range order {
		order[i] = i
	}
	if listOrder(order, func(i int) int32 { return hashes[i] }, initialCapacity) {
		return order, true
	}
	m := NewMap(initialCapacity, compare)
	for i, h := range hashes {
		m.Put(i, h)
	}
	return m.Keys(), m.Exact()
}

// listOrder sorts keys, distinct and in the order they were put, into
// Java's iteration order and reports true, as long as no bucket becomes a
// tree bin; when one would, it reports false and leaves keys as they are.
// hash gives a key's hashCode.
//
// Without tree bins Java keeps each bucket in insertion order through every
// resize, so the order is the keys stably sorted by their bucket in the
// final table: listOrder replays only the table's growth (thresholds, and
// the resizes a crowded bucket of a small table causes) to learn the final
// size, in O(k log k) for k keys.
func listOrder[E any](keys []E, hash func(E) int32, initialCapacity int) bool {
	// Replay HashMap.putVal's growth.
	table, threshold := 0, 0
	if initialCapacity >= 0 {
		threshold = TableSizeFor(initialCapacity)
	}
	var counts []int32
	resize := func(inserted int) { // HashMap.resize, then recount the buckets
		table, threshold = nextSize(table, threshold)
		counts = make([]int32, table)
		for _, k := range keys[:inserted] {
			counts[spread(hash(k))&uint32(table-1)]++
		}
	}
	for i, k := range keys {
		if table == 0 {
			resize(0)
		}
		b := spread(hash(k)) & uint32(table-1)
		counts[b]++
		if counts[b] >= 9 { // treeifyBin
			if table >= 64 {
				return false
			}
			resize(i + 1)
		}
		if i+1 > threshold {
			resize(i + 1)
		}
	}
	mask := uint32(table - 1)
	slices.SortStableFunc(keys, func(a, b E) int { return cmp.Compare(spread(hash(a))&mask, spread(hash(b))&mask) })
	return true
}

// StringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the string's UTF-16 code units, in 32-bit arithmetic.
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

// StringCompare is String.compareTo: UTF-16 code units in order, then length.
func StringCompare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

// IntegerHash is java.lang.Integer.hashCode: the value itself.
func IntegerHash(i int) int32 { return int32(i) }

// TopicPartitionHash is org.apache.kafka.common.TopicPartition.hashCode:
// 31 * (31 + partition) + topic.hashCode().
func TopicPartitionHash(topic string, partition int) int32 {
	return 31*(31+int32(partition)) + StringHash(topic)
}
