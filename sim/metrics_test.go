package sim

import (
	"fmt"
	"slices"
	"testing"
)

// pausedByDefinition is PausedPartitions as the definition reads: the
// subscribed input partitions that no live member's fetchable list holds.
func pausedByDefinition(w *World) []TopicPartition {
	subscribed := map[string]bool{}
	for _, gm := range w.Group.Members() {
		for _, t := range gm.Topics {
			subscribed[t] = true
		}
	}
	consumed := map[TopicPartition]bool{}
	for _, m := range w.current {
		if m.Alive && m.InGroup() && !m.Zombie {
			for _, tp := range m.Fetchable() {
				consumed[tp] = true
			}
		}
	}
	var out []TopicPartition
	for _, tp := range w.layout.Inputs() {
		if subscribed[tp.Topic] && !consumed[tp] {
			out = append(out, tp)
		}
	}
	return out
}

// TestPausedPartitionsMatchesDefinition: under both protocols, through
// restarts, a crash and a member on one topic only, PausedPartitions (which
// marks a slice instead of building sets) answers what the definition does
// at every tick, and the pause meter counted some of them.
func TestPausedPartitionsMatchesDefinition(t *testing.T) {
	for _, proto := range []GroupType{ClassicGroup, ConsumerGroup} {
		t.Run(string(proto), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RecordsPerPartition = 3
			cfg.Client.GroupProtocol = string(proto)
			w, err := New(bigTopology(4, 3, 5), cfg)
			if err != nil {
				t.Fatal(err)
			}
			paused := 0
			run := func(n int) {
				for i := 0; i < n; i++ {
					w.Step()
					got, want := w.PausedPartitions(), pausedByDefinition(w)
					if !slices.Equal(got, want) {
						t.Fatalf("tick %d: paused %v, by definition %v", w.Tick, got, want)
					}
					paused += len(got)
				}
			}
			run(5)
			if err := w.Join("C5", false, []string{"t1"}); err != nil {
				t.Fatal(err)
			}
			run(40)
			for c := 1; c <= 4; c++ {
				if err := w.Restart(fmt.Sprintf("C%d", c)); err != nil {
					t.Fatal(err)
				}
				run(30)
			}
			if err := w.CrashNow("C2"); err != nil {
				t.Fatal(err)
			}
			run(80)
			// The meter counts only while a rebalance is under way (not,
			// say, a crashed member's partitions before its session times out).
			if w.Meter.Total == 0 || w.Meter.Total > paused {
				t.Fatalf("paused partition-ticks %d, meter %d: want 0 < meter <= paused", paused, w.Meter.Total)
			}
		})
	}
}
