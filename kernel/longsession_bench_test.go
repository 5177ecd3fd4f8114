package kernel

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

var (
	longCmds = flag.Int("longcmds", 4000, "BenchmarkLongSession: random commands typed")
	longOut  = flag.String("longout", "", "BenchmarkLongSession: write the session's commands and output to this file (to compare builds)")
)

// BenchmarkLongSession types -longcmds random commands into one session of
// the page's world, as a user exploring it would: members joining,
// crashing, closing and restarting, steps, `back`, and the views
// `offsets`, `metrics` and `describe group` between them (some commands
// fail, as typed ones do). What grows with such a session is its history
// and the processes its world has started, so the later commands cost
// more than the first: cpu-s is the whole session's CPU, and
// last/first-quarter the CPU of its last quarter of commands over its
// first's.
func BenchmarkLongSession(b *testing.B) {
	var cpu, first, last time.Duration
	var transcript strings.Builder
	for i := 0; i < b.N; i++ {
		transcript.Reset()
		r := rand.New(rand.NewSource(26))
		s := NewSession()
		c0 := processCPU()
		for k := 0; k < *longCmds; k++ {
			if k == *longCmds/4 {
				first += processCPU() - c0
			}
			if k == *longCmds-*longCmds/4 {
				last -= processCPU()
			}
			cmd := longCommand(r, s)
			out, err := s.Exec(cmd) // some fail, as typed ones do
			if *longOut != "" {
				fmt.Fprintf(&transcript, "> %s\n%s\nerr=%v\n", cmd, out, err)
			}
		}
		last += processCPU()
		cpu += processCPU() - c0
	}
	if *longOut != "" {
		if err := os.WriteFile(*longOut, []byte(transcript.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
	b.ReportMetric(last.Seconds()/first.Seconds(), "last/first-quarter")
}

// longCommand draws one of BenchmarkLongSession's commands.
func longCommand(r *rand.Rand, s *Session) string {
	c := pick(r, propClients...)
	switch r.Intn(20) {
	case 0, 1:
		return "join " + c + pick(r, "", " --static")
	case 2:
		return "close " + c + pick(r, "", " --now")
	case 3:
		return "crash " + c + pick(r, "", " now", " after 1", " after 3")
	case 4:
		return "restart " + c + pick(r, "", " --graceful", " --kill")
	case 5, 6:
		return fmt.Sprintf("back %d", pick(r, 1, 2, 5, 13, r.Intn(60), r.Intn(s.World().Tick+1)))
	case 7:
		return fmt.Sprintf("produce %s %d", pick(r, "orders-0", "orders-1", "payments-2"), 1+r.Intn(8))
	case 8, 9:
		return "offsets"
	case 10:
		return "metrics"
	case 11:
		return "describe group"
	case 12:
		return "run until stable --quiet"
	}
	return fmt.Sprintf("step %d", 1+r.Intn(25)) + pick(r, "", " --quiet")
}
