package assign

import "github.com/kgrepl/kgrepl/sim/javaorder"

// movements is Kafka's PartitionMovements: for each partition moved during
// this assignment, where it originally came from and where it is now; and
// per topic and (from, to) pair, the partitions so moved.
type movements struct {
	src, dst []int32                          // partition -> original holder / current holder; src -1: not moved
	sets     map[uint64]*javaorder.Map[int32] // by key(t, src, dst)
	n, T     uint64
	perTopic []int32
	hash     func(g int32) int32 // TopicPartition.hashCode of partition g
}

// key packs (topic, source member, destination member) into one integer.
func (mv *movements) key(t, src, dst int32) uint64 {
	return (uint64(src)*mv.n+uint64(dst))*mv.T + uint64(t)
}

func newMovements(tp *topology, n int) movements {
	P, T := tp.total(), len(tp.names)
	hash := func(g int32) int32 { p := tp.partition(g); return javaorder.TopicPartitionHash(p.Topic, p.Partition) }
	mv := movements{src: make([]int32, P), dst: make([]int32, P), sets: map[uint64]*javaorder.Map[int32]{}, perTopic: make([]int32, T), hash: hash,
		n: uint64(n), T: uint64(T)}
	for g := range mv.src {
		mv.src[g] = -1
	}
	return mv
}

// pick is getTheActualPartitionToBeMoved: moving g from `from` to `to`, if
// some partition of the same topic earlier moved from `to` to g's original
// holder, move that one back instead: the first of Kafka's HashSet of such
// partitions in Java's iteration order.
func (mv *movements) pick(g, from, to, t int32) int32 {
	if mv.perTopic[t] == 0 {
		return g
	}
	if s := mv.src[g]; s >= 0 {
		from = s
	}
	if set := mv.sets[mv.key(t, to, from)]; set != nil {
		if first, ok := set.First(); ok {
			return first
		}
	}
	return g
}

// record notes that g moves from `from` to `to`.
func (mv *movements) record(g, from, to, t int32) {
	if s := mv.src[g]; s >= 0 {
		mv.drop(g, t)
		if s != to {
			mv.add(g, s, to, t)
		}
		return
	}
	mv.add(g, from, to, t)
}

func (mv *movements) add(g, from, to, t int32) {
	mv.src[g], mv.dst[g] = from, to
	key := mv.key(t, from, to)
	set := mv.sets[key]
	if set == nil { // Kafka: new HashSet<>() for a pair with no moved partition
		// TopicPartition is not Comparable: a tree bin orders by hash code
		// alone (a topic's partitions never share one).
		set = javaorder.NewMap[int32](javaorder.DefaultCapacity, nil)
		mv.sets[key] = set
	}
	set.Put(g, mv.hash(g))
	mv.perTopic[t]++
}

func (mv *movements) drop(g, t int32) {
	key := mv.key(t, mv.src[g], mv.dst[g])
	set := mv.sets[key]
	set.Remove(g, mv.hash(g))
	if set.Len() == 0 { // Kafka drops the empty set from its map
		delete(mv.sets, key)
	}
	mv.src[g], mv.dst[g] = -1, -1
	mv.perTopic[t]--
}
