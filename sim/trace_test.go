package sim

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
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
		fmt.Fprintf(&b, "e%d t%d %s %s stop=%v %q %q\n", i, e.Tick, e.Kind, e.Member, e.Stop, e.Text, e.Records)
	}
	return b.String()
}

// traceCase runs one random world of the property tests' kind (both group
// protocols, every assignor and commit mode, transactions, idempotence,
// mixed protocols) with lost packets of every steady type, and returns it.
func traceCase(t *testing.T, proto GroupType, seed int) *World {
	r := rand.New(rand.NewSource(int64(seed)))
	topo := randomTopology(r)
	cfg := DefaultConfig()
	cfg.Client.Assignor = []string{"range", "roundrobin", "sticky", "cooperative-sticky"}[seed%4]
	cfg.Client.Commit = []CommitMode{CommitAuto, CommitAfter, CommitBefore}[(seed/4)%3]
	if seed%7 == 3 {
		cfg.Client.TransactionalID = "tx-" + ClientPlaceholder
	}
	if seed%5 == 1 {
		cfg.Client.Idempotence = true
	}
	cfg.RecordsPerPartition = r.Intn(12)
	cfg.Client.GroupProtocol = string(proto)
	if seed%4 == 2 {
		other := ConsumerGroup
		if proto == ConsumerGroup {
			other = ClassicGroup
		}
		cfg.Overrides = append(cfg.Overrides, Override{Client: "C2", Key: "group.protocol", Value: string(other)})
	}
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sched := randomSchedule(r, 300, 5, true)
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
			tps := w.InputPartitions()
			w.ProduceInput(tps[r.Intn(len(tps))], 1+r.Intn(3))
		}
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
