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
