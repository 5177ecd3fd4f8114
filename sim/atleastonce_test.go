package sim

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestPropertyAtLeastOnceEveryCrashPoint (issue 28): under auto-commit,
// at-least-once holds under both group protocols at every crash point of
// random joins, leaves and upgrades (a client restarted with the other
// group.protocol, which converts the group online). At every tick of a
// random schedule, a copy of the world crashes each running member then
// and runs on; no input record before a committed offset may lack its
// invoice. The invariants are checked on every tick of the schedule and
// of each branch. Kafka 4.0.0's consumer-protocol client reconciles under
// auto-commit only from poll(), after the batch (KAFKA-18641); one that
// committed from the background mid-batch loses the rest of the batch here.
func TestPropertyAtLeastOnceEveryCrashPoint(t *testing.T) {
	seeds := 8
	if testing.Short() {
		seeds = 3
	}
	for _, proto := range []string{"classic", "consumer"} {
		for seed := 0; seed < seeds; seed++ {
			t.Run(fmt.Sprintf("%s-seed%d", proto, seed), func(t *testing.T) {
				atLeastOnceCase(t, proto, int64(seed))
			})
		}
	}
}

func atLeastOnceCase(t *testing.T, proto string, seed int64) {
	r := rand.New(rand.NewSource(seed))
	topo, cfg := DefaultTopology(), DefaultConfig()
	topo.Members = 1 + r.Intn(2)
	if err := cfg.Set("", "group.protocol", proto); err != nil {
		t.Fatal(err)
	}
	if proto == "classic" {
		// Where a real upgrade path starts (demo 15).
		if err := cfg.Set("", "partition.assignment.strategy", "cooperative-sticky"); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Client.Commit != CommitAuto {
		t.Fatalf("the default commit mode is %s, want auto", cfg.Client.Commit)
	}
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ticks = 36
	type step struct {
		name string
		do   func(*World) error
	}
	sched := map[int]step{}
	for tick := 1; tick < ticks; tick++ {
		if r.Intn(4) != 0 {
			continue
		}
		c := fmt.Sprintf("C%d", 1+r.Intn(4))
		switch r.Intn(4) {
		case 0, 1:
			sched[tick] = step{"join " + c, func(w *World) error { return w.Join(c, r.Intn(2) == 0, nil) }}
		case 2:
			sched[tick] = step{"close " + c, func(w *World) error { return w.Close(c) }}
		case 3:
			// to the other protocol (an upgrade, or its rollback)
			sched[tick] = step{"restart " + c + " with the other group.protocol", func(w *World) error {
				other := "consumer"
				if m := w.Member(c); m != nil && m.Consumer() {
					other = "classic"
				}
				if err := w.Set(c, "group.protocol", other); err != nil {
					return err
				}
				return w.Restart(c)
			}}
		}
	}
	check := NewChecker()
	var history []string
	for w.Tick < ticks {
		if s, ok := sched[w.Tick]; ok {
			if s.do(w) == nil {
				history = append(history, fmt.Sprintf("t%d %s", w.Tick, s.name))
			}
		}
		for _, m := range w.Processes() {
			if !m.Alive || m.Superseded() {
				continue
			}
			b := w.Clone()
			if err := b.CrashNow(m.Client); err != nil {
				continue
			}
			bc := NewChecker()
			for i := 0; i < 300 && !(b.GroupSettled() && b.CaughtUp()); i++ {
				b.Step()
				if err := bc.Check(b); err != nil {
					t.Fatalf("crash %s at tick %d: %v (history: %v)", m.Client, w.Tick, err, history)
				}
			}
			if c := b.Delivery("read_uncommitted"); c.Lost > 0 {
				t.Fatalf("crash %s at tick %d lost %v (history: %v)", m.Client, w.Tick, c.LostNames, history)
			}
		}
		w.Step()
		if err := check.Check(w); err != nil {
			t.Fatalf("%v (history: %v)", err, history)
		}
	}
}
