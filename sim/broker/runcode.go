package broker

import (
	"encoding/binary"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// The encoding of a multi-run span's runs in its log's arena
// (spanStore.runs): encRuns writes a batch's runs, each after the one
// before it, and runReader and decodeRun read them back, one run at a
// time. spans.go keeps the spans themselves.

// encRuns appends to b runs, a batch's, each as a multi-run span's runs
// are kept in spans.runs, after the run before it (the zero spanRun
// before the first): its partition's number and its first offset as the
// differences from the previous run's
// (zigzag), the distance to its last, its count, and how far its covered
// range reaches before its first and past its last (wire.SrcRun.From):
// lead and tail, packed as lead<<3|tail when under 16 and 8 (claim),
// else 128+lead and then tail; five or six uvarints. A batch's runs are
// a member's partitions, at offsets that steady traffic keeps close: T1's
// 10 runs of a batch take about 60 bytes, where 16 bytes a run (part,
// src, span and at as int32s) took 160. One loop for the batch, the
// previous run's numbers kept in registers: a call a run (encRun, before)
// spilled and reloaded them around each call.
//
// Each run is checked as it is encoded (appendRuns checked them in a pass
// of its own first: a second pass over every run of every batch): the
// records of the runs in all are returned, and false, with b's length as
// it was, when a run is out of a span's reach (its partition not one of
// the in input partitions, an offset negative, no record, or a covered
// range that does not hold the run: wire.SrcRun.From). The bytes written
// past b's length are then left there, unread (the room of an arena's
// open chunk, or the scratch: appendRuns).
func encRuns(b []byte, runs []wire.SrcRun, in int) (_ []byte, cells int, ok bool) {
	start := len(b)
	var pp, ps int64
	for r := range runs {
		run := &runs[r]
		if uint32(run.Part) >= uint32(in) || run.First < 0 || run.Count < 1 || run.Last < run.First ||
			run.From > run.First || run.To < run.Last {
			return b[:start], 0, false
		}
		cells += int(run.Count)
		part, src := int64(run.Part), int64(run.First)
		dp, ds := part-pp, src-ps
		pp, ps = part, src
		zp, zs := uint64(dp<<1)^uint64(dp>>63), uint64(ds<<1)^uint64(ds>>63) // zigzag, as AppendVarint
		span, n := uint64(run.Last-run.First), uint64(run.Count)
		lead, tail := uint64(run.First-run.From), uint64(run.To-run.Last)
		claim, wide := lead<<3|tail, lead >= 16 || tail >= 8
		if wide {
			claim = claimWide + lead
		}
		if zp|zs|span|n|claim|tail < 1<<14 {
			// Two bytes each at most (T1's runs: a member's partitions
			// are a hundred apart, its offsets close): written straight
			// into b's room, no loops. The numbers are kept in
			// registers, not gathered into an array first: an array
			// built on the stack and read back at once stalled on its
			// stores (store forwarding), 40% of the encoding's time in
			// T1's profile.
			k := len(b)
			if cap(b)-k < 12 {
				b = append(b, make([]byte, 12)...)[:k]
			}
			out := b[k : k+12]
			i := put14(out, 0, zp)
			i = put14(out, i, zs)
			i = put14(out, i, span)
			i = put14(out, i, n)
			i = put14(out, i, claim)
			if wide {
				i = put14(out, i, tail)
			}
			b = b[:k+i]
			continue
		}
		if zp|zs|span|n|claim|tail < 1<<21 {
			// Three bytes each at most: every batch's first run, its
			// offset written whole (the zero run before it), once T1's
			// offsets pass 2^13 (its fourth minute), where binary's
			// loops were 2% of an 8-minute run's CPU.
			k := len(b)
			if cap(b)-k < 18 {
				b = append(b, make([]byte, 18)...)[:k]
			}
			out := b[k : k+18]
			i := put21(out, 0, zp)
			i = put21(out, i, zs)
			i = put21(out, i, span)
			i = put21(out, i, n)
			i = put21(out, i, claim)
			if wide {
				i = put21(out, i, tail)
			}
			b = b[:k+i]
			continue
		}
		b = binary.AppendUvarint(binary.AppendUvarint(b, zp), zs)
		b = binary.AppendUvarint(binary.AppendUvarint(b, span), n)
		b = binary.AppendUvarint(b, claim)
		if wide {
			b = binary.AppendUvarint(b, tail)
		}
	}
	return b, cells, true
}

// put14 writes x, under 1<<14, as a uvarint of one or two bytes at
// b[i:] and returns the index past it (encRuns).
func put14(b []byte, i int, x uint64) int {
	if x < 0x80 {
		b[i] = byte(x)
		return i + 1
	}
	b[i], b[i+1] = byte(x)|0x80, byte(x>>7)
	return i + 2
}

// put21 is put14 for x under 1<<21: one to three bytes.
func put21(b []byte, i int, x uint64) int {
	if x < 1<<14 {
		return put14(b, i, x)
	}
	b[i], b[i+1], b[i+2] = byte(x)|0x80, byte(x>>7)|0x80, byte(x>>14)
	return i + 3
}

// claimWide marks a run's claim (encRuns) written as two numbers: lead
// plus it, then tail; a claim of one number under it is lead<<3|tail.
const claimWide = 128

// encRunRoom is the room appendRuns asks of its arena's open chunk a
// run to encode a batch there (store.Bytes.Room): the most encRuns writes
// of a run without binary's loops (six numbers of up to two bytes, put14),
// so a batch of such runs never spills; one that takes more spills into a
// fresh array (append), which AppendRoom then copies as before. A run of
// T1 takes about 6 bytes; 30 a run, as it was, left the last 300 bytes of
// every 2 KB chunk to the scratch, where 15% of T1's batches were encoded
// and then copied into the chunk (the copy 2.5% of T1's CPU); at 12, 6%,
// half of them the first of a chunk.
const encRunRoom = 12

// runReader reads a multi-run span's runs back (encRuns), in order.
type runReader struct {
	b    []byte
	left int     // runs not read yet
	cur  spanRun // the last run read (at: its first cell's place)
	n    int32   // its count
}

func (c *CellLog) runsOf(s *cellSpan) runReader {
	return runReader{b: c.spans.runs.At(uint32(s.src)), left: int(s.span)}
}

// next reads the next run and its number of cells; false when none is left.
func (r *runReader) next() (spanRun, int, bool) {
	if r.left == 0 {
		return spanRun{}, 0, false
	}
	r.left--
	rc := runCode{part: r.cur.part, src: r.cur.src}
	r.b = decodeRun(r.b, &rc)
	r.cur, r.n = rc.run(r.cur.at+r.n), rc.n
	return r.cur, int(r.n), true
}

// runCode is a run as decodeRun reads it: a spanRun but its at (its
// cells' place, which the reader keeps), and its number of cells.
type runCode struct{ part, src, span, n, from, to int32 }

// run is the spanRun read, its cells from at on.
func (rc *runCode) run(at int32) spanRun {
	return spanRun{part: rc.part, src: rc.src, span: rc.span, at: at, from: rc.from, to: rc.to}
}

// decodeRun reads the run encoded at b's start (encRuns) into rc, which
// holds the run before it (the zero runCode before a span's first), and
// returns the bytes after it. Field by field, and read so (foldRun): a
// run of six numbers is no value Go keeps in registers (four at most),
// so a runCode returned or assigned whole was stored a field at a time
// and copied in 16-byte words, which the processor cannot forward from
// its store buffer (a stall a run, a third of the fold).
func decodeRun(b []byte, rc *runCode) []byte {
	if len(b) >= 5 && (b[0]|b[1]|b[2]|b[3]|b[4])&0x80 == 0 {
		// Five numbers of a byte each, the claim packed: read without
		// the loops (a fold reads every run a window lets go of).
		dp, ds := int32(b[0]>>1)^-int32(b[0]&1), int32(b[1]>>1)^-int32(b[1]&1) // zigzag
		src, span := rc.src+ds, int32(b[2])
		rc.part, rc.src, rc.span, rc.n = rc.part+dp, src, span, int32(b[3])
		rc.from, rc.to = src-int32(b[4]>>3), src+span+int32(b[4]&7)
		return b[5:]
	}
	if len(b) >= 12 {
		// Two bytes each at most (T1's runs: a member's partitions are a
		// hundred apart), read without binary's loops; three for a
		// number when the chunk holds them (a batch's first run, its
		// offset written whole, past offset 2^13).
		var v [6]uint32
		k := 0
		for i := range v {
			if i == 5 && v[4] < claimWide {
				v[4], v[5] = v[4]>>3, v[4]&7 // the claim packed: five numbers
				break
			}
			x := uint32(b[k])
			k++
			if x >= 0x80 {
				y := uint32(b[k])
				k++
				if y >= 0x80 {
					if len(b) < 18 {
						return decodeRunSlow(b, rc)
					}
					z := uint32(b[k])
					k++
					if z >= 0x80 {
						return decodeRunSlow(b, rc)
					}
					y = y&0x7f | z<<7
				}
				x = x&0x7f | y<<7
			}
			v[i] = x
		}
		dp, ds := int32(v[0]>>1)^-int32(v[0]&1), int32(v[1]>>1)^-int32(v[1]&1) // zigzag
		if v[4] >= claimWide {
			v[4] -= claimWide
		}
		src, span := rc.src+ds, int32(v[2])
		rc.part, rc.src, rc.span, rc.n = rc.part+dp, src, span, int32(v[3])
		rc.from, rc.to = src-int32(v[4]), src+span+int32(v[5])
		return b[k:]
	}
	return decodeRunSlow(b, rc)
}

func decodeRunSlow(b []byte, rc *runCode) []byte {
	var v [6]uint64
	k := 0
	for i := range v {
		if i == 5 && v[4] < claimWide {
			v[4], v[5] = v[4]>>3, v[4]&7 // the claim packed: five numbers
			break
		}
		x, ki := uvarint(b[k:])
		v[i], k = x, k+ki
	}
	if v[4] >= claimWide {
		v[4] -= claimWide
	}
	dp, ds := int32(v[0]>>1)^-int32(v[0]&1), int32(v[1]>>1)^-int32(v[1]&1) // zigzag
	src, span := rc.src+ds, int32(v[2])
	rc.part, rc.src, rc.span, rc.n = rc.part+dp, src, span, int32(v[3])
	rc.from, rc.to = src-int32(v[4]), src+span+int32(v[5])
	return b[k:]
}

// uvarint is binary.Uvarint, a byte read without its loop when it is
// the whole number (a run's span and count, mostly: a fold reads
// millions).
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// varint is binary.Varint by uvarint (zigzag).
func varint(b []byte) (int64, int) {
	u, n := uvarint(b)
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x, n
}
