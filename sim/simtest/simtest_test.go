package simtest_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
	"github.com/kgrepl/kgrepl/sim/simtest"
)

// traceDump renders every field of the trace that a view can read, as
// sim's TestTraceMaterializedAsBefore does: the packets as materialized
// (summaries, the request an answer answers) and the events (texts,
// record names, stop marks).
func traceDump(w *sim.World) string {
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

// TestWorldsMatchDigests: the worlds TraceCase makes are sim's traceCase
// worlds, seed for seed: every one of the 48 worlds whose traces
// sim/testdata/trace_digests.txt keeps (TestTraceMaterializedAsBefore)
// has the same packets and events, to the last byte of their texts.
func TestWorldsMatchDigests(t *testing.T) {
	want, err := os.ReadFile("../testdata/trace_digests.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(want)), "\n")
	if len(lines) != 48 {
		t.Fatalf("../testdata/trace_digests.txt has %d lines, want 48 (24 seeds of each protocol)", len(lines))
	}
	k := 0
	for _, proto := range simtest.Protocols {
		for seed := 0; seed < 24; seed++ {
			w := simtest.TraceCase(t, proto, seed)
			got := fmt.Sprintf("%s-%d %d %d %x", proto, seed, w.Packets.Len(), w.Events.Len(), sha256.Sum256([]byte(traceDump(w))))
			if got != lines[k] {
				t.Errorf("TraceCase(%s, %d):\n got %s\nwant %s", proto, seed, got, lines[k])
			}
			k++
		}
	}
}
