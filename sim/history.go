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

// forgetHistory lets go of the detail older than the window.
func (w *World) forgetHistory() {
	if before := w.Tick - w.history; before > 0 {
		w.trace.ForgetBefore(before)
	}
}

// HistoryFrom is the first tick whose trace detail (every packet and
// event) is still kept: 0 when nothing was let go of. Views of earlier
// ticks have only what the world counts.
func (w *World) HistoryFrom() int { return w.trace.HistoryFrom() }

// HistoryWindow is the ticks of its past the world keeps in detail (0:
// everything), fixed when it was made.
func (w *World) HistoryWindow() int { return w.history }
