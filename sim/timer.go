package sim

import "github.com/kgrepl/kgrepl/sim/wire"

// The timers' kinds, by owner (wire.Timer.Kind): each node numbers its
// own. Key and Arg are the numbers each kind is set for.

// fire hands a timer due now to its owner.
func (w *World) fire(t wire.Timer) {
	switch t.Owner {
	case wire.OwnerGroupCoordinator:
		w.Group.Fire(t)
	case wire.OwnerTxnCoordinator:
		w.Txn.Fire(t)
	case wire.OwnerClient:
		if m := w.procOf(t.Client, t.Inc, t.Proc); m != nil && m.Alive {
			w.touch(m)
			m.Fire(t)
		}
	}
}
