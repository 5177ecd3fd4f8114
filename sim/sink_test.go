package sim

import (
	"math/rand"
	"slices"
	"testing"
)

// TestSinkCountsMatchAMapAndClonesNeverAlias drives a family of sinks, each
// cloned from another at random moments, with random calls (offsets spread
// over several chunks, the same records again and again), against a
// map[string]int per sink: every count, Get, and All (every record counted,
// in input partition then offset order) must match, and no sink may see
// another's calls.
func TestSinkCountsMatchAMapAndClonesNeverAlias(t *testing.T) {
	for _, topo := range []Topology{DefaultTopology(), {Inputs: []TopicSpec{{"a-topic.with-long_name", 2}, {"b", 3}}, Output: TopicSpec{"out", 1}, Group: "g"}} {
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
		fam := []*pair{{c: SinkCounts{names: w.records}, model: map[string]int{}}}
		for step := 0; step < 20000; step++ {
			p := fam[r.Intn(len(fam))]
			if r.Intn(20) == 0 && len(fam) < 30 {
				fam = append(fam, &pair{c: p.c.clone(), model: cpMap(p.model)})
				continue
			}
			tp := w.inputTPs[r.Intn(len(w.inputTPs))]
			off := r.Intn(700)
			if r.Intn(10) == 0 {
				off = r.Intn(5) // the same few records, many times
			}
			k := w.RecordName(tp, off)
			p.model[k]++
			if got := p.c.inc(tp, off); got != p.model[k] {
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
				pa, oa, _ := w.records.ref(a)
				pb, ob, _ := w.records.ref(b)
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
