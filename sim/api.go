package sim

// The names of sim/wire that the World's users (the kernel, the views, the
// tests) read through the World: the World is their one door into the
// engine, and these are the words on it.

import (
	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/trace"
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
	// EventKind says what happened.
	EventKind = trace.EventKind
	// Event is one thing that happened, for the trace and the views.
	Event = trace.Event
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
)
