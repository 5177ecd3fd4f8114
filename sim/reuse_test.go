package sim

import "testing"

// Copies of a world that each take the free lists of the copy before
// (finished) step exactly as plain copies do, byte for byte, with and
// without a crash; they send the finished copies' packets again, and the
// finished copy is left without lists.
func TestReuseFreeLists(t *testing.T) {
	base := consumingWorld(10_000, 100)
	var dead *World
	reused := 0
	for fork := 0; fork < 6; fork++ {
		for i := 0; i < 7; i++ {
			base.Step()
		}
		plain, reuse := base.Clone(), base.Clone()
		pool := map[*Packet]bool{}
		if dead != nil {
			f := dead.free
			for _, p := range f.packets {
				pool[p] = true
			}
			reuse.ReuseFreeLists(dead)
			if reuse.free != f || dead.free != nil {
				t.Fatal("the lists did not move to the new world")
			}
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
			for _, p := range reuse.sending {
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
