package sim

import (
	"fmt"
	"slices"
	"strings"
)

// partInts is a member's map from its partitions to an offset (positions,
// processed, committed), as map[TopicPartition]int was. A partition the
// world numbers (inputIndex.slot, the number tpIndex gives it) is kept by
// that number in a slice sorted by it, found by binary search: no hashing
// of the topic name, and a clone copies one array. The hot paths carry the
// numbers with their partitions (Member.ownedSlots, commitReq.Slots) and
// use the *Hint methods, which check a number against the partition
// before trusting it. Any other partition (a member without a world, a
// topic the world does not have) is kept in a map. Nothing ranges over it:
// get, set, del and reset are the whole interface. The zero value is empty
// and ready, and numbers nothing (useIndex gives it the world's numbering).
type partInts struct {
	idx   *inputIndex            // the world's numbering, shared; nil: none
	es    []partInt              // by k, ascending
	other map[TopicPartition]int // partitions idx does not number
}

type partInt struct {
	k int32 // the partition's slot
	v int
}

// useIndex gives p the world's numbering of its input partitions; p must
// be empty.
func (p *partInts) useIndex(x *inputIndex) { p.idx = x }

// slot is tp's number, checking hint first (-1: none).
func (p *partInts) slot(tp TopicPartition, hint int32) (int32, bool) {
	if p.idx == nil {
		return 0, false
	}
	s, ok := p.idx.slotHint(tp, hint)
	return int32(s), ok
}

// find is where k is in es, or where it would go.
func (p *partInts) find(k int32) (int, bool) {
	lo, hi := 0, len(p.es)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if p.es[h].k < k {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(p.es) && p.es[lo].k == k
}

// get is v, ok := m[tp].
func (p *partInts) get(tp TopicPartition) (int, bool) { return p.getHint(tp, -1) }

// getHint is get with tp's slot, if known, as hint.
func (p *partInts) getHint(tp TopicPartition, hint int32) (int, bool) {
	k, ok := p.slot(tp, hint)
	if !ok {
		v, ok := p.other[tp]
		return v, ok
	}
	if i, ok := p.find(k); ok {
		return p.es[i].v, true
	}
	return 0, false
}

// at is m[tp]: 0 when absent.
func (p *partInts) at(tp TopicPartition) int {
	v, _ := p.get(tp)
	return v
}

// set is m[tp] = v.
func (p *partInts) set(tp TopicPartition, v int) { p.setHint(tp, -1, v) }

// setHint is set with tp's slot, if known, as hint. A member's partitions
// usually arrive in order, so a new one is usually appended.
func (p *partInts) setHint(tp TopicPartition, hint int32, v int) {
	k, ok := p.slot(tp, hint)
	if !ok {
		if p.other == nil {
			p.other = map[TopicPartition]int{}
		}
		p.other[tp] = v
		return
	}
	if n := len(p.es); n == 0 || p.es[n-1].k < k {
		p.es = append(p.es, partInt{k, v})
		return
	}
	i, found := p.find(k)
	if found {
		p.es[i].v = v
		return
	}
	p.es = slices.Insert(p.es, i, partInt{k, v})
}

// del is delete(m, tp).
func (p *partInts) del(tp TopicPartition) {
	k, ok := p.slot(tp, -1)
	if !ok {
		delete(p.other, tp)
		return
	}
	if i, found := p.find(k); found {
		p.es = slices.Delete(p.es, i, i+1)
	}
}

// reset empties it, as m = map[TopicPartition]int{} did. The slice's array
// is kept: a clone has its own (clone).
func (p *partInts) reset() {
	p.es, p.other = p.es[:0], nil
}

// len is len(m).
func (p *partInts) len() int { return len(p.es) + len(p.other) }

func (p partInts) clone() partInts {
	return partInts{idx: p.idx, es: cp(p.es), other: cpMap(p.other)}
}

// String spells it as fmt spells the map: entries in key order.
func (p partInts) String() string {
	type entry struct {
		tp TopicPartition
		v  int
	}
	es := make([]entry, 0, p.len())
	for _, e := range p.es {
		es = append(es, entry{p.idx.tps[e.k], e.v})
	}
	for tp, v := range p.other {
		es = append(es, entry{tp, v})
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := strings.Compare(a.tp.Topic, b.tp.Topic); c != 0 {
			return c
		}
		return a.tp.Partition - b.tp.Partition
	})
	var b strings.Builder
	b.WriteString("map[")
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v:%d", e.tp, e.v)
	}
	b.WriteByte(']')
	return b.String()
}
