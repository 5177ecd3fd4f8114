package chart_test

import (
	"fmt"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/sim"
)

// TestTimelineGreysAreTheUnavailability: the timeline paints grey, cause
// by cause, exactly the partition-ticks the unavailability counts, and the
// unavailable chart's columns stand for the same: through a static
// member's restart (no rebalance, its partitions wait), a crash, eager
// rebalances, the consumer protocol, and issue 27's dead group (every
// member stopped with UNRELEASED_INSTANCE_ID, every partition unowned).
func TestTimelineGreysAreTheUnavailability(t *testing.T) {
	deadGroup := []string{"set group.protocol consumer", "new --topics t:12 --members 0 --keep-settings"}
	for c := 1; c <= 4; c++ {
		deadGroup = append(deadGroup, fmt.Sprintf("join C%d --static", c))
	}
	deadGroup = append(deadGroup, "run until stable")
	for c := 1; c <= 4; c++ {
		deadGroup = append(deadGroup, fmt.Sprintf("restart C%d", c), "step 20")
	}
	for name, script := range map[string][]string{
		"static restart and crash": {"join C2 --static", "run until stable", "join C3", "run until stable", "restart C2",
			"run until stable", "crash C3 now", "run until stable", "step 10"},
		"consumer protocol": {"set group.protocol consumer", "new --members 2 --keep-settings", "join C3", "run until stable",
			"crash C1 now", "run until stable"},
		"dead group": deadGroup,
	} {
		t.Run(name, func(t *testing.T) {
			s := kernel.NewSession()
			for _, c := range script {
				if _, err := s.Exec(c); err != nil {
					t.Fatalf("%s: %v", c, err)
				}
			}
			w := s.World()
			run := record(t, s, chart.NeedOwners|chart.NeedUnavailable)
			want := w.Unavail.ByCause
			if got := chart.GreyTicks(run); got != want {
				t.Errorf("timeline greys by cause %v, unavailability %v", got, want)
			}
			if got := chart.StackTicks(run); got != want {
				t.Errorf("unavailable chart by cause %v, unavailability %v", got, want)
			}
			if w.Unavail.Total == w.Meter.Total {
				t.Errorf("unavailability %d equals the pause meter: the scenario shows no other cause", w.Unavail.Total)
			}
			if name == "dead group" && want[sim.CauseStopped] == 0 {
				t.Errorf("the dead group counted nothing as stopped: %v", want)
			}
		})
	}
}
