package env

import "github.com/kgrepl/kgrepl/sim/wire"

type Timers struct {
	// heap is a binary min-heap of the timers' keys; slots holds the
	// timers themselves (about 100 bytes each, with strings and a slice),
	// which never move while queued; free lists the empty slots.
	heap  []timerKey
	slots []wire.Timer
	free  []int32
	seq   int
}

// timerKey is what the heap orders and moves: a wire.Timer's due tick and
// sequence number, and its slot.
type timerKey struct {
	at, seq int
	slot    int32
}

func (q *Timers) Len() int { return len(q.heap) }

// Next is the due tick of the first wire.Timer (Len() > 0).
func (q *Timers) Next() int { return q.heap[0].at }

// Clone copies the queued timers only, each into the slot of its place in
// the heap (the same heap, so the same order), with no free slots, and
// with room to grow: a world that steps sets timers at once, and the first
// one would copy arrays cut to their length again.
func (q *Timers) Clone() Timers { return q.CloneOver(Timers{}) }

// CloneOver is Clone in the arrays of spare (a finished copy's queue,
// World.clone) when they have that room.
func (q *Timers) CloneOver(spare Timers) Timers {
	n := Timers{seq: q.seq}
	if len(q.heap) == 0 {
		return n
	}
	if room := 2 * len(q.heap); cap(spare.heap) >= room && cap(spare.slots) >= room {
		n.heap, n.slots = spare.heap[:len(q.heap)], spare.slots[:len(q.heap)]
		clear(spare.slots[len(q.heap):cap(spare.slots)]) // the finished copy's timers: their strings and lists
	} else {
		n.heap, n.slots = make([]timerKey, len(q.heap), room), make([]wire.Timer, len(q.heap), room)
	}
	for i, k := range q.heap {
		n.slots[i] = q.slots[k.slot]
		n.heap[i] = timerKey{at: k.at, seq: k.seq, slot: int32(i)}
	}
	return n
}

// Push and Pop keep q.heap a binary min-heap. They are written out rather
// than taken from container/heap, whose interface boxes every key in an
// interface value.
//
// Both move a hole rather than swap: the parents or children move one step
// each and the key is written once, where the swaps would have left it.
// The order is total (seq is unique), so the timers fire in the same order
// whatever the heap's layout.
func (q *Timers) Push(t wire.Timer) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[slot] = t
	} else {
		slot = int32(len(q.slots))
		q.slots = append(q.slots, t)
	}
	k := timerKey{at: t.At, seq: t.Seq, slot: slot}
	q.heap = append(q.heap, k)
	i := len(q.heap) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !keyLess(&k, &q.heap[parent]) {
			break
		}
		q.heap[i] = q.heap[parent]
		i = parent
	}
	q.heap[i] = k
}

func (q *Timers) Pop() wire.Timer {
	top := q.heap[0]
	t := q.slots[top.slot]
	q.slots[top.slot] = wire.Timer{} // let the GC have its strings and slices
	q.free = append(q.free, top.slot)
	last := len(q.heap) - 1
	moving := q.heap[last]
	q.heap = q.heap[:last]
	if last == 0 {
		return t
	}
	i := 0
	for {
		small, l, r := -1, 2*i+1, 2*i+2
		if l < last && keyLess(&q.heap[l], &moving) {
			small = l
		}
		if r < last && keyLess(&q.heap[r], &moving) && (small < 0 || keyLess(&q.heap[r], &q.heap[l])) {
			small = r
		}
		if small < 0 {
			break
		}
		q.heap[i] = q.heap[small]
		i = small
	}
	q.heap[i] = moving
	return t
}

// keyLess orders keys by due tick, then by the order their timers were
// set: a total order (seq is unique), so the firing order does not depend
// on how the heap is laid out.
func keyLess(a, b *timerKey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Reserve is After without the timer: the tick it would be due at (no
// earlier than the tick after now) and its sequence number, for a timer
// set later, if at all, that fires as if it had been set now (a produce's
// retry, a fetch's request timeout). Timers that are never set leave gaps
// in the sequence, which only orders them.
func (q *Timers) Reserve(now, at int) (int, int) {
	if at <= now {
		at = now + 1
	}
	q.seq++
	return at, q.seq
}

// After sets a timer, due at t.At but no earlier than the tick after now.
func (q *Timers) After(now int, t wire.Timer) {
	t.At, t.Seq = q.Reserve(now, t.At)
	q.Push(t)
}

// KeyLess orders two timers' (due tick, sequence number) keys.
func KeyLess(at1, seq1, at2, seq2 int) bool {
	return keyLess(&timerKey{at: at1, seq: seq1}, &timerKey{at: at2, seq: seq2})
}
