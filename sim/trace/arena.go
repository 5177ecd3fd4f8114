package trace

import (
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// textRef is where a text (or a token inside one) starts in the arena:
// chunk<<arenaShift | offset. 0 is the empty text (every arena begins with a
// lone tEnd).
type textRef = wire.TextRef

const arenaShift = 14 // 16 KB chunks

// maxTextRef bounds a reference a decoder accepts: a textRef is 64 bits
// (a windowed world's arena has no end, History), far past any arena.
const maxTextRef = 1 << 62

// textRefReach is how far an arena that keeps its whole history reaches:
// 4 GB, as when a reference was 32 bits. Such a world past it holds far
// more than the heap guard allows; a windowed one lets go of its past
// chunks (forgetBefore) and has no bound.
const textRefReach = 1 << 32

// arenaChunk is the size of a full chunk: at most 1<<arenaShift (a var only
// so that tests can make chunks tiny; never changed while a world exists).
var arenaChunk = 1 << arenaShift

// textArena is append-only bytes in chunks: a chunk's bytes never change
// once written, so World.Clone shares every chunk, the open one too (with
// its capacity cut to its length: an append on either side then writes
// where the other never reads, and the clone's first append copies it).
type textArena struct {
	full [][]byte // full chunks; the spine is shared with clones, cut to its length
	open []byte   // the chunk being filled
	// first is the number of the chunk full[0] is: the chunks before it
	// were let go of (forgetBefore). A reference keeps its chunk's number
	// (chunk<<arenaShift | offset, 64 bits): numbers are never reused, so a
	// reference some cache still holds to a chunk let go of can never name
	// a newer one (bytes answers nil for it).
	first int
	// ticks is, in a windowed world (window > 0; 0 keeps everything and
	// records none), the tick each chunk was opened at, by chunk number: a
	// text in chunk c was added at ticks[c] or later and, if c is full,
	// at ticks[c+1] or earlier. The trace lets go of a chunk by it
	// (Trace.ForgetBefore) and refers to a text only within refReach
	// ticks of it (texts.canRefer).
	ticks  store.Seq[int32]
	window int
	// since is the first chunk written under the window in force, when
	// the window was changed on a live trace (SwitchHistory; 0 before any
	// switch), and sinceReach how far back the chunks before it may
	// refer (-1: without bound, written keeping everything). A text never
	// refers to a chunk before since (canRefer), so the reach of the
	// texts before it bounds only what they read themselves.
	since      int
	sinceReach int
	switched   bool
	now        *int
	// tickStart is the arena's end when the current tick began: a text
	// before it was added in an earlier tick (pinOld).
	tickStart textRef
	// spill is where the next text is encoded when the open chunk has
	// less than spillMin bytes of room (scratch); never shared (a clone
	// starts without one).
	spill []byte
	// openShared: open is the chunk of the world this one was cloned from,
	// cut to its length. The first text added copies it into a chunk of
	// this world's own under the same number when it is short (at most
	// cloneChunk bytes), and otherwise closes it as it is (a short full
	// chunk, still shared) and starts the next, instead of copying the
	// shared one (half a chunk on average): an explorer branch writes a few
	// KB of text in all. Closing moves the next texts a chunk number on,
	// 16 KB of references: a copy of a copy of a copy of a copy (the
	// session's copy before each command, the explorer's cursor, its next
	// tick's copy, the branch) would then write every text more than 64 KB
	// past its record chunk's first text, which a record cannot reach
	// (farField), so each would be kept whole apart.
	openShared bool
	// processed is the last tplProcessed text added (texts.addWhole), 0
	// for none: a produce of its record refers back to it (tplProduceAfter).
	// processedRec is the record it names, as its text spells it (the
	// partition's tpIndex and the offset; ok false if unreadable), read
	// when it is added, so that processedBack compares two numbers.
	processed    textRef
	processedRec struct {
		tp, off uint64
		ok      bool
	}
	// offsets is the last text added that begins with a tOffsets token
	// (texts.addText), 0 for none: a fetch's positions may refer back to
	// it (tOffsetsRot).
	offsets textRef
	// fresh tells the chunks made since the last copy (closeOpen notes
	// each): a full one of them let go of is in no copy, as a copy shares
	// only the chunks made before it, and goes to pool for a next chunk
	// (newChunk). A windowed T2 roll fills and lets go of about 500
	// chunks a restart, each made anew and cleared by the runtime: a
	// fifth of what it allocated. The pool is held weakly (a collection
	// lets it go), and a copy starts without one (clone).
	fresh store.Fresh
	pool  weakSpare[byte]
}

// poolMost is the most chunks a pool keeps: a window's share let go of
// at a time (forgetShare) of T2's roll, about 1,000 chunks.
const poolMost = 256

// newChunk is an empty chunk for a text of n bytes: a chunk of the pool
// when it has one and the text fits, else a new one.
func (a *textArena) newChunk(n int) []byte {
	if p := a.pool.p.Value(); p != nil && n <= arenaChunk {
		return p.Take(arenaChunk)
	}
	return make([]byte, 0, max(arenaChunk, n))
}

// letGo keeps in the pool the chunks let go of, numbered from first on,
// that no copy holds (fresh) and are whole chunks.
func (a *textArena) letGo(chunks [][]byte, first int) {
	for k, ch := range chunks {
		if a.fresh.Own(first+k) && cap(ch) == arenaChunk {
			a.pool.spare().Keep(ch, poolMost)
		}
	}
}

// spillMin is the room the open chunk must have for the next text to be
// encoded in it (scratch): a text rarely needs more.
const spillMin = 1024

// add copies an encoded text (its tEnd included) into the arena and returns
// its reference. A text never spans chunks; one longer than a chunk (a
// rebalance plan of thousands of partitions) gets a chunk of its own.
func (a *textArena) add(b []byte) textRef {
	ref, _ := a.put(b)
	return ref
}

// put is add, and reports whether b was kept where it was written (it was
// encoded in the spare room), not copied.
func (a *textArena) put(b []byte) (textRef, bool) {
	if n := len(a.open); n+len(b) <= arenaChunk && a.inSpare(b) {
		// Encoded in the spare room: it is in place already.
		ref := a.end()
		a.open = a.open[:n+len(b)]
		return ref, true
	}
	if a.open == nil && len(a.full) == 0 && a.first == 0 {
		a.open = append(make([]byte, 0, 256), tEnd)
		if a.recordsTicks() {
			a.ticks.Append(int32(*a.now))
		}
	}
	if a.openShared {
		a.openShared = false
		if n := len(a.open); n > 0 && n+len(b) <= arenaChunk {
			if n <= cloneChunk {
				a.open = append(make([]byte, 0, max(min(n+cloneChunk, arenaChunk), n+len(b))), a.open...)
			} else {
				a.closeOpen(make([]byte, 0, max(cloneChunk, len(b))))
			}
		}
	}
	if len(a.open)+len(b) > arenaChunk {
		a.closeOpen(a.newChunk(len(b))) // an arena that filled one chunk fills the next
	}
	ref := a.end()
	if need := len(a.open) + len(b); need > cap(a.open) {
		// A young chunk, or one shared with a clone (cut to its length):
		// copy it to twice its size while under 4 KB (append would grow
		// one past 256 bytes by a quarter at a time, copying it each
		// time), then by a quarter (a copy that is kept, a fork, holds
		// little room it does not use), up to a whole chunk.
		grow := cap(a.open) / 4
		if cap(a.open) < 4<<10 {
			grow = cap(a.open)
		}
		a.open = append(make([]byte, 0, max(min(cap(a.open)+grow, arenaChunk), need)), a.open...)
	}
	a.open = append(a.open, b...)
	return ref, false
}

// closeOpen moves the open chunk to the full ones and makes next the open
// one. A full chunk may be shorter than arenaChunk: a reference names its
// chunk and its offset in it.
func (a *textArena) closeOpen(next []byte) {
	if a.window == 0 && len(a.full)+1 >= textRefReach>>arenaShift {
		panic("sim: the trace's text arena is full (4 GB of encoded text)")
	}
	a.full = append(a.full, a.open)
	a.open = next
	a.fresh.Made(a.first + len(a.full)) // next's number
	if a.recordsTicks() {
		a.ticks.Append(int32(*a.now))
	}
}

// recordsTicks reports whether the arena keeps the tick each chunk was
// opened at: a windowed one does, and one whose window was changed while
// it ran (SwitchHistory) goes on doing so whatever its window.
func (a *textArena) recordsTicks() bool { return a.window > 0 || a.switched }

// cloneChunk is the room a clone's own first chunk starts with: about what
// an explorer branch writes before it ends (it grows as put says).
const cloneChunk = 4 << 10

// spare is the open chunk's room past its last text, empty: a text
// encoded there (appended to it) and then added is kept where it was
// written, not copied. Only the world that owns the chunk writes there: a
// clone gets the chunk with its capacity cut (clone), so it has no spare
// room in a shared chunk.
func (a *textArena) spare() []byte {
	return a.open[len(a.open):len(a.open)]
}

// inSpare reports whether b starts the open chunk's spare room.
func (a *textArena) inSpare(b []byte) bool {
	n := len(a.open)
	return len(b) > 0 && n < cap(a.open) && unsafe.SliceData(b) == unsafe.SliceData(a.open[n:n+1])
}

// scratch is the buffer to encode the next text in (texts.scratch): the
// spare room while it has spillMin bytes or more, else spill. b is the
// text just added and inPlace whether it was kept where it was written:
// one that was not, and is larger than spill, becomes spill (as a world's
// scratch buffer always kept the largest text's room for the next).
func (a *textArena) scratch(b []byte, inPlace bool) []byte {
	if !inPlace && cap(b) > cap(a.spill) {
		a.spill = b[:0]
	}
	if cap(a.open)-len(a.open) >= spillMin {
		return a.spare()
	}
	if a.spill == nil {
		a.spill = make([]byte, 0, spillMin)
	}
	return a.spill[:0]
}

// addWithTail adds b and also returns a reference to b[at:] (the tail of
// the text: its records, its offsets), the same bytes when the offset fits
// in a reference, else a copy of the tail; and, as put, whether b was kept
// in place.
func (a *textArena) addWithTail(b []byte, at int) (textRef, textRef, bool) {
	ref, in := a.put(b)
	if int(ref&(1<<arenaShift-1))+at < 1<<arenaShift {
		return ref, ref + textRef(at), in
	}
	return ref, a.add(b[at:]), in
}

// end is the reference the next text added would get if it fits in the
// open chunk.
// inChunk reports whether a text of room bytes added now lands in the
// open chunk of the earlier text at ref, after it: the one place a back
// reference (a distance from the new text to ref) may point. It returns
// where the new text will start. A clone's first chunk is shared, so a
// text added there never lands in it (openShared).
func (a *textArena) inChunk(ref textRef, room int) (textRef, bool) {
	end := a.end()
	return end, ref != 0 && !a.openShared && len(a.open)+room <= arenaChunk &&
		ref>>arenaShift == end>>arenaShift && ref < end
}

func (a *textArena) end() textRef { return textRef((a.first+len(a.full))<<arenaShift | len(a.open)) }

// bytes returns the arena from ref to the end of its chunk; nil for a
// chunk let go of (or not yet written).
func (a *textArena) bytes(ref textRef) []byte {
	c, off := int(ref>>arenaShift)-a.first, int(ref&(1<<arenaShift-1))
	chunk := a.open
	if c < 0 || c > len(a.full) {
		return nil
	} else if c < len(a.full) {
		chunk = a.full[c]
	}
	if off >= len(chunk) {
		return nil
	}
	return chunk[off:]
}

func (a *textArena) clone() textArena {
	return textArena{full: a.full[:len(a.full):len(a.full)], open: a.open[:len(a.open):len(a.open)], openShared: len(a.open) > 0,
		processed: a.processed, processedRec: a.processedRec, offsets: a.offsets,
		first: a.first, ticks: a.ticks.Clone(), window: a.window, tickStart: a.tickStart,
		since: a.since, sinceReach: a.sinceReach, switched: a.switched}
}

// forgetBefore lets go of the full chunks every text of which was added
// before tick (the next chunk was opened before it), and those before
// chunk floor whatever their ticks, and returns the first reference still
// kept. The spine is copied without them, as store.Seq.ForgetBefore does,
// so a clone keeps its own.
func (a *textArena) forgetBefore(tick, floor int) textRef {
	// Chunk c may go when it is before floor or its next chunk was opened
	// before tick: both hold of a first stretch of chunks (ticks only grow).
	goes := func(c int) bool { return c < floor || int(a.ticks.At(c+1)) < tick }
	// In shares of what is kept (history.go's forgetShare): the spine is
	// copied at most forgetShare entries per chunk let go of.
	need := max(1, len(a.full)/forgetShare)
	if need > len(a.full) || !goes(a.first+need-1) {
		return textRef(a.first << arenaShift)
	}
	n := need
	for n < len(a.full) && goes(a.first+n) {
		n++
	}
	if n > 0 {
		a.letGo(a.full[:n], a.first)
		a.full = append(make([][]byte, 0, len(a.full)-n+8), a.full[n:]...)
		a.first += n
		a.ticks.ForgetBefore(a.first)
	}
	kept := textRef(a.first << arenaShift)
	// The caches the encoders refer back by: none may name a chunk let go
	// of (the open chunk never is, so inChunk already refuses them).
	if a.processed < kept {
		a.processed, a.processedRec.ok = 0, false
	}
	if a.offsets < kept {
		a.offsets = 0
	}
	return kept
}

// SetArenaChunkForTest makes the text arena's chunks n bytes long (at most
// 1<<arenaShift) and returns the function that restores them: tests only,
// never while a world exists.
func SetArenaChunkForTest(n int) (restore func()) {
	old := arenaChunk
	arenaChunk = n
	return func() { arenaChunk = old }
}
