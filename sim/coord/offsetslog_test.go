package coord

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestOffsetsLogRoundTrip: the compact log gives back every record as it
// was appended, and a marker's state change in one world leaves a clone's
// copy of the shared chunks alone; with the world's input partitions (an
// entry of 8 bytes) and without (every partition kept whole), and with
// partitions and offsets that fit no entry.
func TestOffsetsLogRoundTrip(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	layout := topo.New(topo.Default())
	for _, index := range []topo.InputIndex{*layout.Input(), {}} {
		offsetsLogRoundTrip(t, index)
	}
}

func offsetsLogRoundTrip(t *testing.T, index topo.InputIndex) {
	l := OffsetsLog{index: index}
	var want []OffsetRecord
	odd := 0
	for i := 0; i < 40; i++ {
		// Records in threes share tick, member and generation, as the
		// records of one OffsetCommit do; the state varies per record.
		r := OffsetRecord{Tick: 1000 + i/3, Group: "g", TP: wire.TopicPartition{Topic: "orders", Partition: i % 3}, Offset: 7 * i,
			Generation: i / 6, MemberID: "C1-" + strconv.Itoa(i/3), PID: -1, State: "committed"}
		switch i / 3 % 5 {
		case 1:
			r.PID, r.State = 5, "pending"
		case 2:
			r.PID, r.State = 6, "aborted"
		case 3:
			r.TP, r.MemberID, r.PID, r.State, r.Marker, r.Offset = wire.TopicPartition{}, "", 6, []string{"COMMIT", "ABORT"}[i%2], true, -1
		case 4:
			r.PID, r.State = 5, []string{"pending", "committed"}[i%2]
		}
		if i%7 == 5 {
			r.Offset = 1 << 40 // past an entry's int32
			odd++
		}
		l.Append(r)
		want = append(want, r)
	}
	check := func(l *OffsetsLog, want []OffsetRecord) {
		t.Helper()
		if l.Len() != len(want) {
			t.Fatalf("Len %d, want %d", l.Len(), len(want))
		}
		for i, r := range l.All() {
			if r != want[i] || l.At(i) != want[i] {
				t.Fatalf("record %d: %+v, want %+v", i, r, want[i])
			}
		}
		if got := l.Slice(2, 5); len(got) != 3 || got[0] != want[2] || got[2] != want[4] {
			t.Fatalf("Slice(2, 5) = %+v", got)
		}
	}
	check(&l, want)
	if index.Len() > 0 && l.odd.Len() != odd {
		t.Fatalf("%d records kept whole, want %d (the offsets past int32)", l.odd.Len(), odd)
	}
	if l.runs.Len() >= l.Len() || l.runs.Len() < 14 {
		t.Fatalf("%d records in %d runs: want a run per stretch of equal headers", l.Len(), l.runs.Len())
	}
	c := l.clone()
	l.setPendingState(5, "committed")
	after := append([]OffsetRecord{}, want...)
	for i := range after {
		if after[i].PID == 5 && after[i].State == "pending" {
			after[i].State = "committed"
		}
	}
	check(&l, after)
	check(&c, want)

	// appendCommit writes the records of one OffsetCommit, as Append would one by one.
	head := OffsetRecord{Tick: 5000, Group: "g", Generation: 9, MemberID: "C2-1", PID: -1, State: "committed"}
	tps, offs := []wire.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}, []int{3, 4}
	c.appendCommit(head, tps, []int32{-1, 1 << 20}, offs) // hints that are no slot: looked up
	c.appendCommit(head, nil, nil, nil)
	c.appendCommit(head, tps, index.SlotsOf(nil, tps), offs) // the slots, when the index numbers them
	for i := range tps {
		r := head
		r.TP, r.Offset = tps[i], offs[i]
		want = append(want, r)
	}
	if index.Len() > 0 {
		c.appendCommit(head, tps, []int32{1, 0}, offs) // each the other's slot: looked up
		for i := range tps {
			r := head
			r.TP, r.Offset = tps[i], offs[i]
			want = append(want, r)
		}
	}
	for i := range tps {
		r := head
		r.TP, r.Offset = tps[i], offs[i]
		want = append(want, r)
	}
	check(&c, want)
}

// TestCommittedRoundTrip: the group's offsets cache gives back the record
// it was given, for a plain and a transactional commit.
func TestCommittedRoundTrip(t *testing.T) {
	g := testGroup()
	for _, rec := range []OffsetRecord{
		{Tick: 12, Group: "g", TP: wire.TopicPartition{Topic: "orders", Partition: 1}, Offset: 40, Generation: 3, MemberID: "C1-2", PID: -1, State: "committed"},
		{Tick: 15, Group: "g", TP: wire.TopicPartition{Topic: "orders", Partition: 2}, Offset: 7, Generation: 4, MemberID: "C2-1", PID: 9, State: "committed"},
	} {
		g.Offsets.setCommitted(rec)
		if got, ok := g.Offsets.Committed(rec.TP); !ok || got != rec {
			t.Fatalf("Committed(%v) = %+v, %v; want %+v", rec.TP, got, ok, rec)
		}
	}
	if _, ok := g.Offsets.Committed(wire.TopicPartition{Topic: "orders", Partition: 0}); ok {
		t.Fatal("Committed of a partition never committed")
	}
}

// TestOffsetsLogPartitionNumbers: a log numbering the world's input
// partitions by their place and any other partition in its own table
// gives back every record's partition, also when a clone and its source
// each meet partitions the other never saw.
func TestOffsetsLogPartitionNumbers(t *testing.T) {
	layout := topo.New(bigTopology(1, 2, 3))
	l := OffsetsLog{index: *layout.Input()}
	rec := func(topic string, p, off int) OffsetRecord {
		return OffsetRecord{Tick: off, Group: "g", TP: wire.TopicPartition{Topic: topic, Partition: p}, Offset: off, MemberID: "C1-1", PID: -1, State: "committed"}
	}
	var want []OffsetRecord
	for i, r := range []OffsetRecord{rec("t1", 2, 1), rec("zz", 0, 2), rec("t0", 0, 3), rec("t0", 7, 4), rec("zz", 0, 5)} {
		l.Append(r)
		want = append(want, r)
		if i == 2 {
			l.appendCommit(rec("", 0, 6), []wire.TopicPartition{{Topic: "t0", Partition: 1}, {Topic: "t0", Partition: 9}, {Topic: "t1", Partition: 0}}, []int32{2, 0, 3}, []int{6, 7, 8})
			for k, tp := range []wire.TopicPartition{{Topic: "t0", Partition: 1}, {Topic: "t0", Partition: 9}, {Topic: "t1", Partition: 0}} {
				r := rec(tp.Topic, tp.Partition, 6)
				r.Offset = 6 + k
				want = append(want, r)
			}
		}
	}
	c := l.clone()
	l.Append(rec("aa", 1, 9))
	c.Append(rec("bb", 2, 9))
	for _, x := range []struct {
		l    *OffsetsLog
		last OffsetRecord
	}{{&l, rec("aa", 1, 9)}, {&c, rec("bb", 2, 9)}} {
		all := append(append([]OffsetRecord{}, want...), x.last)
		if x.l.Len() != len(all) {
			t.Fatalf("Len %d, want %d", x.l.Len(), len(all))
		}
		for i, r := range x.l.All() {
			if r != all[i] || x.l.At(i) != all[i] {
				t.Fatalf("record %d: %+v, want %+v", i, r, all[i])
			}
		}
	}
}

// TestPropertyOffsetsLogSharesLists: random OffsetCommits from a few
// members, each often naming the same partitions as its previous one (so
// the log shares the list), interleaved with single records of the same
// header or not (which may extend a run), markers, odd records, state
// changes and clones, give back exactly the records appended, in every
// member of a clone family; and a member's unchanged commits do share.
func TestPropertyOffsetsLogSharesLists(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	layout := topo.New(bigTopology(1, 3, 4)) // t0-0 .. t2-3
	index := *layout.Input()
	for seed := int64(0); seed < 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		type copyOf struct {
			l    OffsetsLog
			want []OffsetRecord
		}
		fam := []*copyOf{{l: OffsetsLog{index: index}}}
		lists := map[string][]wire.TopicPartition{} // each member's last list
		shared := 0
		for op := 0; op < 300; op++ {
			c := fam[r.Intn(len(fam))]
			member := []string{"C1-1", "C2-1", "C3-2"}[r.Intn(3)]
			rec := OffsetRecord{Tick: op / 4, Group: "g", Generation: r.Intn(2), MemberID: member, PID: -1, State: "committed"}
			switch k := r.Intn(10); {
			case k < 6:
				tps, offs := randomCommitList(r, layout, lists, member, 3)
				before := c.l.parts.Len()
				c.want = commitRandomly(r, &index, &c.l, c.want, rec, tps, offs)
				if len(tps) > 0 && c.l.parts.Len() == before {
					shared++
				}
			case k < 8:
				rec.TP, rec.Offset = layout.Inputs()[r.Intn(len(layout.Inputs()))], r.Intn(50)
				if r.Intn(5) == 0 {
					rec.TP = wire.TopicPartition{Topic: "yy", Partition: 2}
				}
				c.l.Append(rec)
				c.want = append(c.want, rec)
			case k == 8:
				rec = OffsetRecord{Tick: op / 4, Group: "g", PID: 7, State: "COMMIT", Marker: true, Offset: -1}
				c.l.Append(rec)
				c.want = append(c.want, rec)
			default:
				fam = append(fam, &copyOf{l: c.l.clone(), want: slices.Clone(c.want)})
			}
		}
		for j, c := range fam {
			if c.l.Len() != len(c.want) {
				t.Fatalf("seed %d, copy %d: Len %d, want %d", seed, j, c.l.Len(), len(c.want))
			}
			for i, got := range c.l.All() {
				if got != c.want[i] || c.l.At(i) != c.want[i] {
					t.Fatalf("seed %d, copy %d, record %d: %+v (At %+v), want %+v", seed, j, i, got, c.l.At(i), c.want[i])
				}
			}
		}
		if shared == 0 {
			t.Fatalf("seed %d: no commit shared its member's list", seed)
		}
	}
}

// TestPropertyOffsetsLogForgets: random logs as
// TestPropertyOffsetsLogSharesLists makes them (shared lists, single
// records, markers, odd records, pending records and their markers'
// state changes, clones), each letting go of its records older than a
// window of a few ticks as it grows (ForgetBefore, as a world keeping a
// window does): every copy keeps every record of its window, reading as
// appended, and what it keeps of each part (records, runs, heads, codes,
// odd records) stays a small share of what was written.
func TestPropertyOffsetsLogForgets(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	layout := topo.New(bigTopology(1, 3, 4))
	index := *layout.Input()
	for seed := int64(0); seed < 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		type copyOf struct {
			l      OffsetsLog
			want   []OffsetRecord
			before int // the last ForgetBefore's tick
		}
		window := 2 + r.Intn(4)
		fam := []*copyOf{{l: OffsetsLog{index: index}}}
		lists := map[string][]wire.TopicPartition{}
		const ops = 1200
		for op := 0; op < ops; op++ {
			c := fam[r.Intn(len(fam))]
			member := []string{"C1-1", "C2-1", "C3-2"}[r.Intn(3)]
			tick := op / 4
			rec := OffsetRecord{Tick: tick, Group: "g", Generation: r.Intn(2), MemberID: member, PID: -1, State: "committed"}
			switch k := r.Intn(12); {
			case k < 6:
				tps, offs := randomCommitList(r, layout, lists, member, 4)
				c.want = commitRandomly(r, &index, &c.l, c.want, rec, tps, offs)
			case k < 8:
				rec.TP, rec.Offset = layout.Inputs()[r.Intn(len(layout.Inputs()))], r.Intn(50)
				if r.Intn(5) == 0 {
					rec.TP = wire.TopicPartition{Topic: "yy", Partition: 2}
				}
				if r.Intn(2) == 0 {
					rec.PID, rec.State = 7, "pending"
				}
				c.l.Append(rec)
				c.want = append(c.want, rec)
			case k == 8:
				// The transaction's marker: its pending records change.
				state, marker := "committed", "COMMIT"
				if r.Intn(2) == 0 {
					state, marker = "aborted", "ABORT"
				}
				c.l.setPendingState(7, state)
				for i := range c.want {
					if c.want[i].PID == 7 && c.want[i].State == "pending" {
						c.want[i].State = state
					}
				}
				rec = OffsetRecord{Tick: tick, Group: "g", PID: 7, State: marker, Marker: true, Offset: -1}
				c.l.Append(rec)
				c.want = append(c.want, rec)
			case k == 9 && len(fam) < 6:
				fam = append(fam, &copyOf{l: c.l.clone(), want: slices.Clone(c.want), before: c.before})
			default:
				c.before = tick - window
				c.l.ForgetBefore(c.before)
			}
		}
		for j, c := range fam {
			if c.l.Len() != len(c.want) {
				t.Fatalf("seed %d, copy %d: Len %d, want %d", seed, j, c.l.Len(), len(c.want))
			}
			// Every record of the window is kept.
			if f := c.l.First(); f > 0 && c.want[f-1].Tick >= c.before {
				t.Fatalf("seed %d, copy %d: record %d of tick %d let go of, the window keeps from %d", seed, j, f-1, c.want[f-1].Tick, c.before)
			}
			n := 0
			for i, got := range c.l.All() {
				if i != c.l.First()+n {
					t.Fatalf("seed %d, copy %d: All gives record %d after %d records from %d", seed, j, i, n, c.l.First())
				}
				n++
				if got != c.want[i] || c.l.At(i) != c.want[i] || c.l.TickAt(i) != c.want[i].Tick {
					t.Fatalf("seed %d, copy %d, record %d: %+v (At %+v), want %+v", seed, j, i, got, c.l.At(i), c.want[i])
				}
			}
			if n != c.l.Len()-c.l.First() {
				t.Fatalf("seed %d, copy %d: All gave %d records, %d kept", seed, j, n, c.l.Len()-c.l.First())
			}
		}
		// The first log, written to for the whole run, keeps a small share.
		c := fam[0]
		runs, heads, parts, odd, _ := c.l.KeptForTest()
		allRuns, allHeads := c.l.SizesForTest()
		if c.l.Len() < 400 {
			continue
		}
		for _, k := range []struct {
			what       string
			kept, made int
		}{{"records", c.l.Len() - c.l.First(), c.l.Len()}, {"runs", runs, allRuns}, {"heads", heads, allHeads}, {"codes", parts, c.l.parts.Len()}, {"odd records", odd, c.l.odd.Len()}} {
			if k.kept > k.made/3 {
				t.Errorf("seed %d (window %d ticks of %d): keeps %d of %d %s", seed, window, ops/4, k.kept, k.made, k.what)
			}
		}
	}
}

// testGroup is an empty group of the default world's shape, with an
// environment of its own and no processes.
func testGroup() *Coordinator {
	tick := 0
	layout := topo.New(topo.Default())
	return New("g", env.New(&tick, trace.New(layout, &tick, nil), layout), &Config{}, &Mutations{}, nil)
}

// randomCommitList is a random commit of member's: its last list again,
// or (the first time, and one time in newOneIn) a new one, a third of the
// input partitions and a partition that is not an input's, each at a
// random offset, one in 40 past int32 (kept whole in the log's odd
// records).
func randomCommitList(r *rand.Rand, layout *topo.Layout, lists map[string][]wire.TopicPartition, member string, newOneIn int) ([]wire.TopicPartition, []int) {
	tps := lists[member]
	if tps == nil || r.Intn(newOneIn) == 0 {
		tps = nil
		for _, tp := range append(slices.Clone(layout.Inputs()), wire.TopicPartition{Topic: "zz", Partition: 1}) {
			if r.Intn(3) == 0 {
				tps = append(tps, tp)
			}
		}
		lists[member] = tps
	}
	offs := make([]int, len(tps))
	for i := range offs {
		offs[i] = r.Intn(50)
		if r.Intn(40) == 0 {
			offs[i] = 1 << 40
		}
	}
	return tps, offs
}

// commitRandomly appends rec's commit of tps at offs to l, with random
// slot hints, and returns want with the records it should make.
func commitRandomly(r *rand.Rand, index *topo.InputIndex, l *OffsetsLog, want []OffsetRecord, rec OffsetRecord, tps []wire.TopicPartition, offs []int) []OffsetRecord {
	l.appendCommit(rec, tps, randomHints(r, index, tps), offs)
	for i, tp := range tps {
		x := rec
		x.TP, x.Offset = tp, offs[i]
		want = append(want, x)
	}
	return want
}
