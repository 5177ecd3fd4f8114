package sim

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"testing"
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

// deliveryPerRecord is Delivery as it was before it merged runs (issue
// 26), kept as the reference TestDeliveryRunsMatchPerRecord holds Delivery
// to and BenchmarkDeliveryRealRates compares it with: Delivery at an
// isolation level. It reads the output
// logs in place (what ReadTopic of the output topic returns) and counts
// invoices by the input record their source references (CellLog.sourceRef),
// without spelling a name, in one dense count per input record (input
// offsets are dense from 0): it allocates that array and the names it
// reports, not per record, and hashes nothing.
func deliveryPerRecord(w *World, isolation string) Counts {
	// Input record (p, off) is slot base[p]+off, for off below its log's
	// end; a source past it (never written by the engine: an invoice
	// names a record that was read) is counted in extra.
	base := make([]int, len(w.layout.Inputs())+1)
	for p, tp := range w.layout.Inputs() {
		base[p+1] = base[p] + w.broker.Log(tp).HW()
	}
	const heldBit = 1 << 31 // a committed invoice at or past the LSO (read_committed)
	slots := make([]uint32, base[len(w.layout.Inputs())])
	var extra map[int64]uint32 // by p<<32 | off, as slots
	var odd map[string]int     // sources that are no input record's name
	bump := func(s uint32, held bool) uint32 {
		if held {
			return s | heldBit
		}
		return s + 1
	}
	mark := func(p, off int, held bool) {
		if off < base[p+1]-base[p] {
			slots[base[p]+off] = bump(slots[base[p]+off], held)
			return
		}
		if extra == nil {
			extra = map[int64]uint32{}
		}
		k := int64(p)<<32 | int64(off)
		extra[k] = bump(extra[k], held)
	}
	committed := isolation == "read_committed"
	for _, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		lso, hw := l.LSO(), l.HW()
		// The data cells with their sources, a batch's (a span) read in
		// one pass.
		for cs := range l.Cells.Sources(hw) {
			i, txn := cs.I, cs.Txn
			visible := !committed || i < lso && txn != TxnAborted && txn != TxnOpen
			heldBack := committed && i >= lso && (txn == TxnCommitted || txn == NotTransactional)
			if !visible && !heldBack {
				continue
			}
			switch {
			case !cs.OK && visible:
				if odd == nil {
					odd = map[string]int{}
				}
				odd[l.Cells.At(i).Source]++
			case !cs.OK: // held back, and no input record's: nothing is looked up by it
			default:
				mark(cs.Part, cs.Off, !visible)
			}
		}
	}
	var c Counts
	dup := func(p, off int, s uint32) {
		if n := int(s &^ heldBit); n > 1 {
			c.Duplicates += n - 1
			c.DuplicateNames = append(c.DuplicateNames, w.layout.Name(w.layout.Inputs()[p], off))
		}
	}
	for p := range w.layout.Inputs() {
		for off, s := range slots[base[p]:base[p+1]] {
			dup(p, off, s)
		}
	}
	for k, s := range extra {
		dup(int(k>>32), int(k&(1<<32-1)), s)
	}
	for s, n := range odd {
		if n > 1 {
			c.Duplicates += n - 1
			c.DuplicateNames = append(c.DuplicateNames, s)
		}
	}
	sort.Strings(c.DuplicateNames)
	for p, tp := range w.layout.Inputs() {
		rec, ok := w.Group.Offsets.CommittedOffset(tp)
		if !ok {
			continue
		}
		// Offsets below the committed one and the log's end: all in slots.
		for off := 0; off < rec && off < base[p+1]-base[p]; off++ {
			switch s := slots[base[p]+off]; {
			case s&^heldBit > 0:
			case s&heldBit != 0:
				c.HeldBack++
				c.HeldBackNames = append(c.HeldBackNames, w.layout.Name(tp, off))
			default:
				c.Lost++
				c.LostNames = append(c.LostNames, w.layout.Name(tp, off))
			}
		}
	}
	return c
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
			spec := propertyCase(proto)
			spec.transactional = seedsAt(3, 1)
			spec.readCommitted = seedsAt(2, 1)
			spec.idempotent = seedsAt(4, 2)
			spec.ticks, spec.clients = 250, 5
			spec.records = span{0, 60}
			spec.processing = drawn([2]int{1, 1}, [2]int{1, 7}, [2]int{3, 1}, [2]int{1, 40})
			spec.maxPoll = drawn(3, 10, 40, 500)
			sc := seedWorld(t, seed, spec)
			w := sc.w
			linger := seed % 5
			if err := w.Set("", "linger.ms", strconv.Itoa(linger)); err != nil {
				t.Fatal(err)
			}
			if seed%3 != 0 {
				if err := w.ProduceRate(w.layout.Inputs(), Rate{int64(1 + seed%4), int64(1 + seed%2)}); err != nil {
					t.Fatal(err)
				}
			}
			sched := append(slices.Clone(sc.sched), action{tick: sc.r.Intn(250), name: "roll", do: func(w *World) error {
				var ms []string
				for _, m := range w.procs {
					if m.Alive && !slices.Contains(ms, m.Client) {
						ms = append(ms, m.Client)
					}
				}
				return w.Roll(RollSpec{Members: ms, Every: 5, Graceful: seed%2 == 0})
			}})
			slices.SortStableFunc(sched, func(a, b action) int { return a.tick - b.tick })
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
