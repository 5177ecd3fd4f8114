package sim

import (
	"reflect"
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
