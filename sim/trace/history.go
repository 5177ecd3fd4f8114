package trace

import (
	"encoding/binary"
	"fmt"
	"sort"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// A windowed trace (SetHistory) keeps only a window of its past in
// detail: ForgetBefore lets go of the chunks of packets, events and texts
// every item of which is older than a tick, whole chunks at a time, so
// that the memory it holds stays about what the window's ticks wrote. An
// index stays absolute (Len counts what was let go of; First is the first
// kept; At of one let go of panics), and what is kept reads exactly as it
// read before.
//
// What a kept item refers to must be kept with it:
//
//   - A record (a packet's or an event's) names its text. Every record's
//     text is added in the tick the record is (a packet's as it is sent,
//     an event's as it happens), so the chunks of texts opened before the
//     first kept record's tick can go. A record whose text was added in an
//     earlier tick (none does today) pins that text's chunk for as long as
//     the record is kept (pins).
//   - A text refers to earlier texts. Back references (tSameBack, %q, %b,
//     tOffsetsRot) are distances within one chunk, which is kept or let go
//     of whole. Absolute references (tSame, tListOf, tSrcRunsLike) may
//     cross chunks: a windowed trace makes one only to a chunk opened at
//     most refReach ticks before the text is added (canRefer), and
//     spells the text out otherwise, so every chunk's references reach at
//     most refReach ticks before the chunk was opened. A reference is
//     followed at most refHops times from a kept text (a tListOf's text
//     holds none; a tSame names a token that is not one and may be a
//     tSrcRunsLike, whose tSrcRuns refers to nothing), so keeping the
//     chunks opened up to refHops x refReach ticks before the first kept
//     one keeps every text a kept one reads.
//   - A narrow answer keeps how far back its request is: the API and peer
//     of those whose request was let go of are kept apart (orphans).
//
// References are 64 bits and chunk numbers are never reused (wire.TextRef):
// a windowed world's arena has no 4 GB end, and a reference that a cache
// still holds to a chunk let go of reads as nothing rather than as a newer
// text.

// refHops bounds the absolute references followed from a text (above).
const refHops = 3

// forgetBatch is the fewest chunks of packets or events let go of at once,
// and forgetShare the least share of the chunks kept (one in forgetShare):
// each time copies the spine of the chunks kept and reads the answers that
// may refer back past the cut (orphans), so a world forgetting every tick
// does that about once per forgetBatch chunks, copying at most
// forgetShare spine entries per chunk let go of, for at most 1/forgetShare
// more than its window in memory. The text arena lets go of its chunks in
// shares alike.
const (
	forgetBatch = 32
	forgetShare = 8
)

// SetHistory makes t keep a window of window ticks of its past (0 keeps
// everything, and t is then exactly as one never windowed): texts then
// refer back only as far as ForgetBefore keeps. Set before anything is
// recorded.
func (t *Trace) SetHistory(window int) {
	if t.arena.end() != 0 || t.Packets.Len() > 0 || t.Events.Len() > 0 {
		panic("sim: a trace's history window is set before it records anything")
	}
	t.arena.window = max(window, 0)
}

// SwitchHistory changes the window of a trace that has recorded already
// (a world's history.ms set while it runs): from now on it keeps window
// ticks of its past (0: everything). What it keeps stays readable: the
// texts written before the switch may refer back as far as their window
// let them (without bound when it kept everything), so ForgetBefore keeps
// the chunks they read for as long as any of them is kept; and the texts
// written after it never refer to one written before (they start a chunk
// of their own, and canRefer refuses the earlier ones), so once the kept
// records are all from after the switch, everything before it can go. An
// arena that kept everything had no chunk ticks: its chunks read as
// opened at tick 0, which only ever keeps more.
func (t *Trace) SwitchHistory(window int) {
	a := &t.arena
	window = max(window, 0)
	if window == a.window {
		return
	}
	if a.open == nil && len(a.full) == 0 && a.first == 0 {
		a.window = window // no text yet: as SetHistory
		return
	}
	reach := -1
	if a.window > 0 {
		reach = a.refReach()
	}
	if a.switched && (a.sinceReach < 0 || reach >= 0 && a.sinceReach > reach) {
		reach = a.sinceReach // the earliest texts kept reach the farthest
	}
	if !a.recordsTicks() {
		for c := a.ticks.Len(); c <= a.first+len(a.full); c++ {
			a.ticks.Append(0)
		}
	}
	a.window, a.switched, a.sinceReach = window, true, reach
	a.closeOpen(make([]byte, 0, 256))
	a.since = a.first + len(a.full)
	a.openShared = false
	// The caches the encoders refer back by name texts before the switch.
	a.processed, a.processedRec.ok, a.offsets = 0, false, 0
	t.scratch = a.scratch(nil, false)
}

// HeldBeforeSwitch is the tick the oldest text still kept from before the
// window was last changed (SwitchHistory) was added at, or after, and
// true while any is kept: such texts go once the window has passed the
// switch, so until then the trace holds more than its window (0 for an
// arena that kept everything: its chunks have no ticks).
func (t *Trace) HeldBeforeSwitch() (int, bool) {
	a := &t.arena
	if !a.switched || a.first >= a.since || a.ticks.Len() == 0 {
		return 0, false
	}
	return int(a.ticks.At(a.first)), true
}

// refReach is how many ticks before a text is added the chunk of a text it
// refers to (absolutely) may have been opened: an eighth of the window, so
// that ForgetBefore keeps at most refHops eighths more than the window's
// texts.
func (a *textArena) refReach() int { return max(a.window/8, 1) }

// canRefer reports whether a text added now may refer to the one at ref
// by its place (tSame, tListOf, tSrcRunsLike): always in a trace that
// keeps its whole history; in a windowed one when ref's chunk is kept and
// was opened at most refReach ticks ago.
func (tx *texts) canRefer(ref textRef) bool {
	a := &tx.arena
	c := int(ref >> arenaShift)
	if a.window == 0 {
		return c >= a.since // (0 unless the window was switched: SwitchHistory)
	}
	return c >= a.first && c >= a.since && c < a.ticks.Len() && int(a.ticks.At(c)) >= *a.now-a.refReach()
}

// canReferAt is canRefer for encSameAt's reference to ref from a text
// being encoded in b: one it makes as a distance back within the open
// chunk (tSameBack) stays in the chunk; one by ref's place is canRefer's.
func (tx *texts) canReferAt(b []byte, ref textRef) bool {
	_, ok := tx.arena.inChunk(ref, len(b)+2*binary.MaxVarintLen64)
	if ok && len(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(tx.scratch) {
		return true
	}
	return tx.canRefer(ref)
}

// followHook, when set (tests: FollowReferencesForTest), is told of every
// reference a reader follows: its kind (back: a distance within a chunk,
// tSameBack, %q, %b, tOffsetsRot; or tSame, tListOf, tSrcRunsLike, by
// place), where it is and where it points.
var followHook func(kind string, from, to uint64)

func followed(kind string, from, to textRef) {
	if followHook != nil {
		followHook(kind, uint64(from), uint64(to))
	}
}

// FollowReferencesForTest has f told of every reference a reader of texts
// follows (followHook), and returns the function that stops it: tests
// only, never while another goroutine reads a trace.
func FollowReferencesForTest(f func(kind string, fromChunk, toChunk uint64)) (restore func()) {
	followHook = func(kind string, from, to uint64) { f(kind, from>>arenaShift, to>>arenaShift) }
	return func() { followHook = nil }
}

// pin is a record kept while its text, added in an earlier tick, lives in
// a chunk that must be kept with it: the record's index and the chunk.
type pin struct {
	rec   int
	chunk int
}

// pinOld pins the chunk of text, added before the current tick began
// (tickStart), for record i of a windowed trace; pins is a list that is
// never changed in place (a clone shares it).
func (a *textArena) pinOld(pins *[]pin, i int, text textRef) {
	if a.window == 0 || text == 0 || text >= a.tickStart {
		return
	}
	*pins = append((*pins)[:len(*pins):len(*pins)], pin{rec: i, chunk: int(text >> arenaShift)})
}

// ForgetBefore lets go of what t holds in detail from before tick (a
// windowed trace's, SetHistory): the chunks of packets and events every
// one of which happened before it, and the chunks of texts that no kept
// one reads. It never changes what is kept, nor what a clone holds.
func (t *Trace) ForgetBefore(tick int) {
	if t.arena.window == 0 {
		panic("sim: ForgetBefore is for a trace that keeps a window of its history (SetHistory)")
	}
	t.forgetBefore(tick, forgetBatch)
}

// ForgetAllBefore is ForgetBefore for a copy kept only to step again (a
// session's checkpoint, kernel's checkpointOf): every chunk of packets and
// events before tick goes, however few, and every full chunk of texts,
// whatever a kept record or a later text would read there. The records it
// keeps (those in the open chunks) can then no longer be read, and must
// not be: a world stepped on from such a copy shows its ticks from a
// window after the copy (World.DetailFrom). Its later texts never refer
// to the texts let go of (canRefer reads a chunk let go of as beyond
// reach, and spells the text out), so they read as the same world's.
func (t *Trace) ForgetAllBefore(tick int) {
	if t.arena.window == 0 {
		panic("sim: ForgetAllBefore is for a trace that keeps a window of its history (SetHistory)")
	}
	t.forgetBefore(tick, 1)
	t.pins.packets, t.pins.events = nil, nil
	t.arena.forgetBefore(int(^uint(0)>>1), 0)
	t.historyFrom = max(t.historyFrom, tick)
}

func (t *Trace) forgetBefore(tick, least int) {
	if last, ok := t.Packets.recs.forgetBefore(tick, least); ok {
		t.historyFrom = max(t.historyFrom, last+1)
		t.pins.packets = dropPins(t.pins.packets, t.Packets.recs.First())
	}
	if last, ok := t.Events.recs.forgetBefore(tick, least); ok {
		t.historyFrom = max(t.historyFrom, last+1)
		t.pins.events = dropPins(t.pins.events, t.Events.recs.First())
	}
	// The oldest kept record's tick: its text was added then or later.
	from := tick
	if l := &t.Packets.recs; l.First() < l.Len() {
		from = min(from, int(l.sentAt(l.First())))
	}
	if l := &t.Events.recs; l.First() < l.Len() {
		from = min(from, int(l.tickAt(l.First())))
	}
	a := &t.arena
	if a.ticks.Len() == 0 {
		return // no text yet
	}
	// The oldest chunk holding a kept record's text: the first whose next
	// was opened at from or later (or the open one); ticks only grow.
	k := a.first + sort.Search(len(a.full), func(n int) bool { return int(a.ticks.At(a.first+n+1)) >= from })
	for _, p := range t.pins.packets {
		k = min(k, p.chunk)
	}
	for _, p := range t.pins.events {
		k = min(k, p.chunk)
	}
	switch {
	case k < a.first:
	case k >= a.since:
		// The kept texts are all written under the window in force, and
		// none refers to a chunk before since (SwitchHistory).
		a.forgetBefore(int(a.ticks.At(k))-refHops*a.refReach(), a.since)
	case a.sinceReach >= 0:
		// Texts from before the window was switched are kept: they read
		// as far back as their window let them.
		a.forgetBefore(int(a.ticks.At(k))-refHops*max(a.sinceReach, 1), 0)
	}
}

// dropPins is pins without those of records before first.
func dropPins(pins []pin, first int) []pin {
	k := sort.Search(len(pins), func(k int) bool { return pins[k].rec >= first })
	return pins[k:]
}

// TextsFrom is the tick the first text still kept was added in (0 with
// none yet): a world lets its output logs go of their cells only before
// it, since a produced event's text reads its invoice's cell, written in
// the same tick (sim/history.go).
func (t *Trace) TextsFrom() int {
	a := &t.arena
	if a.ticks.Len() == 0 {
		return 0
	}
	return int(a.ticks.At(a.first))
}

// HistoryFrom is the first tick whose packets and events are all still
// kept: 0 unless ForgetBefore let go of some.
func (t *Trace) HistoryFrom() int { return t.historyFrom }

// First is the ID of the first packet still kept (0 unless the trace let
// go of its past, Trace.ForgetBefore).
func (l *PacketLog) First() int { return l.recs.First() }

// First is the index of the first event still kept.
func (l *EventLog) First() int { return l.recs.First() }

// droppable is how many of s's full chunks, from its first kept, hold only
// items from before tick (ticks only grow along a Seq of records, so the
// last item of a chunk says), tick giving an item's; 0 when fewer than
// forgetBatch.
func droppable[T any](s *store.Seq[T], tick int, at func(int) int32, least int) int {
	chunk := store.SeqChunk()
	c0, full := s.First()/chunk, (s.Len()/chunk)-s.First()/chunk
	if s.Len()%chunk == 0 && full > 0 {
		full-- // the open chunk is full: it is still the open one
	}
	need := max(least, full/forgetShare)
	if least == 1 {
		need = 1 // ForgetAllBefore: every chunk that can go
	}
	if need > full || int(at((c0+need)*chunk-1)) >= tick {
		return 0 // ticks only grow: fewer than need chunks are all before tick
	}
	n := need
	for n < full && int(at((c0+n+1)*chunk-1)) < tick {
		n++
	}
	return n
}

// sentAt is packet i's sent tick, read off its record (not its request's).
func (s *packetRecs) sentAt(i int) int32 {
	if r := s.At(i); r.text != farField {
		return s.bases.of(i).tick + int32(r.sent)
	}
	f, _ := store.FarAt(&s.far, i, func(f farPacket) int32 { return f.id })
	return f.sent
}

// tickAt is event i's tick.
func (s *eventRecs) tickAt(i int) int32 {
	f, _ := s.whole(i)
	return f.tick
}

// orphan is a narrow answer kept whose request was let go of: its request's
// API and peer, which it would read there.
type orphan struct {
	id   int32
	api  uint8
	peer uint32
}

// forgetBefore lets go of the chunks of packets all sent before tick, and
// reports the tick of the last one let go of; false when none was.
func (s *packetRecs) forgetBefore(tick, least int) (int, bool) {
	n := droppable(&s.Seq, tick, s.sentAt, least)
	if n == 0 {
		return 0, false
	}
	chunk := store.SeqChunk()
	first := s.First() + n*chunk
	last := int(s.sentAt(first - 1))
	// The narrow answers whose request goes: narrowBits back at most.
	var orphans []orphan
	for i := first; i < min(first+narrowBits, s.Len()); i++ {
		r := s.At(i)
		if r.text == farField || r.flagsErr&pkAnswer == 0 {
			continue
		}
		req := i - int(r.x&(narrowBits-1))
		if req >= first {
			continue
		}
		o := orphan{id: int32(i)}
		if o2, ok := s.orphanOf(req, i); ok {
			o = o2
		} else {
			f, h := s.whole(req)
			o.api, o.peer = h.api, f.peer
		}
		orphans = append(orphans, o)
	}
	s.gone = s.tallyErrors(s.First(), first) // before the orphans change: those let go of read the old
	s.orphans = orphans
	s.spare.forgetBefore(&s.Seq, first)
	s.bases.ForgetBefore(first / chunk)
	store.ForgetFarBefore(&s.far, first, func(f farPacket) int32 { return f.id })
	return last, true
}

// orphanOf is answer i's request's API and peer, kept apart when the
// request (req) was let go of already.
func (s *packetRecs) orphanOf(req, i int) (orphan, bool) {
	if req >= s.First() {
		return orphan{}, false
	}
	k := sort.Search(len(s.orphans), func(k int) bool { return int(s.orphans[k].id) >= i })
	if k == len(s.orphans) || int(s.orphans[k].id) != i {
		panic(fmt.Sprintf("sim: packet %d answers packet %d, let go of, and its API and peer were not kept", i, req))
	}
	return s.orphans[k], true
}

// forgetBefore lets go of the chunks of events all from before tick, and
// reports the tick of the last one let go of; false when none was.
func (s *eventRecs) forgetBefore(tick, least int) (int, bool) {
	n := droppable(&s.Seq, tick, s.tickAt, least)
	if n == 0 {
		return 0, false
	}
	chunk := store.SeqChunk()
	first := s.First() + n*chunk
	last := int(s.tickAt(first - 1))
	s.spare.forgetBefore(&s.Seq, first)
	s.bases.ForgetBefore(first / chunk)
	store.ForgetFarBefore(&s.far, first, func(f farEvent) int32 { return f.i })
	return last, true
}

// SentAt is the tick packet i was sent at, read off its record alone (no
// text): a search by tick of a windowed trace must not read the texts of
// the records it keeps from before its window, which may name cells the
// output logs let go of.
func (l *PacketLog) SentAt(i int) int { return int(l.recs.sentAt(i)) }

// TickAt is event i's tick, read off its record alone (as SentAt).
func (l *EventLog) TickAt(i int) int { return int(l.recs.tickAt(i)) }
