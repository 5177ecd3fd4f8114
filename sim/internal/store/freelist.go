package store

import "sync/atomic"

// Take pops the last object of a free list, or returns a new one (the
// caller resets it).
func Take[T any](list *[]*T) *T {
	n := len(*list)
	if n == 0 {
		return new(T)
	}
	x := (*list)[n-1]
	(*list)[n-1] = nil
	*list = (*list)[:n-1]
	return x
}

// epochs issues free-list epochs, unique over the process; 0 is never
// issued (a zero stamp: not from a free list).
var epochs atomic.Uint64

// NewEpoch issues the next free-list epoch.
func NewEpoch() uint64 { return epochs.Add(1) }
