package sim

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/trace"
)

var updateTrace = flag.Bool("update-trace", false, "rewrite testdata/trace_digests.txt from the current engine")

// traceDump renders every field of the trace that a view can read: the
// packets as materialized (summaries, the request an answer answers) and the
// events (texts, record names, stop marks).
func traceDump(w *World) string {
	var b strings.Builder
	for _, p := range w.Packets.All() {
		req := -1
		if p.Req != nil {
			req = p.Req.ID
		}
		fmt.Fprintf(&b, "p%d %d>%d %s/%d>%s/%d %s %v %s %q lost=%v req=%d\n", p.ID, p.Sent, p.Delivered, p.From, p.FromInc,
			p.To, p.ToInc, p.Type, p.Response, p.Error, p.Summary, p.Lost, req)
	}
	for i, e := range w.Events.All() {
		fmt.Fprintf(&b, "e%d t%d %s %s stop=%v %q %q\n", i, e.Tick, e.Kind, e.Member, e.Stop, e.Text, e.Records.Names())
	}
	return b.String()
}

// traceCase runs one random world of the property tests' kind
// (propertyCase: every assignor, commit mode, sticky rule set,
// transactions, server-side assignor, mixed protocols, random topology and
// records), 300 ticks of faults by C1 to C5 with static joins, and lost
// packets of every steady type and new input drawn as it runs, for 400
// ticks; and returns it. (sim/simtest.TraceCase makes the same worlds for
// the packages that cannot reach sim's test files.)
func traceCase(t *testing.T, proto GroupType, seed int) *World {
	return traceCaseWith(t, proto, seed, func(w *World) *World { return w })
}

// traceCaseWith is traceCase, with each called before every tick: the
// world it returns goes on.
func traceCaseWith(t *testing.T, proto GroupType, seed int, each func(*World) *World) *World {
	spec := propertyCase(proto)
	spec.ticks, spec.clients, spec.static = 300, 5, fixed(true)
	sc := seedWorld(t, seed, spec)
	w, sched, r := sc.w, sc.sched, sc.r
	types := []API{Fetch, OffsetCommit, Produce, JoinGroup, SyncGroup, ConsumerGroupHeartbeat, OffsetFetch, EndTxn, TxnOffsetCommit}
	i := 0
	for w.Tick < 400 {
		for i < len(sched) && sched[i].tick <= w.Tick {
			sched[i].do(w)
			i++
		}
		if r.Intn(25) == 0 {
			w.Drop(DropRule{Type: types[r.Intn(len(types))], Response: r.Intn(2) == 0, Count: 1})
		}
		if w.Tick%17 == 0 {
			tps := w.Layout().Inputs()
			w.ProduceInput(tps[r.Intn(len(tps))], 1+r.Intn(3))
		}
		w = each(w)
		w.Step()
	}
	return w
}

// TestTraceMaterializedAsBefore: for random worlds, the trace as the views
// read it (every packet field and summary, every event text and record
// name) hashes to what the engine produced before the trace was kept as
// compact records with text formatted on read (testdata/trace_digests.txt
// was written by the engine that built every string when it happened).
func TestTraceMaterializedAsBefore(t *testing.T) {
	const path = "testdata/trace_digests.txt"
	var got strings.Builder
	for _, proto := range protocols {
		for seed := 0; seed < 24; seed++ {
			w := traceCase(t, proto, seed)
			dump := traceDump(w)
			for i, h := range w.Packets.Headers(0) {
				p := *w.Packets.At(i)
				p.Summary, p.Req = "", nil
				if h != p {
					t.Fatalf("%s-%d: packet %d's header %+v, want %+v", proto, seed, i, h, p)
				}
			}
			for i, h := range w.Events.Headers(0) {
				e := w.Events.At(i)
				if h.Tick != e.Tick || h.Kind != e.Kind || h.Member != e.Member || h.Stop != e.Stop || h.Text != "" || h.Records.Len() != 0 {
					t.Fatalf("%s-%d: event %d's header %+v, want %+v without text and records", proto, seed, i, h, e)
				}
			}
			fmt.Fprintf(&got, "%s-%d %d %d %x\n", proto, seed, w.Packets.Len(), w.Events.Len(), sha256.Sum256([]byte(dump)))
			if dir := os.Getenv("KGREPL_TRACE_DUMP"); dir != "" { // to find a difference: dump before and after, then diff
				os.WriteFile(fmt.Sprintf("%s/%s-%d.txt", dir, proto, seed), []byte(dump), 0o644)
			}
		}
	}
	if *updateTrace {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("the materialized trace differs from the old engine's:\n%s", firstDiff(string(want), got.String()))
	}
}

// TestTraceSharedBetweenClones: the same random worlds with tiny chunks
// (Seq and text arena), each replaced every few ticks by a clone of itself
// while the original goes on a few ticks with other inputs, writing where
// the two still share: the clone's trace must come out as the digests say,
// and each original's must not change as the clones go on.
func TestTraceSharedBetweenClones(t *testing.T) {
	setSeqChunk(t, 4)
	t.Cleanup(trace.SetArenaChunkForTest(40))
	want, err := os.ReadFile("testdata/trace_digests.txt")
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		f := strings.Fields(line)
		digests[f[0]] = line
	}
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, proto := range protocols {
		for seed := 0; seed < seeds; seed++ {
			r := rand.New(rand.NewSource(int64(seed)))
			type left struct {
				w    *World
				dump string
			}
			var originals []left
			w := traceCaseWith(t, proto, seed, func(w *World) *World {
				if r.Intn(23) != 0 {
					return w
				}
				c := w.Clone()
				w.Join(fmt.Sprintf("X%d", r.Intn(3)), false, nil)
				w.Drop(DropRule{Type: Fetch, Response: true, Count: 1})
				for i := 0; i < 1+r.Intn(4); i++ {
					w.ProduceInput(w.Layout().Inputs()[0], 2)
					w.Step()
				}
				originals = append(originals, left{w, traceDump(w)})
				return c
			})
			for i, o := range originals {
				if d := traceDump(o.w); d != o.dump {
					t.Fatalf("%s-%d: original %d changed after it was cloned:\n%s", proto, seed, i, firstDiff(o.dump, d))
				}
			}
			name := fmt.Sprintf("%s-%d", proto, seed)
			got := fmt.Sprintf("%s %d %d %x", name, w.Packets.Len(), w.Events.Len(), sha256.Sum256([]byte(traceDump(w))))
			if got != digests[name] {
				t.Errorf("%s: the clones' trace differs from the digest:\n got %s\nwant %s", name, got, digests[name])
			}
		}
	}
}

// Used by the tests only: the engine encodes fetched records with
// encFetched and reads records whole.
