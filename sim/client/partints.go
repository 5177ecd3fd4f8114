package client

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// partInts is a member's map from its partitions to an offset (positions,
// processed, committed), as map[wire.TopicPartition]int was. A partition the
// world numbers (topo.InputIndex.slot, the number tpIndex gives it) is kept by
// that number in a slice sorted by it: no hashing of the topic name, and a
// clone copies one array. The hot paths carry the numbers with their
// partitions (subscription.ownedSlots, OffsetCommitRequest.Slots) and use slotOf, which
// checks a number against the partition before trusting it, and the *Slot
// methods, which search by number from a cursor. Without a number, a member of a few
// partitions (up to partIntsScan) is scanned comparing partitions, as
// cheap as finding the number; past that, the number is looked up. Any
// other partition (a member without a world, a topic the world does not
// have) is kept in a map. Nothing ranges over it: get, set, delAll and
// reset are the whole interface. The zero value is empty and ready, and
// numbers nothing (useIndex gives it the world's numbering).
type partInts struct {
	idx   *topo.InputIndex            // the world's numbering, shared; nil: none
	es    []partInt                   // by k, ascending
	other map[wire.TopicPartition]int // partitions idx does not number
	// keys counts the changes to which partitions it holds (an insert, a
	// delete, a reset), not to their values: a member's FetchSig.
	keys uint32
}

type partInt struct {
	tp wire.TopicPartition
	k  int32 // tp's slot
	v  int
}

// partIntsScan is the most entries scanned for a partition whose number
// is not known.
const partIntsScan = 16

// useIndex gives p the world's numbering of its input partitions; p must
// be empty.
func (p *partInts) useIndex(x *topo.InputIndex) { p.idx = x }

// find is where slot k is in es, or where it would go.
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

// seek is find for a list of slots in ascending order: *at is where the
// previous one was found, plus one, so the next is usually right there;
// *at moves past what is found.
func (p *partInts) seek(k int32, at *int) (int, bool) {
	i, found := *at, false
	if i < len(p.es) && p.es[i].k == k {
		found = true
	} else {
		i, found = p.find(k)
	}
	if found {
		*at = i + 1
	}
	return i, found
}

// getSlot is getHint for a partition whose slot k is already checked
// (topo.InputIndex.is), or -1, in a list in slot order: at is seek's cursor.
func (p *partInts) getSlot(tp wire.TopicPartition, k int32, at *int) (int, bool) {
	if k < 0 {
		return p.get(tp)
	}
	if i, ok := p.seek(k, at); ok {
		return p.es[i].v, true
	}
	return 0, false
}

// setSlot is setHint for a partition whose slot k is already checked, or
// -1, in a list in slot order: at is seek's cursor.
func (p *partInts) setSlot(tp wire.TopicPartition, k int32, v int, at *int) {
	if k < 0 {
		p.set(tp, v)
		return
	}
	i, ok := p.seek(k, at)
	if ok {
		p.es[i].v = v
		return
	}
	p.es = slices.Insert(p.es, i, partInt{tp, k, v}) // seek's miss is find's place for k
	p.keys++
}

// refSlot is where the value of the partition whose slot k is already
// checked (slotOf) is held, nil when k is -1 or the partition is not held:
// getSlot and setSlot in one search, for a list in slot order (at is
// seek's cursor). The pointer is good until the next insert or delete.
func (p *partInts) refSlot(k int32, at *int) *int {
	if k < 0 {
		return nil
	}
	if i, ok := p.seek(k, at); ok {
		return &p.es[i].v
	}
	return nil
}

// refHinted is refSlot(slotOf(tp, hint), at) when it finds the
// partition, nil when it does not say (then ask those): hint is trusted as
// tp's slot when the entry held under it is tp's, which it is only then
// (every entry is put under its partition's slot), so the world's
// numbering is not read (slotOf's check reads a 24-byte entry of an array
// of every input partition: at T2's 100,000, a cache miss for each record
// a member takes in and each it finishes). The cursor moves as seek's.
func (p *partInts) refHinted(tp wire.TopicPartition, hint int32, at *int) *int {
	if p.idx == nil || hint < 0 {
		return nil
	}
	if i, ok := p.seek(hint, at); ok && p.es[i].tp == tp {
		return &p.es[i].v
	}
	return nil
}

// getHinted is getSlot(tp, k, at) for k = slotOf(tp, hint), and k (tp's
// slot, checked, or -1), trusting hint as refHinted does when the entry
// held under it is tp's: the world's numbering is read only when it is
// not.
func (p *partInts) getHinted(tp wire.TopicPartition, hint int32, at *int) (int, int32, bool) {
	if ref := p.refHinted(tp, hint, at); ref != nil {
		return *ref, hint, true
	}
	k := p.slotOf(tp, hint)
	v, ok := p.getSlot(tp, k, at)
	return v, k, ok
}

// setRef sets the value of the partition whose slot k is already
// checked (-1: not known) through refSlot, and reports whether it did:
// false when the partition is not held (or k is -1), for setHint.
func (p *partInts) setRef(k int32, at *int, v int) bool {
	if ref := p.refSlot(k, at); ref != nil {
		*ref = v
		return true
	}
	return false
}

// slotOf is hint when it is tp's slot, else -1.
func (p *partInts) slotOf(tp wire.TopicPartition, hint int32) int32 {
	if p.idx != nil && p.idx.Is(tp, hint) {
		return hint
	}
	return -1
}

// scan is where tp is in a short es (false: not there, or es is long).
func (p *partInts) scan(tp wire.TopicPartition) (int, bool) {
	if len(p.es) > partIntsScan {
		return 0, false
	}
	for i := range p.es {
		if p.es[i].tp.Partition == tp.Partition && p.es[i].tp.Topic == tp.Topic {
			return i, true
		}
	}
	return 0, false
}

// lookup is where tp is in es (found), or where it would go; numbered
// false: the world does not number tp (it belongs in other). hint is tp's
// slot if known (-1: not). A short es that does not hold tp, with other
// empty, answers absent without looking tp's number up (i and k are then
// not set: lookup with insert set for a place to insert).
func (p *partInts) lookup(tp wire.TopicPartition, hint int32, insert bool) (i int, k int32, found, numbered bool) {
	if p.idx == nil {
		return 0, 0, false, false
	}
	if p.idx.Is(tp, hint) {
		i, found = p.find(hint)
		return i, hint, found, true
	}
	if i, ok := p.scan(tp); ok {
		return i, p.es[i].k, true, true
	}
	if !insert && len(p.es) <= partIntsScan && len(p.other) == 0 {
		return 0, 0, false, true
	}
	s, ok := p.idx.Slot(tp, nil)
	if !ok {
		return 0, 0, false, false
	}
	k = int32(s)
	i, found = p.find(k)
	return i, k, found, true
}

// reserve makes room for n more partitions without growing again.
func (p *partInts) reserve(n int) { p.es = slices.Grow(p.es, n) }

// get is v, ok := m[tp].
func (p *partInts) get(tp wire.TopicPartition) (int, bool) { return p.getHint(tp, -1) }

// getHint is get with tp's slot, if known, as hint.
func (p *partInts) getHint(tp wire.TopicPartition, hint int32) (int, bool) {
	if p.idx != nil && p.idx.Is(tp, hint) { // the hot path's: lookup's first case, without its four results
		if i, found := p.find(hint); found {
			return p.es[i].v, true
		}
		return 0, false
	}
	i, _, found, numbered := p.lookup(tp, hint, false)
	if !numbered {
		v, ok := p.other[tp]
		return v, ok
	}
	if found {
		return p.es[i].v, true
	}
	return 0, false
}

// at is m[tp]: 0 when absent.
func (p *partInts) at(tp wire.TopicPartition) int {
	v, _ := p.get(tp)
	return v
}

// set is m[tp] = v.
func (p *partInts) set(tp wire.TopicPartition, v int) { p.setHint(tp, -1, v) }

// setHint is set with tp's slot, if known, as hint.
func (p *partInts) setHint(tp wire.TopicPartition, hint int32, v int) {
	if p.idx != nil && p.idx.Is(tp, hint) { // as in getHint
		if i, found := p.find(hint); found {
			p.es[i].v = v
			return
		}
	}
	i, k, found, numbered := p.lookup(tp, hint, true)
	switch {
	case !numbered:
		if p.other == nil {
			p.other = map[wire.TopicPartition]int{}
		}
		p.other[tp] = v
		p.keys++
	case found:
		p.es[i].v = v
	default:
		p.es = slices.Insert(p.es, i, partInt{tp, k, v})
		p.keys++
	}
}

// delAll is delete(m, tp) for every partition of tps, in one pass over the
// entries (taking half of a 1,000-partition member's partitions away one
// at a time, each moving the entries after it, moved about 250,000
// entries: 10 MB).
func (p *partInts) delAll(tps []wire.TopicPartition) {
	if len(tps) == 0 || p.len() == 0 {
		return
	}
	p.keys++
	if p.idx == nil {
		for _, tp := range tps {
			delete(p.other, tp)
		}
		return
	}
	ks := p.idx.SlotsOf(make([]int32, 0, len(tps)), tps)
	for i, k := range ks {
		if k < 0 {
			delete(p.other, tps[i]) // not numbered: kept in other
		}
	}
	slices.Sort(ks) // es is in slot order too: one merge
	kept, j := 0, 0
	for _, e := range p.es {
		for j < len(ks) && ks[j] < e.k {
			j++
		}
		if j < len(ks) && ks[j] == e.k {
			continue
		}
		p.es[kept] = e
		kept++
	}
	clear(p.es[kept:]) // drop the partitions' topic strings
	p.es = p.es[:kept]
}

// reset empties it, as m = map[wire.TopicPartition]int{} did. The slice's array
// is kept: a clone has its own (clone).
func (p *partInts) reset() {
	p.es, p.other = p.es[:0], nil
	p.keys++
}

// len is len(m).
func (p *partInts) len() int { return len(p.es) + len(p.other) }

// cloneIn copies p, its entries appended to *buf (cutInto): World.Clone
// puts every member's in one array. An insert reallocates the copy's; a
// set, delete or reset stays within its own entries.
func (p *partInts) cloneIn(buf *[]partInt) partInts {
	return partInts{idx: p.idx, es: store.CutInto(buf, p.es), other: store.CopyMap(p.other), keys: p.keys}
}

// String spells it as fmt spells the map: entries in key order.
func (p partInts) String() string {
	type entry struct {
		tp wire.TopicPartition
		v  int
	}
	es := make([]entry, 0, p.len())
	for _, e := range p.es {
		es = append(es, entry{e.tp, e.v})
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
