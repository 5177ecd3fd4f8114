package sim

import (
	"testing"
)

// sameKeptOffsets fails unless every record of __consumer_offsets w still
// keeps reads exactly as ref's of the same index, and every record of a
// tick w shows (DetailFrom on) is kept.
func sameKeptOffsets(t *testing.T, ref, w *World) {
	t.Helper()
	l, rl := &w.Group.Offsets.Log, &ref.Group.Offsets.Log
	if l.Len() != rl.Len() {
		t.Fatalf("tick %d: %d records of __consumer_offsets, want %d", w.Tick, l.Len(), rl.Len())
	}
	if f := l.First(); f > rl.First() && rl.TickAt(f-1) >= w.DetailFrom() {
		t.Fatalf("tick %d: detail from %d, but offsets record %d (let go of) is of tick %d", w.Tick, w.DetailFrom(), f-1, rl.TickAt(f-1))
	}
	for i, got := range l.All() {
		if i < rl.First() {
			continue // a ref that keeps a window too may have let go of it
		}
		if want := rl.At(i); got != want {
			t.Fatalf("tick %d: offsets record %d reads %+v, want %+v", w.Tick, i, got, want)
		}
	}
}

// TestHistoryOffsetsLogBounded: a world keeping a window of 50 ticks,
// whose three members auto-commit every 5 ticks under steady traffic for
// 3,000 ticks, keeps about its window's records of __consumer_offsets, not
// all of them, each reading as the same world's keeping everything; a
// clone made on the way keeps what it had, and a copy kept to step again
// (ForgetHistoryBefore, a session's checkpoint) lets go of all it can and
// steps on to the same records.
func TestHistoryOffsetsLogBounded(t *testing.T) {
	setSeqChunk(t, 8)
	const window, length = 50, 3000
	mk := func(h int) *World {
		cfg := DefaultConfig()
		cfg.HistoryTicks = h
		w, err := New(DefaultTopology(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.Join("C2", false, nil)
		w.Join("C3", false, nil)
		rate, err := RatePerSecond(200, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.ProduceRate(w.Layout().Inputs(), rate); err != nil {
			t.Fatal(err)
		}
		return w
	}
	ref, w := mk(0), mk(window)
	var clone, cp *World
	var cloneFirst int
	most := 0
	for ref.Tick < length {
		ref.Step()
		w.Step()
		if w.Tick == length/2 {
			clone, cloneFirst = w.Clone(), w.Group.Offsets.Log.First()
			cp = w.Clone()
			cp.ForgetHistoryBefore(cp.Tick + 1)
			if cp.Group.Offsets.Log.First() <= cloneFirst {
				t.Fatalf("a checkpoint's copy kept records from %d, as many as the world (%d)", cp.Group.Offsets.Log.First(), cloneFirst)
			}
		}
		if cp != nil {
			cp.Step()
		}
		l := &w.Group.Offsets.Log
		most = max(most, l.Len()-l.First())
		if w.Tick%100 == 0 {
			sameKeptOffsets(t, ref, w)
		}
	}
	sameKeptOffsets(t, ref, w)
	sameKeptOffsets(t, ref, cp)
	if clone.Group.Offsets.Log.First() != cloneFirst {
		t.Fatalf("the clone's offsets log keeps from %d, %d when it was made", clone.Group.Offsets.Log.First(), cloneFirst)
	}
	for i, r := range clone.Group.Offsets.Log.All() {
		if want := ref.Group.Offsets.Log.At(i); r != want {
			t.Fatalf("the clone's offsets record %d reads %+v, want %+v", i, r, want)
		}
	}
	// The records of one window, and the chunk it begins in.
	rl := &ref.Group.Offsets.Log
	inWindow := 0
	for _, r := range rl.All() {
		if r.Tick >= w.Tick-window {
			inWindow++
		}
	}
	t.Logf("%d records in all, %d in the last window, at most %d kept", rl.Len(), inWindow, most)
	if rl.Len() < 20*inWindow {
		t.Fatalf("only %d records in all, %d in a window: the test no longer covers a long run", rl.Len(), inWindow)
	}
	if most > 2*inWindow+16 {
		t.Fatalf("the windowed world kept up to %d records of __consumer_offsets, its window holds about %d", most, inWindow)
	}
}
