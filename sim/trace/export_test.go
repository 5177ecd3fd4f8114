package trace

// What the external tests (package trace_test, which run whole worlds)
// read of a trace's internals: the text a packet or event keeps, the
// arena's bytes there, the tokens and templates they compare those bytes
// with, and the decoder at work on them.

import "github.com/kgrepl/kgrepl/sim/wire"

// The tokens and whole-template tokens the tests look for in a text's
// bytes.
const (
	TEndForTest              = tEnd
	TLitForTest              = tLit
	TSameForTest             = tSame
	TSameBackForTest         = tSameBack
	TSrcRunsLikeForTest      = tSrcRunsLike
	TOffsetsForTest          = tOffsets
	TOffsetsRotForTest       = tOffsetsRot
	TRecordForTest           = tRecord
	PhCommittedForTest       = phCommitted
	WholeProcessedForTest    = tWhole + tplProcessed
	WholeProcessedRunForTest = tWhole + tplProcessedRun
	WholeProduceForTest      = tWhole + tplProduce
	WholeProduceAfterForTest = tWhole + tplProduceAfter
	WholeProduceNextForTest  = tWhole + tplProduceNext
)

// text is packet i's text.
func (s *packetRecs) text(i int) textRef {
	f, _ := s.whole(i)
	return f.text
}

// text is event i's text.
func (s *eventRecs) text(i int) textRef {
	f, _ := s.whole(i)
	return f.text
}

// TextRefForTest is where packet i's text is in the arena (0: none).
func (l *PacketLog) TextRefForTest(i int) wire.TextRef { return l.recs.text(i) }

// TextRefForTest is where event i's text is in the arena (0: none).
func (l *EventLog) TextRefForTest(i int) wire.TextRef { return l.recs.text(i) }

// BytesForTest is the arena from ref to the end of its chunk.
func (t *Trace) BytesForTest(ref wire.TextRef) []byte { return t.arena.bytes(ref) }

// OpenChunkForTest is the arena's open chunk, every byte written to it.
func (t *Trace) OpenChunkForTest() []byte { return t.arena.open }

// TextForTest is the text at ref, formatted (no event's member for %m).
func (t *Trace) TextForTest(ref wire.TextRef) string { return t.text(ref) }

// AnswerTextForTest is the text at ref read as a Produce answer's summary.
func (t *Trace) AnswerTextForTest(ref wire.TextRef) string {
	return t.packetText(wire.Produce, true, ref)
}

// NamesForTest is the first most record names of the tokens b holds, as
// an event's Records reads them, and how many records they hold: a few
// bytes can hold a run of 2^62 records, which Names would spell one by
// one.
func (t *Trace) NamesForTest(b []byte, most int) (names []string, records int) {
	rs := Records{tx: &t.texts, b: b}
	for n := range rs.All() {
		if len(names) == most {
			break
		}
		names = append(names, n)
	}
	return names, rs.Len()
}

// FirstTokenForTest reads the first token of the text at ref: its text,
// the bytes it takes, and false when it is tEnd or does not parse.
func (t *Trace) FirstTokenForTest(ref wire.TextRef) (text []byte, n int, ok bool) {
	r := t.readerAt(ref, "")
	text, _, ok = r.next(nil)
	return text, r.n - len(r.b), ok
}

// SetArenaForTest makes open the arena's only chunk (its whole text) and
// returns the function that puts the arena back.
func (t *Trace) SetArenaForTest(open []byte) (restore func()) {
	saved := t.arena
	t.arena = textArena{open: open}
	return func() { t.arena = saved }
}
