package sim

// ReuseFreeLists gives w the free lists of dead (freelist.go): the
// delivered Produce and Fetch round trips' packets and bodies that dead
// took back, for w to send again rather than allocate. dead must never be
// stepped or read again: it loses its lists and recycles nothing from here
// on. It is for the explorer, whose workers run branch after branch, each
// a fresh copy of one world that would otherwise allocate its round trips
// anew while its own lists fill.
//
// What is in the lists is referenced by nothing else: recycle takes back
// only what no world reads again, and never what was alive when a world
// was cloned. The lists' epoch is renewed, so nothing dead still holds
// goes back to them. Which objects a world reuses never shows in what it
// does: each is reset when taken.
func (w *World) ReuseFreeLists(dead *World) {
	if dead == nil || w == dead || dead.free == nil || w.free == nil {
		return
	}
	f := dead.free
	dead.free = nil
	f.renew()
	w.free = f
}

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
	logs  []PartitionLog
	prods []producerBufs // the logs' producer entries, by the logs' index
	procs []Member
	gms   []GroupMember
	bufs  memberBufs
}

// Clone returns a copy of w, as w.Clone does, made in the storage of the
// copy this Reuser returned before. That copy must be finished: it must
// never be stepped or read again, nor anything taken from it (its logs,
// members, packets, group members) that is not a string or a copy.
func (r *Reuser) Clone(w *World) *World { return w.clone(r) }
