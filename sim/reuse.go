package sim

import (
	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/coord"
)

// Reuser makes copies of worlds, each in the storage of the copy it made
// before, once that one is finished: the explorer's worker runs branch
// after branch, each a copy of a world at one tick, stepped and read until
// its outcome is known and never again; a plain Clone made each anew (its
// World, its arrays of logs, members and packets on the wire, its maps, its
// free lists: about a third of the bytes a branch allocates). The copy is
// exactly Clone's: every field is written, from the world cloned or anew.
// The zero Reuser is ready; one is for one goroutine.
type Reuser struct {
	last  *World // the copy made last; finished when the next is asked for
	wire  []Packet
	logs  broker.Bufs // the logs and their producer entries
	procs client.Bufs // the processes and their slices
	gms   coord.Bufs  // the group's member records
}

// Clone returns a copy of w, as w.Clone does, made in the storage of the
// copy this Reuser returned before. That copy must be finished: it must
// never be stepped or read again, nor anything taken from it (its logs,
// members, packets, group members) that is not a string or a copy. A copy
// of that copy made before it is finished (World.Clone, a checkpoint) is
// safe: it may share the copy's storage, so it detaches the Reuser, whose
// next copy is then made anew (TestCopyOfReuserCopyKeepsItsStorage).
func (r *Reuser) Clone(w *World) *World { return w.clone(r) }
