package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestNoIntervalAutoCommitFollowsAHeartbeatInItsTick: Kafka's background
// thread polls CommitRequestManager before ConsumerHeartbeatRequestManager
// in every iteration (ConsumerNetworkThread.runOnce), so whichever way a
// heartbeat comes to be sent (its interval, at once when joining or
// acknowledging, on an answer because it came due meanwhile) an interval
// auto-commit due by then went out before it. Random consumer-protocol
// worlds of Kafka's defaults (rates, processing times, intervals, graceful
// and hard restarts) must never have a member's interval auto-commit sent
// after its own heartbeat in the same tick, unless the member was busy
// processing records, out of poll(), when the heartbeat went.
func TestNoIntervalAutoCommitFollowsAHeartbeatInItsTick(t *testing.T) {
	bad := 0
	for seed := uint64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 17))
		settings := map[string]string{
			"group.protocol":          "consumer",
			"processing.ms":           []string{"0.1", "1", "7", "40"}[r.IntN(4)],
			"auto.commit.interval.ms": []string{"5000", "1000", "250", "3000"}[r.IntN(4)],
		}
		members := 3 + r.IntN(4)
		w := kafkaWorld(t, bigTopology(members, 1, 6*members), 0, 1+r.IntN(50), settings)
		keep := w.env.KeepForTest() // before the first tick: no packet is sent before it
		for i := 0; i < 6000; i++ {
			if i%500 == 250 {
				c := fmt.Sprintf("C%d", 1+r.IntN(members))
				switch r.IntN(3) {
				case 0:
					_ = w.RestartGraceful(c)
				case 1:
					_ = w.CrashNow(c)
				default:
					_ = w.Restart(c)
				}
			}
			w.Step()
		}
		// Per member incarnation and tick, the kind of the last request
		// sent: a heartbeat, then an interval auto-commit, is the fault.
		type key struct {
			from      string
			inc, tick int
		}
		hb, processing := map[key]bool{}, map[key]bool{}
		for _, e := range w.Events.All() {
			if e.Kind == EvProcessed {
				processing[key{e.Member, 0, e.Tick}] = true
			}
		}
		commits := 0
		for _, p := range w.Packets.All() {
			if p.Response {
				continue
			}
			k := key{p.From, p.FromInc, p.Sent}
			switch p.Type {
			case ConsumerGroupHeartbeat:
				hb[k] = true
			case OffsetCommit:
				live := keep[p.ID]
				if live == nil {
					t.Fatalf("seed %d: packet %d's body was not kept", seed, p.ID)
				}
				if req, ok := live.Body.(*wire.OffsetCommitRequest); ok && req.Auto == wire.AutoInterval {
					commits++
					// A member processing records when its heartbeat's
					// interval ran out was not in poll(): its auto-commit
					// timer had not moved since its last poll (PollEvent's
					// updateAutoCommitTimer), so the commit comes due only
					// at the poll() after the processing, in a later
					// iteration of the background thread.
					if hb[k] && !processing[key{p.From, 0, p.Sent}] {
						bad++
						if bad <= 3 {
							t.Errorf("seed %d %v: %s's interval auto-commit (%s) sent after its heartbeat at tick %d", seed, settings, p.From, p.Summary, p.Sent)
						}
					}
				}
			}
		}
		if commits == 0 {
			t.Errorf("seed %d %v: no interval auto-commit sent", seed, settings)
		}
	}
	if bad > 0 {
		t.Errorf("%d interval auto-commits went after their member's heartbeat in the same tick", bad)
	}
}
