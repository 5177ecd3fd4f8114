package store

import (
	"fmt"
	"math/rand"
	"testing"
)

// tinyChunks makes Seq chunks 2 items long for one test, so that every
// path (full chunks shared, copy-on-write of a full chunk, the spine's
// capacity) is taken many times even in small worlds.
func tinyChunks(t *testing.T) { setSeqChunk(t, 2) }

// setSeqChunk makes Seq chunks n items long (a power of two) until the
// test ends.
func setSeqChunk(t testing.TB, n int) {
	if n <= 0 || n&(n-1) != 0 {
		t.Fatalf("setSeqChunk(%d): a chunk is a power of two items long", n)
	}
	t.Cleanup(SetSeqChunkForTest(n))
}

func seqSlice(s *Seq[int]) []int { return s.Slice(0, s.Len()) }

// TestSeqClonesNeverAlias: a family of Seqs cloned from each other at
// random points, each appended to and updated at random (including items in
// shared full chunks), always equals its own plain-slice model.
func TestSeqClonesNeverAlias(t *testing.T) {
	tinyChunks(t)
	r := rand.New(rand.NewSource(1))
	type pair struct {
		s     Seq[int]
		model []int
	}
	fam := []*pair{{}}
	for step := 0; step < 20000; step++ {
		p := fam[r.Intn(len(fam))]
		switch k := r.Intn(10); {
		case k < 6:
			v := r.Intn(1000)
			if p.s.StartsChunk() != (p.s.Len()%seqChunk == 0) {
				t.Fatalf("step %d: startsChunk %v at %d items", step, p.s.StartsChunk(), p.s.Len())
			}
			p.s.Append(v)
			p.model = append(p.model, v)
		case k < 8 && len(p.model) > 0:
			from := r.Intn(len(p.model))
			to := from + r.Intn(len(p.model)-from+1)
			mod := r.Intn(7)
			p.s.Update(from, to, func(v *int) bool { return *v%7 == mod }, func(v *int) { *v += 1000 })
			for i := from; i < to; i++ {
				if p.model[i]%7 == mod {
					p.model[i] += 1000
				}
			}
		case k == 8 && len(fam) < 40:
			fam = append(fam, &pair{s: p.s.Clone(), model: append([]int{}, p.model...)})
		default:
			if n := len(p.model); n > 0 {
				i := r.Intn(n)
				p.s.Set(i, -i)
				p.model[i] = -i
			}
		}
		if step%97 == 0 {
			for j, q := range fam {
				if got := seqSlice(&q.s); fmt.Sprint(got) != fmt.Sprint(q.model) {
					t.Fatalf("step %d: member %d of the family holds %v, want %v", step, j, got, q.model)
				}
			}
		}
	}
	for j, q := range fam {
		if q.s.Len() != len(q.model) {
			t.Fatalf("member %d: length %d, want %d", j, q.s.Len(), len(q.model))
		}
		for i := range q.model {
			if q.s.At(i) != q.model[i] {
				t.Fatalf("member %d: item %d is %d, want %d", j, i, q.s.At(i), q.model[i])
			}
		}
		if l := q.s.Last(); len(q.model) > 0 && *l != q.model[len(q.model)-1] {
			t.Fatalf("member %d: Last %d", j, *l)
		}
	}
}

// TestChunkFromReadsWhatAtReads: ChunkFrom(i) is the items At reads from
// i to the end of i's chunk (or of the Seq), after chunks were let go of
// too, and panics for an item let go of, as At does.
func TestChunkFromReadsWhatAtReads(t *testing.T) {
	setSeqChunk(t, 4)
	var s Seq[int]
	for v := 0; v < 23; v++ {
		s.Append(v)
	}
	s.ForgetBefore(9) // chunks 0 and 1 go: items from 8 on are kept
	for i := s.First(); i < s.Len(); i++ {
		got := s.ChunkFrom(i)
		end := min((i/4+1)*4, s.Len())
		if len(got) != end-i {
			t.Fatalf("ChunkFrom(%d): %d items, want %d (to %d)", i, len(got), end-i, end)
		}
		for k, v := range got {
			if v != s.At(i+k) {
				t.Fatalf("ChunkFrom(%d)[%d] = %d, At(%d) = %d", i, k, v, i+k, s.At(i+k))
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatalf("ChunkFrom(7), let go of: no panic")
		}
	}()
	s.ChunkFrom(7)
}
