package sim

import "testing"

// TestAutoCommitGoesBeforeTheHeartbeatItMeets: under the consumer protocol
// with Kafka's defaults the interval auto-commit and the heartbeat are both
// every 5 s, and after the first they fall due at the same moment. Kafka's
// background thread polls CommitRequestManager before the heartbeat's
// manager (RequestManagers, ConsumerNetworkThread.runOnce), so the commit
// reaches the coordinator first, with the epoch the member holds, and
// passes; a heartbeat read first could move the epoch on and have the
// commit refused (STALE_MEMBER_EPOCH). A graceful rolling restart then
// committed nothing and every moved partition was read again. Each roll
// here must leave no duplicate, as the classic protocol does.
func TestAutoCommitGoesBeforeTheHeartbeatItMeets(t *testing.T) {
	for _, protocol := range []string{"consumer", "classic"} {
		w := kafkaWorld(t, bigTopology(6, 1, 60), 0, 2, map[string]string{"group.protocol": protocol, "processing.ms": "0.1"})
		for range 400 {
			w.Step()
		}
		for roll := 0; roll < 2; roll++ {
			if err := w.Roll(RollSpec{Members: []string{"C1", "C2", "C3", "C4", "C5", "C6"}, Graceful: true, WaitStable: true}); err != nil {
				t.Fatal(err)
			}
			for k := 0; !w.Settled(); k++ {
				w.Step()
				if k > 200_000 {
					t.Fatalf("%s: roll %d not done", protocol, roll)
				}
			}
		}
		// Some commits are still refused, as in Kafka 4.0: close()'s
		// commit sent before the answer to a heartbeat that moved the
		// epoch, or an auto-commit a tick after such a heartbeat. Those
		// cost nothing here: the commit before a revocation retries with
		// the new epoch. What must not happen is the refusal of every
		// auto-commit that meets a heartbeat.
		d := w.Delivery("read_uncommitted")
		if d.Duplicates != 0 || d.Lost != 0 {
			t.Errorf("%s: two graceful rolls processed %d records with %d duplicates and %d lost; want none",
				protocol, w.Processed(), d.Duplicates, d.Lost)
		}
		if w.Processed() == 0 {
			t.Errorf("%s: nothing processed", protocol)
		}
	}
}
