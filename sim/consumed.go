package sim

import (
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

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
// fetching it. The partitions no process fetches are a bitset, so the
// meters read the few a rebalance pauses without a pass over all of them.
//
// A process's fetch set changes only where something runs it or acts on
// it: the World hands it a packet (deliver), a timer (fire) or a turn
// (actMembers), starts or supersedes a process (newProcess), or a user's
// command or a deploy acts on it (commands.go, deploy.go, start.go). Each
// of those marks the process touched (World.touch), a command that acts
// on many of them all of them (World.touchAll), and an update looks again
// only at the processes touched since the one before, comparing their
// signatures (and at all of them after a touchAll, or when the set is
// new): a tick of a rebalance looks at the few processes that ran, not at
// the 1,000 live ones. The sim package's tests run with checkConsumed on,
// which recounts from scratch after every update and fails on the first
// difference (consumedSet.verify).
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
	// leaves 1,000 of them, looked at no more): what a full look looks at.
	live []int32
	// all: the next update looks at every live process (touchAll, or a new
	// set); otherwise at touched, the process numbers marked since the
	// last update, each once (consumedProc.touched).
	all     bool
	touched []int32
	// gen names what the set counts: a number from nextGen (unique
	// across worlds) taken at the end of each update that recounted some
	// process or made the set anew, 0 before the first (and while an
	// update recounts). The pause meter keeps its paused list by it
	// (pausedIndexes): an eager rebalance pauses 100,000 partitions tick
	// after tick, and while nobody's fetch set moves the list is the same.
	gen uint64
}

// genSeq numbers consumedSet.gen and scratch.pausedGen, across worlds: a
// copy of a world (its own scratch, its Unavailability copied) never meets
// a number of another's.
var genSeq atomic.Uint64

func nextGen() uint64 { return genSeq.Add(1) }

// consumedProc is what one process counted.
type consumedProc struct {
	m   *client.Member
	on  bool // it counts: its client's newest, running, in the group, not a zombie
	sig client.FetchSig
	idx []int32 // the input indexes it fetches (when on)
	// touched: listed in consumedSet.touched for the next update.
	touched bool
}

// reset empties it for another world, keeping its arrays.
func (c *consumedSet) reset() consumedSet {
	clear(c.procs) // drop the processes
	return consumedSet{cnt: c.cnt[:0], zero: c.zero[:0], procs: c.procs[:0], live: c.live[:0], touched: c.touched[:0]}
}

// touch marks process j for the next update to look at. A process the
// set does not know yet (started since the last update, or the set not
// made yet) needs no mark: the update looks at every process it finds
// new.
func (c *consumedSet) touch(j int) {
	if !c.valid || c.all || j >= len(c.procs) {
		return
	}
	if e := &c.procs[j]; !e.touched {
		e.touched = true
		c.touched = append(c.touched, int32(j))
	}
}

// touchAll marks every process for the next update.
func (c *consumedSet) touchAll() { c.all = true }

// update brings it to the processes as they are now: it looks at the
// processes touched since the last update (every live one after a
// touchAll or when the set is new) and recounts those whose signature
// moved.
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
		c.procs, c.live, c.touched = c.procs[:0], c.live[:0], c.touched[:0]
		c.valid, c.all = true, true
		c.gen = 0
	}
	for j := len(c.procs); j < len(t.procs); j++ {
		c.procs = append(c.procs, consumedProc{})
		c.live = append(c.live, int32(j))
		if !c.all {
			c.procs[j].touched = true
			c.touched = append(c.touched, int32(j))
		}
	}
	if c.all {
		for _, j := range c.touched {
			c.procs[j].touched = false
		}
		c.touched = c.touched[:0]
		keep := c.live[:0]
		for _, j := range c.live {
			if c.look(t.procs[j], j, layout) {
				keep = append(keep, j)
			}
		}
		c.live, c.all = keep, false
	} else {
		for _, j := range c.touched {
			c.procs[j].touched = false
			c.look(t.procs[j], j, layout)
		}
		c.touched = c.touched[:0]
	}
	if c.gen == 0 {
		c.gen = nextGen()
	}
	if checkConsumed {
		if err := c.verify(t, layout); err != nil {
			panic(err)
		}
	}
}

// look recounts process j (m) if its signature moved; it reports whether
// m is not superseded (a full look keeps it in live).
func (c *consumedSet) look(m *client.Member, j int32, layout *topo.Layout) bool {
	e := &c.procs[j]
	on := !m.Superseded() && m.Alive && m.InGroup() && !m.Zombie
	var sig client.FetchSig
	if on {
		sig = m.FetchSig()
	}
	if e.m == m && e.on == on && e.sig == sig {
		return !m.Superseded()
	}
	c.gen = 0 // a recount: update names the set anew
	for _, i := range e.idx {
		if c.cnt[i]--; c.cnt[i] == 0 {
			c.zero[i>>6] |= 1 << (i & 63)
		}
	}
	e.m, e.on, e.sig, e.idx = m, on, sig, e.idx[:0]
	if !on {
		return !m.Superseded()
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
	return true
}

// checkConsumed makes every update check itself against a count from
// scratch (verify), panicking on a difference: the sim package's tests
// turn it on (consumed_test.go), so every world they step proves that
// the processes touched are all the processes whose fetch set moved.
var checkConsumed = false

// verify counts, from scratch, the processes fetching each input
// partition (every process, its client's newest, running, in the group,
// not a zombie, counting the owned partitions it fetches) and reports the
// first partition where the set's count, or its unconsumed bit, differs.
func (c *consumedSet) verify(t *processTable, layout *topo.Layout) error {
	inputs := layout.Inputs()
	want := make([]int32, len(inputs))
	for _, m := range t.procs {
		if m.Superseded() || !m.Alive || !m.InGroup() || m.Zombie {
			continue
		}
		for _, tp := range m.Owned {
			in, ok := layout.Span(tp.Topic)
			if !ok {
				continue
			}
			if i, ok := in.Index(tp.Partition); ok && m.FetchesHint(tp, -1) {
				want[i]++
			}
		}
	}
	for i, n := range want {
		if c.cnt[i] != n || (c.zero[i>>6]>>(i&63)&1 == 1) != (n == 0) {
			return fmt.Errorf("consumedSet: %s is fetched by %d process(es), the set counts %d (unconsumed bit %d)",
				inputs[i], n, c.cnt[i], c.zero[i>>6]>>(i&63)&1)
		}
	}
	return nil
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
