package explore

import "testing"

// The heap goal the sweep's percentage gives (Go's: the live heap times
// 1+percent/100, or goMinHeap times percent/100 when larger) lets the heap
// grow past the live heap by 8 times it, at least sweepGCFloor and at most
// sweepGCHeadroom, from an empty heap to one of gigabytes.
func TestSweepPercentHeadroom(t *testing.T) {
	for _, live := range []uint64{0, 1, 300 << 10, 1 << 20, 4 << 20, 5 << 20, 16 << 20, 17 << 20, 100 << 20, 128 << 20, 200 << 20, 1 << 30, 8 << 30} {
		pct := uint64(sweepPercent(live))
		goal := max(live+live*pct/100, goMinHeap*pct/100)
		want := min(max(8*live, sweepGCFloor), sweepGCHeadroom)
		// Integer percent: the goal may fall short by under 1% of the live
		// heap (or of goMinHeap).
		slack := max(live, goMinHeap)/100 + 1
		if got := goal - live; got > want || got+slack < want {
			t.Errorf("live heap %d: percentage %d gives %d bytes of room, want %d", live, pct, goal-live, want)
		}
	}
}
