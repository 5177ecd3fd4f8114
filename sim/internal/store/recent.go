package store

// Recent remembers the last few answers of a lookup whose answer for a key
// never changes (a process's party number): a few compares instead of
// hashing the key. The zero value is empty and ready; a copy is a copy.
type Recent[K comparable, V any] struct {
	keys [4]K
	vals [4]V
	n    uint8 // entries filled
	next uint8 // the entry to replace next
}

// Get is k's answer, if remembered.
func (c *Recent[K, V]) Get(k K) (V, bool) {
	for i := 0; i < int(c.n); i++ {
		if c.keys[i] == k {
			return c.vals[i], true
		}
	}
	var zero V
	return zero, false
}

// Put remembers k's answer v, replacing the oldest.
func (c *Recent[K, V]) Put(k K, v V) {
	i := c.next % uint8(len(c.keys))
	c.keys[i], c.vals[i] = k, v
	c.next++
	c.n = max(c.n, i+1)
}
