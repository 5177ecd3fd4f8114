package kernel

// A world that keeps a window of its past (history.ms, sim/history.go)
// lets the trace's packets and events and the output logs' records older
// than the window go, while every count stays exact. The session sees to
// three things:
//   - the views show the window, the same whichever way the world was
//     made: from the ticks the window keeps (sim.World.DetailFrom), not from where
//     the engine happened to cut its chunks;
//   - time travel gives back the window: a checkpoint of such a world
//     keeps its state without its history (a checkpoint that kept its
//     window would keep, with its sisters, every tick of the run), and a
//     replay starts from a checkpoint at least a window before the tick
//     it makes (replayFrom), so that the ticks the window keeps are all
//     stepped again;
//   - detail of ticks before the window is made again when a view asks
//     for it (trace --from TICK): the branch is replayed with its history
//     held from that tick (detailWorld), as the engine is deterministic.

import (
	"fmt"
	"sort"

	"github.com/kgrepl/kgrepl/sim"
)

// firstKeptPacket is the index of the first packet the views show: the
// first one kept that was sent at DetailFrom or later.
func firstKeptPacket(w *sim.World) int {
	lo, n := w.Packets.First(), w.Packets.Len()
	from := w.DetailFrom()
	if from == 0 {
		return lo
	}
	return lo + sort.Search(n-lo, func(i int) bool { return w.Packets.SentAt(lo+i) >= from })
}

// firstKeptEvent is firstKeptPacket for events.
func firstKeptEvent(w *sim.World) int {
	lo, n := w.Events.First(), w.Events.Len()
	from := w.DetailFrom()
	if from == 0 {
		return lo
	}
	return lo + sort.Search(n-lo, func(i int) bool { return w.Events.TickAt(lo+i) >= from })
}

// packetAtOrAfter is the index of the first kept packet sent at tick or
// later.
func packetAtOrAfter(w *sim.World, tick int) int {
	lo, n := firstKeptPacket(w), w.Packets.Len()
	return lo + firstAtOrAfter(n-lo, tick, func(i int) int { return w.Packets.SentAt(lo + i) })
}

// eventAtOrAfter is packetAtOrAfter for events.
func eventAtOrAfter(w *sim.World, tick int) int {
	lo, n := firstKeptEvent(w), w.Events.Len()
	return lo + firstAtOrAfter(n-lo, tick, func(i int) int { return w.Events.TickAt(lo + i) })
}

// windowNote is the line a view that reaches back to the world's window
// ends with, or "" when the world let no detail go.
func windowNote(w *sim.World) string {
	from := w.DetailFrom()
	if from == 0 {
		return ""
	}
	clk := clockOf(w)
	return fmt.Sprintf("(detail before %s was let go: history.ms keeps the last %s; trace --from TICK makes an earlier stretch again by replaying)", clk.tickAt(from), windowText(w))
}

// detailWorld is a world at the current tick with the detail of ticks from
// tick on: the current world when it keeps them, otherwise a copy made by
// replaying the branch with its history held from tick (sim.World.
// HoldHistoryFrom), refused before anything runs when keeping that stretch
// would take the world past what its estimate allows. note says what was
// replayed, or "".
func (s *Session) detailWorld(cmd string, tick int) (w *sim.World, note string, err error) {
	cur := s.World()
	if tick >= cur.DetailFrom() {
		return cur, "", nil
	}
	span := cur.Tick - tick
	base := shapeOf(cur)
	base.steady = steadyWindow(cur, cur.SteadyWorkWindow(0, span), 0, span)
	if est, room := base.bytes(), costRoom(cur); est.Cmp(room) > 0 {
		return nil, "", fmt.Errorf("%s: making the detail of ticks %d to %d again would keep %s of history, over the limit (at most %s; a later tick keeps less)", cmd, tick, cur.Tick, humanBytes(est), humanBytes(room))
	}
	s.holding, s.holdFrom = true, tick
	defer func() { s.holding = false }()
	w, _, err = s.replay(s.cur.hist, cur.Tick, true)
	if err != nil {
		return nil, "", fmt.Errorf("%s: making the detail of ticks %d to %d again: %w", cmd, tick, cur.Tick, err)
	}
	clk := clockOf(cur)
	return w, fmt.Sprintf("(ticks before %s had been let go, history.ms keeping the last %s: made again by replaying from %s)", clk.tickAt(cur.DetailFrom()), windowText(cur), clk.tickAt(s.replayedFrom)), nil
}

// checkpointOf is the checkpoint the session keeps of w: a clone, without
// its history when the world keeps a window (window is then how far back
// a replay from it must start, replayFrom). Letting go of its history
// folds the window's output cells (broker.ForgetAllOutputBefore), which
// w, stepped on, and the next checkpoint, a copy of w, then read again
// as they let go of them: w is given the checkpoint's folds to fold on
// from instead (sim.World.HintFoldsOf). The worlds are the same either
// way (TestCheckpointFoldHintsChangeNoFold).
func checkpointOf(w *sim.World, next, done int) *checkpoint {
	cp := &checkpoint{tick: w.Tick, next: next, done: done, world: w.Clone()}
	if h := w.HistoryWindow(); h > 0 {
		cp.world.ForgetHistoryBefore(w.Tick + 1)
		cp.window = h
		if !noFoldHints {
			w.HintFoldsOf(cp.world)
		}
	}
	return cp
}

// noFoldHints leaves a world without its checkpoints' folds to fold on
// from (tests, which compare).
var noFoldHints = false

// usable reports whether a replay that makes the world at tick limit,
// with its history held from hold when holding, may start from cp: one
// without its history must be more than a window before limit, and
// before hold; one with its history must keep the held ticks.
func (cp *checkpoint) usable(limit int, holding bool, hold int) bool {
	if cp.tick > limit {
		return false
	}
	if cp.window == 0 {
		return !holding || cp.tick <= hold || cp.world.HistoryFrom() <= hold
	}
	// It keeps no tick's detail, its own included (checkpointOf): the
	// replay makes ticks cp.tick+1 on, and the window at limit begins at
	// limit-window (sim.World.DetailFrom).
	return cp.tick < limit-cp.window && (!holding || cp.tick < hold)
}

// A session keeps a checkpoint every thousand ticks or so (checkpointDue),
// each a copy of the world's state (its history is shared, or, with
// history.ms, not kept). A copy of a world of 100,000 partitions is some
// 60 MB, so a rolling restart of its 1,000 members (half a million
// ticks) would keep hundreds of them. The checkpoints a branch keeps are
// therefore bounded by what they cost: at most an eighth of the estimate's
// budget (worldcost.go), and never fewer than minCheckpoints. Past that, the
// older of two checkpoints closest together goes (thinCheckpoints): the
// newest recentCheckpoints stay, so undo and back a little are as quick as
// before, and those before them spread out over the run, so back far
// replays at most about the run's length over the number kept.
const (
	minCheckpoints    = 8
	recentCheckpoints = 4
	// copyPerMember and copyPerPartition are what a copy of a world costs
	// (worldcost.go: the copy a step keeps), rounded up; copyBase the rest.
	copyPerMember    = 1800
	copyPerPartition = 600
	copyBase         = 64 << 10
)

// checkpointCap is how many checkpoints a branch of w keeps (a var for
// tests).
var checkpointCap = func(w *sim.World) int {
	per := uint64(copyBase + len(w.Clients())*copyPerMember + (len(w.Layout().Inputs())+len(w.Layout().Outputs()))*copyPerPartition)
	return int(max(uint64(minCheckpoints), min(worldBudget()/8/per, 1<<20)))
}

// thinCheckpoints keeps the branch's checkpoints, kept and pending (those
// of the command under way), within checkpointCap, dropping one at a time
// the older of the two closest together among all but the newest
// recentCheckpoints. The arrays are never changed in place: forks share
// them (history).
func (s *Session) thinCheckpoints(w *sim.World) {
	most := checkpointCap(w)
	for len(s.cur.hist.cps)+len(s.pendingCPs) > most {
		kept := len(s.cur.hist.cps)
		at := func(i int) *checkpoint {
			if i < kept {
				return s.cur.hist.cps[i]
			}
			return s.pendingCPs[i-kept]
		}
		n := kept + len(s.pendingCPs)
		drop, gap := -1, 0
		for i := 0; i < n-recentCheckpoints; i++ {
			prev := 0
			if i > 0 {
				prev = at(i - 1).tick
			}
			if g := at(i+1).tick - prev; drop < 0 || g < gap {
				drop, gap = i, g
			}
		}
		if drop < 0 {
			return
		}
		if drop < kept {
			cps := make([]*checkpoint, 0, kept-1)
			s.cur.hist.cps = append(append(cps, s.cur.hist.cps[:drop]...), s.cur.hist.cps[drop+1:]...)
		} else {
			s.pendingCPs = append(s.pendingCPs[:drop-kept:drop-kept], s.pendingCPs[drop-kept+1:]...)
		}
	}
}

// windowText is a world's history window as its clock reads: "30 ticks"
// on the page's scale, "10 s" in real time.
func windowText(w *sim.World) string {
	clk := clockOf(w)
	if !clk.real {
		return group(w.HistoryWindow()) + " ticks"
	}
	return clk.dur(w.HistoryWindow())
}
