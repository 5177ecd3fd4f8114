package sim

import (
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// freeLists recycles the live packets of the steady-traffic hot path and
// their bodies once delivered: the Produce and Fetch round trips (the
// request packet, the answer, the fetchReq, fetchResp and produceResp
// bodies). The trace keeps none of them (it records a packet when it is
// sent), so once the answer is delivered nothing reads them again:
//
//   - a Produce request is read by handleProduce when delivered and then
//     only as the answer's Req; its produceReq body is the producer's: held
//     in prod.unacked until answered (and in prod.queued before it is sent),
//     so it goes back only once the answer is delivered and unacked no
//     longer holds it (an OutOfOrderSequenceNumber answer leaves it there,
//     to be sent again); a retry sends a copy, a request of its own;
//   - a Fetch request is held by w.parked until answered (answerParked and
//     handleFetch drop it then) and read as the answer's Req; the member
//     copies the answer's records into its own batch (onFetchResponse).
//
// The OffsetCommit round trip of sendCommitReq (auto-commit, commitSync,
// commitAsync) gives back its two packets and their bodies: onCommit
// answers at once (nothing parks a commit) and keeps nothing of the
// request, and onCommitResponse reads the answer and its Req and keeps
// neither. The commitResp shares the request's slices. Of those, only the
// Offsets array is reused (the next commit's positions are gathered into
// it): Partitions and Slots may be the member's Owned and ownedSlots,
// which are replaced, never changed in place, and so are dropped. The
// consumer's commit before revoking, which cg.commitPkt holds, is a packet
// and body of its own (epoch 0), never recycled.
//
// Every other packet (the group protocol's, transactions) is left to the
// garbage collector: lastJoin, cg.inFlight, GroupMember.joinPkt/syncPkt
// hold those.
//
// Clones share request and response bodies and the packets a live packet
// refers to (Clone copies only the packets on the wire). So each world's
// lists carry an epoch, unique over the process, that Clone renews on the
// original (and gives the copy a fresh one): an object is stamped with the
// epoch of the lists it came from and goes back only while that epoch is
// still current. Anything alive when a world was cloned is thus never
// recycled by either world; what either allocates afterwards is its own.
// A world whose test keeps packets (World.keep) recycles nothing.
type freeLists struct {
	epoch        atomic.Uint64
	packets      []*Packet
	fetchReqs    []*fetchReq
	fetchResps   []*fetchResp
	produceResps []*produceResp
	produceReqs  []*produceReq
	commitReqs   []*commitReq
	commitResps  []*commitResp
}

func newFreeLists() *freeLists {
	f := &freeLists{}
	f.epoch.Store(store.NewEpoch())
	return f
}

// renew makes every object handed out so far unrecyclable (Clone: they may
// be shared with the copy now). Safe while other goroutines clone the same
// world.
func (f *freeLists) renew() {
	if f != nil {
		f.epoch.Store(store.NewEpoch())
	}
}

func (f *freeLists) current() uint64 {
	if f == nil {
		return 0
	}
	return f.epoch.Load()
}

// packet returns a zeroed packet, from the list if it has one.
func (w *World) packet() *Packet {
	f := w.free
	if f == nil {
		return &Packet{}
	}
	p := store.Take(&f.packets)
	*p = Packet{epoch: f.current()}
	return p
}

func (w *World) newFetchReq() *fetchReq {
	f := w.free
	if f == nil {
		return &fetchReq{}
	}
	r := store.Take(&f.fetchReqs)
	*r = fetchReq{Partitions: r.Partitions[:0], Offsets: r.Offsets[:0], epoch: f.current()}
	return r
}

func (w *World) newFetchResp() *fetchResp {
	f := w.free
	if f == nil {
		return &fetchResp{}
	}
	r := store.Take(&f.fetchResps)
	clear(r.Records) // drop the values' strings
	*r = fetchResp{Records: r.Records[:0], epoch: f.current()}
	return r
}

// newProduceReq returns a request for the caller to fill in whole,
// keeping its epoch.
func (w *World) newProduceReq() *produceReq {
	f := w.free
	if f == nil {
		return &produceReq{}
	}
	r := store.Take(&f.produceReqs)
	r.epoch = f.current()
	return r
}

func (w *World) newProduceResp() *produceResp {
	f := w.free
	if f == nil {
		return &produceResp{}
	}
	r := store.Take(&f.produceResps)
	*r = produceResp{epoch: f.current()}
	return r
}

// newCommitReq returns an empty request whose Offsets has the array of a
// recycled one, if any, to append to.
func (w *World) newCommitReq() *commitReq {
	f := w.free
	if f == nil {
		return &commitReq{}
	}
	r := store.Take(&f.commitReqs)
	*r = commitReq{Offsets: r.Offsets[:0], epoch: f.current()}
	return r
}

func (w *World) newCommitResp() *commitResp {
	f := w.free
	if f == nil {
		return &commitResp{}
	}
	r := store.Take(&f.commitResps)
	*r = commitResp{epoch: f.current()}
	return r
}

// unuseCommitReq gives back a request the auto-commit took but did not
// send (nothing positioned).
func (w *World) unuseCommitReq(r *commitReq) {
	if f := w.free; f != nil && r.epoch == f.current() {
		*r = commitReq{Offsets: r.Offsets[:0], epoch: r.epoch}
		f.commitReqs = append(f.commitReqs, r)
	}
}

// recycle takes back a delivered packet of the Produce, Fetch and
// OffsetCommit round trips: an answer with its request and their bodies
// (see freeLists for why nothing reads them again). Anything else, and anything stamped with
// an older epoch, is left alone.
func (w *World) recycle(p *Packet) {
	f := w.free
	if f == nil || w.keep != nil || !p.Response || (p.Type != Produce && p.Type != Fetch && p.Type != OffsetCommit) {
		return
	}
	e := f.current()
	switch b := p.Body.(type) {
	case *produceResp:
		if b.epoch == e {
			f.produceResps = append(f.produceResps, b)
		}
	case *fetchResp:
		if b.epoch == e {
			f.fetchResps = append(f.fetchResps, b)
		}
	case *commitResp:
		if b.epoch == e {
			*b = commitResp{}
			f.commitResps = append(f.commitResps, b)
		}
	}
	if q := p.Req; q != nil && q.epoch == e {
		switch b := q.Body.(type) {
		case *fetchReq:
			if b.epoch == e {
				f.fetchReqs = append(f.fetchReqs, b)
			}
		case *commitReq:
			if b.epoch == e {
				*b = commitReq{Offsets: b.Offsets[:0]}
				f.commitReqs = append(f.commitReqs, b)
			}
		case *produceReq:
			if m := w.procOf(q.From, q.FromInc, q.proc); b.epoch == e && m != nil && m.prod.unacked.get(b.ID) != b {
				*b = produceReq{}
				f.produceReqs = append(f.produceReqs, b)
			}
		}
		f.packets = append(f.packets, q) // packet() zeroes it when it hands it out again
	}
	if p.epoch == e {
		f.packets = append(f.packets, p)
	}
}

// unuseFetchReq gives back a request poll took but did not send.
func (w *World) unuseFetchReq(r *fetchReq) {
	if f := w.free; f != nil && r.epoch == f.current() {
		f.fetchReqs = append(f.fetchReqs, r)
	}
}
