package sim

import (
	"reflect"
	"runtime"
	"sort"
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
