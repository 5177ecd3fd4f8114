package client

import (
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// CommitMode is when a member commits its offsets.
type CommitMode string

const (
	CommitAuto   CommitMode = "auto"   // enable.auto.commit: positions of earlier polls, every interval
	CommitAfter  CommitMode = "after"  // commitSync() after processing the batch: at-least-once
	CommitBefore CommitMode = "before" // commitSync() before processing the batch: at-most-once
)

// ProducerMode is how a member's producer writes its invoices.
type ProducerMode string

const (
	ProducerPlain         ProducerMode = "plain"
	ProducerIdempotent    ProducerMode = "idempotent"
	ProducerTransactional ProducerMode = "transactional"
)

// ClientConfig is the configuration of one member (consumer + producer).
// Every field is a Kafka client config, counted in ticks where Kafka counts
// milliseconds.
type ClientConfig struct {
	// Assignor is partition.assignment.strategy: the assignors in the
	// member's order of preference, comma-separated as Kafka's LIST
	// config takes them (range, or cooperative-sticky,range). A process
	// keeps the list it started with (ConsumerCoordinator reads it at
	// construction), but for the page's shortcut (World.Set for every
	// member).
	Assignor       string
	StickyRules    assign.StickyRules
	SessionTimeout int // session.timeout.ms
	// HeartbeatInterval is heartbeat.interval.ms, the classic heartbeat
	// thread's period: 0 on the page's scale (the seed's implicit
	// heartbeat, heard every tick), Kafka's 3000 ms in real time.
	HeartbeatInterval  int
	MaxPollInterval    int // max.poll.interval.ms (also the rebalance timeout)
	MaxPollRecords     int // max.poll.records
	Commit             CommitMode
	AutoCommitInterval int    // auto.commit.interval.ms
	Idempotence        bool   // enable.idempotence
	TransactionalID    string // transactional.id ("" = none)
	TransactionTimeout int    // transaction.timeout.ms
	RetryBackoff       int    // retry.backoff.ms
	// MaxInFlight is max.in.flight.requests.per.connection, kept per
	// output partition (producer.flight): at most this many Produce
	// requests of one partition in flight, the rest held in order; 0 is
	// no limit (the page's world, as kgrepl always was). Kafka's default
	// and the idempotent producer's most is 5 (MaxInFlight).
	MaxInFlight int
	// Linger is linger.ms: 0 (the page's) sends the invoices of each run
	// of one input partition's records at once, a Produce per output
	// partition; more gathers every invoice the member's producer sends
	// in its turn of the tick into one batch per output partition
	// (producer.lingerAppend says how this simplifies Kafka's).
	Linger         int
	RequestTimeout int    // request.timeout.ms
	InstanceID     string // group.instance.id ("" = dynamic)
	// GroupProtocol is group.protocol: classic (JoinGroup/SyncGroup) or
	// consumer (KIP-848's ConsumerGroupHeartbeat). A process keeps the
	// protocol it started with.
	GroupProtocol string
	// RemoteAssignor is group.remote.assignor: the server-side assignor a
	// consumer-protocol member asks for (uniform or range).
	RemoteAssignor string
	// Processing time per record: ProcessTicks ticks for every
	// ProcessRecords records (0 or 1: one record), so a record may take
	// several ticks (3: one every 3 ticks) or a part of one (1 tick for 50
	// records: 50 a tick; 3 for 5: 5 records every 3 ticks). A member's
	// throughput is finite: ProcessRecords / ProcessTicks records a tick.
	ProcessTicks   int
	ProcessRecords int
	SlowTicks      int // ticks to process a record marked slow
}

// processBudget is the work a member does in one tick of processing, in
// units where a record costs ProcessTicks and a tick gives ProcessRecords
// (pollLoop.work).
func (c ClientConfig) processBudget() int64 {
	return int64(max(c.ProcessRecords, 1))
}

// Producer is the producer mode the config amounts to.
func (c ClientConfig) Producer() ProducerMode {
	switch {
	case c.TransactionalID != "":
		return ProducerTransactional
	case c.Idempotence:
		return ProducerIdempotent
	}
	return ProducerPlain
}

// Assignors is partition.assignment.strategy as a list, in order.
func (c ClientConfig) Assignors() []string { return strings.Split(c.Assignor, ",") }

// RebalanceProtocol is the classic rebalance protocol the member runs,
// as ConsumerCoordinator's constructor picks it from its assignors
// (assign.ListProtocol): cooperative only if every assignor it lists
// supports it, so cooperative-sticky,range is eager.
func (c ClientConfig) RebalanceProtocol() assign.Protocol {
	if !strings.Contains(c.Assignor, ",") {
		// One assignor (Assignors' list of one), without making the list:
		// asked at every poll() of a rebalance, by each of 1,000 members.
		return assign.ListProtocol([]string{c.Assignor})
	}
	return assign.ListProtocol(c.Assignors())
}

// joinTimeoutTicks is AbstractCoordinator's JoinGroup request timeout:
// max(request.timeout.ms, rebalance timeout + JOIN_GROUP_TIMEOUT_LAPSE).
// Kafka's lapse is 5 s; kgrepl counts it as 1 tick plus the 2-tick round
// trip a tick model adds.
func (c ClientConfig) joinTimeoutTicks() int {
	t := c.MaxPollInterval + 3
	if c.RequestTimeout > t {
		t = c.RequestTimeout
	}
	return t
}
