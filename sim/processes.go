package sim

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// processTable is every client process the world started: in start order
// (a process's number is its index), each client's newest, the client ids
// in Kafka's string order, and the (client, incarnation) order processes
// act in. The coordinator asks it what a process does (coord.Processes,
// heartbeat.go) and the broker whether a process still waits or has lost
// its place (broker.Senders).
type processTable struct {
	procs []*Member // every process ever started, in start order
	// orderStale: a client id new to the world started since the
	// processes' places in order were set (actOrder): it moves the places
	// of every later id's processes.
	orderStale bool
	// order is each process's place in (client, incarnation) order, by
	// process number: a restart's new process takes its place as it
	// starts (add), a new client id has actOrder set them all anew.
	order []int32
	// byOrder is actOrder's scratch, one entry a process, every entry
	// nil between calls; never shared with a clone.
	byOrder []*Member
	current map[string]*Member // client id -> its newest process
	clients []string           // client ids in Kafka's string order
}

// add records m as its client's newest process, numbered len(procs).
func (t *processTable) add(m *Member) {
	id := m.Client
	t.procs = append(t.procs, m)
	t.order = append(t.order, 0)
	if prev := t.current[id]; prev == nil {
		// Insert in place: sorting the whole list for every new id made
		// `new --members 100000` quadratic in sorts (21 s).
		i := sort.SearchStrings(t.clients, id)
		t.clients = append(t.clients, "")
		copy(t.clients[i+1:], t.clients[i:])
		t.clients[i] = id
		t.orderStale = true
	} else if !t.orderStale {
		// A restart: incarnations count up per client (newProcess), so
		// the new process comes right after its client's newest, and
		// every place after that moves up one.
		at := t.order[prev.Proc()] + 1
		last := len(t.order) - 1
		for i, o := range t.order[:last] {
			if o >= at {
				t.order[i] = o + 1
			}
		}
		t.order[last] = at
	}
	t.current[id] = m
}

// Clients lists every client id that ever ran, in Kafka's string order.
func (t *processTable) Clients() []string { return t.clients }

// Member returns a client's newest process, or nil.
func (t *processTable) Member(client string) *Member { return t.current[client] }

// Processes lists every process ever started, in start order.
func (t *processTable) Processes() []*Member { return t.procs }

func (t *processTable) process(client string, inc int) *Member {
	// Usually the client's current process: incarnations count up per
	// client (newProcess), so it is the only one with that number.
	if m := t.current[client]; m != nil && m.Inc == inc {
		return m
	}
	for i := len(t.procs) - 1; i >= 0; i-- {
		if t.procs[i].Client == client && t.procs[i].Inc == inc {
			return t.procs[i]
		}
	}
	return nil
}

// procOf is process(client, inc), found by its process number proc (plus
// one; 0 when not known) when that is the one: a packet knows the process
// at its member end.
func (t *processTable) procOf(client string, inc int, proc int32) *Member {
	if m := t.procHint(client, inc, proc); m != nil {
		return m
	}
	return t.process(client, inc)
}

// procHint is the process numbered proc (its index plus one) if that is
// client's incarnation inc, else nil: a number carried is checked before
// it is trusted.
func (t *processTable) procHint(client string, inc int, proc int32) *Member {
	if i := int(proc) - 1; i >= 0 && i < len(t.procs) {
		if m := t.procs[i]; m.Inc == inc && store.SameStr(m.Client, client) {
			return m
		}
	}
	return nil
}

// actOrder sorts ms in (client, incarnation) order, by each process's
// place in that order among all processes (order): set anew the first
// time it is needed after a new client id started (placeAll); a
// restart's process took its place as it started (add); a tick's list is
// then usually in order already.
func (t *processTable) actOrder(ms []*Member) {
	if t.orderStale {
		t.placeAll()
	}
	for i := 1; i < len(ms); i++ {
		if t.order[ms[i-1].Proc()] > t.order[ms[i].Proc()] {
			t.sortByOrder(ms)
			return
		}
	}
}

// placeAll sets every process's place in order: sorted by its client's
// place in clients and its incarnation, integers, where a sort of the
// processes comparing their client ids at every restart was a fifth of a
// long REPL session's CPU (its back replays start processes again and
// again).
func (t *processTable) placeAll() {
	type keyed struct {
		key  int64 // the client's place in clients, then the incarnation
		proc int32
	}
	all := make([]keyed, len(t.procs))
	for i, m := range t.procs {
		all[i] = keyed{int64(sort.SearchStrings(t.clients, m.Client))<<32 | int64(uint32(m.Inc)), int32(i)}
	}
	slices.SortFunc(all, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	for place, k := range all {
		t.order[k.proc] = int32(place)
	}
	t.orderStale = false
}

// sortByOrder sorts ms, distinct processes, by their places in order.
// The places are distinct, every process's one of 0..len(procs)-1, so
// unless ms are few among many processes, each goes straight to its place
// in byOrder and ms is gathered from there in order: one read of each
// process's number, where a sort read two for each of its n log n
// comparisons, each a member's struct touched once a tick (a cache miss):
// after T1's deploy, every restarted member numbered after the rest, the
// tick's list was sorted every pass, 2% of T1's time.
func (t *processTable) sortByOrder(ms []*Member) {
	if len(ms)*8 < len(t.order) {
		slices.SortFunc(ms, func(a, b *Member) int { return int(t.order[a.Proc()]) - int(t.order[b.Proc()]) })
		return
	}
	if len(t.byOrder) != len(t.order) {
		t.byOrder = make([]*Member, len(t.order))
	}
	for _, m := range ms {
		t.byOrder[t.order[m.Proc()]] = m
	}
	j := 0
	for i, m := range t.byOrder {
		if m != nil {
			ms[j], t.byOrder[i] = m, nil
			j++
		}
	}
}

// running names the clients with a running process, for errors.
func (t *processTable) running() string {
	var out []string
	for _, c := range t.clients {
		if m := t.current[c]; m != nil && m.Alive {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "none running"
	}
	return strings.Join(out, " ")
}

// closing lists the clients whose process is shutting down, in Kafka's
// string order.
func (t *processTable) closing() []string {
	var out []string
	for _, c := range t.clients {
		if m := t.current[c]; m.Closing() && !m.Zombie {
			out = append(out, c)
		}
	}
	return out
}

// live is client's running process, or an error for the command verb.
func (t *processTable) live(verb, client string) (*Member, error) {
	m := t.current[client]
	if m == nil {
		return nil, fmt.Errorf("%s %s: no member %s (members: %s)", verb, client, client, t.running())
	}
	if !m.Alive {
		return nil, fmt.Errorf("%s %s: %s is not running (members: %s)", verb, client, client, t.running())
	}
	return m, nil
}

// HasLiveMember reports whether some process runs and is not a zombie.
func (t *processTable) HasLiveMember() bool {
	for _, m := range t.procs {
		if !m.Superseded() && m.Alive && !m.Zombie {
			return true
		}
	}
	return false
}

// LiveMembers lists the client ids with a running process that is not a zombie.
func (t *processTable) LiveMembers() []string {
	var out []string
	for _, c := range t.clients {
		if m := t.current[c]; m != nil && m.Alive && !m.Zombie {
			out = append(out, c)
		}
	}
	return out
}

// FetchWaiting reports whether client's process inc still waits for its
// fetch fetchID (broker.Senders: a fetch held for a process gone, or
// past it, gets no answer).
func (t *processTable) FetchWaiting(client string, inc int, fetchID int) bool {
	m := t.process(client, inc)
	return m != nil && m.FetchWaiting(fetchID)
}

// HeldFetchLost tells client's process inc that the answer to its held
// fetch fetchID was lost (broker.Senders).
func (t *processTable) HeldFetchLost(client string, inc int, fetchID int, timeoutAt int) {
	if m := t.process(client, inc); m != nil && m.Alive {
		m.HeldFetchLost(fetchID, timeoutAt)
	}
}

// Displaced reports whether a producer's process has lost its place: a
// zombie, out of the group, or replaced by a newer process of its client
// (broker.Senders: its writes are counted as a zombie's).
func (t *processTable) Displaced(client string, inc int, proc int32) bool {
	m := t.procOf(client, inc, proc)
	return m != nil && m.Displaced()
}

// HoldsProduce reports whether the producer that sent Produce request q
// still holds its body r (its unacked requests), so that it is not
// recycled (env.ProduceHolder).
func (t *processTable) HoldsProduce(q *Packet, r *wire.ProduceRequest) bool {
	m := t.procOf(q.From, q.FromInc, q.Proc)
	return m == nil || m.HoldsProduce(r)
}

// clone copies the table for a world's copy whose processes are procs
// (each process's copy at its number), its current map made in current
// (a finished copy's, reused; nil: a new one).
func (t *processTable) clone(procs []*Member, current map[string]*Member) processTable {
	n := *t
	n.procs, n.byOrder = procs, nil
	n.clients = store.Copy(t.clients)
	n.order = store.Copy(t.order)
	if current == nil {
		current = make(map[string]*Member, len(t.current))
	}
	clear(current)
	for c, m := range t.current {
		current[c] = procs[m.Proc()] // a process's copy has its process number
	}
	n.current = current
	return n
}
