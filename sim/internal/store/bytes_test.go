package store

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestBytesClonesNeverAlias: a family of Bytes cloned from each other at
// random points, each appended to at random (encodings of 0 to 70 bytes,
// and some longer than a chunk), reads back every encoding at the place
// Append gave, in full, and holds exactly what was appended to it.
func TestBytesClonesNeverAlias(t *testing.T) {
	setSeqChunk(t, 4) // 64-byte chunks
	r := rand.New(rand.NewSource(1))
	type enc struct {
		at uint32
		b  []byte
	}
	type member struct {
		s    Bytes
		encs []enc
		size int
	}
	fam := []*member{{}}
	for step := 0; step < 20000; step++ {
		m := fam[r.Intn(len(fam))]
		switch k := r.Intn(20); {
		case k == 0:
			c := &member{s: m.s.Clone(), encs: append([]enc{}, m.encs...), size: m.size}
			fam = append(fam, c)
		default:
			n := r.Intn(70)
			if k == 1 {
				n = 50 + r.Intn(100)
			}
			b := make([]byte, n)
			r.Read(b)
			m.encs = append(m.encs, enc{m.s.Append(b), b})
			m.size += n
		}
	}
	for i, m := range fam {
		if m.s.Size() != m.size {
			t.Fatalf("Bytes %d holds %d bytes, want %d", i, m.s.Size(), m.size)
		}
		for j, e := range m.encs {
			if got := m.s.At(e.at); len(got) < len(e.b) || !bytes.Equal(got[:len(e.b)], e.b) {
				t.Fatalf("Bytes %d: encoding %d (%d bytes at %#x) reads back as % x, want % x", i, j, len(e.b), e.at, got[:min(len(got), len(e.b))], e.b)
			}
		}
	}
}

// TestAppendRoomIsAppend: encodings written in place in Room's slice and
// kept by AppendRoom (or, when Room has not the room or the encoding
// outgrows it, copied) are at the places, and read back as, the same
// encodings appended (Append) to a Bytes beside it, across chunks, clones
// and chunks let go of; a clone's bytes stay as they were.
func TestAppendRoomIsAppend(t *testing.T) {
	setSeqChunk(t, 4) // 64-byte chunks
	r := rand.New(rand.NewSource(3))
	var room, plain Bytes
	type enc struct {
		at uint32
		b  []byte
	}
	var encs []enc
	var clone Bytes
	var cloned []enc
	inPlace := 0
	for step := 0; step < 20000; step++ {
		b := make([]byte, r.Intn(30))
		r.Read(b)
		if r.Intn(200) == 0 {
			b = make([]byte, 70+r.Intn(30)) // longer than a chunk
		}
		ask := max(len(b)-5+r.Intn(10), 0) // the room asked, sometimes less than written
		dst := room.Room(ask)
		if dst != nil {
			if len(dst) != 0 || cap(dst) < ask {
				t.Fatalf("Room(%d) = len %d cap %d", ask, len(dst), cap(dst))
			}
			if len(b) <= cap(dst) {
				inPlace++
			}
		}
		dst = append(dst, b...)
		at, want := room.AppendRoom(dst), plain.Append(b)
		if at != want {
			t.Fatalf("step %d: %d bytes kept at %d, Append put them at %d", step, len(b), at, want)
		}
		encs = append(encs, enc{at, b})
		if r.Intn(500) == 0 {
			clone, cloned = room.Clone(), append([]enc(nil), encs...)
		}
		if r.Intn(300) == 0 && len(encs) > 10 {
			cut := encs[len(encs)-10].at
			room.ForgetBefore(cut)
			plain.ForgetBefore(cut)
			for len(encs) > 0 && room.kept(encs[0].at) < 0 {
				encs = encs[1:]
			}
		}
	}
	for _, e := range encs {
		if got, want := room.At(e.at)[:len(e.b)], plain.At(e.at)[:len(e.b)]; !bytes.Equal(got, e.b) || !bytes.Equal(want, e.b) {
			t.Fatalf("place %d reads %x, Append's %x, want %x", e.at, got, want, e.b)
		}
	}
	for _, e := range cloned {
		if clone.kept(e.at) < 0 {
			continue
		}
		if got := clone.At(e.at)[:len(e.b)]; !bytes.Equal(got, e.b) {
			t.Fatalf("clone: place %d reads %x, want %x", e.at, got, e.b)
		}
	}
	if room.End() != plain.End() || inPlace < 1000 {
		t.Fatalf("End %d, Append's %d; %d written in place", room.End(), plain.End(), inPlace)
	}
}
