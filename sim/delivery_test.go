package sim

import (
	"iter"
	"maps"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/kgrepl/kgrepl/sim/broker"
)

// deliveryByReadTopic is Delivery as it was written before it read the
// logs in place: the output topic through ReadTopic (also for what the LSO
// holds back), and each record name built as a string.
// TestDeliveryMatchesReadTopic holds Delivery to it.
func deliveryByReadTopic(w *World, isolation string) Counts {
	seen := map[string]int{}
	for _, r := range w.ReadTopic(w.Topo.Output.Name, isolation) {
		seen[r.Source]++
	}
	var c Counts
	srcs := make([]string, 0, len(seen))
	for s := range seen {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		if seen[s] > 1 {
			c.Duplicates += seen[s] - 1
			c.DuplicateNames = append(c.DuplicateNames, s)
		}
	}
	held := map[string]bool{} // committed invoices at or past the LSO
	if isolation == "read_committed" {
		for _, r := range w.ReadTopic(w.Topo.Output.Name, "read_uncommitted") {
			if r.Offset >= w.Log(r.Partition).LSO() && !r.Aborted && !r.Open {
				held[r.Source] = true
			}
		}
	}
	for _, tp := range w.layout.Inputs() {
		rec, ok := w.Group.Offsets.CommittedOffset(tp)
		if !ok {
			continue
		}
		for off := 0; off < rec && off < w.broker.Log(tp).HW(); off++ {
			name := w.Layout().Name(tp, off)
			switch {
			case seen[name] > 0:
			case held[name]:
				c.HeldBack++
				c.HeldBackNames = append(c.HeldBackNames, name)
			default:
				c.Lost++
				c.LostNames = append(c.LostNames, name)
			}
		}
	}
	return c
}

// TestDeliveryMatchesReadTopic: Delivery gives what reading the output
// topic gives, at both isolation levels, every 10 ticks of random
// schedules (crashes, slow records, restarts) under each commit mode, with
// and without transactions, in the default world and in one with long
// topic names.
func TestDeliveryMatchesReadTopic(t *testing.T) {
	checked, found := 0, map[string]bool{}
	for seed := 0; seed < 12; seed++ {
		// The default topology or one with a dash and a dot in its topic
		// names by turns, every commit mode by turns, transactions on
		// seed%4 == 3, 300 ticks of faults by C1 to C4 (no static joins).
		sc := seedWorld(t, seed, worldSpec{
			source:        500,
			topology:      dottedOnOddSeeds,
			commit:        cycle(1, CommitAfter, CommitBefore, CommitAuto),
			transactional: seedsAt(4, 3),
			ticks:         300, clients: 4,
		})
		w, sched := sc.w, sc.sched
		i := 0
		for w.Tick < 300 {
			for i < len(sched) && sched[i].tick <= w.Tick {
				_ = sched[i].do(w)
				i++
			}
			if w.Tick%25 == 0 {
				for _, tp := range w.layout.Inputs() {
					w.ProduceInput(tp, 1)
				}
			}
			w.Step()
			if w.Tick%10 != 0 {
				continue
			}
			for _, iso := range []string{"read_uncommitted", "read_committed"} {
				got, want := w.Delivery(iso), deliveryByReadTopic(w, iso)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d tick %d %s: Delivery %+v, reading the topic %+v", seed, w.Tick, iso, got, want)
				}
				checked++
				found["dup"] = found["dup"] || got.Duplicates > 0
				found["lost"] = found["lost"] || got.Lost > 0
				found["held"] = found["held"] || got.HeldBack > 0
			}
		}
	}
	if len(found) != 3 || !found["dup"] || !found["lost"] || !found["held"] {
		t.Errorf("the schedules never showed every case (%v over %d checks): the test proves less than it says", found, checked)
	}
}

// TestDeliveryRunsMatchPerRecord: Delivery, which merges the output logs'
// runs, gives exactly what deliveryPerRecord (a count a record) gives,
// names and all, at both isolation levels, every 7 ticks of random worlds
// of both protocols: faults (crashes, restarts, lost answers, a rolling
// deploy), transactions on a third of the seeds (aborted batches after
// fencing and timeouts), linger.ms 0 and 1-4 by turns, steady traffic on
// two seeds of three, batches drawn small and large, read_committed
// members on odd seeds.
func TestDeliveryRunsMatchPerRecord(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 8
	}
	found := map[string]int{}
	for _, proto := range protocols {
		for seed := 0; seed < seeds; seed++ {
			w, sched := forgetCase(t, proto, seed) // the same worlds as the forgetting test
			linger := seed % 5
			i := 0
			for w.Tick < 350 {
				for i < len(sched) && sched[i].tick <= w.Tick {
					_ = sched[i].do(w)
					i++
				}
				w.Step()
				if w.Tick%7 != 0 {
					continue
				}
				for _, iso := range []string{"read_uncommitted", "read_committed"} {
					got, want := w.Delivery(iso), deliveryPerRecord(w, iso)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s seed %d linger.ms %d tick %d %s: Delivery by runs %+v, a count a record %+v", proto, seed, linger, w.Tick, iso, got, want)
					}
					found["checks"]++
					if got.Duplicates > 0 {
						found["dup"]++
					}
					if got.Lost > 0 {
						found["lost"]++
					}
					if got.HeldBack > 0 {
						found["held"]++
					}
				}
			}
			for _, tp := range w.layout.Outputs() {
				l := w.broker.Log(tp)
				for r := range l.Cells.Runs(l.LSO(), l.HW()) {
					if r.Filtered {
						found["filtered runs"]++
					} else if r.N > 1 {
						found["whole runs"]++
					}
					if r.Txn == TxnAborted {
						found["aborted runs"]++
					}
				}
			}
		}
	}
	t.Logf("%v", found)
	for _, k := range []string{"dup", "lost", "held", "filtered runs", "whole runs", "aborted runs"} {
		if found[k] == 0 {
			t.Errorf("the worlds never showed %s (%v): the test proves less than it says", k, found)
		}
	}
}

// TestDeliveryOfAHugeOutputTopic: past maxGap output partitions an input
// partition's runs in one output partition never join, so Delivery
// counts a record at a time (4 bytes each) rather than keep a run a
// record (about 40 bytes); what it allocates stays near the 4.
func TestDeliveryOfAHugeOutputTopic(t *testing.T) {
	topo := Topology{Group: "g", Output: TopicSpec{Name: "out", Partitions: maxGap + 1}, Members: 2,
		Inputs: []TopicSpec{{Name: "in", Partitions: 4}}}
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 5000
	cfg.Client.MaxPollRecords = 500
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for w.Processed() < 4*5000 && w.Tick < 200_000 {
		w.Step()
	}
	records := 4 * 5000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w.Delivery("read_uncommitted")
	runtime.ReadMemStats(&after)
	if w.Processed() < records {
		t.Fatalf("processed %d of %d records", w.Processed(), records)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(records)*10+1<<16 {
		t.Fatalf("Delivery over %d records into %d output partitions allocated %d bytes: more than 10 a record", records, maxGap+1, got)
	}
}

// TestDeliveryReadsOnAsAFreshRead: Delivery asked again reads on from
// where it read each output log before (deliveryCache), and counts
// exactly what a fresh read counts (a copy of the world, which starts
// with nothing read) and what deliveryPerRecord counts, names and all, at
// both isolation levels, asked at random intervals of random worlds
// (transactions on half the seeds, read_committed members, both
// protocols and migrations, faults, steady traffic, rolls), with a copy
// now and then stepped beside the original (each reads on from the reads
// they shared), that keep a
// small window of history, so that their output logs let go of cells
// between two reads; the test checks that reads went on from before and
// that logs let go of cells read before. (RunsFrom from inside a span's
// run: broker's TestRunsFromAsRuns.)
func TestDeliveryReadsOnAsAFreshRead(t *testing.T) {
	setSeqChunk(t, 2) // logs let go a chunk at a time: small chunks, so they do in 400 ticks
	seeds := 18
	if testing.Short() {
		seeds = 6
	}
	seen := map[string]int{}
	for seed := 0; seed < seeds; seed++ {
		deliveryReadsOn(t, seed, seen)
	}
	t.Logf("%v", seen)
	for _, k := range []string{"let go since read", "read on", "dup, lost or held", "from inside a run", "copies checked", "copies parted"} {
		if seen[k] == 0 {
			t.Errorf("the worlds never showed %q (%v): the test proves less than it says", k, seen)
		}
	}
}

// deliveryReadsOn is TestDeliveryReadsOnAsAFreshRead's world of one seed:
// stepped 400 ticks keeping a window of its past, Delivery asked at random
// ticks at both levels and held to a fresh read, to copies reading on
// from it (some stepped beside it, some parting from it) and to the count
// a record; what it saw counted in seen.
func deliveryReadsOn(t *testing.T, seed int, seen map[string]int) {
	const length = 400
	sc := seedWorld(t, seed, historySpec(length))
	cfg := sc.cfg
	cfg.HistoryTicks = 5 + sc.r.Intn(30)
	w, err := New(sc.topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sched := historySchedule(sc.sched, seed)
	st := &stepper{w: w, sched: sched}
	var sib *stepper // a copy stepped beside w, when there is one
	next := 1
	for w.Tick < length {
		st.tick()
		if sib != nil {
			sib.tick()
			if w.Tick == next {
				for _, iso := range []string{"read_uncommitted", "read_committed"} {
					fresh := sib.w.Clone()
					fresh.delivered = deliveryCache{}
					if got, want := sib.w.Delivery(iso), fresh.Delivery(iso); !reflect.DeepEqual(got, want) {
						t.Fatalf("seed %d tick %d %s: a copy stepped beside its original read on %+v, read afresh %+v", seed, sib.w.Tick, iso, got, want)
					}
					seen["copies checked"]++
				}
			}
		}
		if w.Tick < next {
			continue
		}
		next = w.Tick + 1 + sc.r.Intn(12)
		for k, iso := range []string{"read_uncommitted", "read_committed"} {
			for slot, rd := range w.delivered.levels[k].reads {
				l := w.broker.Log(w.layout.Outputs()[slot])
				switch {
				case rd.upto > rd.start && rd.start != l.Cells.Start():
					seen["let go since read"]++
				case rd.valid(l, l.HW()) && rd.upto > rd.start:
					seen["read on"]++
				}
			}
			if k == 0 {
				runsFromAsRuns(t, w, sc.r, seen)
			}
			// a copy reads on from its original's reads (share), and
			// one that forgets them reads its logs afresh
			cp, fresh := w.Clone(), w.Clone()
			fresh.delivered = deliveryCache{}
			got := w.Delivery(iso)
			if want := fresh.Delivery(iso); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d tick %d %s: read on %+v, read afresh %+v", seed, w.Tick, iso, got, want)
			}
			if got2 := cp.Delivery(iso); !reflect.DeepEqual(got2, got) {
				t.Fatalf("seed %d tick %d %s: a copy read on %+v, its original %+v", seed, w.Tick, iso, got2, got)
			}
			if sc.r.Intn(4) == 0 {
				// step the copy beside the original, a tick ahead (so
				// that the two write different runs where their shared
				// reads end): either appending must not disturb the
				// other's reads
				sib = &stepper{w: cp, sched: sched, i: st.i}
				if sc.r.Intn(2) == 0 {
					// and now and then make it part from its original
					// (a member crashed in the copy alone), so that the
					// two append different runs where they share
					// arrays, not the same ones a tick apart
					for _, c := range cp.Clients() {
						if m := cp.Member(c); m != nil && m.Alive && cp.CrashNow(c) == nil {
							seen["copies parted"]++
							break
						}
					}
				}
				sib.tick()
			}
			if want := deliveryPerRecord(w, iso); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d tick %d %s: read on %+v, a count a record %+v", seed, w.Tick, iso, got, want)
			}
			if got.Duplicates > 0 || got.Lost > 0 || got.HeldBack > 0 {
				seen["dup, lost or held"]++
			}
		}
	}
}

// FuzzDeliveryReadsOn is deliveryReadsOn for any seed: go test -fuzz
// FuzzDeliveryReadsOn ./sim explores worlds past the test's 18.
func FuzzDeliveryReadsOn(f *testing.F) {
	for _, seed := range []uint16{0, 1, 2, 5, 17} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint16) {
		setSeqChunk(t, 2)
		deliveryReadsOn(t, int(seed), map[string]int{})
	})
}

// runsFromAsRuns checks, for each output log of w and a few cells from,
// that RunsFrom(from, ...) yields the cells from from on exactly as Runs
// does (cell by cell: index, source partition and offset, transaction
// state), counting in seen a from inside a run of several cells.
func runsFromAsRuns(t *testing.T, w *World, r *rand.Rand, seen map[string]int) {
	t.Helper()
	for slot, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		start, hw := l.Cells.Start(), l.HW()
		if hw <= start {
			continue
		}
		cut := start + r.Intn(hw-start+1)
		all := expandCellRuns(w, slot, l.Cells.Runs(cut, hw))
		for range 3 {
			from := start + r.Intn(hw-start+1)
			for c := range l.Cells.Runs(cut, hw) {
				if c.I < from && from < c.I+c.N {
					seen["from inside a run"]++
				}
			}
			var want []cellSeen
			for _, c := range all {
				if c.i >= from {
					want = append(want, c)
				}
			}
			if got := expandCellRuns(w, slot, l.Cells.RunsFrom(from, cut, hw)); !slices.Equal(got, want) {
				t.Fatalf("tick %d %s: RunsFrom(%d, %d, %d) yields %v, Runs from there on %v", w.Tick, tp, from, cut, hw, got, want)
			}
		}
	}
}

// cellSeen is a cell as a run of CellRuns tells it.
type cellSeen struct {
	i, part, off int
	ok           bool
	txn          TxnMark
}

// expandCellRuns is runs' cells one by one, a filtered run's offsets
// those of its range the partitioner sends to output partition slot.
func expandCellRuns(w *World, slot int, runs iter.Seq[broker.CellRun]) []cellSeen {
	var cells []cellSeen
	for r := range runs {
		if !r.OK {
			for j := range r.N {
				cells = append(cells, cellSeen{i: r.I + j, txn: r.Txn})
			}
			continue
		}
		p := w.layout.Partitioner(w.layout.Inputs()[r.Part])
		j := 0
		for off := r.First; off <= r.Last; off++ {
			if r.Filtered && p.Slot(off) != slot {
				continue
			}
			cells = append(cells, cellSeen{i: r.I + j, part: r.Part, off: off, ok: true, txn: r.Txn})
			j++
		}
		if j != r.N {
			cells = append(cells, cellSeen{i: -1, off: j - r.N}) // a run whose count is not its cells': never equal
		}
	}
	return cells
}

// TestDeliveryLevelsOfCopiesKeepTheirOwn: a family of levels, each made
// by sharing another (as World.clone shares a world's), each then given
// runs and judged counts of its own in random turns, keeps exactly the
// runs and counts given to it and to the level it was shared from before
// it was: no level's appends, inserts or judgements show in another's.
func TestDeliveryLevelsOfCopiesKeepTheirOwn(t *testing.T) {
	const parts = 3
	rng := rand.New(rand.NewSource(7))
	type model struct {
		lo, hi [parts][]deliveryRun
		judged map[int32]int
	}
	type member struct {
		c *deliveryCache
		m model
	}
	first := &deliveryCache{}
	first.level(false, 1, parts).anew(parts)
	family := []*member{{c: first, m: model{judged: map[int32]int{}}}}
	for step := 0; step < 20000; step++ {
		f := family[rng.Intn(len(family))]
		lv := &f.c.levels[0]
		switch k := rng.Intn(10); {
		case k == 0 && len(family) < 40:
			n := f.c.share()
			cp := member{c: &n, m: model{judged: maps.Clone(f.m.judged)}}
			for p := range parts {
				cp.m.lo[p], cp.m.hi[p] = slices.Clone(f.m.lo[p]), slices.Clone(f.m.hi[p])
			}
			family = append(family, &cp)
		case k < 3:
			p := int32(rng.Intn(parts))
			d := rng.Intn(3)
			lv.judge(p, Counts{Duplicates: d})
			if d == 0 {
				delete(f.m.judged, p)
			} else {
				f.m.judged[p] = d
			}
		default:
			// mostly past the runs there (an append), now and then before
			p := rng.Intn(parts)
			lo := int32(len(f.m.lo[p])*2 + rng.Intn(4))
			if rng.Intn(5) == 0 {
				lo = int32(rng.Intn(len(f.m.lo[p])*2 + 1))
			}
			r := deliveryRun{part: int32(p), lo: lo, hi: lo + int32(rng.Intn(5)), slot: int32(step), n: 1}
			lv.add([]deliveryRun{r})
			f.m.lo[p] = slices.Insert(f.m.lo[p], sort.Search(len(f.m.lo[p]), func(i int) bool { return byLo(f.m.lo[p][i], r) > 0 }), r)
			f.m.hi[p] = slices.Insert(f.m.hi[p], sort.Search(len(f.m.hi[p]), func(i int) bool { return byHi(f.m.hi[p][i], r) > 0 }), r)
		}
		for i, g := range family {
			glv := &g.c.levels[0]
			for p := range parts {
				if !slices.Equal(glv.lo[p], g.m.lo[p]) || !slices.Equal(glv.hi[p], g.m.hi[p]) {
					t.Fatalf("step %d: level %d of the family holds runs %v / %v of partition %d, was given %v", step, i, glv.lo[p], glv.hi[p], p, g.m.lo[p])
				}
			}
			got := map[int32]int{}
			if glv.kept != nil {
				for p, c := range glv.kept.judged {
					got[p] = c.Duplicates
				}
			}
			if !maps.Equal(got, g.m.judged) {
				t.Fatalf("step %d: level %d of the family judged %v, was given %v", step, i, got, g.m.judged)
			}
		}
	}
}
