package trace

import "strconv"

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
	EvDeploy         EventKind = "deploy"          // a graceful restart or a rolling deploy moved on (restart --graceful, roll)
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

// Label names a member process in narration: its client id, and the
// process number when a newer process of the same client exists (a
// zombie): "C2", "C2 (process 1)".
type Label struct {
	Client  string
	Process int // 0 for the client's newest process
}

// String is the label as narration spells it.
func (l Label) String() string {
	if l.Process > 0 {
		return l.Client + " (process " + strconv.Itoa(l.Process) + ")"
	}
	return l.Client
}
