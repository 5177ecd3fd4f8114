package sim

// API is a Kafka request type, by its protocol name.
type API string

const (
	FindCoordinator       API = "FindCoordinator"
	JoinGroup             API = "JoinGroup"
	SyncGroup             API = "SyncGroup"
	RebalanceNotification API = "RebalanceNotification" // the heartbeat answer REBALANCE_IN_PROGRESS, drawn as its own packet
	LeaveGroup            API = "LeaveGroup"
	OffsetCommit          API = "OffsetCommit"
	OffsetFetch           API = "OffsetFetch"
	Fetch                 API = "Fetch"
	Produce               API = "Produce"
	InitProducerID        API = "InitProducerId"
	AddPartitionsToTxn    API = "AddPartitionsToTxn"
	AddOffsetsToTxn       API = "AddOffsetsToTxn"
	TxnOffsetCommit       API = "TxnOffsetCommit"
	EndTxn                API = "EndTxn"
	WriteTxnMarkers       API = "WriteTxnMarkers"
	// ConsumerGroupHeartbeat is the consumer protocol's one group request
	// (KIP-848): join, heartbeat, acknowledge an assignment, leave.
	ConsumerGroupHeartbeat API = "ConsumerGroupHeartbeat"
)

// APIs lists every packet type, for help and completion.
var APIs = []API{FindCoordinator, JoinGroup, SyncGroup, RebalanceNotification, LeaveGroup, OffsetCommit,
	OffsetFetch, Fetch, Produce, InitProducerID, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn, WriteTxnMarkers, ConsumerGroupHeartbeat}

// Broker is the one broker: group coordinator, transaction coordinator and
// leader of every partition.
const Broker = "B1"

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
	// text is the summary as the trace keeps it (text.go), set by a sender
	// that encodes it; 0 while Summary holds it as a string.
	text textRef
	// epoch: the free lists' epoch it was handed out under, 0 if not from
	// them (freelist.go).
	epoch uint64
	// proc is the process number (Member.proc) of the member at the other
	// end plus one, 0 when not known: World.procOf finds it without a
	// lookup by client id. A clone's processes keep their numbers.
	proc int32
	// timerAt and timerSeq: the timer a Produce or Fetch request's sender
	// reserved for it (World.reserve), set only if the request may go
	// unanswered (armRetry, armFetchTimeout). Kept on the packet, which is
	// the world's own (Clone copies those on the wire), not on the body,
	// which clones share.
	timerAt, timerSeq int
}

// DropRule loses the next Count packets that match (a `drop` command).
type DropRule struct {
	Type     API
	Response bool
	From, To string // "" matches anyone
	Count    int
}

func (r DropRule) matches(p *Packet) bool {
	return r.Count > 0 && r.Type == p.Type && r.Response == p.Response &&
		(r.From == "" || r.From == p.From) && (r.To == "" || r.To == p.To)
}

// EventKind says what happened.
type EventKind string

const (
	EvGroupState     EventKind = "group-state"     // coordinator state change
	EvGeneration     EventKind = "generation"      // a new generation formed
	EvAssigned       EventKind = "assigned"        // a member got its assignment
	EvRevoked        EventKind = "revoked"         // a member revoked partitions
	EvRemoved        EventKind = "removed"         // the coordinator removed a member
	EvPollTimeout    EventKind = "poll-timeout"    // max.poll.interval passed: the heartbeat thread leaves
	EvCrash          EventKind = "crash"           // a member process died
	EvSlowStart      EventKind = "slow-start"      // a slow record began
	EvPolled         EventKind = "polled"          // poll() returned a batch
	EvProcessed      EventKind = "processed"       // a record was processed
	EvCommitFailed   EventKind = "commit-failed"   // a commit refused: thrown by commitSync, logged for an auto-commit
	EvCommitted      EventKind = "committed"       // offsets committed
	EvClosed         EventKind = "closed"          // a member closed
	EvStarted        EventKind = "started"         // a member process started
	EvStaticRejoin   EventKind = "static-rejoin"   // a static member came back with no rebalance
	EvProduced       EventKind = "produced"        // a record was written to a log
	EvTxnState       EventKind = "txn-state"       // transaction coordinator state change
	EvFenced         EventKind = "fenced"          // a producer or member was fenced
	EvRetry          EventKind = "retry"           // a producer retry
	EvInput          EventKind = "input"           // upstream records appended
	EvSideEffect     EventKind = "side-effect"     // the external sink was called
	EvZombie         EventKind = "zombie"          // a process kept running after it lost its place
	EvUnstableOffset EventKind = "unstable-offset" // OffsetFetch answered UNSTABLE_OFFSET_COMMIT
	EvProducer       EventKind = "producer"        // a member closed its producer and created one with new settings
)

// Event is one thing that happened, for the trace and the views.
type Event struct {
	Tick   int
	Kind   EventKind
	Member string // client id, or "" for the coordinator
	Text   string
	// Stop marks a stop event: every form of run halts after the tick it happened in.
	Stop bool
	// Records names the input records the event is about (polled, processed).
	Records []string
}
