package sim

import "container/heap"

// timer is a callback due at a tick. Timers due at the same tick fire in the
// order they were set, so the world stays deterministic.
type timer struct {
	at, seq int
	fire    func(*World)
}

type timerQueue struct {
	items []timer
	seq   int
}

func (q *timerQueue) Len() int { return len(q.items) }
func (q *timerQueue) Less(i, j int) bool {
	if q.items[i].at != q.items[j].at {
		return q.items[i].at < q.items[j].at
	}
	return q.items[i].seq < q.items[j].seq
}
func (q *timerQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *timerQueue) Push(x any)    { q.items = append(q.items, x.(timer)) }
func (q *timerQueue) Pop() any {
	t := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return t
}

// after runs fire at tick at (no earlier than the next tick). A timer that
// no longer applies checks that itself when it fires.
func (w *World) after(at int, fire func(*World)) {
	if at <= w.Tick {
		at = w.Tick + 1
	}
	w.timers.seq++
	heap.Push(&w.timers, timer{at: at, seq: w.timers.seq, fire: fire})
}

func (w *World) fireTimers() {
	for w.timers.Len() > 0 && w.timers.items[0].at <= w.Tick {
		t := heap.Pop(&w.timers).(timer)
		t.fire(w)
	}
}
