package sim

import (
	"math/rand"
	"testing"
)

// stepper drives a world through a schedule one tick at a time, so that
// several worlds can be interleaved tick by tick.
type stepper struct {
	w     *World
	sched []action
	i     int
}

func (s *stepper) tick() {
	for s.i < len(s.sched) && s.sched[s.i].tick <= s.w.Tick {
		s.sched[s.i].do(s.w)
		s.i++
	}
	s.w.Step()
}

func after(sched []action, tick int) []action {
	var out []action
	for _, a := range sched {
		if a.tick >= tick {
			out = append(out, a)
		}
	}
	return out
}

func before(sched []action, tick int) []action {
	var out []action
	for _, a := range sched {
		if a.tick < tick {
			out = append(out, a)
		}
	}
	return out
}

// TestPropertyCloneFamilies: over random topologies, settings (transactions
// included, so markers rewrite cells and offsets in shared chunks) and
// schedules, a world is cloned at random ticks, clones of clones too; every
// member of the family then runs its own random continuation, all of them
// interleaved tick by tick. Each must end byte for byte as a world that ran
// its inputs from scratch, never cloned; and a frozen clone of each, never
// stepped, must still show what it showed when it was made.
func TestPropertyCloneFamilies(t *testing.T) {
	tinyChunks(t)
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := 0; seed < seeds; seed++ {
		const length = 160
		// A random topology, 2 to 9 records per partition, transactions
		// read with read_committed on even seeds, every commit mode by
		// turns, the consumer protocol on seed%4 == 3 (the coordinator's
		// targets and revocations, which clones share, change too); 160
		// ticks of faults by C1 to C5 with static joins.
		sc := seedWorld(t, seed, worldSpec{
			topology:      randomTopology,
			records:       span{2, 8},
			transactional: seedsAt(2, 0),
			readCommitted: seedsAt(2, 0),
			commit:        cycle(1, CommitAfter, CommitBefore, CommitAuto),
			protocol:      cycle(1, ClassicGroup, ClassicGroup, ClassicGroup, ConsumerGroup),
			ticks:         length, clients: 5, static: fixed(true),
		})
		topo, cfg, r := sc.topo, sc.cfg, sc.r
		type member struct {
			st          *stepper
			inputs      []action // every input from tick 0, for the replay
			end         int
			frozen      *World
			frozenPrint string
		}
		w, base := sc.w, sc.sched
		fam := []*member{{st: &stepper{w: w, sched: base}, inputs: base, end: length}}
		// Grow the family: at random ticks, a random member is cloned and the
		// clone gets its own continuation from there.
		for tick := 0; tick < length; tick++ {
			for _, m := range fam {
				if m.st.w.Tick < m.end {
					m.st.tick()
				}
			}
			if r.Intn(12) == 0 && len(fam) < 12 {
				src := fam[r.Intn(len(fam))]
				c := src.st.w.Clone()
				at := c.Tick
				cont := after(randomSchedule(rand.New(rand.NewSource(r.Int63())), at+length/2, 6, false), at)
				frozen := c.Clone()
				fam = append(fam, &member{
					st:     &stepper{w: c, sched: cont},
					inputs: append(before(src.inputs, at), cont...),
					end:    at + length/2, frozen: frozen, frozenPrint: fingerprint(frozen),
				})
			}
		}
		for more := true; more; {
			more = false
			for _, m := range fam {
				if m.st.w.Tick < m.end {
					m.st.tick()
					more = true
				}
			}
		}
		for j, m := range fam {
			ref, _ := New(topo, cfg)
			rs := &stepper{w: ref, sched: m.inputs}
			for ref.Tick < m.end {
				rs.tick()
			}
			if a, b := fingerprint(m.st.w), fingerprint(ref); a != b {
				t.Fatalf("seed %d, member %d: the cloned world differs from its replay from scratch:\n%s", seed, j, firstDiff(a, b))
			}
			if m.frozen != nil {
				if a := fingerprint(m.frozen); a != m.frozenPrint {
					t.Fatalf("seed %d, member %d: a clone nobody stepped changed:\n%s", seed, j, firstDiff(a, m.frozenPrint))
				}
			}
		}
	}
}
