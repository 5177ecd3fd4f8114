package store

import (
	"fmt"
	"sort"
)

// Copy is a copy of s with its own array, nil for nil.
func Copy[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// CopyMap is a copy of m, nil for nil.
func CopyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// CopyLazy copies a map that is made at its first write (PutMap): an
// empty one is copied as nil, no allocation.
func CopyLazy[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return CopyMap(m)
}

// CopyMapInto copies m into dst, cleared first, or into a new map when
// dst is nil; nil for nil.
func CopyMapInto[K comparable, V any](dst, m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	if dst == nil {
		return CopyMap(m)
	}
	clear(dst)
	for k, v := range m {
		dst[k] = v
	}
	return dst
}

// PutMap sets (*m)[k], making the map first if it is nil: for the maps most
// worlds never write (static members, fenced ids, the transaction
// coordinator's), which a clone then copies as nil (CopyLazy).
func PutMap[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}

// ReuseBuf returns buf at length n when it has the room, else a new slice;
// what is past n in it is cleared (a finished copy's leftovers, which the
// collector would otherwise keep). The caller writes every element.
func ReuseBuf[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	clear(buf[n:cap(buf)])
	return buf[:n]
}

// CutInto appends s to *buf and returns its copy there, cut to its length,
// so that an append or insert to it reallocates and an element write or a
// delete stays within it; nil for nil.
func CutInto[T any](buf *[]T, s []T) []T {
	if s == nil {
		return nil
	}
	at := len(*buf)
	*buf = append(*buf, s...)
	return (*buf)[at:len(*buf):len(*buf)]
}

// Int32Of narrows v for a compact record, saying which bound makes it fit.
// Ticks are at most 10,000,000 in a world's life (kernel/limits.go);
// generations grow at most once per tick, producer epochs and sequence
// numbers at most a few times per tick per producer (Kafka itself keeps
// them in 16 and 32 bits); input offsets are at most 1,000,000
// (kernel/limits.go). A value past int32 means a world went past those
// bounds, which the kernel refuses before it starts: panic rather than
// store a wrong number.
func Int32Of(v int, what string) int32 {
	if v < -1<<31 || v > 1<<31-1 {
		panic(fmt.Sprintf("sim: %s %d does not fit in 32 bits (a world lives at most 10,000,000 ticks, kernel/limits.go)", what, v))
	}
	return int32(v)
}

// ValuesByKey lists a map's values in key order: the coordinators' views
// never depend on Go's map order.
func ValuesByKey[V any](m map[string]V) []V {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}
