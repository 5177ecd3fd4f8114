package sim_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
	"github.com/kgrepl/kgrepl/sim/simtest"
)

// timeLagNow is every input partition's time lag at the end of the tick
// that just ran, by the definition alone: the tick now minus the tick the
// record at the committed offset (0 when none) was appended, 0 when the
// committed offset is at or past the log end. It reads each cell whole
// (Cells.At), not the observer's TickAt.
func timeLagNow(w *sim.World) []int {
	var out []int
	for _, tp := range w.Layout().Inputs() {
		c, _ := w.Group.Offsets.CommittedOffset(tp)
		l := w.Log(tp)
		lag := 0
		if c < l.HW() {
			lag = w.Tick - l.Cells.At(c).Tick
		}
		out = append(out, lag)
	}
	return out
}

// TestPropertyTimeLag: on random small worlds in real time (tick.ms 1, so
// simtest's settings keep their pace), under both protocols, with
// simtest's faults (crashes, closes, restarts, slow records that stall a
// member, lost answers, new input), at every tick the observer's most
// time lag (Unavailability.TimeLag, which looks only when a committed
// offset was written) equals the most of every tick's time lags computed
// afresh, with the same partition and the same first tick. A clone taken
// midway goes on to the same answer as the world it was cloned from.
func TestPropertyTimeLag(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 8
	}
	strategies := []string{"range", "roundrobin", "sticky", "cooperative-sticky"}
	modes := []sim.CommitMode{sim.CommitAuto, sim.CommitAfter, sim.CommitBefore}
	grew := 0
	for _, proto := range simtest.Protocols {
		for seed := 0; seed < seeds; seed++ {
			r := rand.New(rand.NewSource(int64(seed) + 1000))
			topo, cfg := simtest.RandomCaseConfig(r, proto, seed, strategies, modes)
			cfg.Time, cfg.TickMS = sim.TimeMS, 1
			w, err := sim.New(topo, cfg)
			if err != nil {
				t.Fatalf("%s seed %d: %v", proto, seed, err)
			}
			sched := simtest.RandomSchedule(r, 300, 6, true)
			best, bestTick := -1, 0
			var bestTP sim.TopicPartition
			check := func(w *sim.World, what string) {
				for i, l := range timeLagNow(w) {
					if l > best {
						best, bestTP, bestTick = l, w.Layout().Inputs()[i], w.Tick
					}
				}
				ticks, tp, tick, ok := w.Unavail.TimeLag(w)
				if ok != (len(w.Layout().Inputs()) > 0) || ticks != best || tp != bestTP || tick != bestTick {
					t.Fatalf("%s seed %d, %s tick %d: time lag %d ticks on %s at tick %d (ok %v); every tick's most: %d on %s at tick %d",
						proto, seed, what, w.Tick, ticks, tp, tick, ok, best, bestTP, bestTick)
				}
			}
			check(w, "world")
			var clone *sim.World
			cloneBest, cloneTP, cloneTick := 0, sim.TopicPartition{}, 0
			i := 0
			for w.Tick < 400 {
				for i < len(sched) && sched[i].Tick <= w.Tick {
					sched[i].Do(w)
					i++
				}
				w.Step()
				check(w, "world")
				if w.Tick == 200 {
					clone = w.Clone()
					cloneBest, cloneTP, cloneTick = best, bestTP, bestTick
				}
			}
			if best > 20 {
				grew++
			}
			// The clone, run through the same schedule from tick 200, gives
			// the same figure at every tick.
			best, bestTP, bestTick = cloneBest, cloneTP, cloneTick
			for j := range sched {
				if sched[j].Tick >= 200 {
					i = j
					break
				}
				i = len(sched)
			}
			for clone.Tick < 400 {
				for i < len(sched) && sched[i].Tick <= clone.Tick {
					sched[i].Do(clone)
					i++
				}
				clone.Step()
				check(clone, "clone")
			}
		}
	}
	// The worlds must stall for the test to mean anything: most of them
	// fell more than 20 ticks behind somewhere.
	if n := 2 * seeds; grew < n/2 {
		t.Fatalf("only %d of %d worlds fell more than 20 ticks behind: the schedules do not stall", grew, n)
	}
	t.Log(fmt.Sprintf("%d of %d worlds fell more than 20 ticks behind", grew, 2*seeds))
}
