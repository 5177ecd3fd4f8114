package sim

import (
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// BenchmarkTickAutoCommit100x10000: 100 idle members over 10,000 partitions
// (100 topics x 100), each auto-committing its 100 positions every
// auto.commit.interval.ms as Kafka's ConsumerCoordinator does (changed or
// not): about 2,000 offsets committed per tick, the commit path at scale.
func BenchmarkTickAutoCommit100x10000(b *testing.B) {
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 0
	w, _ := New(bigTopology(100, 100, 100), cfg)
	for i := 0; i < 50 && !w.GroupSettled(); i++ {
		w.Step()
	}
	for i := 0; i < 20; i++ {
		w.Step()
	}
	o0 := w.Group.Offsets.Log.Len()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w.Step()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/tick")
	b.ReportMetric(float64(w.Group.Offsets.Log.Len()-o0)/float64(b.N), "offsets/tick")
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B-kept/tick")
	runtime.KeepAlive(w)
}

// TestCommitsKeepTheirPartitions: an auto-commit's request shares the
// member's Owned list (fetchPositionList), and the request and its answer
// are read a tick or more after it was sent, so Owned must be replaced,
// never changed in place: after random joins, crashes and restarts under
// cooperative and eager assignors and both group protocols, every
// OffsetCommit request still names the partitions it named when sent.
func TestCommitsKeepTheirPartitions(t *testing.T) {
	shared := 0
	for seed := 0; seed < 16; seed++ {
		// Two members on three topics of four partitions, the assignors
		// by turns, the consumer protocol on seed%3 == 2, 300 ticks of
		// faults by C1 to C5 with static joins on even seeds.
		sc := seedWorld(t, seed, worldSpec{
			source:   900,
			topology: func(*rand.Rand, int) Topology { return bigTopology(2, 3, 4) },
			assignor: cycle(1, "cooperative-sticky", "range", "sticky", "roundrobin"),
			protocol: cycle(1, ClassicGroup, ClassicGroup, ConsumerGroup),
			ticks:    300, clients: 5, static: seedsAt(2, 0),
		})
		w, sched := sc.w, sc.sched
		keepBodies(w) // the trace keeps no bodies
		sent := map[*Packet][]TopicPartition{}
		i, seen := 0, 0
		for w.Tick < 300 {
			for i < len(sched) && sched[i].tick <= w.Tick {
				_ = sched[i].do(w)
				i++
			}
			w.Step()
			for ; seen < w.Packets.Len(); seen++ {
				p := w.env.KeepForTest()[seen]
				if req, ok := p.Body.(*wire.OffsetCommitRequest); ok && !p.Response && len(req.Partitions) > 0 {
					sent[p] = slices.Clone(req.Partitions)
					if m := w.process(p.From, p.FromInc); m != nil && len(m.Owned) > 0 && &m.Owned[0] == &req.Partitions[0] {
						shared++
					}
				}
			}
		}
		for p, tps := range sent {
			if got := p.Body.(*wire.OffsetCommitRequest).Partitions; !slices.Equal(got, tps) {
				t.Fatalf("seed %d: OffsetCommit %d sent at tick %d named %v, names %v now", seed, p.ID, p.Sent, tps, got)
			}
		}
	}
	if shared == 0 {
		t.Error("no request shared its member's Owned list: the test checks nothing")
	}
}
