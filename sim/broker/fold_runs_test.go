package broker

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestFoldRunsAsTheIterator: foldRuns, walking a log's spans and the
// cells between them itself, lists the very runs and odd sources
// foldRunsByIter lists through Runs, from the log's start to any offset,
// fold after fold. The log mixes what T2's output logs hold: spans of one
// run and of several (the partitioner's share of each or every record),
// cells written one at a time (invoices of input partitions a cellRec
// keeps and of ones past maxSrcPart, kept as odd cells with their names),
// runs of such cells in a row and broken (another partition, a gap, a
// step back, another transaction state), sources that are no input
// record's, markers, and aborted batches.
func TestFoldRunsAsTheIterator(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	seen := map[string]int{}
	for _, outs := range []int{1, 4} {
		shape := topo.Default()
		shape.Inputs = shape.Inputs[:1]
		shape.Inputs[0].Partitions = maxSrcPart + 8
		shape.Output.Partitions = outs
		layout := topo.New(shape)
		tp := layout.Outputs()[outs-1]
		slot := outputIndex(layout, tp)
		parts := []int{0, 1, 2, maxSrcPart + 2, maxSrcPart + 5} // the last two past what a cellRec keeps
		for seed := int64(1); seed <= 30; seed++ {
			r := rand.New(rand.NewSource(seed))
			c := CellLog{tp: tp, names: layout}
			next := map[int]int{}
			for tick := 0; tick < 300; tick++ {
				w := Cell{Producer: "C1", PID: 1000, Seq: -1, Tick: tick, Txn: NotTransactional}
				if r.Intn(20) == 0 {
					w.Txn = TxnAborted
				}
				part := parts[r.Intn(len(parts))]
				src := layout.Inputs()[part]
				first := next[part]
				switch k := r.Intn(10); {
				case k == 0 && first > 3:
					first -= 1 + r.Intn(3)
				case k == 1:
					first += 1 + r.Intn(4)
				}
				switch k := r.Intn(10); {
				case k < 4: // cells one at a time, a few in a row
					txn := w.Txn
					for j := 0; j < 1+r.Intn(4); j++ {
						v := w
						v.Txn = txn
						v.Source = layout.Name(src, first+j)
						v.Value = "inv(" + v.Source + ")"
						c.append(v)
						next[part] = first + j + 1
						if r.Intn(6) == 0 {
							txn = TxnAborted // a row broken by the transaction state
						}
					}
					seen["cells"]++
				case k == 4: // an odd source, or a marker
					v := w
					if r.Intn(2) == 0 {
						v.Value, v.Source = "x", "not-a-record"
						seen["odd"]++
					} else {
						v.Value, v.Control = "COMMIT", "COMMIT"
						seen["marker"]++
					}
					c.append(v)
				default: // a span: one run or several
					var runs []wire.SrcRun
					for _, p := range r.Perm(len(parts))[:1+r.Intn(len(parts))] {
						p := parts[p]
						f := next[p]
						if p == part {
							f = first
						}
						last := f + r.Intn(6)
						next[p] = last + 1
						sr := wire.SrcRun{Part: int32(p), First: int32(f), Last: int32(last), Count: int32(last - f + 1), From: int32(f), To: int32(last)}
						if outs > 1 && r.Intn(3) == 0 {
							var offs []int
							for off := f; off <= last; off++ {
								if layout.Partitioner(layout.Inputs()[p]).Slot(off) == slot {
									offs = append(offs, off)
								}
							}
							if len(offs) == 0 {
								continue
							}
							sr.First, sr.Last, sr.Count = int32(offs[0]), int32(offs[len(offs)-1]), int32(len(offs))
						}
						runs = append(runs, sr)
					}
					if len(runs) == 1 && runs[0].Count > 1 {
						sr := runs[0]
						c.appendRun(&w, int(sr.Part), int(sr.First), int(sr.Last), int(sr.Count), nil)
						seen["span of one run"]++
					} else if len(runs) > 0 && c.appendRuns(&w, runs, nil) {
						seen["spans"]++
					}
				}
				if tick%13 != 12 || c.Len() == 0 {
					continue
				}
				// To a span's start, or past the log's end (Runs reads to
				// its end then).
				to := c.spanStart(int(c.startOff) + r.Intn(c.Len()-int(c.startOff)+1))
				if r.Intn(8) == 0 {
					to = c.Len() + 1 + r.Intn(3)
				}
				// And anywhere, a span's middle too (which a fold never
				// asks: Runs then yields the run's cells below it one by one).
				for _, at := range []int{to, c.Len(), int(c.startOff) + r.Intn(c.Len()-int(c.startOff)+1)} {
					direct, oa, oc, ab := c.foldRuns(nil, at, slot)
					iter, oa2, oc2, ab2 := c.foldRunsByIter(nil, at, slot)
					if !reflect.DeepEqual(direct, iter) || !reflect.DeepEqual(oa, oa2) || !reflect.DeepEqual(oc, oc2) || ab != ab2 {
						t.Fatalf("outs %d seed %d tick %d, cells %d to %d: foldRuns %v %v %v %v, through Runs %v %v %v %v",
							outs, seed, tick, c.startOff, at, direct, oa, oc, ab, iter, oa2, oc2, ab2)
					}
					if ab {
						seen["aborted"]++
					}
					if len(oa) > 0 {
						seen["odd folded"]++
					}
				}
				if to <= c.Len() && to > int(c.startOff) && r.Intn(2) == 0 {
					c.letGo(to)
					seen["let go"]++
				}
			}
		}
	}
	t.Logf("%v", seen)
	for _, k := range []string{"cells", "odd", "marker", "span of one run", "spans", "aborted", "odd folded", "let go"} {
		if seen[k] == 0 {
			t.Errorf("never %s (%v): the test proves less than it says", k, seen)
		}
	}
}

// foldByCanonical is CellLog.fold as it was before merge: each input
// partition's old and new runs copied into one list and made canonical
// (canonicalRef, canonical as it was), the tests' reference.
func (c *CellLog) foldByCanonical(old ForgotLevel, add []ForgotRun, slot int) []ForgotRun {
	if len(add) == 0 {
		return old.Runs
	}
	var runs, part []ForgotRun
	i, j := 0, 0
	for i < len(old.Runs) || j < len(add) {
		if j == len(add) || i < len(old.Runs) && old.Runs[i].Part < add[j].Part {
			runs = append(runs, old.Runs[i])
			i++
			continue
		}
		p := add[j].Part
		part = part[:0]
		for ; i < len(old.Runs) && old.Runs[i].Part == p; i++ {
			part = append(part, old.Runs[i])
		}
		for ; j < len(add) && add[j].Part == p; j++ {
			part = append(part, add[j])
		}
		runs = c.canonicalRef(runs, part, slot)
	}
	return runs
}

// canonicalRef is canonical by its definition: for each kind, the
// stretches of offsets over which the same number of runs lie, each
// joined to the one before it of the same number when they touch or, for
// slot's, when no record between goes to slot; no cache.
func (c *CellLog) canonicalRef(out, part []ForgotRun, slot int) []ForgotRun {
	type edge struct{ at, d int32 }
	for _, slotted := range [2]bool{false, true} {
		var edges []edge
		for _, r := range part {
			if r.Slotted == slotted {
				edges = append(edges, edge{r.First, r.N}, edge{r.Last + 1, -r.N})
			}
		}
		sort.SliceStable(edges, func(a, b int) bool { return edges[a].at < edges[b].at })
		from, n := len(out), int32(0)
		for k := 0; k < len(edges); {
			at := edges[k].at
			for ; k < len(edges) && edges[k].at == at; k++ {
				n += edges[k].d
			}
			if n == 0 || k == len(edges) {
				continue
			}
			last := edges[k].at - 1
			if m := len(out); m > from && out[m-1].N == n &&
				(out[m-1].Last+1 == at || slotted && c.noneBetween(int(part[0].Part), int(out[m-1].Last)+1, int(at), slot, nil)) {
				out[m-1].Last = last
				continue
			}
			out = append(out, ForgotRun{Part: part[0].Part, First: at, Last: last, N: n, Slotted: slotted})
		}
	}
	return out
}

// TestFoldMergesAsCanonical: fold, which copies a partition's folded runs
// at once when its new ones come after them (merge), makes the very
// level canonical makes of each partition's old and new runs together
// (foldByCanonical), fold after fold: new runs in order after the old
// ones, overlapping them (records written twice), before them, of both
// kinds, with gaps the partitioner joins or not; and from levels no fold
// made (runs in any order, joinable neighbours, slot's before every
// record's), where merge must not trust what a fold's level promises.
func TestFoldMergesAsCanonical(t *testing.T) {
	seen := map[string]int{}
	for _, outs := range []int{1, 4} {
		shape := topo.Default()
		shape.Inputs = shape.Inputs[:1]
		shape.Inputs[0].Partitions = 5
		shape.Output.Partitions = outs
		layout := topo.New(shape)
		tp := layout.Outputs()[outs-1]
		slot := outputIndex(layout, tp)
		c := CellLog{tp: tp, names: layout}
		for seed := int64(1); seed <= 300; seed++ {
			r := rand.New(rand.NewSource(seed))
			next := make([]int32, len(layout.Inputs()))
			// newRuns is a fold's new runs (N 1), grouped by partition.
			newRuns := func() []ForgotRun {
				var add []ForgotRun
				for p := range next {
					for k := r.Intn(4); k > 0; k-- {
						first := next[p]
						switch x := r.Intn(10); {
						case x == 0 && first > 5:
							first -= 1 + int32(r.Intn(5)) // written again
						case x == 1:
							first += 1 + int32(r.Intn(8)) // a gap
						}
						last := first + int32(r.Intn(4))
						next[p] = max(next[p], last+1)
						add = append(add, ForgotRun{Part: int32(p), First: first, Last: last, N: 1, Slotted: outs > 1 && r.Intn(2) == 0})
					}
				}
				return add
			}
			var level ForgotLevel
			if seed%5 == 0 { // a level no fold made
				for p := range next {
					for k := r.Intn(4); k > 0; k-- {
						first := next[p] + int32(r.Intn(3))
						if r.Intn(4) == 0 {
							first = int32(r.Intn(int(next[p]) + 1)) // back: out of order, overlapping
						}
						last := first + int32(r.Intn(3))
						next[p] = max(next[p], last+1)
						level.Runs = append(level.Runs, ForgotRun{Part: int32(p), First: first, Last: last, N: 1 + int32(r.Intn(2)), Slotted: outs > 1 && r.Intn(2) == 0})
					}
				}
				seen["a level no fold made"]++
			}
			for fold := 0; fold < 8; fold++ {
				add := newRuns()
				want := c.foldByCanonical(level, add, slot)
				got := c.fold(level, add, nil, slot, new(foldScratch))
				if !reflect.DeepEqual(got.Runs, want) && (len(got.Runs) > 0 || len(want) > 0) {
					t.Fatalf("outs %d seed %d fold %d: old %v, new %v: fold %v, canonical %v", outs, seed, fold, level.Runs, add, got.Runs, want)
				}
				for _, fr := range want {
					if fr.N > 1 {
						seen["duplicates"]++
						break
					}
				}
				level = got
			}
		}
	}
	t.Logf("%v", seen)
	for _, k := range []string{"a level no fold made", "duplicates"} {
		if seen[k] == 0 {
			t.Errorf("never %s (%v): the test proves less than it says", k, seen)
		}
	}
}
