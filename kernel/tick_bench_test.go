package kernel

import (
	"testing"
	"time"
)

// BenchmarkTickLargest is what one tick costs at the largest shape the
// limits allowed before issue 26 (sim's BenchmarkTickIdle10000 measures
// 10,000 members): 1,000 members over 999 input partitions and the output
// one (about a partition a member), under each protocol. idle: no record
// to read (records.per.partition 0), so a tick is the group protocol's own
// work: auto-commit every 5 ticks, and under the consumer protocol a
// heartbeat from each member every 2 ticks. busy: 1,000 records a
// partition being read, processed and written. One op is one tick
// (sim.World.Step); the session's world is stepped directly.
//
//	go test ./kernel -run x -bench TickLargest -benchtime 300x
func BenchmarkTickLargest(b *testing.B) {
	for _, c := range []struct{ name, setup string }{
		{"classic-idle", "set records.per.partition 0; new --topics t:999 --members 1000 --keep-settings; run until stable; step 20"},
		{"consumer-idle", "set records.per.partition 0; set group.protocol consumer; new --topics t:999 --members 1000 --keep-settings; run until stable; step 20"},
		{"classic-busy", "set records.per.partition 1000; new --topics t:999 --members 1000 --keep-settings; run until stable; step 20"},
		{"consumer-busy", "set records.per.partition 1000; set group.protocol consumer; new --topics t:999 --members 1000 --keep-settings; run until stable; step 20"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSession()
			t0 := time.Now()
			if _, err := s.Exec(c.setup); err != nil {
				b.Fatal(err)
			}
			setup := time.Since(t0)
			w := s.World()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.Step()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/tick")
			b.ReportMetric(setup.Seconds(), "setup-s")
		})
	}
}

// BenchmarkCopyBeforeStep is what a step or run pays before its first
// tick: a copy of the world (copyWorld), so that its undo is putting the
// world before it back. One op is one copy, of the default world with two
// members after 1,000 ticks, and of the largest shape (1,000 members over
// 999 partitions, classic and consumer) settled; compare it with a tick of
// the same world (BenchmarkTickLargest).
//
//	go test ./kernel -run x -bench CopyBeforeStep
func BenchmarkCopyBeforeStep(b *testing.B) {
	for _, c := range []struct{ name, setup string }{
		{"default", "join C2; run until stable; step 1000"},
		{"largest-classic", "set records.per.partition 0; new --topics t:999 --members 1000 --keep-settings; run until stable; step 20"},
		{"largest-consumer", "set records.per.partition 0; set group.protocol consumer; new --topics t:999 --members 1000 --keep-settings; run until stable; step 20"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSession()
			if _, err := s.Exec(c.setup); err != nil {
				b.Fatal(err)
			}
			w := s.World()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = w.Clone()
			}
		})
	}
}
