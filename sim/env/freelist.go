package env

import (
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// freeLists recycles the live packets of the steady-traffic hot path and
// their bodies once delivered: the Produce and Fetch round trips (the
// request packet, the answer, the FetchRequest, FetchResponse and
// ProduceResponse bodies). The trace keeps none of them (it records a
// packet when it is sent), so once the answer is delivered nothing reads
// them again:
//
//   - a Produce request is read by the partition leader (broker.Produce)
//     when delivered and then only as the answer's Req; its body is the
//     producer's: held in prod.unacked until answered (and in prod.queued
//     before it is sent), so it goes back only once the answer is
//     delivered and unacked no longer holds it (an OutOfOrderSequenceNumber
//     answer leaves it there, to be sent again); a retry sends a copy, a
//     request of its own;
//   - a Fetch request is held by the broker's parked fetches until
//     answered (answerParked and Fetch drop it then) and read as the
//     answer's Req; the member copies the answer's records into its own
//     batch (onFetchResponse).
//
// The OffsetCommit round trip of sendCommitReq (auto-commit, commitSync,
// commitAsync) gives back its two packets and their bodies: onCommit
// answers at once (nothing parks a commit) and keeps nothing of the
// request, and onCommitResponse reads the answer and its Req and keeps
// neither. The OffsetCommitResponse shares the request's slices. Of those, only the
// Offsets array is reused (the next commit's positions are gathered into
// it): Partitions and Slots may be the member's Owned and ownedSlots,
// which are replaced, never changed in place, and so are dropped. The
// consumer's commit before revoking, which cg.commitPkt holds, is a packet
// and body of its own (epoch 0), never recycled.
//
// Every other packet (the group protocol's, transactions) is left to the
// garbage collector: a classic membership's lastJoin, consumerMember.inFlight, ClassicMember.joinPkt/syncPkt
// hold those.
//
// Clones share request and response bodies and the packets a live packet
// refers to (Clone copies only the packets on the wire). So each world's
// lists carry an epoch, unique over the process, that Clone renews on the
// original (and gives the copy a fresh one): an object is stamped with the
// epoch of the lists it came from and goes back only while that epoch is
// still current. Anything alive when a world was cloned is thus never
// recycled by either world; what either allocates afterwards is its own.
// A world whose test keeps packets (Env.KeepForTest) recycles nothing.
type freeLists struct {
	epoch        atomic.Uint64
	packets      []*wire.Packet
	fetchReqs    []*wire.FetchRequest
	fetchResps   []*wire.FetchResponse
	produceResps []*wire.ProduceResponse
	produceReqs  []*wire.ProduceRequest
	commitReqs   []*wire.OffsetCommitRequest
	commitResps  []*wire.OffsetCommitResponse
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

// Packet returns a zeroed packet, from the list if it has one. A packet
// on the list was zeroed when it went back (recycle, dropHeldFetch),
// while the delivery that read it last had it in the processor's cache:
// zeroed here, it was read (a nil check) a tick or more after, from
// memory, on about every packet of T1 (3% of its time).
func (f *freeLists) Packet() *wire.Packet {
	if f == nil {
		return &wire.Packet{}
	}
	p := store.Take(&f.packets)
	p.FreeEpoch = f.current()
	return p
}

// NewFetchRequest returns an empty Fetch request, from the list if it has one.
func (f *freeLists) NewFetchRequest() *wire.FetchRequest {
	if f == nil {
		return &wire.FetchRequest{}
	}
	r := store.Take(&f.fetchReqs)
	*r = wire.FetchRequest{Partitions: r.Partitions[:0], Offsets: r.Offsets[:0], Slots: r.Slots[:0], FreeEpoch: f.current()}
	return r
}

// NewFetchResponse returns an empty Fetch answer, from the list if it has one.
func (f *freeLists) NewFetchResponse() *wire.FetchResponse {
	if f == nil {
		return &wire.FetchResponse{}
	}
	r := store.Take(&f.fetchResps)
	clear(r.Records) // drop the values' strings
	*r = wire.FetchResponse{Records: r.Records[:0], FreeEpoch: f.current()}
	return r
}

// NewProduceRequest returns a zero request but for its epoch and its
// runs' array (empty), for the caller to fill in: one on the list was
// zeroed when it went back (recycle), as a packet is.
func (f *freeLists) NewProduceRequest() *wire.ProduceRequest {
	if f == nil {
		return &wire.ProduceRequest{}
	}
	r := store.Take(&f.produceReqs)
	r.FreeEpoch = f.current()
	return r
}

// NewProduceResponse returns an empty Produce answer, from the list if it has one.
func (f *freeLists) NewProduceResponse() *wire.ProduceResponse {
	if f == nil {
		return &wire.ProduceResponse{}
	}
	r := store.Take(&f.produceResps)
	*r = wire.ProduceResponse{FreeEpoch: f.current()}
	return r
}

// NewCommitRequest returns an empty request whose Offsets has the array of a
// recycled one, if any, to append to.
func (f *freeLists) NewCommitRequest() *wire.OffsetCommitRequest {
	if f == nil {
		return &wire.OffsetCommitRequest{}
	}
	r := store.Take(&f.commitReqs)
	*r = wire.OffsetCommitRequest{Offsets: r.Offsets[:0], FreeEpoch: f.current()}
	return r
}

// NewCommitResponse returns an empty OffsetCommit answer, from the list if it has one.
func (f *freeLists) NewCommitResponse() *wire.OffsetCommitResponse {
	if f == nil {
		return &wire.OffsetCommitResponse{}
	}
	r := store.Take(&f.commitResps)
	*r = wire.OffsetCommitResponse{FreeEpoch: f.current()}
	return r
}

// UnuseCommitRequest gives back a request the auto-commit took but did not
// send (nothing positioned).
func (f *freeLists) UnuseCommitRequest(r *wire.OffsetCommitRequest) {
	if f != nil && r.FreeEpoch == f.current() {
		*r = wire.OffsetCommitRequest{Offsets: r.Offsets[:0], FreeEpoch: r.FreeEpoch}
		f.commitReqs = append(f.commitReqs, r)
	}
}

// ProduceHolder is who knows whether the producer that sent Produce
// request q still holds its body r among its unacked requests: an answer
// that does not settle it (OUT_OF_ORDER_SEQUENCE_NUMBER) leaves it there,
// to be sent again. (An interface the World's Step passes, not a func
// value: a method value is a closure built for every packet recycled.)
type ProduceHolder interface {
	HoldsProduce(q *wire.Packet, r *wire.ProduceRequest) bool
}

// Recycle takes back a delivered packet of the Produce, Fetch and
// OffsetCommit round trips: an answer with its request and their bodies
// (see freeLists for why nothing reads them again). Anything else, and
// anything stamped with an older epoch, is left alone; so is everything
// while a test keeps the packets sent (KeepForTest). A Produce request's
// body goes back only if its producer no longer holds it (h).
func (e *Env) Recycle(p *wire.Packet, h ProduceHolder) {
	if e.keep == nil {
		e.freeLists.recycle(p, h)
	}
}

func (f *freeLists) recycle(p *wire.Packet, h ProduceHolder) {
	if f == nil || !p.Response || (p.Type != wire.Produce && p.Type != wire.Fetch && p.Type != wire.OffsetCommit) {
		return
	}
	ep := f.current()
	switch b := p.Body.(type) {
	case *wire.ProduceResponse:
		if b.FreeEpoch == ep {
			f.produceResps = append(f.produceResps, b)
		}
	case *wire.FetchResponse:
		if b.FreeEpoch == ep {
			f.fetchResps = append(f.fetchResps, b)
		}
	case *wire.OffsetCommitResponse:
		if b.FreeEpoch == ep {
			*b = wire.OffsetCommitResponse{}
			f.commitResps = append(f.commitResps, b)
		}
	}
	if q := p.Req; q != nil && q.FreeEpoch == ep {
		switch b := q.Body.(type) {
		case *wire.FetchRequest:
			if b.FreeEpoch == ep {
				f.fetchReqs = append(f.fetchReqs, b)
			}
		case *wire.OffsetCommitRequest:
			if b.FreeEpoch == ep {
				*b = wire.OffsetCommitRequest{Offsets: b.Offsets[:0]}
				f.commitReqs = append(f.commitReqs, b)
			}
		case *wire.ProduceRequest:
			if b.FreeEpoch == ep && !h.HoldsProduce(q, b) {
				// its runs' array is its own (a retry copies it): kept
				*b = wire.ProduceRequest{Runs: b.Runs[:0]}
				f.produceReqs = append(f.produceReqs, b)
			}
		}
		*q = wire.Packet{} // zeroed now, as Packet hands it out
		f.packets = append(f.packets, q)
	}
	if p.FreeEpoch == ep {
		*p = wire.Packet{}
		f.packets = append(f.packets, p)
	}
}

// DropHeldFetch takes back a Fetch request the partition leader held
// (a long poll) and let go of unanswered, its process no longer waiting
// for it: its packet and body, as an answered one's go back with the
// answer (recycle). Nothing else holds them: the request timeout set for
// a held Fetch keeps its number, not the packet (client.FetchTimeoutTimer),
// and the trace keeps no bodies. Without it, every eager rebalance of T2
// (1,000 members, each with a Fetch held) made 1,000 requests anew.
func (e *Env) DropHeldFetch(p *wire.Packet) {
	if e.keep == nil {
		e.freeLists.dropHeldFetch(p)
	}
}

func (f *freeLists) dropHeldFetch(p *wire.Packet) {
	ep := f.current()
	if f == nil || p.Response || p.Type != wire.Fetch || p.FreeEpoch != ep {
		return
	}
	if b, ok := p.Body.(*wire.FetchRequest); ok && b.FreeEpoch == ep {
		f.fetchReqs = append(f.fetchReqs, b)
	}
	*p = wire.Packet{} // zeroed now, as Packet hands it out
	f.packets = append(f.packets, p)
}

// UnuseFetchRequest gives back a request poll took but did not send.
func (f *freeLists) UnuseFetchRequest(r *wire.FetchRequest) {
	if f != nil && r.FreeEpoch == f.current() {
		f.fetchReqs = append(f.fetchReqs, r)
	}
}

// FreeListsForTest is how many objects the free lists hold, each list in
// turn: packets, Fetch requests and answers, Produce answers and requests,
// OffsetCommit requests and answers (tests only).
func (f *freeLists) FreeListsForTest() [7]int {
	if f == nil {
		return [7]int{}
	}
	return [7]int{len(f.packets), len(f.fetchReqs), len(f.fetchResps), len(f.produceResps), len(f.produceReqs), len(f.commitReqs), len(f.commitResps)}
}

// FreePacketsForTest is the free list of packets, and the free lists'
// identity (a world's copy may take a finished copy's lists): tests only.
func (f *freeLists) FreePacketsForTest() ([]*wire.Packet, any) {
	if f == nil {
		return nil, nil
	}
	return f.packets, f
}
