// Package assign holds the partition assignors a consumer-group leader runs
// client-side during SyncGroup: range, round-robin, sticky and
// cooperative-sticky, the last two with two rule sets (the seed's small
// deterministic rules and Kafka's own sticky algorithm).
//
// Assignors are pure functions of their Input: the same input gives the same
// Assignment, byte for byte. Nothing here iterates a Go map without sorting.
package assign

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TopicPartition names one partition of one topic (sim/wire's: the engine
// and the assignors speak of partitions the same way).
type TopicPartition = wire.TopicPartition

// ParsePartitions reads a list of partitions spelled as String spells them,
// separated by spaces or commas ("orders-0 orders-1" or "t1-0, t1-1", as
// Kafka's tests print lists); nil for an empty list. The tests of the
// assignors and of reconciliation write their partitions this way.
func ParsePartitions(spec string) ([]TopicPartition, error) {
	var out []TopicPartition
	for _, f := range strings.Fields(strings.ReplaceAll(spec, ",", " ")) {
		i := strings.LastIndexByte(f, '-')
		if i <= 0 {
			return nil, fmt.Errorf("partition %q: want a topic name, '-' and a partition number, e.g. orders-2", f)
		}
		p, err := strconv.Atoi(f[i+1:])
		if err != nil {
			return nil, fmt.Errorf("partition %q: %q after the last '-' is not a partition number", f, f[i+1:])
		}
		out = append(out, TopicPartition{Topic: f[:i], Partition: p})
	}
	return out, nil
}

// SortPartitions sorts in place by (topic, partition).
// (topic, partition) is a total order, so the result does not depend on
// the sort; slices.SortFunc, unlike sort.Slice, allocates nothing.
func SortPartitions(ps []TopicPartition) {
	slices.SortFunc(ps, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
}

// Protocol is the rebalance protocol an assignor runs under.
type Protocol int

const (
	// Eager: every member revokes everything before JoinGroup.
	Eager Protocol = iota
	// Cooperative: KIP-429 incremental rebalancing.
	Cooperative
)

func (p Protocol) String() string {
	if p == Cooperative {
		return "cooperative"
	}
	return "eager"
}

// Member is one member as the leader's assignor sees it: its subscription
// and what it claims to own (sim/wire's: the JoinGroup answer carries it).
type Member = wire.Member

// Input is everything an assignor sees.
type Input struct {
	Members []Member
	// Partitions gives each topic's partition count.
	Partitions map[string]int
}

// Assignment maps member id to its partitions, sorted by (topic, partition).
// Every member of the input has an entry, possibly empty (sim/wire's: the
// leader's SyncGroup carries it).
type Assignment = wire.Assignment

// Assignor is one partition.assignment.strategy.
type Assignor interface {
	Name() string // range, roundrobin, sticky, cooperative-sticky
	Protocol() Protocol
	Assign(in Input) Assignment
}

// StickyRules picks the rule set of the two sticky assignors.
type StickyRules int

const (
	// SeedRules: keep what each member owns, give unowned partitions in order
	// to the member with the fewest (ties: lower id), then while the counts
	// differ by more than one the member with the most (ties: lower id) gives
	// its last partition to the member with the fewest.
	SeedRules StickyRules = iota
	// KafkaRules: Kafka 4.x's AbstractStickyAssignor.
	KafkaRules
)

func (r StickyRules) String() string {
	if r == KafkaRules {
		return "kafka"
	}
	return "seed"
}

// Strategies lists the strategy names New accepts, in the order help shows them.
var Strategies = []string{"range", "roundrobin", "sticky", "cooperative-sticky"}

// New returns the assignor for a partition.assignment.strategy name.
func New(name string, rules StickyRules) (Assignor, error) {
	switch name {
	case "range":
		return rangeAssignor{}, nil
	case "roundrobin":
		return roundRobinAssignor{}, nil
	case "sticky":
		return stickyAssignor{rules: rules}, nil
	case "cooperative-sticky":
		return cooperativeStickyAssignor{rules: rules}, nil
	}
	return nil, fmt.Errorf("unknown partition.assignment.strategy %q (allowed: range, roundrobin, sticky, cooperative-sticky)", name)
}
