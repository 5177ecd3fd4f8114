package kernel

import (
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// BenchmarkNewSession is what the REPL does before its first prompt: make
// the default world and the command table's session. Target: well under
// 100 ms.
func BenchmarkNewSession(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := NewSession()
		if s.Prompt() == "" {
			b.Fatal("no prompt")
		}
	}
}

// BenchmarkDemo runs demo 3 (cooperative-sticky, seven generations) end to end.
func BenchmarkDemo(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NewSession().Exec("demo 3"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLargestWorld builds the largest world the limits allowed before
// issue 26 raised them (worldcost.go; the sim package's scale benchmarks
// measure the new sizes): 1,000 members over 999 input partitions and one
// output partition, 1,000 records each (1,000,000 input records), every member
// transactional, and steps (100 ticks a command, each narrated as the REPL
// would print it) until every record is processed. It reports the peak heap
// and the peak resident size of the process. Run it alone:
//
//	go test ./kernel -run XXX -bench LargestWorld -benchtime 1x
func BenchmarkLargestWorld(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := NewSession()
		if _, err := s.Exec("set records.per.partition 1000; set producer transactional; set isolation.level read_committed; " +
			"new --topics t:999 --members 1000 --keep-settings"); err != nil {
			b.Fatal(err)
		}
		var peak uint64
		var ms runtime.MemStats
		for s.World().Processed() < 999_000 && s.World().Tick < 20_000 {
			if _, err := s.Exec("step 100"); err != nil {
				b.Fatal(err)
			}
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse+ms.StackInuse)
		}
		if s.World().Processed() < 999_000 {
			b.Fatalf("%d records processed by tick %d", s.World().Processed(), s.World().Tick)
		}
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
		b.ReportMetric(float64(s.World().Tick), "ticks")
	}
}

// sessionAt is the default world with C2 joined, run for n ticks (the
// members read their 60 records and then poll, heartbeat and commit), with
// checkpoints as the REPL keeps them. (World.Clone shares the history chunk
// by chunk, so a checkpoint of an old world costs its live state only.)
func sessionAt(b *testing.B, n int) *Session {
	b.Helper()
	s := NewSession()
	if _, err := s.Exec("join C2; run until stable"); err != nil {
		b.Fatal(err)
	}
	for s.World().Tick < n {
		step := n - s.World().Tick
		if step > 1_000_000 {
			step = 1_000_000
		}
		if _, err := s.Exec("step " + strconv.Itoa(step)); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkBack1 is `back 1` at 1,000, 20,000 and 200,000 ticks: a clone
// of the nearest checkpoint and a replay of at most the ticks since it.
// Target: flat, under 50 ms at 200,000.
func BenchmarkBack1(b *testing.B) {
	for _, n := range []int{1_000, 20_000, 200_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := sessionAt(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if _, err := s.Exec("step 1"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := s.Exec("back 1"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(s.cur.hist.cps)), "checkpoints")
		})
	}
}

// BenchmarkFork50 is the memory of 50 forks of a 20,000-tick session, each
// stepped 10 ticks on its own, against the one branch alone. Target: under 2x.
func BenchmarkFork50(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var m0, m1, m2 runtime.MemStats
		runtime.ReadMemStats(&m0)
		s := sessionAt(b, 20_000)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		for f := 0; f < 50; f++ {
			if _, err := s.Exec("switch main; fork f" + strconv.Itoa(f) + "; step 10"); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m2)
		one := float64(m1.HeapAlloc - m0.HeapAlloc)
		b.ReportMetric(one/1e6, "MB-one-branch")
		b.ReportMetric(float64(m2.HeapAlloc-m0.HeapAlloc)/one, "x-with-50-forks")
		runtime.KeepAlive(s)
	}
}

// BenchmarkAnimatedDiagram draws 120 frames of demo 3 (its joins, then
// processing) as one animated SVG: the frames' replay, layout, drawing and
// merge. Its B/op bounds what limitAnimationCells lets one animation cost.
func BenchmarkAnimatedDiagram(b *testing.B) {
	s := NewSession()
	if _, err := s.Exec("demo 3; step 46"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ExecResults("diagram --ticks 0..119"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiagramFormats draws demo 3's world as SVG, PNG and PDF.
func BenchmarkDiagramFormats(b *testing.B) {
	for _, ext := range []string{"svg", "png", "pdf"} {
		b.Run(ext, func(b *testing.B) {
			s := NewSession()
			s.Dir = b.TempDir()
			if _, err := s.Exec("demo 3"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ExecResults("diagram --out d." + ext); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDiagramBigWorld draws a real group's world, which diagram and
// sequence once refused (609,200 cells in its logs, 199,100 messages): 100
// members over 1,000 partitions with Kafka's defaults after 5 s at 100
// records/s a partition; each picture is the partial view, as SVG.
func BenchmarkDiagramBigWorld(b *testing.B) {
	s := NewSession()
	if _, err := s.Exec("new --kafka-defaults --members 100 --topics t:1000; produce --rate 100/s t; step 5s --quiet"); err != nil {
		b.Fatal(err)
	}
	for _, line := range []string{"diagram", "sequence"} {
		b.Run(line, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ExecResults(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
