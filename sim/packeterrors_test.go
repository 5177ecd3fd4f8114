package sim

import (
	"fmt"
	"testing"
)

// TestErrorsFromMatchesHeaders: ErrorsFrom reports exactly the packets
// Headers shows with an error code, in order, from any starting ID, on
// random schedules with and without transactions.
func TestErrorsFromMatchesHeaders(t *testing.T) {
	codes := map[ErrorCode]bool{}
	for seed := 0; seed < 6; seed++ {
		// The default world, transactions on odd seeds, 300 ticks of
		// faults by C1 to C4 (no static joins).
		sc := seedWorld(t, seed, worldSpec{source: 900, transactional: seedsAt(2, 1), ticks: 300, clients: 4})
		w, sched := sc.w, sc.sched
		for i := 0; w.Tick < 300; w.Step() {
			for ; i < len(sched) && sched[i].tick <= w.Tick; i++ {
				_ = sched[i].do(w)
			}
		}
		for _, from := range []int{0, 1, w.Packets.Len() / 3, w.Packets.Len() - 1, w.Packets.Len()} {
			var want, got []string
			for _, h := range w.Packets.Headers(from) {
				if h.Error != None {
					want = append(want, fmt.Sprint(h.Type, h.Response, h.Error))
					codes[h.Error] = true
				}
			}
			w.Packets.ErrorsFrom(from, func(a API, response bool, e ErrorCode) {
				got = append(got, fmt.Sprint(a, response, e))
			})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d from %d: ErrorsFrom %v, Headers %v", seed, from, got, want)
			}
		}
	}
	if len(codes) < 3 {
		t.Errorf("only error codes %v seen: the test proves less than it says", codes)
	}
}
