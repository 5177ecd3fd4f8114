package store

import "unsafe"

// StrCache remembers the answers of a lookup by a string key whose answer
// never changes (an API's index, an event kind's, a client id's party
// number), found by where the key's bytes are and how many: the hot path
// passes the very same strings tick after tick (the API and event kind
// constants, a member's Client), so a hit hashes one word and compares two,
// reading no byte of the key and hashing no string. The same text spelled
// at another place misses and is cached beside it, under its own place.
//
// Two ways a set, the least recently used one replaced, so that the few
// keys a tick uses do not evict each other. An entry holds its key, so a
// place the cache remembers is never reused for other bytes while it does.
// The zero value is empty and ready; a copy is a copy (Clone copies it with
// the world): nothing in it is shared.
type StrCache[K ~string, V any] struct {
	keys [strCacheSets][2]K
	vals [strCacheSets][2]V
	lru  [strCacheSets]uint8 // per set, the way to replace next
}

// strCacheSets is a power of two, 1<<strCacheBits.
const (
	strCacheBits = 3
	strCacheSets = 1 << strCacheBits
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
		ways := &c.keys[s]
		if len(ways[0]) == n && unsafe.StringData(string(ways[0])) == p {
			c.lru[s] = 1
			return c.vals[s][0], true
		}
		if len(ways[1]) == n && unsafe.StringData(string(ways[1])) == p {
			c.lru[s] = 0
			return c.vals[s][1], true
		}
	}
	var zero V
	return zero, false
}

// Put caches k's answer v (the empty key is not cached).
func (c *StrCache[K, V]) Put(k K, v V) {
	if len(k) == 0 {
		return
	}
	s := strCacheSet(unsafe.StringData(string(k)), len(k))
	way := c.lru[s] & 1
	c.keys[s][way], c.vals[s][way] = k, v
	c.lru[s] = way ^ 1
}

// SameStr is a == b, answered without a call when a and b are the very same
// bytes (the same place and length), as the hot path's strings usually are
// (a partition's topic, a member's client id): Go's string compare calls
// memequal whenever the lengths agree.
func SameStr(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
