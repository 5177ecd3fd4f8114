package trace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestForgetKeepsAnOldTextItsRecordNames: a record whose text was added in
// an earlier tick (no fact records one so today; one a few ticks old, still
// kept when it is recorded) pins that text's chunk for as long as the
// record is kept: it reads as it was written however much is let go of
// around it, and once the record itself is let go of the chunk goes too. Packets, events and texts are let go of by whole chunks,
// indexes staying absolute.
func TestForgetKeepsAnOldTextItsRecordNames(t *testing.T) {
	tick := 0
	tr := newSmallWindowTrace(t, &tick)
	send := func(summary string) {
		tr.Record(&wire.Packet{Sent: tick, From: "C1", To: wire.Broker, Type: wire.Fetch, Summary: summary})
	}
	pinned, old := -1, textRef(0)
	for tick = 2; tick <= 400; tick++ {
		tr.BeginTick()
		if tick == 95 {
			old = tr.addText(encLit(tr.scratch[:0], "written at tick 95"))
		}
		for k := 0; k < 40; k++ {
			send(fmt.Sprintf("filler %d.%d", tick, k))
		}
		if tick == 100 {
			pinned = tr.Packets.Len()
			tr.Record(&wire.Packet{Sent: tick, From: "C1", To: wire.Broker, Type: wire.Fetch, Text: old})
		}
		tr.ForgetBefore(tick - 8)
		if pinned >= 0 && tr.Packets.First() <= pinned {
			if got := tr.Packets.At(pinned).Summary; got != "written at tick 95" {
				t.Fatalf("tick %d: the pinned packet reads %q", tick, got)
			}
			if tr.arena.first > int(old>>arenaShift) {
				t.Fatalf("tick %d: the chunk of a kept packet's text was let go of", tick)
			}
		}
		if f := tr.Packets.First(); f > 0 && f%store.SeqChunk() != 0 {
			t.Fatalf("tick %d: first packet %d is not a chunk's first", tick, f)
		}
	}
	if tr.Packets.First() <= pinned || tr.arena.first <= int(old>>arenaShift) || len(tr.pins.packets) != 0 {
		t.Fatalf("the pinned packet (%d) and its text were never let go of: first packet %d, first chunk %d, pins %v", pinned, tr.Packets.First(), tr.arena.first, tr.pins.packets)
	}
	if tr.Packets.Len() != 399*40+1 || tr.Events.Len() != 0 {
		t.Fatalf("%d packets and %d events counted", tr.Packets.Len(), tr.Events.Len())
	}
	if from := tr.HistoryFrom(); from < 400-8-10 || from > 400-8+1 {
		t.Fatalf("history from %d at tick 400 with a window of 8", from)
	}
	for i, p := range tr.Packets.From(0) {
		if want := fmt.Sprintf("filler %d.", p.Sent); !strings.HasPrefix(p.Summary, want) || i < tr.Packets.First() {
			t.Fatalf("packet %d reads %q, sent at tick %d", i, p.Summary, p.Sent)
		}
	}
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "was let go of") {
			t.Fatalf("Packets.At(0) after forgetting: %q", msg)
		}
	}()
	tr.Packets.At(0)
}

// TestForgetBeforeRefusedUnwindowed: a trace that keeps everything refuses
// to let go (its texts refer back without bound).
func TestForgetBeforeRefusedUnwindowed(t *testing.T) {
	tick := 0
	tr := newTestTrace(t, topo.Default(), &tick, nil)
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "keeps a window") {
			t.Fatalf("ForgetBefore on a trace keeping everything: %q", msg)
		}
	}()
	tr.ForgetBefore(10)
}
