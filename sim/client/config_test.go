package client

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// RebalanceProtocol answers for one assignor without making the list
// what it answers from the list: one assignor, several, none.
func TestRebalanceProtocolAsList(t *testing.T) {
	for _, a := range []string{"range", "roundrobin", "sticky", "cooperative-sticky", "", "cooperative-sticky,range", "range,cooperative-sticky", "cooperative-sticky,cooperative-sticky", "nonesuch"} {
		c := ClientConfig{Assignor: a}
		if got, want := c.RebalanceProtocol(), assign.ListProtocol(c.Assignors()); got != want {
			t.Errorf("partition.assignment.strategy %q: RebalanceProtocol %v, its list's %v", a, got, want)
		}
	}
	if (ClientConfig{Assignor: "cooperative-sticky"}).RebalanceProtocol() == (ClientConfig{Assignor: "range"}).RebalanceProtocol() {
		t.Error("cooperative-sticky and range answer the same protocol")
	}
}
