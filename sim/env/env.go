// Package env is what a node of the simulation is given to act: the clock,
// the wire (send a packet, the free lists of the hot path's packets), its
// timers, the trace, and the world's partitions. A node (the client, the
// group coordinator, the transaction coordinator, the partition leader)
// never sees the World: the World owns the nodes and one Env, delivers the
// packets the Env sends, fires its timers by owner and lets its processes
// act.
package env

import (
	"strconv"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Env is one world's environment, shared by its nodes.
type Env struct {
	now    *int // the World's clock
	trace  *trace.Trace
	layout *topo.Layout

	inflight []*wire.Packet // sent last tick, delivered this tick
	sending  []*wire.Packet // sent this tick
	drops    []DropRule
	// keep, when a test sets it, keeps every packet sent by ID, body
	// included: the trace keeps no bodies.
	keep map[int]*wire.Packet
	// freeLists hands out the hot path's packets and bodies and takes them
	// back once delivered (freelist.go): Packet, NewFetchRequest and the
	// rest are its methods, called on the Env. Never shared with a clone;
	// nil in a finished copy whose lists went to the next (Clone), which
	// then allocates afresh.
	*freeLists
	timers Timers
	// wake: the processes (by number) that act this tick; busy: those with
	// work for the next tick.
	wake, busy procSet
	// memberSeq counts the member ids issued per client id (C2-1, C2-2).
	memberSeq map[string]int
	// tpBuf is a scratch list of partitions the nodes build their lists
	// in (PartitionScratch); never shared with a clone, never kept.
	tpBuf []wire.TopicPartition
	// slotBuf is a scratch list of input partitions' numbers (SlotScratch);
	// never shared with a clone, never kept.
	slotBuf []int32
	// runBufs are the arrays a member's open linger batches gather their
	// runs in during its turn, one per output partition (RunScratch),
	// held by process runHolder minus one (0: by none); never shared with
	// a clone, never kept past the turn.
	runBufs   [][]wire.SrcRun
	runHolder int
	// hundreds is the partitioner's hash of the hundred of each input
	// partition's last run of invoices (Hundred), by the partition's
	// number: a cache (a topo.Hundred holds what it was hashed from),
	// never shared with a clone, nil until the first run.
	hundreds []topo.Hundred
	// perRecord, when a test sets it (SetPerRecordForTest), makes the
	// broker answer a Fetch one entry per record and members process one
	// record at a time: the engine as it was before runs
	// (wire.Record.Count), which the property test holds the runs against.
	// Copied by Clone; the engine never sets it.
	perRecord bool
}

// New is the environment of a world whose clock is *now.
func New(now *int, tr *trace.Trace, layout *topo.Layout) *Env {
	return &Env{now: now, trace: tr, layout: layout, freeLists: newFreeLists(), memberSeq: map[string]int{}}
}

// Now is the current tick.
func (e *Env) Now() int { return *e.now }

// Trace is where the nodes state what happened.
func (e *Env) Trace() *trace.Trace { return e.trace }

// Layout is the world's partitions, numbered, and its record names.
func (e *Env) Layout() *topo.Layout { return e.layout }

// Send puts a packet on the wire: it is delivered next tick unless a drop
// rule loses it.
func (e *Env) Send(p *wire.Packet) {
	p.ID = e.trace.Packets.Len()
	p.Sent = *e.now
	p.Delivered = -1
	for i := range e.drops {
		if e.drops[i].matches(p) {
			p.Lost = true
			if e.drops[i].Count--; e.drops[i].Count == 0 {
				// Used up: every packet sent is checked against each rule
				// kept, so a used rule goes (a clone has its own copy).
				e.drops = append(e.drops[:i], e.drops[i+1:]...)
			}
			break
		}
	}
	e.trace.Record(p)
	if e.keep != nil {
		e.keep[p.ID] = p
	}
	if !p.Lost {
		e.sending = append(e.sending, p)
	}
}

// Sending is the packets sent this tick (or by a command since), to be
// delivered next tick: the Env's own list, to read, never to change.
func (e *Env) Sending() []*wire.Packet { return e.sending }

// Deliverable starts a tick: the packets sent last tick, to be delivered
// now (the Env's own list until Delivered).
func (e *Env) Deliverable() []*wire.Packet {
	// The two lists trade their arrays every tick (the one delivered last
	// tick is empty): sending allocates nothing in steady traffic.
	e.inflight, e.sending = e.sending, e.inflight[:0]
	return e.inflight
}

// Delivered ends the tick's deliveries: the delivered packets are garbage
// unless someone holds them.
func (e *Env) Delivered() {
	clear(e.inflight)
	e.inflight = e.inflight[:0]
}

// Wire is the packets sent this tick and those being delivered (between
// ticks, none), the Env's own lists: for a World's copy to remap.
func (e *Env) Wire() (sending, inflight []*wire.Packet) { return e.sending, e.inflight }

// SetWire gives a copy its packets on the wire (see Wire).
func (e *Env) SetWire(sending, inflight []*wire.Packet) { e.sending, e.inflight = sending, inflight }

// Drop adds a rule that loses the next matching packet(s).
func (e *Env) Drop(r DropRule) {
	if r.Count <= 0 {
		r.Count = 1
	}
	e.drops = append(e.drops, r)
}

// PendingDrops lists the drop rules not yet used up.
func (e *Env) PendingDrops() []DropRule {
	var out []DropRule
	for _, r := range e.drops {
		if r.Count > 0 {
			out = append(out, r)
		}
	}
	return out
}

// SetPerRecordForTest makes the world's fetches and processing work one
// record at a time, as before runs (tests only: TestRunsAgreeWithPerRecord).
func (e *Env) SetPerRecordForTest(on bool) { e.perRecord = on }

// PerRecord reports whether SetPerRecordForTest asked for one record at a
// time.
func (e *Env) PerRecord() bool { return e.perRecord }

// KeepForTest makes the Env keep every packet it sends, bodies included,
// by ID (tests only: a kept packet is never recycled).
func (e *Env) KeepForTest() map[int]*wire.Packet {
	if e.keep == nil {
		e.keep = map[int]*wire.Packet{}
	}
	return e.keep
}

// Reserve is the due tick and sequence number a timer set now for at
// would get (Timers.Reserve).
func (e *Env) Reserve(at int) (int, int) { return e.timers.Reserve(*e.now, at) }

// After sets a timer (no earlier than the next tick).
func (e *Env) After(t wire.Timer) { e.timers.After(*e.now, t) }

// Push queues a timer whose due tick and sequence number were reserved.
func (e *Env) Push(t wire.Timer) { e.timers.Push(t) }

// TimerDue reports whether the first timer is due by now; PopTimer then
// takes it. Two calls rather than one returning (Timer, bool): this one
// inlines into the World's loop, and a timer (about 100 bytes) is copied
// once, not through a pair of results.
func (e *Env) TimerDue() bool { return e.timers.Len() > 0 && e.timers.Next() <= *e.now }

// PopTimer takes the first timer off the queue (TimerDue reported it due).
func (e *Env) PopTimer() wire.Timer { return e.timers.Pop() }

// Timers is the timer queue, for the World's views and clones.
func (e *Env) Timers() *Timers { return &e.timers }

// Wake lets process proc act again this tick.
func (e *Env) Wake(proc int) { e.wake.add(proc) }

// WakeNext lets process proc act next tick.
func (e *Env) WakeNext(proc int) { e.busy.add(proc) }

// Unwake takes process proc off this tick's list (it stopped).
func (e *Env) Unwake(proc int) { e.wake.remove(proc) }

// BeginTick moves the processes with work for this tick to its list.
func (e *Env) BeginTick() {
	e.wake.addAll(&e.busy)
	e.busy.clear() // in place: a clone has its own sets
}

// AppendWoken appends to out the processes to act now, procs[i] for each
// process number i woken, in process-number order, and empties the list:
// new wake-ups wait for the next pass. (A function: a method takes no type
// parameters.)
func AppendWoken[P any](e *Env, out, procs []P) []P {
	if e.wake.len() == 0 {
		return out
	}
	out = appendProcs(&e.wake, out, procs)
	e.wake.clear()
	return out
}

// Woken reports whether a process is to act.
func (e *Env) Woken() bool { return e.wake.len() > 0 }

// Clone is a copy of e for a world whose clock is *now and trace tr, but
// for its packets on the wire (SetWire gives it those, remapped): its drop
// rules, its timers (in spare's arrays when they have the room; spare is a
// finished copy of this Env, or nil) and its process sets. Whatever is
// alive now may be shared from here on, so neither world recycles it: e's
// free lists are renewed, and the copy starts lists of its own or takes
// spare's, renewed (what is in them is referenced by nothing else).
func (e *Env) Clone(now *int, tr *trace.Trace, spare *Env) *Env {
	n := &Env{now: now, trace: tr, layout: e.layout, drops: store.Copy(e.drops), perRecord: e.perRecord}
	e.freeLists.renew()
	var spareTimers Timers
	if spare != nil {
		spareTimers = spare.timers
		n.freeLists = spare.freeLists
		spare.freeLists = nil // the finished copy recycles nothing from here on
	}
	if n.freeLists != nil {
		n.freeLists.renew()
	} else {
		n.freeLists = newFreeLists()
	}
	// The timer heap with room to grow (Timers.Clone), in the finished
	// copy's arrays if they have it.
	n.timers = e.timers.CloneOver(spareTimers)
	n.wake, n.busy = e.wake.clone(), e.busy.clone()
	var spareSeq map[string]int
	if spare != nil {
		spareSeq = spare.memberSeq
	}
	n.memberSeq = store.CopyMapInto(spareSeq, e.memberSeq)
	return n
}

// IssueMemberID gives a client's process its next member id: C2-1, then
// C2-2. kgrepl keeps member ids readable: Kafka's coordinator names a
// classic member clientId-UUID, and a consumer-protocol client picks a
// random Uuid of its own (KIP-1082); one counter per client id keeps
// kgrepl's unique whoever asks.
func (e *Env) IssueMemberID(client string) string {
	e.memberSeq[client]++
	return client + "-" + strconv.Itoa(e.memberSeq[client])
}

// TimersForTest lists the queued timers, in heap order, and the sequence
// number the next one would get (tests only).
func (e *Env) TimersForTest() ([]wire.Timer, int) {
	var out []wire.Timer
	for _, k := range e.timers.heap {
		out = append(out, e.timers.slots[k.slot])
	}
	return out, e.timers.seq + 1
}

// Reply answers a request from the broker, and returns the answer.
func (e *Env) Reply(req *wire.Packet, code wire.ErrorCode, summary string, body any) *wire.Packet {
	p := e.Packet()
	p.From, p.To, p.ToInc, p.Type, p.Response, p.Proc = wire.Broker, req.From, req.FromInc, req.Type, true, req.Proc
	p.Error, p.Summary, p.Body, p.Req = code, summary, body, req
	e.Send(p)
	return p
}

// ReplyText answers a request with a summary the trace encoded, and
// returns the answer.
func (e *Env) ReplyText(req *wire.Packet, code wire.ErrorCode, text wire.TextRef, body any) *wire.Packet {
	p := e.Packet()
	p.From, p.To, p.ToInc, p.Type, p.Response, p.Proc = wire.Broker, req.From, req.FromInc, req.Type, true, req.Proc
	p.Error, p.Text, p.Body, p.Req = code, text, body, req
	e.Send(p)
	return p
}

// HoldRunScratch gives process proc (its number) the world's arrays of
// runs for its open linger batches (RunScratch), if no other process
// holds them: false when one does (its batches are still open; then proc
// gathers in arrays of its own). One array per output partition, reused
// by every member's turn in the tick: they stay in the processor's cache,
// where each producer's own arrays, touched once a tick, did not (T1: a
// cache miss on about every run appended, 5% of the CPU).
func (e *Env) HoldRunScratch(proc int) bool {
	if e.runHolder != 0 && e.runHolder != proc+1 {
		return false
	}
	e.runHolder = proc + 1
	if n := len(e.layout.Outputs()); len(e.runBufs) != n {
		e.runBufs = make([][]wire.SrcRun, n)
	}
	return true
}

// Hundred is the entry of the world's cache of partitioner hashes
// (topo.Partitioner.SlotsFrom) for the input partition numbered tpi
// minus one, or nil for a number out of the layout's inputs (0: not
// known). One entry a partition, for the whole world: a partition's
// records are produced by its one owner at a time, and the world's 1,000
// entries of T1 (16 KB), touched tick after tick, stay in the
// processor's cache, where each producer's own 64 (1 KB each, 100 KB for
// T1's members), touched once a tick, missed it on about every run (a
// third of SlotsFrom's time).
func (e *Env) Hundred(tpi int32) *topo.Hundred {
	n := len(e.layout.Inputs())
	if tpi < 1 || int(tpi) > n || n > maxHundreds {
		return nil
	}
	if len(e.hundreds) != n {
		e.hundreds = make([]topo.Hundred, n)
	}
	return &e.hundreds[tpi-1]
}

// maxHundreds bounds the world's hundreds (Hundred): a world of more
// input partitions (T2's 100,000: 1.6 MB kept) leaves them to its
// producers.
const maxHundreds = 1 << 14

// RunScratch is output partition out's array of runs (its index in the
// layout's outputs), empty, for the process holding them
// (HoldRunScratch); ReturnRunScratch gives it back, perhaps grown.
func (e *Env) RunScratch(out int32) []wire.SrcRun { return e.runBufs[out][:0] }

// ReturnRunScratch keeps runs' array as output partition out's.
func (e *Env) ReturnRunScratch(out int32, runs []wire.SrcRun) { e.runBufs[out] = runs[:0] }

// ReleaseRunScratch lets go of the arrays of runs process proc held.
func (e *Env) ReleaseRunScratch(proc int) {
	if e.runHolder == proc+1 {
		e.runHolder = 0
	}
}

// SlotScratch is a list of input partitions' numbers to gather into and
// then use at once: one per world, reused from call to call (a node keeps
// nothing in it).
func (e *Env) SlotScratch() *[]int32 { return &e.slotBuf }

// PartitionScratch is a list of partitions to gather into and then copy:
// one per world, reused from call to call (a node keeps nothing in it).
func (e *Env) PartitionScratch() *[]wire.TopicPartition { return &e.tpBuf }
