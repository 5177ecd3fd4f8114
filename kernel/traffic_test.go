package kernel

import (
	"strings"
	"testing"
)

// TestSteadyProductionWithinTheWorldCost: steady production may grow a
// world's input records only as far as its shape's estimated cost allows
// (worldcost.go): a rate is refused when its first tick would pass it, a
// step when its ticks would (naming after how many ticks the world
// reaches it), each leaving the session as it was. A world that already
// holds more than its budget (the budget lowered under it) still steps;
// only a new rate is refused.
func TestSteadyProductionWithinTheWorldCost(t *testing.T) {
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	// The default world with C2 and room for 10 more records.
	const withC2 = 1<<20 + 2*4096 + 7*1400 + 60*160
	worldBudget = func() uint64 { return withC2 + 10*costPerRecord }
	s := NewSession()
	runLines(t, s, "join C2\nproduce --rate 1/tick o0\nstep 10")
	for line, want := range map[string]string{
		"step 1":                    "step: a world of 2 members, 7 partitions and 71 input records (70 records held + 1 ticks of steady production) is estimated at",
		"run until tick 12":         "the world reaches it after 0 more tick(s)",
		"produce --rate 2/tick o1":  "produce --rate 2/tick: a world of 2 members, 7 partitions and 73 input records (70 records held + one tick of steady production)",
		"produce --rate 1/tick o0":  "71 input records",
		"run until processed o0.19": "run until processed o0.19: not met within 0 ticks, after which steady production would take the world past",
	} {
		before := snapshot(t, s)
		_, err := s.Exec(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
		if snapshot(t, s) != before {
			t.Errorf("%s: a refused command changed the session", line)
		}
	}
	// Stopped, the world steps again; under a budget lowered past what it
	// holds, it still steps, and a new rate is refused.
	runLines(t, s, "produce --stop o0\nstep 5")
	worldBudget = func() uint64 { return withC2 - 100*costPerRecord }
	runLines(t, s, "step 5\nrun until tick 30")
	if _, err := s.Exec("produce --rate 1/10ticks o2"); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a rate past the budget: %v", err)
	}
}
