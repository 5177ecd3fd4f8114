package topo

import (
	"fmt"
	"strings"
)

// TopicSpec is one topic and its partition count.
type TopicSpec struct {
	Name       string
	Partitions int
}

// Topology is the shape of a world.
type Topology struct {
	Inputs  []TopicSpec
	Output  TopicSpec
	Members int // members C1..Cn at tick 0, Stable in generation 1
	Group   string
}

// Default is the seed's world (SPEC §2).
func Default() Topology {
	return Topology{
		Inputs:  []TopicSpec{{"orders", 3}, {"payments", 3}},
		Output:  TopicSpec{"invoices", 1},
		Members: 1,
		Group:   "billing",
	}
}

// Validate checks the topology's names and counts.
func (t Topology) Validate() error {
	if len(t.Inputs) == 0 {
		return fmt.Errorf("a world needs at least one input topic")
	}
	seen := map[string]bool{}
	all := append(append([]TopicSpec{}, t.Inputs...), t.Output)
	for _, s := range all {
		if !ValidName(s.Name) || strings.HasPrefix(s.Name, "__") {
			return fmt.Errorf("topic %q: a name of letters, digits, '.', '_' and '-' (not starting with __)", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("topic %q is named twice", s.Name)
		}
		seen[s.Name] = true
		if s.Partitions < 1 || s.Partitions > 1_000_000 {
			return fmt.Errorf("topic %s: %d partitions (allowed: 1 to 1000000)", s.Name, s.Partitions)
		}
	}
	if t.Members < 0 || t.Members > 100_000 {
		return fmt.Errorf("--members %d (allowed: 0 to 100000)", t.Members)
	}
	return nil
}

// ValidName reports whether s is a legal topic (or transactional id, or
// group instance id) name here: letters, digits, '.', '_' and '-'.
func ValidName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}
