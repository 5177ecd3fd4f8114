package sim

import (
	"strconv"
	"strings"
)

// recordNames spells input records (o2.3 in the default world, t1-0.3
// elsewhere) and reads them back as references: an input partition's index
// in the world's sorted input partitions and an offset. Log cells and the
// sink keep references, not names, and spell a name only when one is read
// (an input record's name is a function of where it is, so storing it for
// every record, as a string, cost more than the record itself). A world's
// topology never changes, so one recordNames is made by New and shared,
// read-only, by the world, its logs, its sink and every clone.
type recordNames struct {
	short bool       // the default topics: o2.3, p0.1
	index inputIndex // the world's input partitions
}

// name spells record off of tp.
// Name is name, for wire.Namer.
func (n *recordNames) Name(tp TopicPartition, off int) string { return n.name(tp, off) }

// AppendName is appendName, for wire.Namer.
func (n *recordNames) AppendName(b []byte, tp TopicPartition, off int) []byte {
	return n.appendName(b, tp, off)
}

func (n *recordNames) name(tp TopicPartition, off int) string {
	var buf [64]byte
	return string(n.appendName(buf[:0], tp, off))
}

// appendName appends the name of record off of tp to b.
func (n *recordNames) appendName(b []byte, tp TopicPartition, off int) []byte {
	if n.short {
		b = append(b, tp.Topic[0])
	} else {
		b = append(b, tp.Topic...)
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, int64(tp.Partition), 10)
	b = append(b, '.')
	return strconv.AppendInt(b, int64(off), 10)
}

// fnvName is the FNV-1a hash (32 bits) of the name of record off of tp
// continued from h: fnv(h, appendName(nil, tp, off)) without spelling the
// name (the partitioner hashes every invoice's key, World.outputSlot).
func (n *recordNames) fnvName(h uint32, tp TopicPartition, off int) uint32 {
	if n.short {
		h = (h ^ uint32(tp.Topic[0])) * fnvPrime
	} else {
		for i := 0; i < len(tp.Topic); i++ {
			h = (h ^ uint32(tp.Topic[i])) * fnvPrime
		}
		h = (h ^ '-') * fnvPrime
	}
	h = fnvInt(h, tp.Partition)
	h = (h ^ '.') * fnvPrime
	return fnvInt(h, off)
}

// fnvInt continues an FNV-1a hash with the decimal digits of v, as
// strconv.AppendInt spells it.
func fnvInt(h uint32, v int) uint32 {
	var buf [20]byte
	u, i := uint64(v), len(buf)
	if v < 0 {
		h, u = (h^'-')*fnvPrime, uint64(-v)
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		if u /= 10; u == 0 {
			break
		}
	}
	for ; i < len(buf); i++ {
		h = (h ^ uint32(buf[i])) * fnvPrime
	}
	return h
}

// FNV-1a's 32-bit offset basis and prime.
const (
	fnvBasis = 2166136261
	fnvPrime = 16777619
)

// isName reports whether s is exactly the name of record off of tp, without
// building the name on the heap.
func (n *recordNames) isName(s string, tp TopicPartition, off int) bool {
	var buf [64]byte
	return string(n.appendName(buf[:0], tp, off)) == s // compared, not kept: no allocation
}

// ref reads an input record's name back: the index of its partition among
// the input partitions, and its offset. ok is false for anything that is
// not spelled exactly as name spells an input record (an offset past
// maxRefOffset included), so that name(ref(s)) == s whenever ok.
func (n *recordNames) ref(s string) (part, off int, ok bool) {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 {
		return 0, 0, false
	}
	off, err := strconv.Atoi(s[dot+1:])
	if err != nil || off < 0 || off > maxRefOffset {
		return 0, 0, false
	}
	var tp TopicPartition
	if n.short {
		p, err := strconv.Atoi(s[1:dot])
		if err != nil || (s[0] != 'o' && s[0] != 'p') {
			return 0, 0, false
		}
		tp = TopicPartition{Topic: "orders", Partition: p}
		if s[0] == 'p' {
			tp.Topic = "payments"
		}
	} else {
		dash := strings.LastIndexByte(s[:dot], '-')
		if dash <= 0 {
			return 0, 0, false
		}
		p, err := strconv.Atoi(s[dash+1 : dot])
		if err != nil {
			return 0, 0, false
		}
		tp = TopicPartition{Topic: s[:dash], Partition: p}
	}
	part, ok = n.index.slot(tp, nil)
	if !ok || !n.isName(s, tp, off) { // "o02.3" or "o2.+3" parse, but are not names
		return 0, 0, false
	}
	return part, off, true
}

// maxRefOffset is the largest offset a reference holds (an int32). Input
// records are at most 1,000,000 in a world (kernel/limits.go), so every
// input record fits; a name past it is simply not taken as a reference.
const maxRefOffset = 1<<31 - 1
