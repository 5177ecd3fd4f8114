package topo

// slotPattern is, for output partitions of a power of two up to
// maxPatternOuts, the output partition of each record of a hundred (by
// offset % 100; from 10 on in hundred 0, whose first ten are one digit)
// for each class of the hundred's hash (its low bits, Hundred.h &
// (outs-1)). FNV-1a's low bits are a function of the low bits of the hash
// so far and of the bytes (an XOR, and a product modulo 2^32, keep them),
// and the remainder by a power of two is the hash's low bits: the records
// of two hundreds whose hashes have the same low bits go to the same
// partitions. SlotsFrom copies a hundred's slots from it where it hashed
// each record (T1: 4 output partitions, 4 classes of 100), and Tally
// reads a run's shares off its tables where the producer counted them
// record by record.
type slotPattern struct {
	outs  uint32
	slots [][100]int32 // by class
	// The tables of Tally, for up to maxTallyOuts output partitions (nil
	// past): by class, and in each for each place a in a hundred, the
	// output partitions that get a record from a on, in the order of
	// their first ones (ord, outs entries, those past the last at place
	// 100); for each place b, each output partition's records before b
	// (before) and its last one before b (lastBefore).
	ord        []placed
	before     []uint8
	lastBefore []uint8
}

// placed is an output partition and the place of its first record from
// some place on (100: none).
type placed struct{ out, at uint8 }

// maxPatternOuts bounds the output partitions a slotPattern is made for
// (400 bytes a class, a class an output partition); maxTallyOuts those
// it keeps Tally's tables for (about 400 bytes a class per output
// partition: 26 KB for 8).
const (
	maxPatternOuts = 16
	maxTallyOuts   = 8
)

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
	if outs <= maxTallyOuts {
		sp.tally()
	}
	return sp
}

// tally makes Tally's tables from the slots.
func (sp *slotPattern) tally() {
	o := int(sp.outs)
	sp.ord = make([]placed, len(sp.slots)*100*o)
	sp.before = make([]uint8, len(sp.slots)*101*o)
	sp.lastBefore = make([]uint8, len(sp.slots)*101*o)
	for cls, slots := range sp.slots {
		for b := 1; b <= 100; b++ {
			at := (cls*101 + b) * o
			copy(sp.before[at:at+o], sp.before[at-o:at])
			copy(sp.lastBefore[at:at+o], sp.lastBefore[at-o:at])
			sp.before[at+int(slots[b-1])]++
			sp.lastBefore[at+int(slots[b-1])] = uint8(b - 1)
		}
		for a := range 100 {
			ord := sp.ord[(cls*100+a)*o:][:o]
			n := 0
			for i := a; i < 100 && n < o; i++ {
				if !containsOut(ord[:n], slots[i]) {
					ord[n] = placed{out: uint8(slots[i]), at: uint8(i)}
					n++
				}
			}
			for ; n < o; n++ {
				ord[n] = placed{at: 100}
			}
		}
	}
}

func containsOut(ps []placed, out int32) bool {
	for _, p := range ps {
		if int32(p.out) == out {
			return true
		}
	}
	return false
}

// Tally tells share, for the records of the partition from offset first
// on (count of them, count > 0), each output partition's share of them,
// a hundred at a time: for each hundred in offset order, each output
// partition that gets a record of it, in the order of their first
// records there, with its first and last record there and how many. It
// reports false, and tells nothing, when the layout keeps no tables for
// its output partitions (a power of two up to maxTallyOuts) or the
// records start in hundred 0: then ask SlotsFrom. c is SlotsFrom's
// hundred. The producer's split of a run among the output partitions
// (client.produceInvoiceRun) costs the hundreds it spans, not its records.
func (p Partitioner) Tally(first, count int, c *Hundred, share func(out int32, first, last, n int)) bool {
	sp := p.pat
	if sp == nil || sp.ord == nil || first < 100 {
		return false
	}
	o := int(p.outs)
	for off, end := first, first+count; off < end; {
		if n := off / 100; c.n != n || c.base != p.h {
			*c = Hundred{base: p.h, n: n, h: fnvInt(p.h, n)}
		}
		cls := int(c.h & (p.outs - 1))
		a := off % 100
		base := off - a
		b := min(100, a+end-off)
		before, last := sp.before[cls*101*o:][:101*o], sp.lastBefore[cls*101*o:][:101*o]
		for _, e := range sp.ord[(cls*100+a)*o:][:o] {
			if int(e.at) >= b {
				break
			}
			k := int(e.out)
			share(int32(e.out), base+int(e.at), base+int(last[b*o+k]), int(before[b*o+k])-int(before[a*o+k]))
		}
		off = base + b
	}
	return true
}
