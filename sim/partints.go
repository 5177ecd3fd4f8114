package sim

import (
	"fmt"
	"slices"
	"strings"
)

// partInts is a member's map from its partitions to an offset (positions,
// processed, committed), as map[TopicPartition]int was: a member holds a
// few partitions, so up to partIntsFew of them sit in a slice scanned with
// TopicPartition compares (no hashing of the topic name); past that, a map.
// Nothing ranges over it: get, set, del and reset are the whole interface.
// The zero value is empty and ready.
type partInts struct {
	few  []partInt              // insertion order; nil once many is in use
	many map[TopicPartition]int // past partIntsFew entries
}

type partInt struct {
	tp TopicPartition
	v  int
}

// partIntsFew is the most entries kept in the slice.
const partIntsFew = 16

func (p *partInts) find(tp TopicPartition) int {
	for i := range p.few {
		if p.few[i].tp == tp {
			return i
		}
	}
	return -1
}

// get is v, ok := m[tp].
func (p *partInts) get(tp TopicPartition) (int, bool) {
	if p.many != nil {
		v, ok := p.many[tp]
		return v, ok
	}
	if i := p.find(tp); i >= 0 {
		return p.few[i].v, true
	}
	return 0, false
}

// at is m[tp]: 0 when absent.
func (p *partInts) at(tp TopicPartition) int {
	v, _ := p.get(tp)
	return v
}

// set is m[tp] = v.
func (p *partInts) set(tp TopicPartition, v int) {
	if p.many != nil {
		p.many[tp] = v
		return
	}
	if i := p.find(tp); i >= 0 {
		p.few[i].v = v
		return
	}
	if len(p.few) < partIntsFew {
		p.few = append(p.few, partInt{tp, v})
		return
	}
	p.many = make(map[TopicPartition]int, 2*partIntsFew)
	for _, e := range p.few {
		p.many[e.tp] = e.v
	}
	p.many[tp] = v
	p.few = nil
}

// del is delete(m, tp).
func (p *partInts) del(tp TopicPartition) {
	if p.many != nil {
		delete(p.many, tp)
		return
	}
	if i := p.find(tp); i >= 0 {
		p.few = slices.Delete(p.few, i, i+1)
	}
}

// reset empties it, as m = map[TopicPartition]int{} did. The slice's array
// is kept: a clone has its own (clone).
func (p *partInts) reset() {
	p.few, p.many = p.few[:0], nil
}

// len is len(m).
func (p *partInts) len() int {
	if p.many != nil {
		return len(p.many)
	}
	return len(p.few)
}

func (p partInts) clone() partInts {
	return partInts{few: cp(p.few), many: cpMap(p.many)}
}

// String spells it as fmt spells the map: entries in key order.
func (p partInts) String() string {
	var es []partInt
	if p.many != nil {
		for tp, v := range p.many {
			es = append(es, partInt{tp, v})
		}
	} else {
		es = cp(p.few)
	}
	slices.SortFunc(es, func(a, b partInt) int {
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
