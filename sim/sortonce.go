package sim

import (
	"math/bits"
	"slices"
)

// sortOnce is slices.Compact(slices.Sort(l)) for the input numbers of the
// offsets' journal (coord.Offsets.TakeTouched), in l's array; seen is a
// bitset its caller keeps for it (all zero between calls). A tick's
// commits write a member's partitions at a time, in no one order across
// members (an auto-commit of 100 partitions a tick or so in T2's rolls,
// 1,000 members' commits on revocation in a classic one): sorting them
// was 6% of a roll without traffic. Past a few numbers, when they lie
// close enough (words between the lowest and the highest no more than 32
// a number), they are marked in seen and read back in order instead.
func sortOnce(l []int32, seen *[]uint64) []int32 {
	if len(l) < 16 {
		slices.Sort(l)
		return slices.Compact(l)
	}
	lo, hi := l[0], l[0]
	for _, i := range l {
		lo, hi = min(lo, i), max(hi, i)
	}
	wlo, whi := int(lo>>6), int(hi>>6)
	if whi-wlo+1 > 32*len(l) {
		slices.Sort(l)
		return slices.Compact(l)
	}
	if len(*seen) <= whi {
		*seen = slices.Grow(*seen, whi+1-len(*seen))[:whi+1]
	}
	b := *seen
	for _, i := range l {
		b[i>>6] |= 1 << (i & 63)
	}
	out := l[:0] // every number is read: writing l from its start is safe
	for w := wlo; w <= whi; w++ {
		x := b[w]
		if x == 0 {
			continue
		}
		b[w] = 0
		for x != 0 {
			out = append(out, int32(w<<6+bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
	return out
}
