package client

import (
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Host is what a client process tells or asks its surroundings other than
// by packets. kgrepl's classic heartbeats are implicit (a live member is
// heard every tick, the seed's simplification), so the heartbeat thread
// starting or stopping is told to the coordinator (sim/heartbeat.go); the
// fetcher asks whether a Fetch it waits for is still held by the broker or
// on the wire (a long poll stands for fetches Kafka would send again); and
// the application calls its external side effect for each record it
// processes (a database write outside any transaction). The World answers.
type Host interface {
	// HeartbeatStopped: the process going by memberID stopped sending
	// classic heartbeats.
	HeartbeatStopped(memberID string)
	// HeartbeatStarted: it sends them again.
	HeartbeatStarted(memberID string)
	// MemberIDDropped: the process goes by another member id now.
	MemberIDDropped(memberID string)
	// ProcessStopped: the process stopped (crashed, closed).
	ProcessStopped(client string, inc int)
	// FetchOutstanding reports whether fetch id of client's process inc is
	// held at the broker or its answer on the wire.
	FetchOutstanding(client string, inc int, id int) bool
	// RecordProcessed: the application processed rec, a record or a run
	// of them (wire.Record.Count); they are counted, and the external sink
	// called for each, in one call for the run. slot is rec's input
	// partition's number (topo.InputIndex), already checked against its
	// partition (the member's entry held under it is that partition's, or
	// InputIndex.Is), or -1 when not known: the host trusts it as it is.
	RecordProcessed(who trace.Label, rec wire.Record, slot int32)
	// GroupID is the group the process joins.
	GroupID() string
}

// FetchTimeoutTimer is the request timeout poll reserved for Fetch request
// p, to be set when the fetch may go unanswered: the request or its answer
// is lost, or the broker holds it (a long poll). An answer sent at once is
// delivered the tick after the request was (before the timeout's tick:
// deliveries come before timers in a Step), and once the member has read
// it (or dropped it as stale) it is never fetching that fetch again (only
// poll starts a fetch, with a new number): the timeout would do nothing.
func FetchTimeoutTimer(p *wire.Packet) wire.Timer {
	r := p.Body.(*wire.FetchRequest)
	return wire.Timer{Owner: wire.OwnerClient, At: p.TimerAt, Seq: p.TimerSeq, Kind: tmFetchTimeout, Client: p.From, Inc: p.FromInc, Proc: p.Proc, Key: r.ID}
}

// ProduceRetryTimer is the retry timer sendProduce reserved for Produce
// request p, to be set when its answer will not settle it: the request or
// its answer is lost, or the answer is OUT_OF_ORDER_SEQUENCE_NUMBER (the
// producer keeps the request, onProduceResponse). Any other answer is
// delivered the tick after the request was (before the timer's tick:
// deliveries come before timers in a Step) and removes the request from
// unacked, so the timer would find nothing to resend; so does a process
// that is gone.
func ProduceRetryTimer(p *wire.Packet) wire.Timer {
	r := p.Body.(*wire.ProduceRequest)
	return wire.Timer{Owner: wire.OwnerClient, At: p.TimerAt, Seq: p.TimerSeq, Kind: tmProduceRetry, Client: p.From, Inc: p.FromInc, Proc: p.Proc, Key: r.ID, Arg: r.Attempt}
}
