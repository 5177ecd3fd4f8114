package draw_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/sim"
)

// TestSequenceReadsItsRangeAlone: a sequence diagram finds its range of
// ticks in the trace by search (the trace is in sending order) and counts
// an unfiltered range without reading it; the messages and counts are
// those a scan of the whole trace keeps, for random ranges, types and
// members, in demos' worlds, a world of many members and one that keeps a
// window of its past.
func TestSequenceReadsItsRangeAlone(t *testing.T) {
	worlds := map[string]*sim.World{}
	for _, n := range []int{1, 5, 9, 15} {
		worlds[fmt.Sprintf("demo %d", n)] = demoWorld(t, n).World()
	}
	for name, script := range map[string]string{
		"30 members": "new --members 30 --topics t:40; set records.per.partition 30; run until stable; crash C4 now; step 40; join C31; step 60",
		"a window":   "set history.ms 25; new --members 3 --keep-settings; produce --rate 1/2ticks o0 p1; step 120",
		"real time":  "new --kafka-defaults --members 6 --topics t:12 --output out:2; set processing.ms 0.5; produce --rate 50/s t; step 3s; crash C2 now; step 1s",
		"25 members": "new --kafka-defaults --members 25 --topics t:50; set processing.ms 0.5; produce --rate 20/s t; step 2s; crash C3 now; step 1s",
	} {
		s := kernel.NewSession()
		for _, line := range strings.Split(script, "; ") {
			if _, err := s.Exec(line); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		worlds[name] = s.World()
	}
	rng := rand.New(rand.NewSource(3))
	checked, cut := 0, 0
	for name, w := range worlds {
		for k := 0; k < 60; k++ {
			opt := draw.SeqOptions{From: rng.Intn(w.Tick + 3), To: -1}
			if rng.Intn(2) == 0 {
				opt.To = opt.From + rng.Intn(w.Tick+3-opt.From)
			}
			if rng.Intn(3) == 0 {
				opt.Types = []sim.API{sim.APIs[rng.Intn(len(sim.APIs))], sim.APIs[rng.Intn(len(sim.APIs))]}
			}
			if clients := w.Clients(); rng.Intn(3) == 0 && len(clients) > 0 {
				opt.Member = clients[rng.Intn(len(clients))]
			}
			var want []*sim.Packet
			for i, p := range w.Packets.Headers(0) {
				if opt.Keeps(&p) {
					want = append(want, w.Packets.At(i))
				}
			}
			where := fmt.Sprintf("%s, %+v", name, opt)
			if got := draw.CountMessages(w, opt); got != len(want) {
				t.Fatalf("%s: CountMessages %d, a scan of the trace %d", where, got, len(want))
			}
			if got := draw.Messages(w, opt); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %d messages, a scan of the trace %d", where, len(got), len(want))
			}
			if len(want) > 0 {
				checked++
			}
			gt, gm, gmore, gn := draw.SeqRows(w, opt)
			wt, wm, wmore, wn := draw.SeqRowsByScan(w, opt)
			if !reflect.DeepEqual(gt, wt) || !reflect.DeepEqual(gm, wm) || gmore != wmore || gn != wn {
				t.Fatalf("%s: rows %d (more %v, %d messages), a scan of the trace %d (more %v, %d messages)", where, len(gt), gmore, gn, len(wt), wmore, wn)
			}
			if gmore {
				cut++
			}
		}
	}
	if checked < 100 || cut < 20 {
		t.Fatalf("only %d ranges held a message, %d more than a diagram draws", checked, cut)
	}
}
