// history.go: a world that keeps only a window of its past in detail
// (history.ms, Config.HistoryTicks). After each tick Step lets go of the
// trace's packets, events and texts from before the window, whole chunks
// at a time (sim/trace's ForgetBefore): what the world does next never
// depends on them, so it steps exactly as the same world keeping
// everything, and every count it keeps as it goes (processed, duplicates,
// losses, delivery, metrics) stays exact. Clones share the history chunk
// by chunk: what one world lets go of, a clone made before still holds,
// and a chunk is freed once no world holds it.

package sim

// forgetHistory lets go of the detail older than the window (the trace's
// and the output logs', broker.ForgetOutputBefore), and none
// from the tick a hold keeps (HoldHistoryFrom).
func (w *World) forgetHistory() {
	before := w.Tick - w.history
	if w.held {
		before = min(before, w.holdFrom)
	}
	if before > 0 {
		w.trace.ForgetBefore(before)
		// The output logs keep every cell a kept text reads: a produced
		// event's text names its invoice's cell, written in its tick.
		w.broker.ForgetOutputBefore(w.trace.TextsFrom())
	}
}

// HoldHistoryFrom makes a windowed world keep the detail of every tick
// from tick on, whatever its window: a session making a stretch of ticks
// before the window again (kernel's detailWorld) replays the branch into
// such a copy. It changes nothing the world does, only what it keeps.
func (w *World) HoldHistoryFrom(tick int) { w.held, w.holdFrom = true, tick }

// HeldFrom is the tick HoldHistoryFrom keeps the detail from, false when
// nothing holds it.
func (w *World) HeldFrom() (int, bool) { return w.holdFrom, w.held }

// ForgetHistoryBefore lets go of all a windowed world's detail before
// tick that it can, however little (trace.ForgetAllBefore): what a
// session's checkpoint keeps of the world (kernel's checkpointOf), its
// state only, to step on from. The detail it keeps from before tick can no
// longer be read: a world stepped on from the copy shows only the ticks of
// a window that began after it. A world keeping everything is left as it
// is.
func (w *World) ForgetHistoryBefore(tick int) {
	if w.history == 0 {
		return
	}
	w.trace.ForgetAllBefore(tick)
	// A world stepped on from here writes its texts from tick on, which
	// read only the cells written then (forgetHistory).
	w.broker.ForgetAllOutputBefore(tick)
}

// HistoryFrom is the first tick whose trace detail (every packet and
// event) is still kept: 0 when nothing was let go of. Views of earlier
// ticks have only what the world counts.
func (w *World) HistoryFrom() int { return w.trace.HistoryFrom() }

// HistoryWindow is the ticks of its past the world keeps in detail (0:
// everything), fixed when it was made.
func (w *World) HistoryWindow() int { return w.history }

// OutputRunsReach is broker.RunsReach: how far an output log's runs of
// invoice batches have come through their 4 GB of places, which a window
// of history does not give back.
func (w *World) OutputRunsReach() int { return w.broker.RunsReach() }
