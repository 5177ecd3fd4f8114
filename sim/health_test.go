package sim

import (
	"fmt"
	"testing"
)

// runUntilSettled steps w until the group is settled (at most bound ticks).
func runUntilSettled(t *testing.T, w *World, bound int) {
	t.Helper()
	for i := 0; i < bound; i++ {
		w.Step()
		if w.GroupSettled() {
			return
		}
	}
	t.Fatalf("tick %d: the group did not settle within %d ticks", w.Tick, bound)
}

// TestUnavailabilityOfAStaticRestart: a static member restarted within
// the session timeout gets its partitions back with no rebalance, so the
// pause meter scores it 0; its partitions were not consumed while it was
// down and rejoining, and the unavailability counts those ticks, as owner
// down.
func TestUnavailabilityOfAStaticRestart(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C2", true, nil); err != nil {
		t.Fatal(err)
	}
	runUntilSettled(t, w, 100)
	meter, before := w.Meter.Total, w.Unavail
	held := len(w.Member("C2").Owned)
	if err := w.Restart("C2"); err != nil {
		t.Fatal(err)
	}
	runUntilSettled(t, w, 100)
	for i := 0; i < 10; i++ {
		w.Step()
	}
	down := w.Unavail.ByCause[CauseOwnerDown] - before.ByCause[CauseOwnerDown]
	if w.Meter.Total != meter {
		t.Fatalf("the pause meter moved from %d to %d: a static restart is no rebalance", meter, w.Meter.Total)
	}
	if down < held || down%held != 0 || w.Unavail.Total-before.Total != down {
		t.Fatalf("unavailability after the restart: %d owner down of %d in all; want a multiple of C2's %d partitions, all owner down", down, w.Unavail.Total-before.Total, held)
	}
	if h := w.Health(); !h.OK() || len(h.Running) != 2 {
		t.Fatalf("health after the restart: %+v, want OK with C1 and C2 running", h)
	}
}

// TestHealthOfADeadGroup is issue 27's dead group: 12 static members under
// group.protocol=consumer, each restarted in turn (a kill and a start, no
// close): Kafka 4.x refuses each new instance with UNRELEASED_INSTANCE_ID
// while the old one holds the instance id, and the new process stops. At
// the end nothing runs: Health names the 12 stops and their error, every
// partition is unowned, and their ticks since are counted as stopped.
func TestHealthOfADeadGroup(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client.GroupProtocol = string(ConsumerGroup)
	w, err := New(bigTopology(0, 4, 12), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for c := 1; c <= 12; c++ {
		if err := w.Join(fmt.Sprintf("C%d", c), true, nil); err != nil {
			t.Fatal(err)
		}
	}
	runUntilSettled(t, w, 200)
	if h := w.Health(); !h.OK() || len(h.Running) != 12 {
		t.Fatalf("health before the restarts: %+v", h)
	}
	for c := 1; c <= 12; c++ {
		if err := w.Restart(fmt.Sprintf("C%d", c)); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			w.Step()
		}
	}
	h := w.Health()
	if h.OK() || len(h.Running) != 0 || len(h.Stopped) != 12 || len(h.Unowned) != 48 {
		t.Fatalf("health after the restarts: %d running, %d stopped, %d unowned: want 0, 12, 48 (%+v)", len(h.Running), len(h.Stopped), len(h.Unowned), h)
	}
	for _, s := range h.Stopped {
		if s.Error != "UNRELEASED_INSTANCE_ID" {
			t.Fatalf("%s stopped with %q (%s), want UNRELEASED_INSTANCE_ID", s.Client, s.Error, s.Reason)
		}
	}
	stopped := w.Unavail.ByCause[CauseStopped]
	w.Step()
	if got := w.Unavail.ByCause[CauseStopped] - stopped; got != 48 {
		t.Fatalf("a tick of the dead group counted %d partitions as stopped, want all 48", got)
	}
}
