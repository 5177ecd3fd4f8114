package sim

import (
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
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
	o0 := w.Group.OffsetsLog.Len()
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
	b.ReportMetric(float64(w.Group.OffsetsLog.Len()-o0)/float64(b.N), "offsets/tick")
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B-kept/tick")
	runtime.KeepAlive(w)
}

// TestFetchPositionList: the ordered position lists of the auto-commit
// and of commitSync are what sorting the fetchPositions and
// processedPositions maps gives, whether Owned is sorted, unsorted,
// repeats a partition, or has partitions not yet positioned (also between
// two that are out of order), without a processed offset, or not of the
// world; with and without the world's numbering. Their slots, when given,
// are the partitions' own.
func TestFetchPositionList(t *testing.T) {
	tp := func(topic string, p int) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }
	w, err := New(Topology{Group: "g", Inputs: []TopicSpec{{Name: "b", Partitions: 3}, {Name: "a", Partitions: 2}}, Output: TopicSpec{Name: "out", Partitions: 1}}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range []*topo.InputIndex{nil, w.layout.Input()} {
		for _, owned := range [][]TopicPartition{
			nil,
			{tp("a", 0), tp("a", 1), tp("b", 0)},
			{tp("a", 1), tp("b", 0), tp("b", 2)},
			{tp("b", 0), tp("a", 1), tp("a", 0)},
			{tp("a", 1), tp("a", 1), tp("a", 0)},
			{tp("a", 1), tp("x", 9), tp("b", 2)},
			{tp("a", 1), tp("b", 2), tp("x", 9)},
			{tp("b", 0), tp("a", 0), tp("a", 1)}, // a-0 not positioned: b-0 and a-1 are listed out of order
			{tp("b", 1), tp("b", 2)},             // b-1 positioned, not processed
		} {
			m := &Member{Owned: owned}
			if idx != nil {
				m.useIndex(idx)
			}
			for _, e := range []struct {
				tp TopicPartition
				v  int
			}{{tp("a", 1), 7}, {tp("b", 0), 1}, {tp("b", 1), 2}, {tp("b", 2), 3}, {tp("x", 9), 5}} {
				m.positions.set(e.tp, e.v)
				if e.tp != tp("b", 1) {
					m.processed.set(e.tp, e.v+10)
				}
			}
			m.positions.delAll([]TopicPartition{tp("x", 9)})
			for _, c := range []struct {
				name string
				got  commitList
				want map[TopicPartition]int
			}{{"fetch", m.fetchPositionList([]int{99, 98}), m.fetchPositions()}, {"processed", m.processedPositionList(), m.processedPositions()}} {
				want := listOf(c.want)
				if !slices.Equal(c.got.tps, want.tps) || !slices.Equal(c.got.offs, want.offs) {
					t.Fatalf("Owned %v, %s: got %v %v, want %v %v", owned, c.name, c.got.tps, c.got.offs, want.tps, want.offs)
				}
				for i, tp := range c.got.tps {
					if s := topo.SlotAt(c.got.slots, i); s >= 0 && (idx == nil || idx.At(int(s)) != tp) {
						t.Fatalf("Owned %v, %s: slot %d of %v is not its own", owned, c.name, s, tp)
					}
				}
			}
			if m.anyPositioned() != (len(m.fetchPositions()) > 0) {
				t.Fatalf("Owned %v: anyPositioned %v", owned, m.anyPositioned())
			}
		}
	}
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
		r := rand.New(rand.NewSource(int64(900 + seed)))
		cfg := DefaultConfig()
		cfg.Client.Assignor = []string{"cooperative-sticky", "range", "sticky", "roundrobin"}[seed%4]
		if seed%3 == 2 {
			cfg.Client.GroupProtocol = string(ConsumerGroup)
		}
		w, _ := New(bigTopology(2, 3, 4), cfg)
		keepBodies(w) // the trace keeps no bodies
		sched := randomSchedule(r, 300, 5, seed%2 == 0)
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
