package sim

import "testing"

// TestLostAnswerToAHeldFetchIsTimedOut: a Fetch the broker holds (nothing
// to read) past its request timeout, whose answer is lost when a record
// arrives, is fetched again request.timeout.ms later, and the record is
// processed. Before, the request timeout had fired while the fetch was
// held (and waited on), so nothing was left to notice the lost answer: the
// member waited for ever, its partitions unread. Both ways a held fetch is
// answered: a record appended (produce) and steady production.
func TestLostAnswerToAHeldFetchIsTimedOut(t *testing.T) {
	for _, steady := range []bool{false, true} {
		name := "produce"
		if steady {
			name = "rate"
		}
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RecordsPerPartition = 0
			w, err := New(DefaultTopology(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3*cfg.Client.RequestTimeout; i++ {
				w.Step()
			}
			c1 := w.Member("C1")
			tp := c1.Owned[0]
			w.Drop(DropRule{Type: Fetch, Response: true, To: "C1", Count: 1})
			if steady {
				err = w.ProduceRate([]TopicPartition{tp}, Rate{Records: 1, Ticks: 1})
			} else {
				err = w.ProduceInput(tp, 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			lostAt := -1
			processed := func() bool { return w.Processed() > 0 }
			for i := 0; i < 4*cfg.Client.RequestTimeout && !processed(); i++ {
				w.Step()
				if lostAt < 0 && len(w.PendingDrops()) == 0 {
					lostAt = w.Tick
				}
			}
			if lostAt < 0 {
				t.Fatal("no Fetch answer to C1 was lost")
			}
			if !processed() {
				t.Fatalf("nothing processed %d ticks after C1's answer was lost at tick %d", w.Tick-lostAt, lostAt)
			}
			if n := len(eventsOf(w, EvRetry, "C1")); n != 1 {
				t.Errorf("%d retries by C1, want the one Fetch timed out", n)
			}
		})
	}
}
