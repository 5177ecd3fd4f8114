package explore

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// Workers make the copies of the world a tick ahead (prefetch), and never
// past the tick of the last branch they run: a shard whose branches end
// early in the window makes no copy after its last tick; the outcomes are
// the sequential run's.
func TestPrefetchStopsAtTheLastBranch(t *testing.T) {
	w, err := sim.New(sim.DefaultTopology(), sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		w.Step()
	}
	opts := Options{From: w.Tick, To: w.Tick + 10, Faults: []string{"crash-now", "slow"}}
	seq, err := newPlan(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The branches of the window's first four ticks.
	var idx []int
	for i, j := range seq.jobs {
		if j.tick < opts.From+4 {
			idx = append(idx, i)
		}
	}
	want, err := seq.run(idx)
	if err != nil {
		t.Fatal(err)
	}
	opts.Parallel = 2
	par, err := newPlan(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := par.run(idx)
	if err != nil {
		t.Fatal(err)
	}
	if par.made != 4 {
		t.Errorf("two workers made %d copies for branches at the first 4 ticks, want 4", par.made)
	}
	for i := range want {
		if got[i].Summary() != want[i].Summary() || got[i].Ran != want[i].Ran {
			t.Fatalf("branch %d: %s after %d ticks, sequentially %s after %d", idx[i], got[i].Summary(), got[i].Ran, want[i].Summary(), want[i].Ran)
		}
	}
}
