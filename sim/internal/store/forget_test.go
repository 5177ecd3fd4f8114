package store

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestSeqForgetBefore: a family of Seqs cloned from each other at random
// points, appended to, updated and let go of at random, keeps every item
// from its First on equal to its own plain-slice model, with indexes
// absolute (Len counts what was let go of), First a whole number of
// chunks at most the point asked, and what a clone holds untouched by
// what the Seq it was cloned from let go of.
func TestSeqForgetBefore(t *testing.T) {
	tinyChunks(t)
	r := rand.New(rand.NewSource(2))
	type pair struct {
		s     Seq[int]
		model []int
		asked int // the furthest ForgetBefore asked for
	}
	fam := []*pair{{}}
	for step := 0; step < 20000; step++ {
		p := fam[r.Intn(len(fam))]
		switch k := r.Intn(12); {
		case k < 6:
			v := r.Intn(1000)
			p.s.Append(v)
			p.model = append(p.model, v)
		case k < 8 && len(p.model) > p.s.First():
			from := p.s.First() + r.Intn(len(p.model)-p.s.First())
			to := from + r.Intn(len(p.model)-from+1)
			// asked from up to 2 items before: Update starts at First
			ask := from - r.Intn(3)
			p.s.Update(ask, to, func(v *int) bool { return *v%3 == 0 }, func(v *int) { *v += 1 })
			for i := max(ask, p.s.First()); i < to; i++ {
				if p.model[i]%3 == 0 {
					p.model[i]++
				}
			}
		case k == 8 && len(fam) < 30:
			fam = append(fam, &pair{s: p.s.Clone(), model: append([]int{}, p.model...), asked: p.asked})
		default:
			i := r.Intn(len(p.model) + 2)
			before := p.s.First()
			dropped := p.s.ForgetBefore(i)
			if p.s.First() != before+dropped || p.s.First()%seqChunk != 0 || (dropped > 0 && p.s.First() > i) {
				t.Fatalf("step %d: ForgetBefore(%d) from First %d let go of %d, First now %d", step, i, before, dropped, p.s.First())
			}
			p.asked = max(p.asked, i)
		}
		if p.s.Len() != len(p.model) {
			t.Fatalf("step %d: Len %d, want %d", step, p.s.Len(), len(p.model))
		}
		if step%53 == 0 {
			for j, q := range fam {
				got := q.s.Slice(0, q.s.Len())
				if want := q.model[q.s.First():]; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("step %d: member %d holds %v from %d, want %v", step, j, got, q.s.First(), want)
				}
				for i, v := range q.s.From(0) {
					if v != q.model[i] {
						t.Fatalf("step %d: member %d: From yields %d at %d, want %d", step, j, v, i, q.model[i])
					}
				}
			}
		}
	}
}

// TestSeqUpdateBeforeFirst: Update asked from before First changes only
// the items kept, never panics, and leaves the clone that still holds the
// chunk let go of as it was.
func TestSeqUpdateBeforeFirst(t *testing.T) {
	tinyChunks(t)
	var s Seq[int]
	for i := 0; i < 9; i++ {
		s.Append(i)
	}
	c := s.Clone()
	if n := s.ForgetBefore(5); n != 4 || s.First() != 4 {
		t.Fatalf("ForgetBefore(5) let go of %d items, First %d: want 4 and 4 (chunks of 2 wholly before 5)", n, s.First())
	}
	s.Update(0, 9, func(*int) bool { return true }, func(v *int) { *v += 100 })
	if got := fmt.Sprint(s.Slice(0, 9)); got != "[104 105 106 107 108]" {
		t.Fatalf("after Update: %s", got)
	}
	if got := fmt.Sprint(c.Slice(0, 9)); got != "[0 1 2 3 4 5 6 7 8]" {
		t.Fatalf("the clone: %s", got)
	}
}

// TestSeqAtForgottenPanics: At of an item let go of panics, naming the
// index and the first item kept.
func TestSeqAtForgottenPanics(t *testing.T) {
	tinyChunks(t)
	var s Seq[int]
	for i := 0; i < 7; i++ {
		s.Append(i)
	}
	s.ForgetBefore(4)
	if s.At(4) != 4 || s.At(6) != 6 {
		t.Fatalf("kept items read %d, %d", s.At(4), s.At(6))
	}
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, "item 3 was let go of") || !strings.Contains(msg, "from 4 on") {
			t.Fatalf("At(3) after ForgetBefore(4): panic %q", msg)
		}
	}()
	s.At(3)
}

// TestBytesForgetBefore: places stay absolute after the chunks before one
// are let go of; a clone made before keeps reading them; a place let go
// of panics.
func TestBytesForgetBefore(t *testing.T) {
	setSeqChunk(t, 4) // 64-byte chunks
	var s Bytes
	var ats []uint32
	for i := 0; i < 40; i++ {
		ats = append(ats, s.Append([]byte(fmt.Sprintf("enc%02d", i))))
	}
	c := s.Clone()
	s.ForgetBefore(ats[20])
	if s.First() == 0 || s.First() > ats[20] {
		t.Fatalf("First %d after ForgetBefore(%d)", s.First(), ats[20])
	}
	for i := 20; i < 40; i++ {
		if got := string(s.At(ats[i])[:5]); got != fmt.Sprintf("enc%02d", i) {
			t.Fatalf("place %d reads %q", ats[i], got)
		}
	}
	if got := string(c.At(ats[0])[:5]); got != "enc00" {
		t.Fatalf("the clone reads %q at the first place", got)
	}
	if at := s.Append([]byte("later")); string(s.At(at)[:5]) != "later" || at <= ats[39] {
		t.Fatalf("an append after forgetting went to %d", at)
	}
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "was let go of") {
			t.Fatalf("At of a place let go of: panic %q", msg)
		}
	}()
	s.At(ats[0])
}

// TestSpareNeverWritesAClonesChunk: a family of Seqs (then one of Bytes)
// cloned from each other at random points, each appending with its own
// Spare (a clone starts with none) and letting go of its past at random,
// keeps every item (encoding) from its First on equal to its own model,
// clones included: a chunk written again after it was let go of (Spare)
// was never one a clone could read; AppendSpareSlot's items, written in
// place, too. And chunks are written again: the Spare is not one that
// never gives any back.
func TestSpareNeverWritesAClonesChunk(t *testing.T) {
	tinyChunks(t) // Seq chunks of 2 items, Bytes chunks of 32 bytes
	for _, bytes := range []bool{false, true} {
		testSpare(t, bytes)
	}
}

func testSpare(t *testing.T, bytes bool) {
	r := rand.New(rand.NewSource(3))
	type pair struct {
		s     Seq[int]
		sp    Spare[int]
		model []int
		b     Bytes
		bat   []uint32 // each encoding's place
		bmod  []string
	}
	fam := []*pair{{}}
	reused := 0
	for step := 0; step < 30000; step++ {
		p := fam[r.Intn(len(fam))]
		switch k := r.Intn(14); {
		case k < 7 && !bytes:
			v := r.Intn(1000)
			spares := len(p.sp.chunks)
			if r.Intn(2) == 0 {
				p.s.AppendSpare(v, &p.sp)
			} else {
				*p.s.AppendSpareSlot(&p.sp) = v // written in place, as broker's spans are
			}
			if len(p.sp.chunks) < spares {
				reused++
			}
			p.model = append(p.model, v)
		case k < 7:
			enc := fmt.Sprintf("e%d-%d", step, r.Intn(1000))
			spares := len(p.b.spare.chunks)
			p.bat = append(p.bat, p.b.Append([]byte(enc)))
			if len(p.b.spare.chunks) < spares {
				reused++
			}
			p.bmod = append(p.bmod, enc)
		case k == 7 && len(p.model) > p.s.First():
			from := p.s.First() + r.Intn(len(p.model)-p.s.First())
			p.s.Update(from, from+1, func(*int) bool { return true }, func(v *int) { *v += 1000 })
			p.model[from] += 1000
		case k == 8 && len(fam) < 30 && r.Intn(4) == 0:
			q := &pair{model: append([]int{}, p.model...), bat: append([]uint32{}, p.bat...), bmod: append([]string{}, p.bmod...)}
			if bytes {
				q.b = p.b.Clone()
			} else {
				q.s = p.s.Clone()
			}
			fam = append(fam, q)
		case !bytes:
			p.s.ForgetBeforeSpare(r.Intn(len(p.model)+2), &p.sp)
		case len(p.bat) > 0:
			p.b.ForgetBefore(p.bat[r.Intn(len(p.bat))])
		}
		if step%37 != 0 {
			continue
		}
		for j, q := range fam {
			for i, v := range q.s.From(0) {
				if v != q.model[i] {
					t.Fatalf("step %d: Seq %d reads %d at %d, want %d", step, j, v, i, q.model[i])
				}
			}
			for i, at := range q.bat {
				if at < q.b.First() {
					continue
				}
				if got := string(q.b.At(at)[:len(q.bmod[i])]); got != q.bmod[i] {
					t.Fatalf("step %d: Bytes %d's encoding %d reads %q, want %q", step, j, i, got, q.bmod[i])
				}
			}
		}
	}
	t.Logf("Bytes %v: chunks written again %d", bytes, reused)
	if reused == 0 {
		t.Fatalf("Bytes %v: no chunk written again", bytes)
	}
}

// TestBytesPlacesGoRound: a Bytes whose places reach only 16 chunks (a
// test's 32-bit places) writes 100 times that, letting go of all but its
// last few chunks as it goes: every encoding kept reads back at its
// place, a clone made on the way reads what it held, First and Reach
// count from the first chunk kept; one that lets go of nothing panics
// at the reach, naming it.
func TestBytesPlacesGoRound(t *testing.T) {
	setSeqChunk(t, 4)                     // 64-byte chunks
	t.Cleanup(SetPlaceBitsForTest(6 + 4)) // 16 chunks of places
	var s Bytes
	var ats []uint32
	var encs []string
	var clone Bytes
	var cloneAts []uint32
	var cloneEncs []string
	for i := 0; s.End() < 100*16*64; i++ {
		enc := fmt.Sprintf("enc%d", i)
		ats, encs = append(ats, s.Append([]byte(enc))), append(encs, enc)
		if len(ats) > 40 {
			s.ForgetBefore(ats[len(ats)-40]) // about five chunks kept
		}
		if i == 3000 {
			clone, cloneAts, cloneEncs = s.Clone(), slices.Clone(ats[len(ats)-30:]), slices.Clone(encs[len(encs)-30:])
		}
		if s.Reach() > 8*64 {
			t.Fatalf("encoding %d: Reach %d bytes, with about five chunks kept", i, s.Reach())
		}
		for k := max(0, len(ats)-40); k < len(ats); k++ {
			if got := string(s.At(ats[k])[:len(encs[k])]); got != encs[k] {
				t.Fatalf("encoding %d, End %d: place %d reads %q, want %q", i, s.End(), ats[k], got, encs[k])
			}
		}
	}
	for k, at := range cloneAts {
		if got := string(clone.At(at)[:len(cloneEncs[k])]); got != cloneEncs[k] {
			t.Fatalf("the clone's place %d reads %q, want %q", at, got, cloneEncs[k])
		}
	}
	if first := s.First(); s.kept(first) != 0 {
		t.Fatalf("First %d is not the first kept chunk's place", first)
	}
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "a Bytes is full (4 GB of encodings kept)") {
			t.Fatalf("a Bytes that lets go of nothing past its reach: panic %q", msg)
		}
	}()
	var full Bytes
	for full.End() < 17*64 {
		full.Append([]byte("0123456789"))
	}
	t.Fatalf("a Bytes kept %d bytes of places, past its 16 chunks, and did not panic", full.Reach())
}
