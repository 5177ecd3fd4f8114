package sim

// The names of sim/wire that the World's users (the kernel, the views, the
// tests) read through the World: the World is their one door into the
// engine, and these are the words on it.

import (
	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/coord"
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/txncoord"
	"github.com/kgrepl/kgrepl/sim/wire"
)

type (
	// TopicPartition names one partition of one topic.
	TopicPartition = wire.TopicPartition
	// API is a Kafka request type, by its protocol name.
	API = wire.API
	// ErrorCode is a Kafka protocol error.
	ErrorCode = wire.ErrorCode
	// Packet is one message on the wire.
	Packet = wire.Packet
	// DropRule loses the next packets that match (a `drop` command).
	DropRule = env.DropRule
	// TxnCoordinator is B1's transaction coordinator.
	TxnCoordinator = txncoord.Coordinator
	// TxnEntry is one transactional.id in __transaction_state.
	TxnEntry = txncoord.Entry
	// TxnState is a transaction's state on the transaction coordinator.
	TxnState = txncoord.State
	// TxnLogRecord is one record of __transaction_state.
	TxnLogRecord = txncoord.LogRecord
	// PartitionLog is one partition on B1.
	PartitionLog = broker.Log
	// CellRun is a run of a log's data cells (broker.CellLog.Runs).
	CellRun = broker.CellRun
	// Cell is one record of a partition log.
	Cell = broker.Cell
	// TxnMark is the transactional state of a data cell.
	TxnMark = broker.TxnMark
	// AbortedTxn is one entry of a partition's aborted transaction index.
	AbortedTxn = broker.AbortedTxn
	// Group is the group coordinator of the world's group id: its group
	// (classic or consumer) and its offsets.
	Group = coord.Coordinator
	// GroupDescription is the group as the admin client's describe shows it.
	GroupDescription = coord.Description
	// GroupMember is one member as a GroupDescription shows it.
	GroupMember = coord.DescribedMember
	// GroupType is the group protocol a group speaks.
	GroupType = coord.GroupType
	// GroupState is the coordinator's state of the group.
	GroupState = coord.GroupState
	// GroupTransition is one coordinator state change.
	GroupTransition = coord.GroupTransition
	// OffsetRecord is one record of __consumer_offsets.
	OffsetRecord = coord.OffsetRecord
	// OffsetsLog is the group's __consumer_offsets.
	OffsetsLog = coord.OffsetsLog
	// Mutations lists the deliberate bugs a test can switch on.
	Mutations = coord.Mutations
	// Member is one client process: a consumer with its heartbeat thread,
	// and the producer that writes its invoices.
	Member = client.Member
	// Phase is where a member stands in the group protocol.
	Phase = client.Phase
	// Loop is where the application thread stands in its poll loop.
	Loop = client.Loop
	// ClientConfig is the configuration of one member.
	ClientConfig = client.ClientConfig
	// CommitMode is when a member commits its offsets.
	CommitMode = client.CommitMode
	// ProducerMode is how a member's producer writes its invoices.
	ProducerMode = client.ProducerMode
	// EventKind says what happened.
	EventKind = trace.EventKind
	// Event is one thing that happened, for the trace and the views.
	Event = trace.Event
	// Records are the input records an event is about, as runs.
	Records = trace.Records
	// RecordRun is a run of an event's records.
	RecordRun = trace.RecordRun
	// PacketLog is the trace: every packet in send order.
	PacketLog = trace.PacketLog
	// EventLog is every event, oldest first.
	EventLog = trace.EventLog
)

// Broker is the one broker.
const Broker = wire.Broker

// APIs lists every packet type, for help and completion.
var APIs = wire.APIs

// The APIs.
const (
	FindCoordinator        = wire.FindCoordinator
	JoinGroup              = wire.JoinGroup
	SyncGroup              = wire.SyncGroup
	RebalanceNotification  = wire.RebalanceNotification
	LeaveGroup             = wire.LeaveGroup
	OffsetCommit           = wire.OffsetCommit
	OffsetFetch            = wire.OffsetFetch
	Fetch                  = wire.Fetch
	Produce                = wire.Produce
	InitProducerID         = wire.InitProducerID
	AddPartitionsToTxn     = wire.AddPartitionsToTxn
	AddOffsetsToTxn        = wire.AddOffsetsToTxn
	TxnOffsetCommit        = wire.TxnOffsetCommit
	EndTxn                 = wire.EndTxn
	WriteTxnMarkers        = wire.WriteTxnMarkers
	ConsumerGroupHeartbeat = wire.ConsumerGroupHeartbeat
)

// The error codes.
const (
	None                      = wire.None
	IllegalGeneration         = wire.IllegalGeneration
	InconsistentGroupProtocol = wire.InconsistentGroupProtocol
	UnknownMemberID           = wire.UnknownMemberID
	RebalanceInProgress       = wire.RebalanceInProgress
	OutOfOrderSequenceNumber  = wire.OutOfOrderSequenceNumber
	DuplicateSequenceNumber   = wire.DuplicateSequenceNumber
	InvalidProducerEpoch      = wire.InvalidProducerEpoch
	InvalidTxnState           = wire.InvalidTxnState
	InvalidProducerIDMapping  = wire.InvalidProducerIDMapping
	ConcurrentTransactions    = wire.ConcurrentTransactions
	FencedInstanceID          = wire.FencedInstanceID
	GroupIDNotFound           = wire.GroupIDNotFound
	GroupMaxSizeReached       = wire.GroupMaxSizeReached
	UnstableOffsetCommit      = wire.UnstableOffsetCommit
	ProducerFenced            = wire.ProducerFenced
	FencedMemberEpoch         = wire.FencedMemberEpoch
	UnreleasedInstanceID      = wire.UnreleasedInstanceID
	UnsupportedAssignor       = wire.UnsupportedAssignor
	StaleMemberEpoch          = wire.StaleMemberEpoch
	TransactionAbortable      = wire.TransactionAbortable
)

// The member epochs a leaving consumer-protocol member sends.
const (
	LeaveGroupMemberEpoch       = wire.LeaveGroupMemberEpoch
	LeaveGroupStaticMemberEpoch = wire.LeaveGroupStaticMemberEpoch
)

// The event kinds.
const (
	EvGroupState     = trace.EvGroupState
	EvGeneration     = trace.EvGeneration
	EvAssigned       = trace.EvAssigned
	EvRevoked        = trace.EvRevoked
	EvRemoved        = trace.EvRemoved
	EvPollTimeout    = trace.EvPollTimeout
	EvCrash          = trace.EvCrash
	EvSlowStart      = trace.EvSlowStart
	EvPolled         = trace.EvPolled
	EvProcessed      = trace.EvProcessed
	EvCommitFailed   = trace.EvCommitFailed
	EvCommitted      = trace.EvCommitted
	EvClosed         = trace.EvClosed
	EvStarted        = trace.EvStarted
	EvStaticRejoin   = trace.EvStaticRejoin
	EvProduced       = trace.EvProduced
	EvTxnState       = trace.EvTxnState
	EvFenced         = trace.EvFenced
	EvRetry          = trace.EvRetry
	EvInput          = trace.EvInput
	EvSideEffect     = trace.EvSideEffect
	EvZombie         = trace.EvZombie
	EvUnstableOffset = trace.EvUnstableOffset
	EvProducer       = trace.EvProducer
	EvDeploy         = trace.EvDeploy
)

// The transactions' states.
const (
	TxnEmpty             = txncoord.Empty
	TxnOngoing           = txncoord.Ongoing
	TxnPrepareCommit     = txncoord.PrepareCommit
	TxnPrepareAbort      = txncoord.PrepareAbort
	TxnCompleteCommit    = txncoord.CompleteCommit
	TxnCompleteAbort     = txncoord.CompleteAbort
	TxnPrepareEpochFence = txncoord.PrepareEpochFence
	TxnDead              = txncoord.Dead
)

// LegalTxnTransition reports whether Kafka allows a transaction to move
// from -> to.
func LegalTxnTransition(from, to TxnState) bool { return txncoord.LegalTransition(from, to) }

// The transactional states of a data cell.
const (
	NotTransactional = broker.NotTransactional
	TxnOpen          = broker.TxnOpen
	TxnCommitted     = broker.TxnCommitted
	TxnAborted       = broker.TxnAborted
)

// The group types and states.
const (
	ClassicGroup        = wire.Classic
	ConsumerGroup       = wire.Consumer
	Empty               = coord.Empty
	PreparingRebalance  = coord.PreparingRebalance
	CompletingRebalance = coord.CompletingRebalance
	Stable              = coord.Stable
	Dead                = coord.Dead
	Assigning           = coord.Assigning
	Reconciling         = coord.Reconciling
)

// MigrationPolicies are group.consumer.migration.policy's values.
var MigrationPolicies = coord.MigrationPolicies

// LegalTransition reports whether Kafka allows a group of type t to move
// from -> to.
func LegalTransition(t GroupType, from, to GroupState) bool {
	return coord.LegalTransition(t, from, to)
}

// LegalGroupTransition reports whether Kafka allows a classic group to
// move from -> to.
func LegalGroupTransition(from, to GroupState) bool { return coord.LegalGroupTransition(from, to) }

// The client's phases, loop states, commit and producer modes.
const (
	PhaseFinding          = client.PhaseFinding
	PhaseJoining          = client.PhaseJoining
	PhaseSyncing          = client.PhaseSyncing
	PhaseFetchingOffsets  = client.PhaseFetchingOffsets
	PhaseStable           = client.PhaseStable
	PhaseOut              = client.PhaseOut
	PhaseClosed           = client.PhaseClosed
	LoopIdle              = client.LoopIdle
	LoopFetching          = client.LoopFetching
	LoopProcessing        = client.LoopProcessing
	LoopCommitting        = client.LoopCommitting
	LoopFlushing          = client.LoopFlushing
	LoopInitPID           = client.LoopInitPID
	LoopTxnOffsets        = client.LoopTxnOffsets
	LoopTxnEnd            = client.LoopTxnEnd
	LoopWaiting           = client.LoopWaiting
	CommitAuto            = client.CommitAuto
	CommitAfter           = client.CommitAfter
	CommitBefore          = client.CommitBefore
	ProducerPlain         = client.ProducerPlain
	ProducerIdempotent    = client.ProducerIdempotent
	ProducerTransactional = client.ProducerTransactional
)
