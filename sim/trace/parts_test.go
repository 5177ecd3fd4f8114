package trace

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestPartsAndPositionsKeptAsTokens: a partition list or a list of
// positions given to Eventf or Textf as Parts or Positions reads back
// exactly as Layout.PartList and Layout.Offsets spell it (which the
// texts printed before), for lists short and long, in runs across
// topics or scattered, sorted or not (positions keep their order), with
// partitions the world does not have; and a long list in runs is kept in
// fewer bytes than a partition number each (tPartRuns, tOffsetsRuns).
func TestPartsAndPositionsKeptAsTokens(t *testing.T) {
	now := 0
	tp := topo.Topology{Group: "g", Output: topo.TopicSpec{Name: "out", Partitions: 4},
		Inputs: []topo.TopicSpec{{Name: "a", Partitions: 300}, {Name: "b", Partitions: 300}}}
	tr := newTestTrace(t, tp, &now, nil)
	l := topo.New(tp)
	r := rand.New(rand.NewSource(1))
	all := append(slices.Clone(l.Inputs()), l.Outputs()...)
	lists := [][]wire.TopicPartition{
		nil,
		all[:5],
		all[250:350],                           // one run across topics
		all[:600],                              // every input partition
		append(all[10:50:50], all[400:604]...), // two runs, the second into the output topic
		{{Topic: "nope", Partition: 3}, all[1], all[2]},
	}
	var scattered []wire.TopicPartition
	for _, p := range all {
		if r.Intn(3) == 0 {
			scattered = append(scattered, p)
		}
	}
	lists = append(lists, scattered)
	shuffled := slices.Clone(all[100:200])
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	lists = append(lists, shuffled)
	for k, tps := range lists {
		offs := make([]int, len(tps))
		for i := range offs {
			offs[i] = r.Intn(1000)
		}
		if k == 3 {
			clear(offs) // every position 0
		}
		tr.Eventf(EvAssigned, "C1", "C1 gen %d: %s, then %s!", 7, Parts{L: l, TPs: tps}, Positions{L: l, TPs: tps, Offs: offs})
		e := tr.Events.At(tr.Events.Len() - 1)
		want := "C1 gen 7: " + l.PartList(tps) + ", then " + l.Offsets(tps, offs) + "!"
		if e.Text != want {
			t.Fatalf("list %d: event reads %q, want %q", k, e.Text, want)
		}
		ref := tr.Textf("%s", Positions{L: l, TPs: tps, Offs: offs})
		if got := tr.text(ref); got != l.Offsets(tps, offs) {
			t.Fatalf("list %d: Textf reads %q, want %q", k, got, l.Offsets(tps, offs))
		}
		if k == 3 {
			// one run: a few bytes for the list, one a position (the
			// difference from the one before), where a partition number
			// each took two bytes and a position three
			at := tr.arena.end()
			tr.Eventf(EvAssigned, "C1", "%s", Parts{L: l, TPs: tps})
			if used := int(tr.arena.end() - at); used > 16 {
				t.Errorf("600 partitions in one run: %d bytes of text, want at most 16", used)
			}
			at = tr.arena.end()
			tr.Textf("%s", Positions{L: l, TPs: tps, Offs: offs})
			if used := int(tr.arena.end() - at); used > len(tps)+16 {
				t.Errorf("600 positions in one run: %d bytes of text, want at most %d", used, len(tps)+16)
			}
		}
	}
}
