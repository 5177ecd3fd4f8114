package sim

import (
	"slices"

	"github.com/kgrepl/kgrepl/sim/broker"
)

// lagMax answers the most lag's question at a sample (Unavailability.
// sampleLag: which input partition lags most now, the first in input
// order among equals) without looking at every partition, once steady
// production makes every tick a sample.
//
// A partition's lag is its high watermark less its committed offset. With
// steady production at rate R since tick S, its high watermark at tick t
// is base + R.Due(t-S) (broker.Log.SteadyBase); without, it is base. So its
// lag is key + R.Due(t-S), key = base - committed, and among the
// partitions that share (R, S) the one with the largest key (the first
// among equals) lags most at every t. The partitions are kept in one heap
// per (R, S) (group 0: no steady production) ordered by key; a key changes
// only when a committed offset is written (coord.Offsets.TakeTouched), a
// user appends, or a rate is set or stopped (touch), and is fixed in its
// heap then. A sample reads each group's top: O(groups), a group per rate
// set, not per partition.
type lagMax struct {
	key    []int64 // by input number
	grp    []int32 // each partition's group
	pos    []int32 // each partition's place in its group's heap
	groups []lagGroup
	dirty  []int32 // partitions whose key or group to read again
	marked []bool  // in dirty
	buf    []int32
	seen   []uint64 // sortOnce's bitset (this world's own: a clone starts without)
}

type lagGroup struct {
	rate  broker.Rate // zero for group 0
	since int
	heap  []int32
}

// newLagMax puts every input partition in its place, as the world stands.
func newLagMax(w *World) *lagMax {
	n := len(w.layout.Inputs())
	m := &lagMax{key: make([]int64, n), grp: make([]int32, n), pos: make([]int32, n), marked: make([]bool, n),
		groups: []lagGroup{{heap: make([]int32, 0, n)}}}
	for i := range n {
		m.grp[i] = -1
		m.touch(int32(i))
	}
	// Every partition read; the offsets' journal left for the next sync,
	// which hands it to lookTimeLagAt.
	m.settle(w)
	return m
}

func (m *lagMax) clone() *lagMax {
	if m == nil {
		return nil
	}
	n := &lagMax{key: slices.Clone(m.key), grp: slices.Clone(m.grp), pos: slices.Clone(m.pos),
		dirty: slices.Clone(m.dirty), marked: slices.Clone(m.marked), groups: slices.Clone(m.groups)}
	for i := range n.groups {
		n.groups[i].heap = slices.Clone(m.groups[i].heap)
	}
	return n
}

// touch notes that partition i's key or group may have changed.
func (m *lagMax) touch(i int32) {
	if !m.marked[i] {
		m.marked[i] = true
		m.dirty = append(m.dirty, i)
	}
}

// sync notes the partitions whose committed offset was written since
// the last sync (to read again at the next settle) and returns their
// numbers, sorted, each once (lookTimeLag's to read). The heap is fixed
// only by settle, when a sample reads it.
func (m *lagMax) sync(w *World) []int32 {
	m.buf = w.Group.Offsets.TakeTouched(m.buf[:0])
	for _, i := range m.buf {
		m.touch(i)
	}
	m.buf = sortOnce(m.buf, &m.seen)
	return m.buf
}

// settle reads again the partitions touched since the last settle, each
// once however often it was touched, and fixes their groups' heaps: at
// each sample (most), not at each tick's commits. A sample of steady
// production comes only in a tick that appended (T2's every 200 ticks),
// while commits write 100 partitions' offsets every tick or so: each
// partition's heap was fixed each time (a walk of cache misses down a
// heap of 100,000), for a sample that reads the tops once. Past
// settleRebuild of the partitions touched, every heap is built again at
// once (a pass over them all) rather than fixed a partition at a time.
// Any heap gives the same tops: its order is total (before).
func (m *lagMax) settle(w *World) {
	rebuild := len(m.dirty) > len(m.key)/settleRebuild
	for _, i := range m.dirty {
		m.marked[i] = false
		base, rate, since, _ := w.broker.SteadyBase(int(i))
		key := base
		if c, ok := w.Group.Offsets.CommittedAt(int(i)); ok {
			key -= int64(c)
		}
		g := m.groupOf(rate, since)
		if rebuild {
			m.key[i], m.grp[i] = key, g
			continue
		}
		m.set(i, key, g)
	}
	m.dirty = m.dirty[:0]
	if rebuild {
		m.rebuild()
	}
}

// set gives partition i key in group g, and fixes the heaps it leaves
// and joins.
func (m *lagMax) set(i int32, key int64, g int32) {
	if g != m.grp[i] {
		if m.grp[i] >= 0 {
			m.remove(i)
		}
		m.key[i], m.grp[i] = key, g
		h := &m.groups[g].heap
		m.pos[i] = int32(len(*h))
		*h = append(*h, i)
		m.up(g, int(m.pos[i]))
		return
	}
	m.key[i] = key
	m.fix(g, int(m.pos[i]))
}

// settleRebuild: settle builds the heaps again when more than one
// partition in settleRebuild was touched.
const settleRebuild = 16

// rebuild makes every group's heap again from the partitions' groups and
// keys (every partition has a group).
func (m *lagMax) rebuild() {
	for g := range m.groups {
		m.groups[g].heap = m.groups[g].heap[:0]
	}
	for i, g := range m.grp {
		h := &m.groups[g].heap
		m.pos[i] = int32(len(*h))
		*h = append(*h, int32(i))
	}
	for g := range m.groups {
		for x := len(m.groups[g].heap)/2 - 1; x >= 0; x-- {
			m.down(int32(g), x)
		}
	}
}

// most is the most lag at steady production's tick t and the first
// partition (by input number) with it; ok false without partitions.
func (m *lagMax) most(t int) (lag int64, at int32, ok bool) {
	for g := range m.groups {
		gr := &m.groups[g]
		if len(gr.heap) == 0 {
			continue
		}
		i := gr.heap[0]
		v := m.key[i]
		if g > 0 {
			v += gr.rate.Due(t - gr.since)
		}
		if !ok || v > lag || v == lag && i < at {
			lag, at, ok = v, i, true
		}
	}
	return lag, at, ok
}

// groupOf is the group of partitions at rate since since (0: none),
// added when new. Groups left empty stay (a few, one per rate set).
func (m *lagMax) groupOf(rate broker.Rate, since int) int32 {
	if rate == (broker.Rate{}) {
		return 0
	}
	for g := 1; g < len(m.groups); g++ {
		if m.groups[g].rate == rate && m.groups[g].since == since {
			return int32(g)
		}
	}
	m.groups = append(m.groups, lagGroup{rate: rate, since: since})
	return int32(len(m.groups) - 1)
}

// before orders a heap: the larger key first, then the smaller number.
func (m *lagMax) before(a, b int32) bool {
	return m.key[a] > m.key[b] || m.key[a] == m.key[b] && a < b
}

func (m *lagMax) swap(h []int32, x, y int) {
	h[x], h[y] = h[y], h[x]
	m.pos[h[x]], m.pos[h[y]] = int32(x), int32(y)
}

func (m *lagMax) up(g int32, x int) {
	h := m.groups[g].heap
	for x > 0 {
		p := (x - 1) / 2
		if !m.before(h[x], h[p]) {
			return
		}
		m.swap(h, x, p)
		x = p
	}
}

func (m *lagMax) down(g int32, x int) {
	h := m.groups[g].heap
	for {
		l, best := 2*x+1, x
		if l < len(h) && m.before(h[l], h[best]) {
			best = l
		}
		if r := l + 1; r < len(h) && m.before(h[r], h[best]) {
			best = r
		}
		if best == x {
			return
		}
		m.swap(h, x, best)
		x = best
	}
}

func (m *lagMax) fix(g int32, x int) {
	e := m.groups[g].heap[x]
	m.up(g, x)
	m.down(g, int(m.pos[e]))
}

// remove takes partition i out of its group's heap.
func (m *lagMax) remove(i int32) {
	g := m.grp[i]
	h := m.groups[g].heap
	x, last := int(m.pos[i]), len(h)-1
	if x != last {
		m.swap(h, x, last)
	}
	m.groups[g].heap = h[:last]
	if x != last {
		m.fix(g, x)
	}
}
