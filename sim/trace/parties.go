package trace

import (
	"unsafe"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// parties names the ends of packets and the members of events by a small
// number: a process (client id and incarnation; 0 for a client id alone,
// as events and texts name it). ("", 0) is 0, (B1, 0) is 1, the others
// follow in first-seen order.
type parties struct {
	names []party
	index map[party]uint32
	// clients: the parties of client ids alone (inc 0), as events and texts
	// name members: a tick names the same two or three over and over, by
	// the very same strings (Member.Client, a member id's prefix).
	clients store.StrCache[string, uint32]
	// members: the same again, by the string's place, 1024 sets of two
	// entries (the set's last two names): T1's 100 members each name
	// themselves in every event of their turn and the broker names them
	// in every produced event, which clients' 16 entries mostly missed
	// (then a map lookup a time), and one entry a place, 256 of them, one
	// time in 50 (two names of a place, in turn). 128 sets still missed
	// one time in ten in T1 (1.2 million map lookups in 2 minutes: the
	// member ids' strings as well as the client ids', and new ones after
	// each restart, about 200 names live in 256 entries); 1024 miss a few
	// hundred times. nil until the trace names more than manyParties
	// parties (the page's worlds and the explorer's never do), and in a
	// copy (clone), which makes its own when it needs one: 48 KB that
	// Clone would copy every time.
	members *[memberSets][2]memberParty
	// last is the client id id named last, by the string's place: a
	// member's turn names it in each of its events (T1: ten processed
	// runs a tick), and the broker names it in each produced event of its
	// batches, which arrive together; members' set, 48 KB, was a cache
	// miss an event. A copy (clone) starts without.
	last memberParty
	// recent: the same for processes (inc > 0), which packets name
	// (byProc keeps most of those by process).
	recent store.Recent[party, uint32]
	// byProc is the party of each process (by its number, Packet.Proc
	// minus one) once a packet named it: a packet's member end is found
	// without a lookup; each entry is checked before it is trusted.
	byProc []uint32
}

// memberParty is a cached client id's party: the very string, by its
// place (an entry holds its key, so the place is not reused while it does).
type memberParty struct {
	name string
	id   uint32
}

// memberSets is how many sets parties.members has (1<<10).
const memberSets = 1024

// manyParties is how many parties a trace names before it keeps
// parties.members: past clients' 16 entries, and then some.
const manyParties = 32

// memberSet is the set of members for a client id at p, n bytes long:
// Fibonacci hashing of the place, its length mixed in.
func memberSet(p *byte, n int) int {
	return int((uint64(uintptr(unsafe.Pointer(p))) + uint64(n)) * 0x9E3779B97F4A7C15 >> 54)
}

type party struct {
	name string
	inc  int
}

func (ps *parties) id(name string, inc int) uint32 {
	if inc == 0 {
		if name == "" {
			return 0
		}
		if l := &ps.last; len(l.name) == len(name) && unsafe.StringData(l.name) == unsafe.StringData(name) {
			return l.id
		}
		i := ps.clientID(name)
		ps.last = memberParty{name, i}
		return i
	}
	k := party{name, inc}
	if i, ok := ps.recent.Get(k); ok {
		return i
	}
	i := ps.lookup(k)
	ps.recent.Put(k, i)
	return i
}

// clientID is id(name, 0) for a name other than "" and last's.
func (ps *parties) clientID(name string) uint32 {
	var set *[2]memberParty
	if ps.members != nil {
		set = &ps.members[memberSet(unsafe.StringData(name), len(name))]
		if e := &set[0]; len(e.name) == len(name) && unsafe.StringData(e.name) == unsafe.StringData(name) {
			return e.id
		}
		if e := &set[1]; len(e.name) == len(name) && unsafe.StringData(e.name) == unsafe.StringData(name) {
			return e.id
		}
	} else if len(ps.names) > manyParties {
		ps.members = new([memberSets][2]memberParty)
		set = &ps.members[memberSet(unsafe.StringData(name), len(name))]
	}
	i, ok := ps.clients.Get(name)
	if !ok {
		if name == wire.Broker {
			return 1
		}
		i = ps.lookup(party{name, 0})
		ps.clients.Put(name, i)
	}
	if set != nil {
		set[1], set[0] = set[0], memberParty{name, i}
	}
	return i
}

// lookup is k's number, given it if new.
func (ps *parties) lookup(k party) uint32 {
	if i, ok := ps.index[k]; ok {
		return i
	}
	if ps.index == nil {
		ps.index = map[party]uint32{}
	}
	if len(ps.names) < 2 {
		ps.names = append(ps.names[:0:0], party{}, party{name: wire.Broker})
	}
	i := uint32(len(ps.names))
	ps.names = append(ps.names, k)
	ps.index[k] = i
	return i
}

// ofProcess is id(name, inc) for a packet's member end, kept by process
// when the packet knows it (proc: its number plus one).
func (ps *parties) ofProcess(name string, inc int, proc int32) uint32 {
	i := int(proc) - 1
	if i >= 0 && i < len(ps.byProc) {
		if id := ps.byProc[i]; id != 0 {
			if p := ps.at(id); p.inc == inc && store.SameStr(p.name, name) {
				return id
			}
		}
	}
	id := ps.id(name, inc)
	if i >= 0 && i < maxProcCache {
		if i >= len(ps.byProc) {
			ps.byProc = append(ps.byProc, make([]uint32, i+1-len(ps.byProc))...)
		}
		ps.byProc[i] = id
	}
	return id
}

// maxProcCache bounds byProc: processes past it are looked up by name.
const maxProcCache = 1 << 20

func (ps *parties) at(i uint32) party {
	switch {
	case i == 1:
		return party{name: wire.Broker}
	case int(i) < len(ps.names):
		return ps.names[i]
	}
	return party{}
}

// clone shares the names (append-only, cut to their length) and copies the
// index and byProc: about as many entries as processes, which Clone copies
// anyway.
func (ps *parties) clone() parties {
	return parties{names: ps.names[:len(ps.names):len(ps.names)], index: store.CopyMap(ps.index), clients: ps.clients, recent: ps.recent,
		byProc: store.Copy(ps.byProc)}
}
