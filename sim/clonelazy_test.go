package sim

import "testing"

// The maps made at their first write (putMap) are copied as nil while
// empty (cpLazy), and a write to one in a clone, made there, or in the
// original after a clone, never shows in the other world.
func TestCloneLazyMapsStayApart(t *testing.T) {
	w, _ := New(DefaultTopology(), DefaultConfig())
	if w.Group.static != nil || w.Group.fenced != nil || w.Txn.entries != nil || w.Txn.byPID != nil {
		t.Fatal("a new world made a lazy map")
	}
	c := w.Clone()
	if c.Group.static != nil || c.Group.fenced != nil || c.Txn.entries != nil || c.Txn.byPID != nil {
		t.Fatal("a clone of a world without static members or transactions made a map")
	}
	putMap(&c.Group.static, "i1", "m1")
	putMap(&c.Group.fenced, "m0", true)
	e := c.Txn.register("tx-1", 7, 0)
	if w.Group.static != nil || w.Group.fenced != nil || w.Txn.Entry("tx-1") != nil {
		t.Fatal("a clone's write shows in the original")
	}
	if c.Txn.Entry("tx-1") != e || c.Txn.byPID[7] != e || c.Group.static["i1"] != "m1" || !c.Group.fenced["m0"] {
		t.Fatal("the clone lost its writes")
	}
	d := c.Clone()
	putMap(&c.Group.static, "i2", "m2")
	c.Txn.register("tx-2", 8, 0)
	if d.Group.static["i2"] != "" || d.Txn.Entry("tx-2") != nil || len(d.Txn.byPID) != 1 {
		t.Fatal("the original's write after a clone shows in the clone")
	}
	if de := d.Txn.Entry("tx-1"); de == nil || de == e || d.Txn.byPID[7] != de || d.Group.static["i1"] != "m1" || !d.Group.fenced["m0"] {
		t.Fatal("a clone of a world with the maps did not copy them, each entry once under both keys")
	}
}
