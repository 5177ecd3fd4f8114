package assign

// partition.assignment.strategy as a list (SPEC §4a): how Kafka's client
// reads it, which rebalance protocol a list makes a client use, and how a
// classic group chooses one assignor from its members' lists.

import (
	"fmt"
	"strings"

	"github.com/kgrepl/kgrepl/sim/javaorder"
)

// ParseList reads a partition.assignment.strategy value: assignor names
// separated by commas, in the member's order of preference, as Kafka's
// client takes the setting (a LIST config). Kafka refuses an empty list
// (subscribe(): IllegalStateException "Must configure at least one
// partition assigner class name"), a name it cannot load
// (ConsumerPartitionAssignor.getAssignorInstances: ClassNotFoundException,
// an empty element included) and a name used twice (getAssignorInstances:
// KafkaException "The assignor name ... is used in more than one
// assignor"); so does kgrepl, naming the value and what is allowed.
func ParseList(v string) ([]string, error) {
	const allowed = "range, roundrobin, sticky, cooperative-sticky"
	if v == "" {
		return nil, fmt.Errorf("partition.assignment.strategy: an empty list (name at least one of %s; a list is comma-separated, e.g. cooperative-sticky,range)", allowed)
	}
	names := strings.Split(v, ",")
	for i, n := range names {
		if n == "" {
			return nil, fmt.Errorf("partition.assignment.strategy: %q has an empty name at position %d (a list is names separated by single commas, e.g. cooperative-sticky,range)", v, i+1)
		}
		if !known(n) {
			if len(names) == 1 {
				return nil, fmt.Errorf("partition.assignment.strategy: %q is not one of %s", v, allowed)
			}
			return nil, fmt.Errorf("partition.assignment.strategy: %q in %q is not one of %s", n, v, allowed)
		}
		for _, m := range names[:i] {
			if m == n {
				return nil, fmt.Errorf("partition.assignment.strategy: %q names %s twice (Kafka's client refuses an assignor name used twice; list each once)", v, n)
			}
		}
	}
	return names, nil
}

func known(name string) bool {
	for _, s := range Strategies {
		if s == name {
			return true
		}
	}
	return false
}

// supportedProtocols is ConsumerPartitionAssignor.supportedProtocols:
// every built-in assignor supports EAGER; CooperativeStickyAssignor
// supports COOPERATIVE as well.
func supportedProtocols(name string) []Protocol {
	if name == "cooperative-sticky" {
		return []Protocol{Cooperative, Eager}
	}
	return []Protocol{Eager}
}

// ListProtocol is the rebalance protocol a client with these assignors
// uses, as ConsumerCoordinator's constructor picks it: the protocols every
// assignor of the list supports, the highest of them (EAGER < COOPERATIVE).
// So a client is cooperative only if every assignor it lists is
// cooperative-sticky: cooperative-sticky,range rebalances eagerly, whatever
// assignor the group picks. (Every built-in supports EAGER, so the common
// set is never empty, which the constructor would refuse.)
func ListProtocol(names []string) Protocol {
	if len(names) == 0 {
		return Eager
	}
	common := supportedProtocols(names[0])
	for _, n := range names[1:] {
		s := supportedProtocols(n)
		kept := common[:0:0]
		for _, p := range common {
			for _, q := range s {
				if p == q {
					kept = append(kept, p)
				}
			}
		}
		common = kept
	}
	best := Eager
	for _, p := range common {
		if p > best {
			best = p
		}
	}
	return best
}

// Candidates are the assignors every member lists (ClassicGroup's
// candidateProtocols: the names whose count of supporting members is the
// group's size), in the order the first list names them.
func Candidates(lists [][]string) []string {
	if len(lists) == 0 {
		return nil
	}
	var out []string
	for _, n := range lists[0] {
		all := true
		for _, l := range lists[1:] {
			if !contains(l, n) {
				all = false
				break
			}
		}
		if all {
			out = append(out, n)
		}
	}
	return out
}

// Supports is ClassicGroup.supportsProtocols outside the Empty state (an
// Empty group takes any non-empty list): whether some assignor of list is
// listed by every member whose lists are given. A member rejoining is
// counted with the list it joined with before, as Kafka counts before the
// request.
func Supports(lists [][]string, list []string) bool {
	for _, n := range list {
		all := true
		for _, l := range lists {
			if !contains(l, n) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// SelectProtocol is ClassicGroup.selectProtocol: among the candidates
// (the assignors every member lists), each member votes for the first of
// its own list that is a candidate (ClassicGroupMember.vote), and the most
// votes win. Kafka tallies the votes in a HashMap and takes
// entrySet().stream().max(comparingInt(getValue)): Stream.max keeps the
// first of equal maxima, so a tie goes to the name Java's HashMap iterates
// first (for the built-in names in a 16-bucket table: sticky, range,
// roundrobin, cooperative-sticky), whatever the members' order. ok is
// false when the lists share no assignor (Kafka's vote throws; its
// coordinator refuses such a member before it gets here).
func SelectProtocol(lists [][]string) (name string, ok bool) {
	cands := Candidates(lists)
	if len(cands) == 0 {
		return "", false
	}
	votes := map[string]int{}
	var order []string // the names in the order of their first vote, as put in the HashMap
	for _, l := range lists {
		for _, n := range l {
			if contains(cands, n) {
				if votes[n] == 0 {
					order = append(order, n)
				}
				votes[n]++
				break
			}
		}
	}
	iter, _ := javaorder.Order(order, javaorder.StringHash, javaorder.StringCompare, javaorder.DefaultCapacity)
	for _, n := range iter {
		if !ok || votes[n] > votes[name] {
			name, ok = n, true
		}
	}
	return name, ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
