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

// kind numbers an EventKind by its place in eventKinds: an event's record
// keeps the number. The facts (facts.go) name their kinds by these
// constants, so the hot path never looks a kind up by its string; Event,
// for the rare ones, looks it up in kindIndex.
type kind uint8

const (
	kindGroupState kind = iota
	kindGeneration
	kindAssigned
	kindRevoked
	kindRemoved
	kindPollTimeout
	kindCrash
	kindSlowStart
	kindPolled
	kindProcessed
	kindCommitFailed
	kindCommitted
	kindClosed
	kindStarted
	kindStaticRejoin
	kindProduced
	kindTxnState
	kindFenced
	kindRetry
	kindInput
	kindSideEffect
	kindZombie
	kindUnstableOffset
	kindProducer
	kindDeploy
	numKinds
)

// eventKinds lists every EventKind by its number.
var eventKinds = [numKinds]EventKind{
	kindGroupState: EvGroupState, kindGeneration: EvGeneration, kindAssigned: EvAssigned,
	kindRevoked: EvRevoked, kindRemoved: EvRemoved, kindPollTimeout: EvPollTimeout, kindCrash: EvCrash,
	kindSlowStart: EvSlowStart, kindPolled: EvPolled, kindProcessed: EvProcessed,
	kindCommitFailed: EvCommitFailed, kindCommitted: EvCommitted, kindClosed: EvClosed,
	kindStarted: EvStarted, kindStaticRejoin: EvStaticRejoin, kindProduced: EvProduced,
	kindTxnState: EvTxnState, kindFenced: EvFenced, kindRetry: EvRetry, kindInput: EvInput,
	kindSideEffect: EvSideEffect, kindZombie: EvZombie, kindUnstableOffset: EvUnstableOffset,
	kindProducer: EvProducer, kindDeploy: EvDeploy,
}

// kindIndex is each EventKind's number, for Event.
var kindIndex = func() map[EventKind]kind {
	m := make(map[EventKind]kind, len(eventKinds))
	for i, k := range eventKinds {
		if k == "" {
			panic("trace: eventKinds has no kind numbered " + strconv.Itoa(i))
		}
		m[k] = kind(i)
	}
	return m
}()

// Event is one thing that happened, for the trace and the views.
type Event struct {
	Tick   int
	Kind   EventKind
	Member string // client id, or "" for the coordinator
	Text   string
	// Stop marks a stop event: every form of run halts after the tick it happened in.
	Stop bool
	// Records are the input records the event is about (polled,
	// processed), as runs: Has asks whether it covers a record, Runs and
	// All walk them, none spelled until asked.
	Records Records
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
