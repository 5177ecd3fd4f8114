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
