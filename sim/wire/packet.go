package wire

// TextRef is where the trace keeps a packet's summary, encoded (sim/trace);
// 0 while Summary holds it as a string.
type TextRef uint64

// Packet is one message on the wire. Every packet takes one tick.
type Packet struct {
	ID        int
	Sent      int
	Delivered int // -1 while in flight or when lost
	Lost      bool
	From, To  string // C1.., B1
	// FromInc/ToInc name the member process (incarnation) at either end; 0 for B1.
	FromInc, ToInc int
	Type           API
	Response       bool
	Error          ErrorCode
	Summary        string  // one line for the trace, e.g. "gen 2, leader C1-1"
	Body           any     // the request or response body; never changed once sent; live packets only (not in the trace)
	Req            *Packet // for an answer, the request it answers
	// Text is the summary as the trace keeps it, set by a sender that
	// encodes it; 0 while Summary holds it as a string.
	Text TextRef
	// FreeEpoch: the free lists' epoch it was handed out under, 0 if not
	// from them (sim/env's free lists).
	FreeEpoch uint64
	// Proc is the process number of the member at the other end plus one,
	// 0 when not known: the World finds the process without a lookup by
	// client id. A clone's processes keep their numbers.
	Proc int32
	// TimerAt and TimerSeq: the timer a Produce or Fetch request's sender
	// reserved for it, set only if the request may go unanswered (a retry
	// or a request timeout). Kept on the packet, which is the world's own
	// (a clone copies those on the wire), not on the body, which clones
	// share.
	TimerAt, TimerSeq int
}
