package chart_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/sim"
)

// TestPauseConsumerGroup: under group.protocol=consumer the pause chart
// labels each band with the group epoch that paused it, its legend speaks
// of group epochs, and the frames carry the group epoch.
func TestPauseConsumerGroup(t *testing.T) {
	s := kernel.NewSession()
	for _, c := range []string{"set group.protocol consumer", "new --members 2 --keep-settings", "join C3",
		"run until stable", "crash C1 now", "run until stable"} {
		if _, err := s.Exec(c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	w := s.World()
	if w.Group.Type() != sim.ConsumerGroup || len(w.Meter.Entries) < 2 {
		t.Fatalf("want a consumer group with two rebalances, got %s with %d", w.Group.Type(), len(w.Meter.Entries))
	}
	run := record(t, s, chart.NeedPause)
	if run.Protocol != sim.ConsumerGroup || run.Frames[len(run.Frames)-1].Generation != w.Group.Describe().GroupEpoch {
		t.Errorf("run protocol %q, last frame generation %d, group epoch %d", run.Protocol, run.Frames[len(run.Frames)-1].Generation, w.Group.Describe().GroupEpoch)
	}
	svg, err := chart.Pause(chart.Options{}, run).SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg)
	for _, e := range w.Meter.Entries {
		if label := fmt.Sprintf("epoch %d: %d paused", e.Generation, len(e.Partitions)); !contains(texts, label) {
			t.Errorf("no band label %q in %q", label, texts)
		}
	}
	if !contains(texts, "rebalance (group epoch bumped)") {
		t.Errorf("legend: %q", texts)
	}
	for _, tx := range texts {
		if strings.HasPrefix(tx, "gen ") || strings.Contains(tx, "generation") {
			t.Errorf("a consumer group's chart says %q", tx)
		}
	}
}
