package store

import "unsafe"

// StrCache remembers the answers of a lookup by a string key whose answer
// never changes (an API's index, a client id's party number, a member
// id's parts), found by where the key's bytes are and how many: the hot
// path passes the very same strings tick after tick (the API constants, a
// member's Client), so a hit hashes one word and compares two a way,
// reading no byte of the key and hashing no string. The same text spelled
// at another place misses and is cached beside it, under its own place.
//
// Four ways a set, replaced in turn: a set holds every key of the few a
// tick uses that hash to it, since a hit must not depend on where the
// keys happen to be. (With two ways, three hot keys of one set evicted
// each other: which keys those were changed with the heap's layout from
// build to build, and with them a tick's cost, by 1%.) A hit writes
// nothing. An entry holds its key, so a place the cache remembers is never
// reused for other bytes while it does. The zero value is empty and ready;
// a copy is a copy (Clone copies it with the world): nothing in it is
// shared.
type StrCache[K ~string, V any] struct {
	keys [strCacheSets][strCacheWays]K
	vals [strCacheSets][strCacheWays]V
	next [strCacheSets]uint8 // per set, the way to replace next
}

// strCacheSets is a power of two, 1<<strCacheBits.
const (
	strCacheBits = 2
	strCacheSets = 1 << strCacheBits
	strCacheWays = 4
)

// strCacheSet is the set of a key at p, n bytes long: a multiplicative
// hash of the place (Fibonacci hashing), its length mixed in, since a key
// and its prefix (C1-1 and C1) start at the same place.
func strCacheSet(p *byte, n int) int {
	h := (uint64(uintptr(unsafe.Pointer(p))) + uint64(n)) * 0x9E3779B97F4A7C15
	return int(h >> (64 - strCacheBits))
}

// Get is k's answer if the cache holds k's very bytes. The empty key is
// never held (its place means nothing).
func (c *StrCache[K, V]) Get(k K) (V, bool) {
	if n := len(k); n > 0 {
		p := unsafe.StringData(string(k))
		s := strCacheSet(p, n)
		// The ways in order, written out: a loop cost a tick 1% more.
		ways, vals := &c.keys[s], &c.vals[s]
		switch {
		case isAt(ways[0], p, n):
			return vals[0], true
		case isAt(ways[1], p, n):
			return vals[1], true
		case isAt(ways[2], p, n):
			return vals[2], true
		case isAt(ways[3], p, n):
			return vals[3], true
		}
	}
	var zero V
	return zero, false
}

// isAt reports whether k is the n bytes at p.
func isAt[K ~string](k K, p *byte, n int) bool {
	return len(k) == n && unsafe.StringData(string(k)) == p
}

// Put caches k's answer v (the empty key is not cached), in its set's
// next way.
func (c *StrCache[K, V]) Put(k K, v V) {
	if len(k) == 0 {
		return
	}
	s := strCacheSet(unsafe.StringData(string(k)), len(k))
	w := c.next[s] % strCacheWays
	c.keys[s][w], c.vals[s][w] = k, v
	c.next[s] = (w + 1) % strCacheWays
}

// SameStr is a == b, answered without a call when a and b are the very same
// bytes (the same place and length), as the hot path's strings usually are
// (a partition's topic, a member's client id): Go's string compare calls
// memequal whenever the lengths agree.
func SameStr(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
