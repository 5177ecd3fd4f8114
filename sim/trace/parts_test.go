package trace

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// partsWorld is the parts tests' trace: two input topics of 300
// partitions and an output of 4, their layout, a random source and every
// partition.
func partsWorld(t *testing.T, seed int64) (*Trace, *topo.Layout, *rand.Rand, []wire.TopicPartition) {
	now := 0
	tp := topo.Topology{Group: "g", Output: topo.TopicSpec{Name: "out", Partitions: 4},
		Inputs: []topo.TopicSpec{{Name: "a", Partitions: 300}, {Name: "b", Partitions: 300}}}
	tr := newTestTrace(t, tp, &now, nil)
	l := topo.New(tp)
	return tr, l, rand.New(rand.NewSource(seed)), append(slices.Clone(l.Inputs()), l.Outputs()...)
}

// TestPartsAndPositionsKeptAsTokens: a partition list or a list of
// positions given to Eventf or Textf as Parts or Positions reads back
// exactly as Layout.PartList and Layout.Offsets spell it (which the
// texts printed before), for lists short and long, in runs across
// topics or scattered, sorted or not (positions keep their order), with
// partitions the world does not have; and a long list in runs is kept in
// fewer bytes than a partition number each (tPartRuns, tOffsetsRuns).
func TestPartsAndPositionsKeptAsTokens(t *testing.T) {
	tr, l, r, all := partsWorld(t, 1)
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

// TestFetchPositionsRotatedKeptAsRuns: a Fetch's positions, its
// partitions an ascending list rotated (subscription.fetchableInto's
// order), read back exactly as Layout.Offsets spells them, for lists in
// runs or scattered, rotated anywhere, with positions close to each
// other or far apart, and lists that are no rotation (shuffled, a
// partition twice, one the world does not have); a rotated list of more
// than maxRotation partitions in runs is a tOffsetsRunsRot token of about
// a byte a position (T2's Fetch: 100 partitions in 10 runs of 10).
func TestFetchPositionsRotatedKeptAsRuns(t *testing.T) {
	tr, l, r, all := partsWorld(t, 2)
	rot := 0
	for k := 0; k < 2000; k++ {
		var tps []wire.TopicPartition
		switch k % 4 {
		case 0, 1: // runs: T2's shape when k%4 == 0
			runs, size := 10, 10
			if k%4 == 1 {
				runs, size = 1+r.Intn(12), 1+r.Intn(20)
			}
			p := r.Intn(20)
			for range runs {
				for i := 0; i < size && p < len(all); i, p = i+1, p+1 {
					tps = append(tps, all[p])
				}
				p += 1 + r.Intn(50)
			}
		case 2: // scattered
			for _, p := range all {
				if r.Intn(4) == 0 {
					tps = append(tps, p)
				}
			}
		case 3: // some runs, then not a rotation of an ascending list
			for _, p := range all[r.Intn(100):][:20+r.Intn(100)] {
				tps = append(tps, p)
			}
			switch r.Intn(3) {
			case 0:
				r.Shuffle(len(tps), func(i, j int) { tps[i], tps[j] = tps[j], tps[i] })
			case 1:
				tps = append(tps, tps[r.Intn(len(tps))])
			default:
				tps = append(tps, wire.TopicPartition{Topic: "nope", Partition: 1})
			}
		}
		i := r.Intn(len(tps))
		tps = append(tps[i:], tps[:i]...)
		offs := make([]int, len(tps))
		base := r.Intn(1 << 30)
		for i := range offs {
			offs[i] = base + r.Intn(3)
			if k%4 != 0 && r.Intn(16) == 0 { // kept as differences: they wrap and come back
				offs[i] = []int{math.MaxInt64, math.MinInt64, -1, r.Intn(1 << 40)}[r.Intn(4)]
			}
		}
		// the member's hints: none, its partitions' numbers, or numbers
		// that are wrong (each checked): the text is the same
		var slots []int32
		switch r.Intn(3) {
		case 1:
			for _, tp := range tps {
				n, ok := l.Number(tp)
				if !ok {
					n = -1
				}
				slots = append(slots, int32(n))
			}
		case 2:
			for range tps {
				slots = append(slots, int32(r.Intn(len(all)+2)-1))
			}
		}
		ref := tr.FetchRequest(tps, slots, offs, 500)
		want := l.Offsets(tps, offs) + " max 500"
		if got := tr.text(textRef(ref)); got != want {
			t.Fatalf("fetch %d: reads %q, want %q", k, got, want)
		}
		if b := tr.arena.bytes(textRef(ref)); firstByte(b) == tOffsetsRunsRot {
			rot++
			if k%4 == 0 && len(b) > len(tps)+48 {
				t.Errorf("fetch %d: %d rotated positions in %d bytes, want at most %d", k, len(tps), len(b), len(tps)+48)
			}
		} else if k%4 == 0 && i > 0 {
			t.Errorf("fetch %d: T2's rotated positions not a tOffsetsRunsRot token: %v", k, b[:min(len(b), 16)])
		}
	}
	if rot < 500 {
		t.Errorf("%d fetches of 2000 kept as tOffsetsRunsRot, want at least 500", rot)
	}
}
