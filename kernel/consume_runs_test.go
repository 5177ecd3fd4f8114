package kernel

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// recordByRecord gives f the reader's records in order until f returns
// false, as consume read them before it read runs: every cell from each
// partition's start, those that are data and, at read_committed, that
// Log.ReadCommitted returns.
func recordByRecord(rd topicReader, f func(pi int, r sim.ReadRecord) bool) {
	for pi, tp := range rd.partitions() {
		l := rd.w.Log(tp)
		for i := l.Start(); i < l.HW(); i++ {
			if l.Cells.IsData(i) && (rd.iso != "read_committed" || l.ReadCommitted(i)) && !f(pi, rd.record(tp, i)) {
				return
			}
		}
	}
}

// listedRecordByRecord is topicReader.listed as consume computed it
// before it read runs: every record from each partition's start
// (recordByRecord), its source counted in a map, the records k =
// lo..hi-1 of those at offset from or later kept.
func listedRecordByRecord(rd topicReader, from, lo, hi int) []listedRecord {
	var items []listedRecord
	seen := map[string]int{}
	k := 0
	recordByRecord(rd, func(pi int, r sim.ReadRecord) bool {
		nth := 0
		if r.Source != "" {
			seen[r.Source]++
			nth = seen[r.Source]
		}
		if r.Offset < from {
			return true
		}
		if k >= lo {
			items = append(items, listedRecord{pi: pi, r: r, nth: nth})
		}
		k++
		return k < hi
	})
	return items
}

// TestConsumeListsAsRecordByRecord: the records consume lists, and the
// n-th invoice each is, read by runs (topicReader.listed) are those the
// record-by-record reader found, for every window (--from, --last) of
// every topic at both isolation levels, in worlds with invoices written
// twice (crashes, a lost produce answer, a rebalance), transactions
// committed and aborted, output logs that let go of their past, and
// batches of several runs over several output partitions (linger.ms in
// real time, filtered runs); and the counts agree.
func TestConsumeListsAsRecordByRecord(t *testing.T) {
	worlds := map[string]string{
		"page": "join C2; run until stable; run until polled o2.3; crash C2 after 3; run until processed o2.5; run until tick 62; step 30",
		"txn": "set producer transactional; set isolation.level read_committed; join C2; run until stable; run until polled o2.3; crash C2 after 3; " +
			"run until processed o2.5; run until tick 62; run until processed o2.5 by C1; step 8",
		"lost answer": "drop Produce response C1 3; join C2; run until stable; step 40",
		"real time": "new --kafka-defaults --members 3 --topics orders:6 --output invoices:3; set processing.ms 0.2; produce --rate 100/s orders; step 4s; " +
			"crash C2 now; step 1s; restart C2; run until stable; step 1s",
		"real time txn": "new --kafka-defaults --members 2 --topics orders:4 --output invoices:2; set producer transactional; set processing.ms 0.5; " +
			"produce --rate 50/s orders; step 3s; crash C1 now; step 1s; restart C1; step 1s",
	}
	names := make([]string, 0, len(worlds))
	for name := range worlds {
		names = append(names, name)
	}
	slices.Sort(names)
	counted := map[string]int{}
	for _, name := range names {
		for _, forget := range []bool{false, true} {
			s := NewSession()
			for _, line := range strings.Split(worlds[name], "; ") {
				if _, err := s.Exec(line); err != nil {
					t.Fatalf("%s: %s: %v", name, line, err)
				}
			}
			w := s.World()
			if forget {
				w.ForgetOutputBeforeForTest(w.Tick - w.Tick/3)
			}
			for _, topic := range topicList(w) {
				for _, iso := range []string{"read_uncommitted", "read_committed"} {
					rd := topicReader{w: w, topic: topic, iso: iso}
					whole, err := rd.count(s, 0)
					if err != nil {
						t.Fatal(err)
					}
					for _, from := range []int{0, 1, 7, 40, 1 << 30} {
						n, err := rd.count(s, from)
						if err != nil {
							t.Fatal(err)
						}
						want := listedRecordByRecord(rd, from, 0, n)
						if len(want) != n {
							t.Fatalf("%s %s %s from %d: counted %d records, read %d", name, topic, iso, from, n, len(want))
						}
						for _, win := range [][2]int{{0, n}, {max(n-1, 0), n}, {max(n-7, 0), n}, {n / 3, n/3 + 5}} {
							lo, hi := win[0], min(win[1], n)
							got, err := rd.listed(s, from, lo, hi)
							if err != nil {
								t.Fatal(err)
							}
							want := listedRecordByRecord(rd, from, lo, hi)
							if !reflect.DeepEqual(got, want) {
								t.Fatalf("%s (let go: %v) consume %s --isolation %s from %d, records %d..%d:\n%v\nrecord by record:\n%v", name, forget, topic, iso, from, lo, hi, got, want)
							}
							// as consume reads: the output topic's records
							// that are no duplicate at the level not counted
							withDups, _ := newTopicReader(w, topic, iso)
							if got, err := withDups.listed(s, from, lo, hi); err != nil || !reflect.DeepEqual(got, want) {
								t.Fatalf("%s (let go: %v) consume %s --isolation %s from %d, records %d..%d, knowing the duplicates (%v):\n%v\nrecord by record:\n%v", name, forget, topic, iso, from, lo, hi, err, got, want)
							}
							if withDups.dups != nil {
								counted["knowing the duplicates"]++
							}
							for _, it := range got {
								if it.nth > 1 {
									counted["written again"]++
								}
							}
						}
					}
					counted[fmt.Sprintf("records %s", iso)] += whole
				}
			}
			if forget && w.Log(w.Layout().Outputs()[0]).Start() > 0 {
				counted["let go"]++
			}
			for _, tp := range w.Layout().Outputs() {
				l := w.Log(tp)
				for r := range l.Cells.Runs(l.HW(), l.HW()) {
					if r.Filtered {
						counted["filtered runs"]++
					}
				}
			}
		}
	}
	t.Logf("%v", counted)
	for _, k := range []string{"written again", "let go", "filtered runs", "knowing the duplicates"} {
		if counted[k] == 0 {
			t.Errorf("no world showed %q (%v): the test proves less than it says", k, counted)
		}
	}
}
