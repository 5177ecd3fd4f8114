package topo

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// The Layout spells input records (o2.3 in the default world, t1-0.3
// elsewhere) and reads them back as references: an input partition's index
// in the world's sorted input partitions and an offset. Log cells and the
// sink keep references, not names, and spell a name only when one is read
// (an input record's name is a function of where it is, so storing it for
// every record, as a string, cost more than the record itself). A world's
// topology never changes, so one Layout is made by New and shared,
// read-only, by the world, its logs, its sink and every clone.

// Name spells record off of tp.
func (n *Layout) Name(tp wire.TopicPartition, off int) string {
	var buf [64]byte
	return string(n.AppendName(buf[:0], tp, off))
}

// InputAt is the input partition numbered i (wire.Namer; InputIndex.At).
func (n *Layout) InputAt(i int) wire.TopicPartition { return n.Input().At(i) }

// AppendName appends the name of record off of tp to b.
func (n *Layout) AppendName(b []byte, tp wire.TopicPartition, off int) []byte {
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

// FNVName is the FNV-1a hash (32 bits) of the name of record off of tp
// continued from h: fnv(h, AppendName(nil, tp, off)) without spelling the
// name (the partitioner hashes every invoice's key, client.Member.outputSlot).
func (n *Layout) FNVName(h uint32, tp wire.TopicPartition, off int) uint32 {
	return fnvInt(n.fnvPartition(h, tp), off)
}

// fnvPartition continues h with the partition's part of its records'
// names, the dot included ("o2." or "orders-2.").
func (n *Layout) fnvPartition(h uint32, tp wire.TopicPartition) uint32 {
	if n.short {
		h = (h ^ uint32(tp.Topic[0])) * FNVPrime
	} else {
		for i := 0; i < len(tp.Topic); i++ {
			h = (h ^ uint32(tp.Topic[i])) * FNVPrime
		}
		h = (h ^ '-') * FNVPrime
	}
	h = fnvInt(h, tp.Partition)
	return (h ^ '.') * FNVPrime
}

// Partitioner is the default partitioner of the invoices of one input
// partition's records (client.outputSlot: the FNV-1a hash of the record's
// name, modulo the output partitions), the partition's part of the name
// hashed once: Slot(off) is FNVName(FNVBasis, tp, off) modulo the
// output partitions, a record's digits hashed.
type Partitioner struct {
	h, outs uint32
	m       uint64       // reciprocal(outs), for mod
	pat     *slotPattern // the layout's, for outs; nil when outs has none
}

// Partitioner is the default partitioner of the invoices of tp's records.
func (n *Layout) Partitioner(tp wire.TopicPartition) Partitioner {
	return Partitioner{h: n.fnvPartition(FNVBasis, tp), outs: uint32(len(n.outputTPs)), m: n.outsM, pat: n.pattern()}
}

// PartitionerOf is Partitioner(tp) for an input partition whose number
// (InputIndex.Slot) is probably k: the partition's part of the name was
// hashed once, by New, when k is tp's number; any other k (-1: not known)
// costs the hash.
func (n *Layout) PartitionerOf(tp wire.TopicPartition, k int32) Partitioner {
	if n.input.Is(tp, k) {
		return n.InputPartitioner(k)
	}
	return n.Partitioner(tp)
}

// InputPartitioner is the partitioner of the input partition numbered k
// (0 <= k < len(Inputs())), its part of the name hashed once, by New: for
// a caller that has the number and not the partition (a fold's runs).
func (n *Layout) InputPartitioner(k int32) Partitioner {
	return Partitioner{h: n.inHash[k], outs: uint32(len(n.outputTPs)), m: n.outsM, pat: n.pattern()}
}

// pattern is the layout's slotPattern when it is its output partitions'
// (nil for none).
func (n *Layout) pattern() *slotPattern {
	if p := n.slotPat; p != nil && p.outs == uint32(len(n.outputTPs)) {
		return p
	}
	return nil
}

// Slot is the output partition, by its index in Outputs, of the invoice
// of record off.
func (p Partitioner) Slot(off int) int { return int(p.mod(fnvInt(p.h, off))) }

// mod is h % p.outs without a division (a DIV costs as much as the rest of
// a record's slot): Lemire, Kaser and Kurz's "Faster remainder by direct
// computation" (2019), exact for every 32-bit h and divisor, with m =
// reciprocal(outs) = ceil(2^64 / outs): the low 64 bits of m*h are the
// fraction h/outs, and their product with outs, over 2^64, the remainder.
func (p Partitioner) mod(h uint32) uint32 {
	hi, _ := bits.Mul64(p.m*uint64(h), uint64(p.outs))
	return uint32(hi)
}

// reciprocal is ceil(2^64 / d) modulo 2^64 (0 for d 1, whose remainders
// are all 0), for Partitioner.mod; d > 0.
func reciprocal(d uint32) uint64 { return ^uint64(0)/uint64(d) + 1 }

// Slots writes the output partition of the invoice of each record from
// offset first on (first >= 0) into out: out[i] is Slot(first+i). Ten
// consecutive offsets share every digit but the last, so it hashes those
// digits once for ten records and the last digit once each (FNV-1a reads
// a name's bytes in order): a run of records costs one step of the hash a
// record, where Slot costs one a digit.
func (p Partitioner) Slots(first int, out []int32) {
	var c Hundred
	p.SlotsFrom(first, out, &c)
}

// NoneIn reports whether no record of the partition from offset from to
// to-1 goes to output partition slot, one of outs: whether a run of slot's
// records that ends before from and one that starts at to read as one
// run of slot's, nothing of it between. It asks the partitioner about at
// most most records and says false past them (so does one output
// partition, unless from is to: every record between is slot's). buf is
// room for the slots it asks, returned grown for the next call; c is
// SlotsFrom's hundred (nil: none kept).
func (p Partitioner) NoneIn(slot, outs, from, to, most int, buf []int32, c *Hundred) (bool, []int32) {
	if from >= to || outs == 1 {
		return from >= to, buf
	}
	if to-from > most {
		return false, buf
	}
	if cap(buf) < to-from {
		buf = make([]int32, max(to-from, 64))
	}
	slots := buf[:to-from] // written whole by SlotsFrom: not cleared a call
	if c == nil {
		p.Slots(from, slots)
	} else {
		p.SlotsFrom(from, slots, c)
	}
	return !slices.Contains(slots, int32(slot)), buf
}

// SlotsFrom is Slots with c, the hash of a hundred's leading digits kept
// from a run of the partition's records to its next: the offsets of a
// hundred share every digit but the last two, so a run within the
// hundred of the previous one hashes one digit for each ten it reaches
// and one for each record (the producer's runs of a tick, a few records
// of each partition, come back to the same hundred tick after tick). c is
// a cache: any Hundred is right for any partitioner (it holds what it was
// hashed from), and one of another partitioner or hundred is hashed anew.
func (p Partitioner) SlotsFrom(first int, out []int32, c *Hundred) {
	for i := 0; i < len(out); {
		off := first + i
		tens := off / 10
		h := p.h // offsets 0..9 are one digit: the prefix is the partition's
		if tens > 0 {
			// tens's digits are its hundred's (none for 1..9) and its last
			if n := tens / 10; c.n != n || c.base != p.h {
				*c = Hundred{base: p.h, n: n, h: p.h}
				if n > 0 {
					c.h = fnvInt(p.h, n)
				}
			}
			if p.pat != nil {
				// outs a small power of two: the rest of the hundred's
				// slots are its class's, copied
				i += copy(out[i:], p.pat.slots[c.h&(p.outs-1)][off%100:])
				continue
			}
			h = (c.h ^ uint32('0'+tens%10)) * FNVPrime
		}
		if mask := p.outs - 1; p.outs&mask == 0 {
			// outs a power of two (T1's 4, and 1): the remainder is the
			// hash's low bits, where mod's two multiplications cost a
			// quarter of SlotsFrom's time
			for d := off % 10; d < 10 && i < len(out); d, i = d+1, i+1 {
				out[i] = int32((h ^ uint32('0'+d)) * FNVPrime & mask)
			}
			continue
		}
		for d := off % 10; d < 10 && i < len(out); d, i = d+1, i+1 {
			out[i] = int32(p.mod((h ^ uint32('0'+d)) * FNVPrime))
		}
	}
}

// slotPattern is, for output partitions of a power of two up to
// maxPatternOuts, the output partition of each record of a hundred (by
// offset % 100; from 10 on in hundred 0, whose first ten are one digit)
// for each class of the hundred's hash (its low bits, Hundred.h &
// (outs-1)). FNV-1a's low bits are a function of the low bits of the hash
// so far and of the bytes (an XOR, and a product modulo 2^32, keep them),
// and the remainder by a power of two is the hash's low bits: the records
// of two hundreds whose hashes have the same low bits go to the same
// partitions. SlotsFrom copies a hundred's slots from it where it hashed
// each record (T1: 4 output partitions, 4 classes of 100).
type slotPattern struct {
	outs  uint32
	slots [][100]int32 // by class
}

// maxPatternOuts bounds the output partitions a slotPattern is made for
// (400 bytes a class, a class an output partition).
const maxPatternOuts = 16

// newSlotPattern is the pattern for outs output partitions, nil when
// outs is not a power of two up to maxPatternOuts.
func newSlotPattern(outs uint32) *slotPattern {
	if outs == 0 || outs&(outs-1) != 0 || outs > maxPatternOuts {
		return nil
	}
	sp := &slotPattern{outs: outs, slots: make([][100]int32, outs)}
	for cls := range outs {
		for t := range uint32(10) {
			h := (cls ^ ('0' + t)) * FNVPrime // SlotsFrom's ten, from the class alone
			for d := range uint32(10) {
				sp.slots[cls][t*10+d] = int32((h ^ ('0' + d)) * FNVPrime & (outs - 1))
			}
		}
	}
	return sp
}

// Hundred is a partitioner's hash of the leading digits of the offsets
// of one hundred (offset / 100 = n), for SlotsFrom: FNV-1a of the
// partition's part of the name (base) continued with n's digits (none for
// n 0, so h is base). The zero Hundred is right too: hundred 0 of base 0.
type Hundred struct {
	base, h uint32
	n       int
}

// fnvInt continues an FNV-1a hash with the decimal digits of v, as
// strconv.AppendInt spells it.
func fnvInt(h uint32, v int) uint32 {
	var buf [20]byte
	u, i := uint64(v), len(buf)
	if v < 0 {
		h, u = (h^'-')*FNVPrime, uint64(-v)
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		if u /= 10; u == 0 {
			break
		}
	}
	for ; i < len(buf); i++ {
		h = (h ^ uint32(buf[i])) * FNVPrime
	}
	return h
}

// FNV-1a's 32-bit offset basis (FNVBasis) and prime.
const (
	FNVBasis = 2166136261
	FNVPrime = 16777619
)

// IsName reports whether s is exactly the name of record off of tp, without
// building the name on the heap.
func (n *Layout) IsName(s string, tp wire.TopicPartition, off int) bool {
	var buf [64]byte
	return string(n.AppendName(buf[:0], tp, off)) == s // compared, not kept: no allocation
}

// Ref reads an input record's name back: the index of its partition among
// the input partitions, and its offset. ok is false for anything that is
// not spelled exactly as name spells an input record (an offset past
// MaxRefOffset included), so that Name(Ref(s)) == s whenever ok.
func (n *Layout) Ref(s string) (part, off int, ok bool) {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 {
		return 0, 0, false
	}
	off, err := strconv.Atoi(s[dot+1:])
	if err != nil || off < 0 || off > MaxRefOffset {
		return 0, 0, false
	}
	var tp wire.TopicPartition
	if n.short {
		p, err := strconv.Atoi(s[1:dot])
		if err != nil || (s[0] != 'o' && s[0] != 'p') {
			return 0, 0, false
		}
		tp = wire.TopicPartition{Topic: "orders", Partition: p}
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
		tp = wire.TopicPartition{Topic: s[:dash], Partition: p}
	}
	part, ok = n.input.Slot(tp, nil)
	if !ok || !n.IsName(s, tp, off) { // "o02.3" or "o2.+3" parse, but are not names
		return 0, 0, false
	}
	return part, off, true
}

// MaxRefOffset is the largest offset a reference holds (an int32). Input
// records are at most 1,000,000 in a world (kernel/limits.go), so every
// input record fits; a name past it is simply not taken as a reference.
const MaxRefOffset = 1<<31 - 1
