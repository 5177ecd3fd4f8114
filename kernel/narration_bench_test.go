package kernel

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkQuietNarrationT1 is the quiet narration of T1's steady traffic
// (BenchmarkSteadyHourREPL's world) alone, without the steps that make it:
// an op narrates, tick by tick as step does, what a `run ... --quiet`
// narrated, its summaries made from a fresh quiet log and written at the
// end, as a command's are. /start is the world's first 5 simulated seconds
// (the group formed after Kafka's 3 s initial rebalance delay, then about
// 400 ticks of steady traffic, some 474,000 events), summaries begun before
// any record was polled, as the hour's first run is; /midway a command
// typed during the traffic (the 6th second, 200 ticks, some 95,000 events:
// a poll of ten partitions' runs a member every four ticks, 250
// processings and 200 produced batches a tick), whose summaries begin with
// records in hand. It measures what the session adds to the ticks' steps,
// where SteadyHourREPL's figure has the engine's around it, and its
// noise; cpu-µs/op is the process's CPU (ns/op is the wall's, which a
// shared machine stretches).
func BenchmarkQuietNarrationT1(b *testing.B) { narrationT1(b, true, false) }

// BenchmarkFullNarrationT1 is BenchmarkQuietNarrationT1 at the default
// level, every event a line, coloured as the REPL colours them on a
// terminal: /start's events pass the 100,000 lines a command narrates
// (limitNarration), past which they are counted, not written; /midway's
// 95,000 stay under it.
func BenchmarkFullNarrationT1(b *testing.B) { narrationT1(b, false, true) }

// narrationT1 is the two benchmarks: quiet, the level; colour, whether
// lines are coloured (Session.Color).
func narrationT1(b *testing.B, quiet, colour bool) {
	var topics []string
	for t := 0; t < 10; t++ {
		topics = append(topics, fmt.Sprintf("t%d:100", t))
	}
	for _, c := range []struct {
		name     string
		from, to int // ms
	}{{"start", 0, 5000}, {"midway", 5000, 6000}} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSession()
			if _, err := s.Exec("new --kafka-defaults --members 100 --topics " + strings.Join(topics, ",") + " --output out:4; " +
				"set processing.ms 0.05; set history.ms 60000; produce --rate 1000/s t0 t1 t2 t3 t4 t5 t6 t7 t8 t9"); err != nil {
				b.Fatal(err)
			}
			level := ""
			if quiet {
				level = " --quiet"
			}
			if c.from > 0 {
				if _, err := s.Exec(fmt.Sprintf("run until time %dms%s", c.from, level)); err != nil {
					b.Fatal(err)
				}
			}
			from := s.World().Events.Len()
			out, err := s.Exec(fmt.Sprintf("run until time %dms%s", c.to, level))
			if err != nil {
				b.Fatal(err)
			}
			w := s.World()
			ticks := []int{from} // where each tick's events begin
			for i := from + 1; i < w.Events.Len(); i++ {
				if w.Events.TickAt(i) != w.Events.TickAt(i-1) {
					ticks = append(ticks, i)
				}
			}
			ticks = append(ticks, w.Events.Len())
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				s.out.Reset()
				s.said, s.unsaid = 0, 0
				s.quiet = quietLog{}
				s.quietNow = quiet
				s.Color = colour
				for k := 1; k < len(ticks); k++ {
					s.narrateEvents(w, ticks[k-1], ticks[k])
				}
				s.quietFlush()
			}
			cpu := processCPU() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(w.Events.Len()-from), "events")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			// The command's output is its narration and its closing line.
			if got := s.out.String(); !strings.HasPrefix(out, got) || len(got) < 100 {
				b.Fatalf("the narration read again is not the command's: %d bytes", len(got))
			}
		})
	}
}
