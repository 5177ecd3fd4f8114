package txncoord

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
)

// newCoordinator is a coordinator of the default world's shape, with an
// environment of its own.
func newCoordinator() *Coordinator {
	tick := 0
	layout := topo.New(topo.Default())
	return New(env.New(&tick, trace.New(layout, &tick, nil), layout))
}

// The maps made at their first write (PutMap) are copied as nil while
// empty (CopyLazy), and a write to one in a clone, made there, or in the
// original after a clone, never shows in the other coordinator; each entry
// is copied once, under its id and its producer id alike.
func TestCloneLazyMapsStayApart(t *testing.T) {
	w := newCoordinator()
	if w.entries != nil || w.byPID != nil {
		t.Fatal("a new coordinator made a lazy map")
	}
	c := w.Clone(w.env, nil)
	if c.entries != nil || c.byPID != nil {
		t.Fatal("a clone of a coordinator without transactions made a map")
	}
	e := c.Register("tx-1", 7, 0)
	if w.Entry("tx-1") != nil {
		t.Fatal("a clone's write shows in the original")
	}
	if c.Entry("tx-1") != e || c.byPID[7] != e {
		t.Fatal("the clone lost its writes")
	}
	d := c.Clone(c.env, nil)
	c.Register("tx-2", 8, 0)
	if d.Entry("tx-2") != nil || len(d.byPID) != 1 {
		t.Fatal("the original's write after a clone shows in the clone")
	}
	if de := d.Entry("tx-1"); de == nil || de == e || d.byPID[7] != de {
		t.Fatal("a clone of a coordinator with the maps did not copy them, each entry once under both keys")
	}
}
