package env

import (
	"math/bits"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// procSet is a set of processes named by their process number (the index in the
// World's list of processes): a bitset. Adding costs no allocation once the
// words exist, a world copies it as plain data (no pointers to remap), and
// it lists its members in process-number order, never in a map's random
// order. It stands for the map[*Member]bool the tick loop used to keep.
type procSet struct {
	words []uint64
	n     int // members
}

func (s *procSet) add(i int) {
	w := i >> 6
	if w >= len(s.words) {
		s.words = append(s.words, make([]uint64, w+1-len(s.words))...)
	}
	if bit := uint64(1) << (i & 63); s.words[w]&bit == 0 {
		s.words[w] |= bit
		s.n++
	}
}

func (s *procSet) remove(i int) {
	if w := i >> 6; w < len(s.words) {
		if bit := uint64(1) << (i & 63); s.words[w]&bit != 0 {
			s.words[w] &^= bit
			s.n--
		}
	}
}

func (s *procSet) has(i int) bool {
	w := i >> 6
	return w < len(s.words) && s.words[w]&(uint64(1)<<(i&63)) != 0
}

// len is the number of members.
func (s *procSet) len() int { return s.n }

// clear empties the set, keeping its words for reuse.
func (s *procSet) clear() {
	if s.n > 0 {
		clear(s.words)
		s.n = 0
	}
}

// addAll adds every member of o.
func (s *procSet) addAll(o *procSet) {
	if o.n == 0 {
		return
	}
	if len(s.words) < len(o.words) {
		s.words = append(s.words, make([]uint64, len(o.words)-len(s.words))...)
	}
	n := 0
	for i, w := range o.words {
		s.words[i] |= w
	}
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	s.n = n
}

// appendProcs appends procs[i] to out for each process number i in s, in
// process-number order.
func appendProcs[P any](s *procSet, out, procs []P) []P {
	for i, w := range s.words {
		for w != 0 {
			out = append(out, procs[i<<6+bits.TrailingZeros64(w)])
			w &= w - 1
		}
	}
	return out
}

func (s *procSet) clone() procSet {
	return procSet{words: store.Copy(s.words), n: s.n}
}
