package kernel

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	replMinutes   = flag.Float64("replminutes", 1, "BenchmarkSteadyHourREPL: simulate this many minutes and scale the CPU figure to the hour")
	replHistoryMS = flag.Int("replhistoryms", 60_000, "BenchmarkSteadyHourREPL: history.ms (0 keeps every tick)")
)

// BenchmarkSteadyHourREPL is issue 26's first scale target (the sim
// package's BenchmarkSteadyHour100x1000) typed into the REPL: the same
// world (new --kafka-defaults, 100 members over ten topics of 100
// partitions, an output topic of 4, processing.ms 0.05, 1,000 records a
// second on every input partition), a window of history (-replhistoryms),
// `run until time --quiet` to half the span, the deploy (roll C1..C100
// --graceful --wait-stable), and on to the end. What it adds to the
// engine's figure is the session's own work: the quiet run's summary, the
// checkpoints that `back` and `fork` start from, the narration's counts.
// cpu-s/hour is the process's CPU over the commands, scaled to an hour;
// compare it with the engine benchmark's in the same session. Run it
// alone with -benchtime 1x.
func BenchmarkSteadyHourREPL(b *testing.B) {
	if *replMinutes <= 0 {
		b.Fatalf("-replminutes %v: give a positive number of minutes", *replMinutes)
	}
	half := time.Duration(*replMinutes * float64(time.Minute) / 2)
	var topics []string
	for t := 0; t < 10; t++ {
		topics = append(topics, fmt.Sprintf("t%d:100", t))
	}
	setup := "new --kafka-defaults --members 100 --topics " + strings.Join(topics, ",") + " --output out:4; " +
		"set processing.ms 0.05; " + fmt.Sprintf("set history.ms %d; ", *replHistoryMS) +
		"produce --rate 1000/s t0 t1 t2 t3 t4 t5 t6 t7 t8 t9"
	var cpu time.Duration
	var peak uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := NewSession()
		if _, err := s.Exec(setup); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.StartTimer()
		cpu0 := processCPU()
		for _, cmd := range []string{
			fmt.Sprintf("run until time %dms --quiet", half.Milliseconds()),
			"roll C1..C100 --graceful --wait-stable",
			fmt.Sprintf("run until time %dms --quiet", 2*half.Milliseconds()),
		} {
			if _, err := s.Exec(cmd); err != nil {
				b.Fatalf("%s: %v", cmd, err)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse+ms.StackInuse)
		}
		cpu += processCPU() - cpu0
		b.StopTimer()
		if s.World().Processed() == 0 {
			b.Fatal("no record processed")
		}
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N)*60 / *replMinutes, "cpu-s/hour")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
