package kernel

import (
	"runtime"
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

// BenchmarkLargestWorld builds the largest world the limits (limits.go)
// allow: 1,000 members over 999 input partitions and one output partition,
// 1,000 records each (1,000,000 input records, the limit), every member
// transactional, and steps (100 ticks a command, each narrated as the REPL
// would print it) until every record is processed. It reports the peak heap
// and the peak resident size of the process. Run it alone:
//
//	go test ./kernel -run XXX -bench LargestWorld -benchtime 1x
func BenchmarkLargestWorld(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := NewSession()
		if _, err := s.Exec("set records.per.partition 1000; set producer transactional; set isolation.level read_committed; " +
			"new --topics t:999 --members 1000"); err != nil {
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
