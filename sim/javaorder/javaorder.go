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
)

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
