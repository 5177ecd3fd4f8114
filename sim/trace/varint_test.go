package trace

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// TestVarintsAreBinarys: appendUvarint, appendVarint and putTokUvarint
// (after its token) write exactly the
// bytes encoding/binary does (the trace's decoders read them with
// binary.Uvarint), at every length from one byte to ten, either side of
// each length's bounds, after any bytes already there.
func TestVarintsAreBinarys(t *testing.T) {
	var xs []uint64
	for k := uint(0); k < 64; k++ {
		x := uint64(1) << k
		xs = append(xs, x-1, x, x+1)
	}
	xs = append(xs, math.MaxUint64, math.MaxUint64-1)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		xs = append(xs, r.Uint64()>>r.Intn(64))
	}
	pre := []byte{9, 8}
	for _, x := range xs {
		if got, want := appendUvarint(pre[:2:2], x), binary.AppendUvarint(pre[:2:2], x); string(got) != string(want) {
			t.Fatalf("appendUvarint(%d) = %x, binary's %x", x, got, want)
		}
		if got, want := putTokUvarint(pre[:2:2], 7, x), binary.AppendUvarint(append(pre[:2:2], 7), x); string(got) != string(want) {
			t.Fatalf("putTokUvarint(7, %d) = %x, want %x", x, got, want)
		}
		for _, v := range []int64{int64(x), -int64(x), int64(x >> 1), -int64(x >> 1)} {
			if got, want := appendVarint(pre[:2:2], v), binary.AppendVarint(pre[:2:2], v); string(got) != string(want) {
				t.Fatalf("appendVarint(%d) = %x, binary's %x", v, got, want)
			}
			if got, want := encNum(pre[:2:2], phPID, v), binary.AppendVarint(append(pre[:2:2], phPID-tPhrase+tNum), v); string(got) != string(want) {
				t.Fatalf("encNum(%d) = %x, want %x", v, got, want)
			}
		}
	}
}
