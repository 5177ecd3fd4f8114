package sim

import (
	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/txncoord"
)

// Clone returns an independent copy of the world: stepping or changing one
// never shows in the other, and both go on exactly as the original would.
// It is what snapshots are made of (the explorer forks thousands of
// branches from one prefix). Request and response bodies are shared: they
// are never changed once sent. What grows with the world's age (trace,
// events and their texts, log cells, pause series) is shared chunk by chunk
// (see Seq and textArena), so a clone costs the live state, not the history.
func (w *World) Clone() *World { return w.clone(nil) }

// clone is Clone; with r, the copy is made in the storage of r's last copy,
// finished (Reuser.Clone): its World, its arrays of logs, members, group
// members, packets on the wire and member slices, its maps, its scratch
// lists and its free lists. What the copy needs beyond them is allocated.
func (w *World) clone(r *Reuser) *World {
	store.NoteCopy() // before anything is shared: arrays made before are no longer written in place
	var sp spare
	var n *World
	plain := r == nil // Clone: no storage to keep for a next copy
	if o := w.reuser; o != nil && o.last == w && o != r {
		// w is a Reuser's last copy, copied before it is finished: the
		// copy may share w's storage (a delivered packet still referenced
		// lives in the Reuser's wire array), so the Reuser must not make
		// its next copy in it. It starts afresh; w keeps its storage.
		*o = Reuser{}
	}
	if r != nil {
		if r.last == w {
			// Copying its own last copy: that one is not finished, and its
			// arrays are the ones about to be read.
			*r = Reuser{}
		}
		if old := r.last; old != nil {
			sp = spare{current: old.current, broker: old.broker, procs: old.procs,
				group: old.Group, txn: old.Txn, env: old.env, trace: old.trace, scratch: old.scratch}
			n = old
		}
		r.last = nil
	} else {
		r = &Reuser{} // no storage: every array below is made
	}
	if n == nil {
		n = new(World)
	}
	*n = *w
	n.Cfg = w.Cfg.clone()
	n.trace = w.trace.Clone(&n.Tick, &n.sources, sp.trace)
	n.Packets, n.Events = &n.trace.Packets, &n.trace.Events
	// The environment: drop rules, timers (in the finished copy's arrays
	// if they have the room), process sets and free lists (env.Clone);
	// its packets on the wire below.
	n.env = w.env.Clone(&n.Tick, n.trace, sp.env)
	n.Sink = w.Sink.clone()
	n.steady = store.Copy(w.steady)
	n.steadyGroups = store.Copy(w.steadyGroups)
	re := copyWire(w.env, n.env, r)
	n.Group = w.Group.Clone(re, n.env, &n.coordCfg, &n.Mutations, &n.processTable, sp.group, &r.gms)
	n.Txn = w.Txn.Clone(n.env, sp.txn)
	n.broker = w.broker.Clone(n.env, re, &n.processTable, n.Txn, sp.broker, &r.logs, !plain)
	n.connect()

	// Every process copied, its small slices in shared arrays.
	n.processTable = w.processTable.clone(client.CloneAll(w.procs, sp.procs, &r.procs, n.env, &n.host, re), sp.current)
	n.scratch = scratch{actBuf: sp.actBuf[:0], tpBuf: sp.tpBuf[:0], pausedBuf: sp.pausedBuf[:0], pausedIdx: sp.pausedIdx[:0], markBuf: sp.markBuf[:0],
		spanBuf: sp.spanBuf[:0], consumed: sp.consumed.reset(), delivered: w.delivered.share()}
	n.Meter = w.Meter.clone()
	n.Unavail = w.Unavail.clone()
	n.deploys = w.deploys.clone()
	r.last = n
	if plain {
		n.reuser = nil
	} else {
		n.reuser = r
	}
	return n
}

// copyWire gives the copy's environment e copies of the live packets on
// from's wire, made in r's array, and returns re, which finds a live
// packet's copy (any other packet is shared, as the trace's are).
//
// The trace is shared chunk by chunk (its records never change). The live
// packets still on the wire get their Delivered tick at the next Step, so
// the copy gets its own of each, and every pointer to one is turned to the
// copy. The copies are made in one array: one allocation rather than one
// per packet.
func copyWire(from, e *env.Env, r *Reuser) func(*Packet) *Packet {
	sending, inflight := from.Wire()
	r.wire = store.ReuseBuf(r.wire, len(sending)+len(inflight))
	wire := r.wire
	for i, p := range sending {
		wire[i] = *p
	}
	for i, p := range inflight {
		wire[len(sending)+i] = *p
	}
	// re finds a live packet's copy: by a walk of the two lists while they
	// are short (a few packets: no map to make), else in a map.
	var pk map[*Packet]*Packet
	if len(wire) > 32 {
		pk = make(map[*Packet]*Packet, len(wire))
		for i, p := range sending {
			pk[p] = &wire[i]
		}
		for i, p := range inflight {
			pk[p] = &wire[len(sending)+i]
		}
	}
	re := func(p *Packet) *Packet {
		if p == nil {
			return nil
		}
		if pk != nil {
			if c, ok := pk[p]; ok {
				return c
			}
			return p
		}
		for i, q := range sending {
			if q == p {
				return &wire[i]
			}
		}
		for i, q := range inflight {
			if q == p {
				return &wire[len(sending)+i]
			}
		}
		return p
	}
	for i := range wire {
		wire[i].Req = re(wire[i].Req)
	}
	onWire := func(ps []*Packet, at int) []*Packet {
		if ps == nil {
			return nil
		}
		out := make([]*Packet, len(ps))
		for i := range ps {
			out[i] = &wire[at+i]
		}
		return out
	}
	e.SetWire(onWire(sending, 0), onWire(inflight, len(sending)))
	return re
}

// spare is what a finished copy hands to the next (World.clone): its maps
// and pointer lists, its group, its free lists and its scratch lists.
type spare struct {
	current map[string]*Member
	broker  *broker.Broker
	procs   []*Member
	group   *Group
	txn     *txncoord.Coordinator
	env     *env.Env
	trace   *trace.Trace
	scratch
}

func (pm PauseMeter) clone() PauseMeter {
	n := pm
	// The entries' lists are shared: none is written in place
	// (mergePartitions makes a new one), and an eager rebalance's is the
	// layout's (sharedInputs), which a copy of every entry would copy.
	n.Entries = store.Copy(pm.Entries)
	n.Series = pm.Series.clone()
	return n
}
