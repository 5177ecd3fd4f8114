package trace

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestArenaReusesOnlyChunksNoCopyHolds: a windowed trace writes new texts
// into chunks it let go of (textArena.pool), and its packets' and events'
// records too (weakSpare), only when no copy was made since they were:
// every copy reads its kept packets and events as they were written
// however much the original writes and lets go of after it, the original
// reads its own, and without copies chunks are reused.
func TestArenaReusesOnlyChunksNoCopyHolds(t *testing.T) {
	tick := 0
	tr := newSmallWindowTrace(t, &tick)
	type copyOf struct {
		tr     *Trace
		tick   int
		chunks [][]byte // its full chunks' bytes when it was made
	}
	var copies []copyOf
	seen := map[*byte]bool{} // every chunk array the trace has had open
	reused := 0
	recsSeen, recsReused := map[*eventRec]bool{}, 0 // the same for the events' records
	var last *byte                                  // the open chunk's array
	check := func(tr *Trace, what string) {
		for i, p := range tr.Packets.From(tr.Packets.First()) {
			if want := fmt.Sprintf("filler %d.", p.Sent); !strings.HasPrefix(p.Summary, want) || p.ID != i {
				t.Fatalf("tick %d: %s's packet %d reads %q, ID %d, sent at tick %d", tick, what, i, p.Summary, p.ID, p.Sent)
			}
		}
		for i := tr.Events.First(); i < tr.Events.Len(); i++ {
			if e := tr.Events.At(i); e.Text != fmt.Sprintf("tick %d", e.Tick) {
				t.Fatalf("tick %d: %s's event %d reads %q at tick %d", tick, what, i, e.Text, e.Tick)
			}
		}
	}
	for tick = 2; tick <= 600; tick++ {
		tr.BeginTick()
		for k := 0; k < 20; k++ {
			tr.Event(EvCrash, "C1", fmt.Sprintf("tick %d", tick))
			// The chunk of records the event starts, reused when it is
			// one the trace had before.
			if n := tr.Events.Len() - 1; n%store.SeqChunk() == 0 {
				if ch := tr.Events.recs.ChunkFrom(n); cap(ch) == store.SeqChunk() {
					if p := &ch[0]; recsSeen[p] {
						recsReused++
					} else {
						recsSeen[p] = true
					}
				}
			}
			tr.Record(&wire.Packet{ID: tr.Packets.Len(), Sent: tick, From: "C1", To: wire.Broker, Type: wire.Fetch, Summary: fmt.Sprintf("filler %d.%d", tick, k)})
			if o := tr.arena.open; cap(o) > 0 && &o[:1][0] != last {
				last = &o[:1][0]
				if seen[last] {
					reused++ // a chunk it had before, open again
				}
				seen[last] = true
			}
		}
		if tick%37 == 0 {
			// Copied before its chunks are let go of: they are the
			// copy's too.
			ct := tick
			c := copyOf{tr: tr.Clone(&ct, nil, nil), tick: ct}
			for _, ch := range c.tr.arena.full {
				c.chunks = append(c.chunks, slices.Clone(ch))
			}
			copies = append(copies, c)
		}
		tr.ForgetBefore(tick - 8)
		if tick%50 == 0 {
			runtime.GC() // the pool is held weakly: a collection may take it
		}
		check(tr, "the trace")
		for _, c := range copies {
			// A copy steps on too (its clock stays at its tick).
			c.tr.Event(EvCrash, "C1", fmt.Sprintf("tick %d", c.tick))
			c.tr.Record(&wire.Packet{ID: c.tr.Packets.Len(), Sent: c.tick, From: "C1", To: wire.Broker, Type: wire.Fetch, Summary: fmt.Sprintf("filler %d.c", c.tick)})
			check(c.tr, fmt.Sprintf("the copy of tick %d", c.tick))
			// Every chunk it holds, those its records read and those
			// a later text of it may refer back to.
			for k, ch := range c.tr.arena.full[:len(c.chunks)] {
				if !bytes.Equal(ch, c.chunks[k]) {
					t.Fatalf("tick %d: chunk %d of the copy of tick %d was written: %q, was %q", tick, c.tr.arena.first+k, c.tick, ch, c.chunks[k])
				}
			}
		}
	}
	t.Logf("%d chunks of text and %d of events' records reused, %d copies", reused, recsReused, len(copies))
	if reused == 0 || recsReused == 0 {
		t.Fatal("no chunk let go of was written again: the test checks nothing")
	}
}
