package assign

import (
	"slices"
	"sort"
	"unsafe"
)

// topology numbers the partitions an assignor may hand out with dense ints,
// so the hot paths index slices instead of hashing TopicPartitions.
//
// Only topics that some member subscribes to and that Input.Partitions knows
// are numbered; a topic in a subscription but missing from Input.Partitions
// is ignored, and so is a topic nobody subscribes to. Topics are numbered in
// name order and partitions follow their topic, so ascending dense ids are
// exactly (topic, partition) order.
type topology struct {
	names   []string
	index   map[string]int32
	base    []int32 // base[t]: dense id of partition 0 of topic t; base[len(names)] is the total
	topicOf []int32 // topic of each dense id, once withTopicOf made it
}

func newTopology(members []Member, partitions map[string]int) *topology {
	seen := map[string]bool{}
	var names []string
	var prev []string
	for _, m := range members {
		// Members mostly share a subscription: skip a list equal to the
		// one before.
		if sameStrings(m.Topics, prev) {
			continue
		}
		prev = m.Topics
		for _, t := range m.Topics {
			if _, ok := partitions[t]; ok && !seen[t] {
				seen[t] = true
				names = append(names, t)
			}
		}
	}
	sort.Strings(names)
	tp := &topology{names: names, index: make(map[string]int32, len(names)), base: make([]int32, len(names)+1)}
	total := int32(0)
	for i, t := range names {
		tp.index[t] = int32(i)
		tp.base[i] = total
		if n := partitions[t]; n > 0 {
			total += int32(n)
		}
	}
	tp.base[len(names)] = total
	return tp
}

// withTopicOf makes topicOf (one int32 a partition), for the assignors that
// look topics up by dense id, and returns tp.
func (tp *topology) withTopicOf() *topology {
	if tp.topicOf == nil {
		tp.topicOf = make([]int32, tp.total())
		for t := range tp.names {
			for g := tp.base[t]; g < tp.base[t+1]; g++ {
				tp.topicOf[g] = int32(t)
			}
		}
	}
	return tp
}

func (tp *topology) total() int { return int(tp.base[len(tp.names)]) }

func (tp *topology) count(t int32) int32 { return tp.base[t+1] - tp.base[t] }

// id gives the dense id of p, or -1 when p is not a partition this topology
// numbers (unknown or unsubscribed topic, partition number out of range).
func (tp *topology) id(p TopicPartition) int32 {
	t, ok := tp.index[p.Topic]
	if !ok || p.Partition < 0 || int32(p.Partition) >= tp.count(t) {
		return -1
	}
	return tp.base[t] + int32(p.Partition)
}

// appendIDs appends to dst the dense id of each partition of ps this
// topology numbers, in order. Lists are mostly grouped by topic in name
// order, and the partition before tells the topic: the same one (a member
// with many partitions of a topic) or the next (one partition of each), and
// whichever the step before was is tried first, then the other, then the
// map.
func (tp *topology) appendIDs(dst []int32, ps []TopicPartition) []int32 {
	t := int32(-1)
	base, count := int32(0), int32(0)
	advanced := false
	for _, p := range ps {
		switch {
		case !advanced && t >= 0 && sameString(p.Topic, tp.names[t]):
		case int(t+1) < len(tp.names) && sameString(p.Topic, tp.names[t+1]):
			t++
			base, count = tp.base[t], tp.base[t+1]-tp.base[t]
			advanced = true
		case advanced && sameString(p.Topic, tp.names[t]):
			advanced = false
		default:
			var ok bool
			advanced = false
			if t, ok = tp.index[p.Topic]; !ok {
				t = -1
				continue
			}
			base, count = tp.base[t], tp.base[t+1]-tp.base[t]
		}
		if uint(p.Partition) < uint(count) {
			dst = append(dst, base+int32(p.Partition))
		}
	}
	return dst
}

// sameStrings is slices.Equal(a, b), answered at once when both are the
// very same list (members sharing their subscription's slice).
func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if !sameString(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameString is a == b, answered without comparing bytes when both are the
// very same bytes, as a partition's topic and the subscription's name it
// came from usually are.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

func (tp *topology) partition(g int32) TopicPartition {
	t := tp.topicOf[g]
	return TopicPartition{Topic: tp.names[t], Partition: int(g - tp.base[t])}
}

// subs gives the numbered topics m subscribes to, ascending, without repeats.
func (tp *topology) subs(m Member) []int32 {
	out := make([]int32, 0, len(m.Topics))
	for _, t := range m.Topics {
		if i, ok := tp.index[t]; ok {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// assignment turns per-member lists of dense ids into an Assignment: every
// member gets an entry (a non-nil, possibly empty slice) sorted by (topic,
// partition). The lists are sorted in place.
func (tp *topology) assignment(ids []string, lists [][]int32) Assignment {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	buf := make([]TopicPartition, total)
	out := make(Assignment, len(ids))
	off := 0
	for i, id := range ids {
		l := lists[i]
		if !slices.IsSorted(l) {
			slices.Sort(l)
		}
		s := buf[off : off+len(l) : off+len(l)]
		for j, g := range l {
			s[j] = tp.partition(g)
		}
		out[id] = s
		off += len(l)
	}
	return out
}

// ownerAssignment is assignment for an owner array: owner[g] is the index
// in ids of the member that gets partition g, or -1.
func (tp *topology) ownerAssignment(ids []string, owner []int32) Assignment {
	count := make([]int32, len(ids))
	for _, m := range owner {
		if m >= 0 {
			count[m]++
		}
	}
	// One buffer for every list; at[m] is where member m's next partition goes.
	at := make([]int32, len(ids))
	total := int32(0)
	for m, c := range count {
		at[m] = total
		total += c
	}
	buf := make([]TopicPartition, total)
	for t, name := range tp.names {
		b := tp.base[t]
		for p, m := range owner[b:tp.base[t+1]] {
			if m >= 0 {
				buf[at[m]] = TopicPartition{Topic: name, Partition: p}
				at[m]++
			}
		}
	}
	out := make(Assignment, len(ids))
	for m, id := range ids {
		end := at[m]
		out[id] = buf[end-count[m] : end : end]
	}
	return out
}

// bitset is a fixed-size set of small ints.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// idxHeap is a binary heap of member indices that can move or remove any
// member in O(log n). pos may be shared between heaps that hold disjoint
// members.
type idxHeap struct {
	items []int32
	pos   []int32 // pos[m]: index of m in items, -1 when absent
	less  func(a, b int32) bool
}

func (h *idxHeap) len() int { return len(h.items) }

func (h *idxHeap) top() int32 {
	if len(h.items) == 0 {
		return -1
	}
	return h.items[0]
}

func (h *idxHeap) push(m int32) {
	h.items = append(h.items, m)
	h.pos[m] = int32(len(h.items) - 1)
	h.up(len(h.items) - 1)
}

// init heapifies items that were appended directly (with pos set).
func (h *idxHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *idxHeap) remove(m int32) {
	i := int(h.pos[m])
	if i < 0 {
		return
	}
	last := len(h.items) - 1
	h.swap(i, last)
	h.items = h.items[:last]
	h.pos[m] = -1
	if i < last {
		h.fixAt(i)
	}
}

// fix restores the heap after m's key changed.
func (h *idxHeap) fix(m int32) {
	if i := int(h.pos[m]); i >= 0 {
		h.fixAt(i)
	}
}

func (h *idxHeap) fixAt(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *idxHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]] = int32(i)
	h.pos[h.items[j]] = int32(j)
}

func (h *idxHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *idxHeap) down(i0 int) bool {
	i, n := i0, len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			c = r
		}
		if !h.less(h.items[c], h.items[i]) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > i0
}

func newPos(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = -1
	}
	return p
}

// topicKey encodes a topic list as a map key (for grouping members by
// subscription).
func topicKey(ts []int32) []byte {
	b := make([]byte, 0, 4*len(ts))
	for _, t := range ts {
		b = append(b, byte(t), byte(t>>8), byte(t>>16), byte(t>>24))
	}
	return b
}
