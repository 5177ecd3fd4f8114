package trace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
)

// EventBytes keeps the event Event keeps for the same text as a string:
// a short one and one longer than an arena chunk (a target assignment
// of 100,000 partitions), each the same event read back.
func TestEventBytesIsEvent(t *testing.T) {
	var tick int
	tr := newTestTrace(t, topo.Default(), &tick, nil)
	for _, text := range []string{"target assignment epoch 5 (uniform): C1-a={i0 i1}", strings.Repeat("C7-b=i0 ", 5000)} {
		n := tr.Events.Len()
		tr.Event(EvAssigned, "", text)
		tr.EventBytes(EvAssigned, "", []byte(text))
		a, b := tr.Events.At(n), tr.Events.At(n+1)
		if a.Text != text || fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
			t.Fatalf("Event %.80q..., EventBytes %.80q...; want both %.80q...", a.Text, b.Text, text)
		}
	}
}
