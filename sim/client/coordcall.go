package client

import (
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// A producer's requests to the transaction coordinator (InitProducerId,
// AddPartitionsToTxn, AddOffsetsToTxn) and the TxnOffsetCommit it sends the
// group coordinator are sent again, unchanged, each time request.timeout.ms
// passes without an answer, as EndTxn's are (endTxn): Kafka's NetworkClient
// fails a request that times out as a disconnection (NetworkClient.
// handleTimedOutRequests), and TransactionManager.TxnRequestHandler.
// onComplete re-enqueues the handler (reenqueue), whose request was built
// once: a TxnOffsetCommit sent again carries the generation it was made
// with. Without this, one lost request or answer left the producer waiting
// for ever (a consumer stuck in sendOffsetsToTransaction).
//
// Simplifications on purpose: kgrepl's one broker is every coordinator, so
// the request goes again at the timeout, where Kafka first looks the
// coordinator up (lookupCoordinator) and a retry waits retry.backoff.ms
// (TransactionManager.nextRequest); and each kind waits on its own, where
// Kafka's Sender keeps one transactional request in flight at a time
// (Sender.maybeSendAndPollTransactionalRequest).

// The kinds of coordinator calls a producer waits on, one of each at most.
const (
	callInitProducerID = iota
	callAddPartitions
	callAddOffsets
	callTxnOffsetCommit
	callKinds
)

// callAPIs is each kind's request type.
var callAPIs = [callKinds]wire.API{wire.InitProducerID, wire.AddPartitionsToTxn, wire.AddOffsetsToTxn, wire.TxnOffsetCommit}

// coordCalls are a producer's calls waiting for answers: the last number
// given (a producer that replaces another goes on from its numbers, so a
// timer of the old one finds nothing), and the requests waiting, by kind,
// made the first time the producer calls (a plain producer never does).
type coordCalls struct {
	last    int
	waiting *[callKinds]coordCall
}

// coordCall is a request waiting for its answer, to send again as it was:
// its packet's summary and body (whose Call is its number; its type is its
// kind's, callAPIs); a zero coordCall is none.
type coordCall struct {
	summary string
	body    any
}

// clone is cs for a copy of the producer: the requests waiting in an
// array of its own (the bodies are never changed: shared).
func (cs coordCalls) clone() coordCalls {
	if cs.waiting != nil {
		w := *cs.waiting
		cs.waiting = &w
	}
	return cs
}

// next is the number of a new call.
func (cs *coordCalls) next() int {
	cs.last++
	return cs.last
}

// callNumber is the Call a coordinator request's body carries.
func callNumber(body any) int {
	switch b := body.(type) {
	case *wire.InitProducerIDRequest:
		return b.Call
	case *wire.AddPartitionsToTxnRequest:
		return b.Call
	case *wire.AddOffsetsToTxnRequest:
		return b.Call
	case *wire.TxnOffsetCommitRequest:
		return b.Call
	}
	return 0
}

// call sends a coordinator request of kind (its body numbered by next) and
// waits for its answer: when none comes within request.timeout.ms it goes
// again (fireCall).
func (pr *producer) call(m *Member, kind int, summary string, body any) {
	if pr.coord.waiting == nil {
		pr.coord.waiting = new([callKinds]coordCall)
	}
	pr.coord.waiting[kind] = coordCall{summary: summary, body: body}
	pr.sendCall(m, kind)
}

func (pr *producer) sendCall(m *Member, kind int) {
	c := &pr.coord.waiting[kind]
	m.send(&wire.Packet{Type: callAPIs[kind], Summary: c.summary, Body: c.body})
	m.env.After(wire.Timer{Owner: wire.OwnerClient, At: m.env.Now() + m.Cfg.RequestTimeout, Kind: tmCoordCallTimeout, Client: m.Client, Inc: m.Inc, Key: callNumber(c.body), Arg: kind})
}

// waitingFor is the number of the call of kind waiting for its answer, 0
// when none waits.
func (pr *producer) waitingFor(kind int) int {
	if pr.coord.waiting == nil {
		return 0
	}
	return callNumber(pr.coord.waiting[kind].body)
}

// answered reports whether p answers the call of its kind the producer
// waits for, and stops waiting: the answer to a call sent again may come
// twice, or to a call given up (the producer was replaced).
func (pr *producer) answered(kind int, p *wire.Packet) bool {
	n := pr.waitingFor(kind)
	if n == 0 || n != callNumber(p.Req.Body) {
		return false
	}
	pr.coord.waiting[kind] = coordCall{}
	return true
}

// fireCall is a call's request timeout: one still unanswered goes again.
func (pr *producer) fireCall(m *Member, t wire.Timer) {
	if n := pr.waitingFor(t.Arg); n == 0 || n != t.Key {
		return
	}
	m.env.Trace().Eventf(trace.EvRetry, m.Client, "%s: no answer to %s within request.timeout.ms (%d): sending it again", m.Label(), callAPIs[t.Arg], m.Cfg.RequestTimeout)
	pr.sendCall(m, t.Arg)
}
