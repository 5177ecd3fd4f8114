package sim

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// TestSinkCountsMatchAMapAndClonesNeverAlias drives a family of sinks, each
// cloned from another at random moments, with random calls (offsets spread
// over several chunks, the same records again and again), against a
// map[string]int per sink: every count, Get, and All (every record counted,
// in input partition then offset order) must match, and no sink may see
// another's calls.
func TestSinkCountsMatchAMapAndClonesNeverAlias(t *testing.T) {
	for _, topo := range []Topology{DefaultTopology(), {Inputs: []TopicSpec{{Name: "a-topic.with-long_name", Partitions: 2}, {Name: "b", Partitions: 3}}, Output: TopicSpec{Name: "out", Partitions: 1}, Group: "g"}} {
		cfg := DefaultConfig()
		cfg.RecordsPerPartition = 0
		w, err := New(topo, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewSource(2))
		type pair struct {
			c     SinkCounts
			model map[string]int
		}
		fam := []*pair{{c: SinkCounts{names: w.layout}, model: map[string]int{}}}
		for step := 0; step < 20000; step++ {
			p := fam[r.Intn(len(fam))]
			if r.Intn(20) == 0 && len(fam) < 30 {
				fam = append(fam, &pair{c: p.c.clone(), model: store.CopyMap(p.model)})
				continue
			}
			slot := r.Intn(len(w.layout.Inputs()))
			tp := w.layout.Inputs()[slot]
			hint := []int32{int32(slot), -1, int32(r.Intn(len(w.layout.Inputs())))}[r.Intn(3)] // right, none, any (checked)
			off := r.Intn(700)
			if r.Intn(10) == 0 {
				off = r.Intn(5) // the same few records, many times
			}
			k := w.Layout().Name(tp, off)
			p.model[k]++
			if got := p.c.inc(tp, hint, off); got != p.model[k] {
				t.Fatalf("step %d: inc(%s) = %d, want %d", step, k, got, p.model[k])
			}
			if got := p.c.Get(k); got != p.model[k] {
				t.Fatalf("step %d: Get(%s) = %d, want %d", step, k, got, p.model[k])
			}
		}
		for j, q := range fam {
			var names []string
			for k, v := range q.c.All() {
				names = append(names, k)
				if q.model[k] != v {
					t.Fatalf("sink %d: %s counts %d, want %d", j, k, v, q.model[k])
				}
			}
			if len(names) != len(q.model) {
				t.Fatalf("sink %d: %d names, want %d", j, len(names), len(q.model))
			}
			want := slices.Clone(names)
			slices.SortFunc(want, func(a, b string) int {
				pa, oa, _ := w.layout.Ref(a)
				pb, ob, _ := w.layout.Ref(b)
				if pa != pb {
					return pa - pb
				}
				return oa - ob
			})
			if !slices.Equal(names, want) {
				t.Fatalf("sink %d: All is not in partition then offset order", j)
			}
			for _, bad := range []string{"", "x", "o9.1", "o1.-1", "o01.1", "orders-1.1"} {
				if q.c.Get(bad) != q.model[bad] {
					t.Fatalf("sink %d: Get(%q) = %d, want %d", j, bad, q.c.Get(bad), q.model[bad])
				}
			}
		}
	}
}

// TestSinkCountsPast255: a record run 255 times and more moves its
// chunk's counts to four bytes each; the others in the chunk keep theirs,
// and a clone taken before, at or after the move sees only its own calls.
func TestSinkCountsPast255(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tp := w.layout.Inputs()[0]
	c := SinkCounts{names: w.layout}
	for i := 0; i < 3; i++ {
		c.inc(tp, -1, 7) // a neighbour in the same chunk
	}
	var clones []SinkCounts
	var at []int
	for n := 1; n <= 600; n++ {
		if got := c.inc(tp, -1, 5); got != n {
			t.Fatalf("inc %d returned %d", n, got)
		}
		if n == 254 || n == 255 || n == 256 || n == 400 {
			clones, at = append(clones, c.clone()), append(at, n)
		}
	}
	for k := range clones {
		clones[k].inc(tp, -1, 7)
		if got := clones[k].count(0, 5); got != at[k] {
			t.Errorf("clone at %d counts %d", at[k], got)
		}
		if got := clones[k].count(0, 7); got != 4 {
			t.Errorf("clone at %d: neighbour counts %d, want 4", at[k], got)
		}
		if got := clones[k].inc(tp, -1, 5); got != at[k]+1 {
			t.Errorf("clone at %d: inc returned %d, want %d", at[k], got, at[k]+1)
		}
	}
	if c.count(0, 5) != 600 || c.count(0, 7) != 3 || c.count(0, 6) != 0 {
		t.Fatalf("counts %d %d %d, want 600 3 0", c.count(0, 5), c.count(0, 7), c.count(0, 6))
	}
	n := 0
	for name, v := range c.All() {
		n++
		if want := map[string]int{w.Layout().Name(tp, 5): 600, w.Layout().Name(tp, 7): 3}[name]; v != want {
			t.Fatalf("All: %s %d, want %d", name, v, want)
		}
	}
	if n != 2 {
		t.Fatalf("All: %d records, want 2", n)
	}
}

// TestSinkRunsCountAsRecords: counting a run in one call (incRun) leaves
// the counts one inc a record leaves, and tells the duplicates as the
// stretches of records with the same new count above one, in order, over
// random runs across chunk edges, counts past 255 included.
func TestSinkRunsCountAsRecords(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(26))
	runs, one := SinkCounts{names: w.layout}, SinkCounts{names: w.layout}
	tps := w.layout.Inputs()
	for i := 0; i < 8000; i++ {
		tp, off, n := tps[r.Intn(len(tps))], r.Intn(3*sinkChunkLen), 1+r.Intn(2*sinkChunkLen)
		if i%500 == 499 {
			runs = runs.clone() // a copy writes its own chunks
		}
		var got, want [][3]int
		runs.incRun(tp, -1, off, n, func(first, count, times int) { got = append(got, [3]int{first, count, times}) })
		for k := off; k < off+n; k++ {
			v := one.inc(tp, -1, k)
			if m := len(want) - 1; v > 1 && m >= 0 && want[m][2] == v && want[m][0]+want[m][1] == k {
				want[m][1]++
			} else if v > 1 {
				want = append(want, [3]int{k, 1, v})
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("run %d of %s from %d: duplicates told %v, want %v", n, tp, off, got, want)
		}
	}
	most := 0
	for k, tp := range tps {
		for off := 0; off < 5*sinkChunkLen; off++ {
			most = max(most, one.count(k, off))
			if a, b := runs.count(k, off), one.count(k, off); a != b {
				t.Fatalf("%s.%d counted %d times by runs, %d one at a time", tp, off, a, b)
			}
		}
	}
	if most <= 255 {
		t.Fatalf("no record counted past 255 (the most %d): the wide counts went untested", most)
	}
}
