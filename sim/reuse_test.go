package sim

import "testing"

// Copies of a world that a Reuser makes, each in the storage of the copy
// before (finished), take that copy's free lists and step exactly as plain
// copies do, byte for byte, with and without a crash; they send the
// finished copies' packets again.
func TestReuseFreeLists(t *testing.T) {
	base := consumingWorld(10_000, 100)
	var r Reuser
	var dead *World
	reused := 0
	for fork := 0; fork < 6; fork++ {
		for i := 0; i < 7; i++ {
			base.Step()
		}
		pool := map[*Packet]bool{}
		var f any
		if dead != nil {
			var packets []*Packet
			packets, f = dead.env.FreePacketsForTest()
			for _, p := range packets {
				pool[p] = true
			}
		}
		plain, reuse := base.Clone(), r.Clone(base)
		if _, g := reuse.env.FreePacketsForTest(); dead != nil && g != f {
			t.Fatal("the copy did not take the finished copy's lists")
		}
		if fork%2 == 1 {
			for _, w := range []*World{plain, reuse} {
				if err := w.CrashNow("C1"); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := 0; i < 40; i++ {
			plain.Step()
			reuse.Step()
			for _, p := range reuse.env.Sending() {
				if pool[p] {
					reused++
				}
			}
		}
		if got, want := fingerprint(reuse), fingerprint(plain); got != want {
			t.Fatalf("fork %d: the copy with a finished copy's lists differs from a plain copy", fork)
		}
		dead = reuse
	}
	if reused == 0 {
		t.Error("no packet from a finished copy's lists was sent again")
	}
}

// A Reuser's copies, each made in the storage of the one before once it is
// finished, are Clone's copies: from worlds of other shapes in turn (more
// processes after restarts, more partitions and members, transactions, the
// consumer protocol, in flight and at rest), with a fault or without, each
// steps exactly as a plain copy does, byte for byte, and keeps the
// invariants; the worlds copied are left as they were. The storage is
// reused: a copy is made in the finished one's World.
func TestReuserCopiesAreClones(t *testing.T) {
	mk := func(members, parts int, setup func(w *World)) *World {
		topo := DefaultTopology()
		topo.Members = members
		for i := range topo.Inputs {
			topo.Inputs[i].Partitions = parts
		}
		w, err := New(topo, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if setup != nil {
			setup(w)
		}
		return w
	}
	srcs := []*World{
		mk(2, 3, nil),
		mk(4, 6, func(w *World) { w.Restart("C1"); w.Restart("C3") }),
		mk(2, 3, func(w *World) { w.SetProducer("transactional") }),
		mk(3, 4, func(w *World) { w.Set("", "group.protocol", "consumer") }),
		mk(1, 2, nil),
	}
	var r Reuser
	var prev *World
	made := 0
	for round := 0; round < 6; round++ {
		for i, src := range srcs {
			for range 3 + 5*i {
				src.Step()
			}
			before := fingerprint(src)
			plain, reused := src.Clone(), r.Clone(src)
			if prev != nil && reused == prev {
				made++
			}
			if round%2 == 1 {
				client := src.Clients()[round%len(src.Clients())]
				for _, w := range []*World{plain, reused} {
					if m := w.Member(client); m != nil && m.Alive {
						if err := w.CrashNow(client); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			c := NewChecker()
			for k := 0; k < 30+10*i; k++ {
				plain.Step()
				reused.Step()
				if err := c.Check(reused); err != nil {
					t.Fatalf("round %d, world %d, tick %d: %v", round, i, reused.Tick, err)
				}
			}
			if len(reused.current) != len(plain.current) || len(reused.Group.Members()) != len(plain.Group.Members()) {
				t.Fatalf("round %d, world %d: the Reuser's copy has %d clients and %d group members, a plain copy %d and %d",
					round, i, len(reused.current), len(reused.Group.Members()), len(plain.current), len(plain.Group.Members()))
			}
			for c, m := range plain.current {
				if rm := reused.current[c]; rm == nil || rm.Proc() != m.Proc() || rm.Inc != m.Inc {
					t.Fatalf("round %d, world %d: client %s's process differs in the Reuser's copy", round, i, c)
				}
			}
			if got, want := fingerprint(reused), fingerprint(plain); got != want {
				t.Fatalf("round %d, world %d: the Reuser's copy differs from a plain copy", round, i)
			}
			if fingerprint(src) != before {
				t.Fatalf("round %d, world %d: copying and stepping the copies changed the world copied", round, i)
			}
			prev = reused
			if round == 2 {
				// A copy of the Reuser's own last copy, which is not
				// finished: made anew, and both go on alike.
				fp := fingerprint(reused)
				self := r.Clone(reused)
				if self == reused || fingerprint(reused) != fp || fingerprint(self) != fp {
					t.Fatalf("world %d: a Reuser's copy of its own last copy changed it or differs from it", i)
				}
				self.Step()
				reused.Step()
				if fingerprint(self) != fingerprint(reused) {
					t.Fatalf("world %d: a Reuser's copy of its own last copy steps otherwise", i)
				}
				prev = self
			}
		}
	}
	if made == 0 {
		t.Error("no copy was made in the finished copy's World")
	}
}

// A copy of a Reuser's last copy, made before that one is finished (a
// checkpoint of a branch world), may share its storage: delivered packets
// still referenced (a parked fetch's, an answer's request) live in the
// Reuser's wire array. The Reuser's next copy must not be made in it: the
// checkpoint steps on exactly as a checkpoint of a plain copy does.
func TestCopyOfReuserCopyKeepsItsStorage(t *testing.T) {
	src, _ := New(DefaultTopology(), DefaultConfig())
	other, _ := New(DefaultTopology(), DefaultConfig())
	for range 40 {
		src.Step()
	}
	for range 57 {
		other.Step()
	}
	for k := 0; k < 30; k++ {
		src.Step()
		var r Reuser
		b, ref := r.Clone(src), src.Clone()
		b.Step()
		ref.Step()
		kept, refKept := b.Clone(), ref.Clone()
		_ = r.Clone(other) // b is finished now; kept is not
		for range 20 {
			kept.Step()
			refKept.Step()
		}
		if fingerprint(kept) != fingerprint(refKept) {
			t.Fatalf("k=%d: the checkpoint of a Reuser's copy changed after the Reuser's next copy", k)
		}
	}
}
