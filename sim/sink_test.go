package sim

import (
	"maps"
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
// random overlapping runs, counts past 255 included.
func TestSinkRunsCountAsRecords(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(26))
	runs, one := SinkCounts{names: w.layout}, SinkCounts{names: w.layout}
	tps := w.layout.Inputs()
	for i := 0; i < 8000; i++ {
		tp, off, n := tps[r.Intn(len(tps))], r.Intn(768), 1+r.Intn(512)
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
		for off := 0; off < 1280; off++ {
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

// TestSinkRunsMatchAMapAndStayFew: random runs of records (the next ones
// after the last counted, mostly, and now and then some counted already,
// as a rebalance has them processed again) counted by incRun on a family
// of clones, against a count per record in a map: every count, every
// duplicate told (first, count, times) and Runs (touching runs differ in
// count, none empty) must match, no clone may see another's calls, and
// steady processing stays a few runs, not a run per call.
func TestSinkRunsMatchAMapAndStayFew(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tps := w.layout.Inputs()
	r := rand.New(rand.NewSource(848))
	type member struct {
		c     SinkCounts
		model []map[int]int // per input partition, offset -> count
		next  []int         // per input partition, the next offset to count
	}
	newModel := func() []map[int]int {
		m := make([]map[int]int, len(tps))
		for i := range m {
			m[i] = map[int]int{}
		}
		return m
	}
	fam := []*member{{c: SinkCounts{names: w.layout}, model: newModel(), next: make([]int, len(tps))}}
	for step := 0; step < 6000; step++ {
		m := fam[r.Intn(len(fam))]
		if r.Intn(40) == 0 && len(fam) < 12 {
			c := &member{c: m.c.clone(), model: newModel(), next: slices.Clone(m.next)}
			for p := range m.model {
				c.model[p] = store.CopyMap(m.model[p])
			}
			fam = append(fam, c)
			continue
		}
		p := r.Intn(len(tps))
		off, n := m.next[p], 1+r.Intn(300)
		if r.Intn(8) == 0 && off > 0 {
			off = max(0, off-1-r.Intn(400)) // processed again from an older offset
		}
		var got, want [][3]int
		m.c.incRun(tps[p], int32(p), off, n, func(first, count, times int) { got = append(got, [3]int{first, count, times}) })
		for k := off; k < off+n; k++ {
			m.model[p][k]++
			v := m.model[p][k]
			if last := len(want) - 1; v > 1 && last >= 0 && want[last][2] == v && want[last][0]+want[last][1] == k {
				want[last][1]++
			} else if v > 1 {
				want = append(want, [3]int{k, 1, v})
			}
		}
		m.next[p] = max(m.next[p], off+n)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: %s %d..%d told %v, want %v", step, tps[p], off, off+n-1, got, want)
		}
	}
	for j, m := range fam {
		counted := make([]map[int]int, len(tps))
		for i := range counted {
			counted[i] = map[int]int{}
		}
		var prev SinkRun
		runs := 0
		for run := range m.c.Runs() {
			runs++
			if run.From >= run.To || run.Times < 1 {
				t.Fatalf("sink %d: run %+v", j, run)
			}
			if prev.TP == run.TP && prev.To > run.From {
				t.Fatalf("sink %d: runs %+v and %+v overlap or are out of order", j, prev, run)
			}
			if prev.TP == run.TP && prev.To == run.From && prev.Times == run.Times {
				t.Fatalf("sink %d: runs %+v and %+v touch with one count", j, prev, run)
			}
			p, _ := w.layout.Input().Slot(run.TP, nil)
			for off := run.From; off < run.To; off++ {
				counted[p][off] = run.Times
			}
			prev = run
		}
		for p := range tps {
			if !maps.Equal(counted[p], m.model[p]) {
				t.Fatalf("sink %d: %s counts differ from the model", j, tps[p])
			}
			for off := 0; off < m.next[p]+2; off++ {
				if got := m.c.count(p, off); got != m.model[p][off] {
					t.Fatalf("sink %d: count(%s, %d) = %d, want %d", j, tps[p], off, got, m.model[p][off])
				}
			}
		}
		if j == 0 && runs > 600 {
			t.Errorf("sink 0: %d runs after 6,000 calls, mostly the next records: a run per call, not a few", runs)
		}
	}
}
