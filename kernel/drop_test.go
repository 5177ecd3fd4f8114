package kernel

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// drop's words come in any order, each kind at most once; what it accepts
// becomes exactly one rule, and what it refuses none (the messages are in
// testdata/errors.txt).
func TestDropArguments(t *testing.T) {
	for _, tc := range []struct {
		line string
		want sim.DropRule // zero: refused
	}{
		{"drop Produce", sim.DropRule{Type: sim.Produce, Count: 1}},
		{"drop produce response C1 3", sim.DropRule{Type: sim.Produce, Response: true, To: "C1", Count: 3}},
		{"drop Produce C1 response", sim.DropRule{Type: sim.Produce, Response: true, To: "C1", Count: 1}},
		{"drop Produce 2 C1", sim.DropRule{Type: sim.Produce, From: "C1", Count: 2}},
		{"drop RebalanceNotification response C1", sim.DropRule{Type: sim.RebalanceNotification, Response: true, To: "C1", Count: 1}},
		{"drop WriteTxnMarkers", sim.DropRule{Type: sim.WriteTxnMarkers, Count: 1}},
		{"drop WriteTxnMarkers response 2", sim.DropRule{Type: sim.WriteTxnMarkers, Response: true, Count: 2}},

		{line: "drop Produce request response"},
		{line: "drop Produce response response"},
		{line: "drop Produce request C1 response"},
		{line: "drop Produce C1 C1"},
		{line: "drop Produce C1 C2"},
		{line: "drop Produce 3 5"},
		{line: "drop Produce 3 3"},
		{line: "drop Produce request C1 3 4"},
		{line: "drop Produce request C1 3 request"},
		{line: "drop RebalanceNotification"},
		{line: "drop RebalanceNotification request"},
		{line: "drop RebalanceNotification C1"},
		{line: "drop WriteTxnMarkers request C1"},
		{line: "drop WriteTxnMarkers C1"},
		{line: "drop WriteTxnMarkers response C1"},
	} {
		s := NewSession()
		_, err := s.Exec(tc.line)
		got := s.World().PendingDrops()
		if tc.want == (sim.DropRule{}) {
			if err == nil || len(got) != 0 {
				t.Errorf("%s: accepted (%v, rules %+v), want refused", tc.line, err, got)
			} else if !strings.HasPrefix(err.Error(), "drop: ") {
				t.Errorf("%s: %v", tc.line, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, []sim.DropRule{tc.want}) {
			t.Errorf("%s: %v, rules %+v; want %+v", tc.line, err, got, tc.want)
		}
	}
}

// The forms drop accepts for the two types with a narrow route are ones
// that match: C1's rebalance notification, when C2 joins, is lost.
func TestDropRebalanceNotificationMatches(t *testing.T) {
	s := NewSession()
	execAll(t, s, "run until stable", "drop RebalanceNotification response C1", "join C2", "run until tick 60")
	if d := s.World().PendingDrops(); len(d) != 0 {
		t.Errorf("the drop never matched: %+v still pending", d)
	}
}

// And a transaction's markers, B1 to B1, are lost once committed.
func TestDropWriteTxnMarkersMatches(t *testing.T) {
	s := NewSession()
	execAll(t, s, "set producer transactional", "drop WriteTxnMarkers response", "run until tick 80")
	if d := s.World().PendingDrops(); len(d) != 0 {
		t.Errorf("the drop never matched: %+v still pending", d)
	}
}
