package sim

import (
	"math/bits"
	"slices"

	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// consumedSet is which input partitions a running process of the group
// fetches now (processTable.markConsumed's answer), kept from tick to
// tick: the pause meter and the unavailability meter ask every tick of a
// rebalance, and at 1,000 members over 100,000 partitions looking at
// every member's every partition each time cost milliseconds a tick
// (issue 26's rolling restart in real time: about 600 ticks a restart).
// It keeps, per process (by process number), the partitions it counted
// and the signature it counted them under (whether it counts at all, and
// client.FetchSig), and counts, per input partition, the processes
// fetching it; a tick looks at each process's signature and recounts only
// the processes whose signature moved. The partitions no process fetches
// are a bitset, so the meters read the few a rebalance pauses without a
// pass over all of them.
//
// It lives in the world's scratch: a copy of the world starts with an
// empty one (valid false), so it never describes another world's
// processes.
type consumedSet struct {
	valid bool
	// inMeters: World.Step is running its meters, the pause meter and
	// the unavailability meter one after the other, nothing changing
	// between: once looked (fresh), the second needs no second look. Step
	// clears both after them, so a question between ticks looks again.
	inMeters, fresh bool
	cnt             []int32  // by input index: the processes fetching it
	zero            []uint64 // bit i: cnt[i] == 0
	procs           []consumedProc
	// live lists the process numbers not yet seen superseded (a process
	// superseded stays so, and counts nothing: a roll of 1,000 members
	// leaves 1,000 of them, looked at no more).
	live []int32
}

// consumedProc is what one process counted.
type consumedProc struct {
	m   *client.Member
	on  bool // it counts: its client's newest, running, in the group, not a zombie
	sig client.FetchSig
	idx []int32 // the input indexes it fetches (when on)
}

// reset empties it for another world, keeping its arrays.
func (c *consumedSet) reset() consumedSet {
	clear(c.procs) // drop the processes
	return consumedSet{cnt: c.cnt[:0], zero: c.zero[:0], procs: c.procs[:0], live: c.live[:0]}
}

// update brings it to the processes as they are now.
func (c *consumedSet) update(t *processTable, layout *topo.Layout) {
	if c.inMeters && c.fresh && c.valid {
		return
	}
	c.fresh = c.inMeters
	n := len(layout.Inputs())
	if !c.valid || len(c.cnt) != n {
		c.cnt = slices.Grow(c.cnt[:0], n)[:n]
		clear(c.cnt)
		words := (n + 63) / 64
		c.zero = slices.Grow(c.zero[:0], words)[:words]
		for i := range c.zero {
			c.zero[i] = ^uint64(0)
		}
		if n%64 != 0 {
			c.zero[words-1] = 1<<(n%64) - 1
		}
		clear(c.procs)
		c.procs, c.live = c.procs[:0], c.live[:0]
		c.valid = true
	}
	for j := len(c.procs); j < len(t.procs); j++ {
		c.procs = append(c.procs, consumedProc{})
		c.live = append(c.live, int32(j))
	}
	keep := c.live[:0]
	for _, j := range c.live {
		m, e := t.procs[j], &c.procs[j]
		if !m.Superseded() {
			keep = append(keep, j)
		}
		on := !m.Superseded() && m.Alive && m.InGroup() && !m.Zombie
		var sig client.FetchSig
		if on {
			sig = m.FetchSig()
		}
		if e.m == m && e.on == on && e.sig == sig {
			continue
		}
		for _, i := range e.idx {
			if c.cnt[i]--; c.cnt[i] == 0 {
				c.zero[i>>6] |= 1 << (i & 63)
			}
		}
		e.m, e.on, e.sig, e.idx = m, on, sig, e.idx[:0]
		if !on {
			continue
		}
		topic, in := "", topo.Span{} // Owned is sorted: look each topic up once
		for _, tp := range m.Owned {
			if tp.Topic != topic {
				topic = tp.Topic
				in, _ = layout.Span(topic)
			}
			if i, ok := in.Index(tp.Partition); ok && m.FetchesHint(tp, int32(i)) {
				e.idx = append(e.idx, int32(i))
				if c.cnt[i]++; c.cnt[i] == 1 {
					c.zero[i>>6] &^= 1 << (i & 63)
				}
			}
		}
	}
	c.live = keep
}

// unconsumed calls f with each input index of span no process fetches,
// in ascending order.
func (c *consumedSet) unconsumed(s topo.Span, f func(i int)) {
	end := s.At + s.N
	for w := s.At >> 6; w<<6 < end; w++ {
		word := c.zero[w]
		if lo := s.At - w<<6; lo > 0 {
			word &^= 1<<lo - 1
		}
		if hi := end - w<<6; hi < 64 {
			word &= 1<<hi - 1
		}
		for word != 0 {
			f(w<<6 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}

// consumed reports whether some process fetches input index i.
func (c *consumedSet) consumed(i int) bool { return c.cnt[i] > 0 }
