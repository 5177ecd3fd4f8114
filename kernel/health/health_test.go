package health

import (
	"fmt"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

func TestMembersInRanges(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"C1"}, "C1"},
		{[]string{"C2", "C1"}, "C1 C2"},
		{[]string{"C10", "C2", "C3", "C4", "C7", "C9", "C11", "C12"}, "C2..C4 C7 C9..C12"},
		{[]string{"C1", "C3"}, "C1 C3"},
		{[]string{"C01", "C2", "C3"}, "C01 C2 C3"},
	} {
		if got := Members(c.in); got != c.want {
			t.Errorf("Members(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWordsOfADeadGroup: issue 27's dead group (12 static members under
// group.protocol=consumer, each restarted: UNRELEASED_INSTANCE_ID) in
// words, and a crashed member that still holds its partitions.
func TestWordsOfADeadGroup(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Client.GroupProtocol = string(sim.ConsumerGroup)
	w, err := sim.New(sim.Topology{Group: "g", Inputs: []sim.TopicSpec{{Name: "t", Partitions: 48}}, Output: sim.TopicSpec{Name: "out", Partitions: 1}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for c := 1; c <= 12; c++ {
		w.Join(fmt.Sprintf("C%d", c), true, nil)
	}
	for i := 0; i < 60; i++ {
		w.Step()
	}
	if h := HealthOf(w); h.Words != "ok" || len(h.Running) != 12 || h.Running[1] != "C2" {
		t.Fatalf("before the restarts: %+v", h)
	}
	for c := 1; c <= 12; c++ {
		w.Restart(fmt.Sprintf("C%d", c))
		for i := 0; i < 20; i++ {
			w.Step()
		}
	}
	if h := HealthOf(w); h.Words != "dead: C1..C12 stopped: UNRELEASED_INSTANCE_ID; 48 partitions unowned" || h.OK {
		t.Fatalf("after the restarts: %q (%+v)", h.Words, h)
	}

	d, _ := sim.New(sim.DefaultTopology(), sim.DefaultConfig())
	d.Join("C2", false, nil)
	for i := 0; i < 20; i++ {
		d.Step()
	}
	d.CrashNow("C2")
	d.Step()
	if h := HealthOf(d); h.Words != "2 partitions {o2 p2} held by members down (C2)" || len(h.Down) != 1 {
		t.Fatalf("a crashed member inside its session: %q (%+v)", h.Words, h)
	}
}
