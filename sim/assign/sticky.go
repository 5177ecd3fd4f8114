package assign

// stickyAssignor is partition.assignment.strategy "sticky": Kafka's
// StickyAssignor under the eager protocol. Members report what they owned
// (Kafka carries it in the subscription's user data) and the assignor keeps
// as much of it as the rules allow; Rules picks the seed's rules or Kafka's.
type stickyAssignor struct{ rules StickyRules }

func (stickyAssignor) Name() string       { return "sticky" }
func (stickyAssignor) Protocol() Protocol { return Eager }

func (a stickyAssignor) Assign(in Input) Assignment {
	if a.rules == KafkaRules {
		return kafkaSticky(in, false)
	}
	return seedSticky(in, nil)
}
