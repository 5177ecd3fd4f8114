package trace

import (
	"math/rand"
	"testing"
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// The parties' cache of recent lookups gives the numbers the map alone
// gives: first-seen order, ("", 0) 0 and (B1, 0) 1, over random lookups
// with clones taken along the way.
func TestPropertyPartiesCacheAsMap(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		var ps parties
		ref := map[party]uint32{{"", 0}: 0, {wire.Broker, 0}: 1}
		next := uint32(2)
		names := []string{"", wire.Broker, "C1", "C2", "C3", "C10", "P1", "C1-1"}
		for i := 0; i < 500; i++ {
			k := party{names[r.Intn(len(names))], r.Intn(4)}
			want, ok := ref[k]
			if !ok {
				want = next
				ref[k] = next
				next++
			}
			if got := ps.id(k.name, k.inc); got != want {
				t.Fatalf("seed %d, lookup %d: id(%q, %d) = %d, want %d", seed, i, k.name, k.inc, got, want)
			}
			if got := ps.at(want); want > 1 && got != k {
				t.Fatalf("seed %d: at(%d) = %v, want %v", seed, want, got, k)
			}
			if r.Intn(50) == 0 {
				c := ps.clone()
				ps = c
			}
		}
	}
}

// The records the trace keeps for every packet and event: their sizes are
// what a world's memory grows by, tick after tick.
func TestRecordSizes(t *testing.T) {
	if got := unsafe.Sizeof(packetRec{}); got != 6 {
		t.Errorf("packetRec is %d bytes, want 6", got)
	}
	if got := unsafe.Sizeof(eventRec{}); got != 6 {
		t.Errorf("eventRec is %d bytes, want 6", got)
	}
}
