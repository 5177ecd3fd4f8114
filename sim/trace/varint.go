package trace

// encoding/binary's AppendUvarint and AppendVarint, the same bytes, for
// the numbers the encoders write most that take more than a byte (the
// phrases' numbers, encNum: a Produce's sequence numbers, a batch's
// offsets; a run's first offset, encRun): up to four bytes (under 2^28)
// are written with one check of b's room, where binary's loop appends a
// byte at a time, a check and a branch each (T1: half of binary's time
// in the trace's encoders, a dozen numbers a Produce). A number of one
// byte is appended inline.

// appendUvarint is binary.AppendUvarint.
func appendUvarint(b []byte, x uint64) []byte {
	if x < 1<<7 {
		return append(b, byte(x))
	}
	return putUvarint(b, x)
}

// appendVarint is binary.AppendVarint: x zigzagged (0, -1, 1, -2, ... as
// 0, 1, 2, 3, ...), then as appendUvarint.
func appendVarint(b []byte, x int64) []byte {
	return putUvarint(b, uint64(x<<1)^uint64(x>>63))
}

// putTokUvarint appends byte tok and then x as appendUvarint does, with
// one check of b's room for both (encNum: a phrase and its number).
func putTokUvarint(b []byte, tok byte, x uint64) []byte {
	switch {
	case x < 1<<7:
		return append(b, tok, byte(x))
	case x < 1<<14:
		return append(b, tok, byte(x)|0x80, byte(x>>7))
	case x < 1<<21:
		return append(b, tok, byte(x)|0x80, byte(x>>7)|0x80, byte(x>>14))
	case x < 1<<28:
		return append(b, tok, byte(x)|0x80, byte(x>>7)|0x80, byte(x>>14)|0x80, byte(x>>21))
	}
	return putUvarint(append(b, tok), x)
}

// putUvarint is appendUvarint, not inlined.
func putUvarint(b []byte, x uint64) []byte {
	switch {
	case x < 1<<7:
		return append(b, byte(x))
	case x < 1<<14:
		return append(b, byte(x)|0x80, byte(x>>7))
	case x < 1<<21:
		return append(b, byte(x)|0x80, byte(x>>7)|0x80, byte(x>>14))
	case x < 1<<28:
		return append(b, byte(x)|0x80, byte(x>>7)|0x80, byte(x>>14)|0x80, byte(x>>21))
	}
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}
