package store

import (
	"math/rand"
	"testing"
)

// TestSeqForgetBeforeLeavesClonesTheirChunks: a family of Seqs cloned
// from each other at random points, each appended to, updated and let go
// of its past at random, keeps every item from its First on equal to its
// own plain-slice model, never lets go of an item at or past the index
// asked (nor of the newest), and a clone made before keeps every item.
func TestSeqForgetBeforeLeavesClonesTheirChunks(t *testing.T) {
	tinyChunks(t)
	r := rand.New(rand.NewSource(2))
	type pair struct {
		s     Seq[int]
		model []int
	}
	fam := []*pair{{}}
	forgot := 0
	for step := 0; step < 20000; step++ {
		p := fam[r.Intn(len(fam))]
		switch k := r.Intn(12); {
		case k < 6:
			v := r.Intn(1000)
			p.s.Append(v)
			p.model = append(p.model, v)
		case k < 8 && len(p.model) > 0:
			i := p.s.First() + r.Intn(len(p.model)-p.s.First())
			p.s.Set(i, -step)
			p.model[i] = -step
		case k < 10:
			i := r.Intn(len(p.model) + 1)
			was := p.s.First()
			p.s.ForgetBefore(i)
			if f := p.s.First(); f > max(i, was) || f < was || len(p.model) > 0 && f >= len(p.model) {
				t.Fatalf("step %d: ForgetBefore(%d) of %d items kept from %d (was %d)", step, i, len(p.model), f, was)
			}
			if p.s.First() > was {
				forgot++
			}
		case k == 10 && len(fam) < 8:
			fam = append(fam, &pair{s: p.s.Clone(), model: append([]int(nil), p.model...)})
		}
		for _, q := range fam {
			if q.s.Len() != len(q.model) {
				t.Fatalf("step %d: Len %d, model %d", step, q.s.Len(), len(q.model))
			}
			for i := q.s.First(); i < len(q.model); i++ {
				if q.s.At(i) != q.model[i] {
					t.Fatalf("step %d: item %d is %d, model %d (first %d)", step, i, q.s.At(i), q.model[i], q.s.First())
				}
			}
		}
	}
	if forgot == 0 {
		t.Fatal("no Seq let go of a chunk: the test proves nothing")
	}
}

// TestBytesForgetBefore: a Bytes lets go of the chunks before the one a
// place is in, and a clone made before keeps reading them.
func TestBytesForgetBefore(t *testing.T) {
	setSeqChunk(t, 4) // 64-byte chunks
	var b Bytes
	var at []uint32
	for i := 0; i < 100; i++ {
		at = append(at, b.Append([]byte{byte(i), byte(i), byte(i)}))
	}
	c := b.Clone()
	before := b.KeptBytes()
	b.ForgetBefore(at[60])
	if b.KeptBytes() >= before {
		t.Fatalf("kept %d bytes after ForgetBefore, %d before", b.KeptBytes(), before)
	}
	for i := range at {
		if got := c.At(at[i]); got[0] != byte(i) {
			t.Fatalf("the clone's encoding %d reads %d", i, got[0])
		}
		if i >= 60 {
			if got := b.At(at[i]); got[0] != byte(i) {
				t.Fatalf("encoding %d reads %d after ForgetBefore", i, got[0])
			}
		}
	}
}

// TestBytesAppendsPastItsReachWhenItLetsGo: a Bytes whose places spell
// only 16 chunks (placeBits made small) that lets go of its past as it
// appends goes on past 16 chunks in its life, its chunks numbered round
// the ring, every kept encoding reading back; holding 16 at once is
// refused.
func TestBytesAppendsPastItsReachWhenItLetsGo(t *testing.T) {
	setSeqChunk(t, 4) // 64-byte chunks
	old := placeBits
	placeBits = bytesShift() + 4
	t.Cleanup(func() { placeBits = old })
	var b Bytes
	var at []uint32
	for i := 0; i < 2000; i++ { // 20 bytes each: about 600 chunks in all
		at = append(at, b.Append(append(make([]byte, 19), byte(i))))
		if i >= 40 {
			b.ForgetBefore(at[i-40])
		}
		for k := max(0, i-40); k <= i; k++ {
			if got := b.At(at[k]); got[19] != byte(k) {
				t.Fatalf("after %d appends, encoding %d reads %d", i+1, k, got[19])
			}
		}
	}
	if b.gone < 2*ringChunks() {
		t.Fatalf("let go of %d chunks, fewer than twice the ring's %d: the test proves less than it says", b.gone, ringChunks())
	}
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("a Bytes kept more chunks than its places spell, and said nothing")
		}
	}()
	for i := 0; i < 100; i++ {
		b.Append(make([]byte, 20))
	}
}
