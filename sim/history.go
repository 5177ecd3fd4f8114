// history.go: a world that keeps only a window of its past in detail
// (history.ms, Config.HistoryTicks). After each tick Step lets go of the
// trace's packets, events and texts, the output logs' cells and the
// records of __consumer_offsets from before the window, whole chunks
// at a time (sim/trace's ForgetBefore): what the world does next never
// depends on them, so it steps exactly as the same world keeping
// everything, and every count it keeps as it goes (processed, duplicates,
// losses, delivery, metrics) stays exact. Clones share the history chunk
// by chunk: what one world lets go of, a clone made before still holds,
// and a chunk is freed once no world holds it. The window is set when the
// world is made, or while it runs (World.Set's history.ms): from then on,
// and past tick 0 only narrower (canSwitchHistory).

package sim

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/trace"
)

// window is how much of its past a world keeps in detail, and the letting
// go of the rest: the World holds one (its methods are the World's), and
// it reads the world's clock, settings and the nodes whose detail it lets
// go of, which World.connect hands it.
type window struct {
	// ticks is the window (Config.HistoryWindow; 0: everything), set when
	// the world is made and narrowed by history.ms set while it runs
	// (switchHistory): Step lets go of older detail.
	ticks int
	// held: the world keeps every tick's detail from holdFrom on, whatever
	// its window (HoldHistoryFrom).
	held     bool
	holdFrom int

	// What it reads of the world (World.connect): the clock, the settings
	// (canSwitchHistory's units), and the trace, the output logs and
	// __consumer_offsets, which hold the detail.
	tick   *int
	cfg    *Config
	trace  *trace.Trace
	broker *broker.Broker
	group  *Group
}

// forgetHistory lets go of the detail older than the window (the trace's,
// the output logs', broker.ForgetOutputBefore, and __consumer_offsets'),
// and none from the tick a hold keeps (HoldHistoryFrom).
func (h *window) forgetHistory() {
	before := *h.tick - h.ticks
	if h.held {
		before = min(before, h.holdFrom)
	}
	if before > 0 {
		h.trace.ForgetBefore(before)
		// The output logs keep every cell a kept text reads: a produced
		// event's text names its invoice's cell, written in its tick.
		h.broker.ForgetOutputBefore(h.trace.TextsFrom())
		// __consumer_offsets keeps the window's records: nothing reads
		// one from before it (coord.OffsetsLog.ForgetBefore).
		h.group.Offsets.Log.ForgetBefore(before)
	}
}

// canSwitchHistory says why a world may not keep a window of ticks ticks
// of its past from now on (history.ms set while it runs; 0: everything),
// nil when it may. At tick 0 any window goes. Later the window may only
// narrow: the detail it let go of is gone, and a wider window would show
// detail from before it that the world no longer has (and a session's
// checkpoints, which keep no detail, rely on the window never widening:
// kernel's checkpoint.usable). A world that kept everything may take any
// window.
func (h *window) canSwitchHistory(ticks int) error {
	from, to := h.ticks, max(ticks, 0)
	if *h.tick == 0 || to == from || from == 0 || to > 0 && to < from {
		return nil
	}
	clk := *h.cfg
	keep := func(t int) string {
		if t == 0 {
			return "everything"
		}
		if clk.Time == TimeMS {
			return fmt.Sprintf("%d ms", t*clk.TickMS)
		}
		return fmt.Sprintf("%d ticks", t)
	}
	return fmt.Errorf("the world keeps the last %s of its past in detail (%s), and past tick 0 its window can only narrow (keep %s or less): a wider one would show detail it lets go of; to keep %s, make the world again with it (new --keep-settings)",
		keep(from), historyKey, keep(from), keep(to))
}

// switchHistory makes the world keep ticks ticks of its past from now on
// (canSwitchHistory allowed it): the trace's texts from now on refer to
// none from before (trace.SwitchHistory), so that once its window has
// passed the switch, what came before can go.
func (h *window) switchHistory(ticks int) {
	ticks = max(ticks, 0)
	if ticks == h.ticks {
		return
	}
	h.ticks = ticks
	h.trace.SwitchHistory(ticks)
}

// HoldHistoryFrom makes a windowed world keep the detail of every tick
// from tick on, whatever its window: a session making a stretch of ticks
// before the window again (kernel's detailWorld) replays the branch into
// such a copy. It changes nothing the world does, only what it keeps.
func (h *window) HoldHistoryFrom(tick int) { h.held, h.holdFrom = true, tick }

// ForgetHistoryBefore lets go of all a windowed world's detail before
// tick that it can, however little (trace.ForgetAllBefore): what a
// session's checkpoint keeps of the world (kernel's checkpointOf), its
// state only, to step on from. The detail it keeps from before tick can no
// longer be read: a world stepped on from the copy shows only the ticks of
// a window that began after it. A world keeping everything is left as it
// is.
func (h *window) ForgetHistoryBefore(tick int) {
	if h.ticks == 0 {
		return
	}
	h.trace.ForgetAllBefore(tick)
	// A world stepped on from here writes its texts from tick on, which
	// read only the cells written then (forgetHistory).
	h.broker.ForgetAllOutputBefore(tick)
	h.group.Offsets.Log.ForgetBefore(tick)
}

// HintFoldsOf gives w's output logs, for their next folds, what those of
// cp folded (broker.HintFoldsOf): cp is a copy of w made now that let go
// of its history (ForgetHistoryBefore: a session's checkpoint, kernel's
// checkpointOf). The world, its copies and the next checkpoint, each a
// copy of a later state of w, fold on from the checkpoint's fold rather
// than read the cells it folded again. It changes nothing the world holds
// or does: a log's fold is the same runs wherever it starts.
func (h *window) HintFoldsOf(cp *World) { h.broker.HintFoldsOf(cp.broker) }

// HistoryFrom is the first tick whose trace detail (every packet and
// event) is still kept: 0 when nothing was let go of. Views of earlier
// ticks have only what the world counts.
func (h *window) HistoryFrom() int { return h.trace.HistoryFrom() }

// HistoryWindow is the ticks of its past the world keeps in detail (0:
// everything).
func (h *window) HistoryWindow() int { return h.ticks }

// DetailFrom is the first tick whose detail the views show: 0 when the
// world keeps its whole history, otherwise the first of the window's
// ticks, or the tick a hold keeps from when that is earlier, and never a
// tick the trace let go of. The trace lets go of whole chunks, so it may
// still hold a few ticks before the window; the views do not show them,
// so that what they show depends on the window, not on where the chunks
// were cut.
func (h *window) DetailFrom() int {
	from := h.HistoryFrom()
	if t := h.ticks; t > 0 {
		policy := *h.tick - t
		if h.held {
			policy = min(policy, h.holdFrom)
		}
		from = max(from, policy)
	}
	return max(from, 0)
}

// keptSpan is the ticks of history the world may hold in detail from now
// on: its window (0: everything), and, while it still holds detail from
// before its window narrowed (history.ms set while it ran), the ticks
// since that detail's oldest as well.
func (h *window) keptSpan() int {
	span := h.ticks
	if from, ok := h.trace.HeldBeforeSwitch(); ok && span > 0 {
		span += max(0, *h.tick-from)
	}
	return span
}

// OutputRunsReach is broker.RunsReach: how far an output log's runs of
// invoice batches have come through their 4 GB of places, which a window
// of history does not give back.
func (h *window) OutputRunsReach() int { return h.broker.RunsReach() }
