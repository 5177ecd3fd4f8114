package kafkafmt

import (
	"fmt"
	"slices"
	"strings"
)

// assignment is one assignment cell read: tps sorted by topic then
// partition, or, for Kafka 3.8-3.9's form without topics, the partition
// numbers of each topic in topicless.
type assignment struct {
	tps       []TopicPartition
	topicless [][]int32
	style     string // "named" (topic(p,p)), "kafka4" (topic:p,p) or "" for "-"
}

const assignmentForms = `allowed: - (none), topic:p,p;topic:p (Kafka 4.x), topic(p,p), topic(p) (Kafka 2.3-3.7), (p,p), (p) (Kafka 3.8-3.9)`

// parseAssignment reads an assignment as the tool prints it
// (ConsumerGroupCommand.getAssignmentString in 4.x; printMembers before):
// "-" for none; Kafka 4.x's topic:0,1;other:2 (4.0 sorts the partitions as
// strings, 4.1 as numbers); Kafka 2.3-3.7's topic(0,1), other(2); Kafka
// 3.8-3.9's (0,1), (2), which lost the topics. kgrepl's own views join
// topic(p) groups with "," alone, and that is accepted too.
func (p *describeParser) parseAssignment(s string) (assignment, error) {
	if s == "-" {
		return assignment{tps: []TopicPartition{}}, nil
	}
	if s == "" {
		return assignment{}, fmt.Errorf("is empty; %s", assignmentForms)
	}
	if strings.Contains(s, "(") {
		return p.parseAssignment3(s)
	}
	return p.parseAssignment4(s)
}

func (p *describeParser) parseAssignment4(s string) (assignment, error) {
	a := assignment{style: "kafka4"}
	for _, part := range strings.Split(s, ";") {
		topic, nums, ok := strings.Cut(part, ":")
		if !ok {
			return a, fmt.Errorf("has %s without topic:partitions; %s", quote(part), assignmentForms)
		}
		if msg := topicProblem(topic); msg != "" {
			return a, fmt.Errorf("has a topic %s that is not a topic name (%s)", quote(topic), msg)
		}
		topic = p.intern(topic)
		ps, err := partitionList(nums)
		if err != nil {
			return a, err
		}
		for _, n := range ps {
			a.tps = append(a.tps, TopicPartition{Topic: topic, Partition: n})
		}
	}
	return a, sortUnique(a.tps)
}

// sortUnique sorts tps and refuses one listed twice.
func sortUnique(tps []TopicPartition) error {
	sortTPs(tps)
	for i := 1; i < len(tps); i++ {
		if tps[i] == tps[i-1] {
			return fmt.Errorf("lists %s twice", tps[i])
		}
	}
	return nil
}

func (p *describeParser) parseAssignment3(s string) (assignment, error) {
	var a assignment
	rest := s
	named, unnamed := false, false
	for first := true; rest != ""; first = false {
		if !first {
			switch {
			case strings.HasPrefix(rest, ", "):
				rest = rest[2:]
			case strings.HasPrefix(rest, ","):
				rest = rest[1:]
			default:
				return a, fmt.Errorf("has %s after a ')': groups are joined by \", \"; %s", quote(rest), assignmentForms)
			}
		}
		open := strings.IndexByte(rest, '(')
		closing := strings.IndexByte(rest, ')')
		if open < 0 || closing < open {
			return a, fmt.Errorf("has %s, not topic(p,p); %s", quote(rest), assignmentForms)
		}
		topic, nums := rest[:open], rest[open+1:closing]
		rest = rest[closing+1:]
		ps, err := partitionList(nums)
		if err != nil {
			return a, err
		}
		if topic == "" {
			unnamed = true
			a.topicless = append(a.topicless, ps)
			continue
		}
		named = true
		if msg := topicProblem(topic); msg != "" {
			return a, fmt.Errorf("has a topic %s that is not a topic name (%s)", quote(topic), msg)
		}
		topic = p.intern(topic)
		for _, n := range ps {
			a.tps = append(a.tps, TopicPartition{Topic: topic, Partition: n})
		}
	}
	if named && unnamed {
		return a, fmt.Errorf("mixes groups with and without a topic; %s", assignmentForms)
	}
	if named {
		a.style = "named"
		return a, sortUnique(a.tps)
	}
	return a, nil
}

// partitionList reads "0,1,2": partition numbers, each once.
func partitionList(s string) ([]int32, error) {
	if s == "" {
		return nil, fmt.Errorf("has a topic with no partitions; %s", assignmentForms)
	}
	out := make([]int32, 0, strings.Count(s, ",")+1)
	for {
		f, rest, more := strings.Cut(s, ",")
		n, err := parseDecimal(f, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("has %s where a partition number goes; %s", quote(f), assignmentForms)
		}
		out = append(out, int32(n))
		if !more {
			break
		}
		s = rest
	}
	sorted := append([]int32(nil), out...)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fmt.Errorf("lists partition %d twice in one topic", sorted[i])
		}
	}
	return out, nil
}
