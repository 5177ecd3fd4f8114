package assign

// roundRobinAssignor is Kafka's RoundRobinAssignor (eager): every partition
// of every subscribed topic, in (topic, partition) order, goes to the next
// member of a circular walk over the members in Kafka's member order; members
// not subscribed to the partition's topic are skipped (and the walk moves
// past them).
type roundRobinAssignor struct{}

func (roundRobinAssignor) Name() string       { return "roundrobin" }
func (roundRobinAssignor) Protocol() Protocol { return Eager }

func (roundRobinAssignor) Assign(in Input) Assignment {
	tp := newTopology(in.Members, in.Partitions).withTopicOf()
	order := kafkaOrder(in.Members)
	n := len(order)
	lists := make([][]int32, len(in.Members))
	if n > 0 {
		// subscribed.has(t*n + i): the i-th member in Kafka's order takes topic t.
		subscribed := newBitset(len(tp.names) * n)
		for i, mi := range order {
			for _, t := range tp.subs(in.Members[mi]) {
				subscribed.set(int(t)*n + i)
			}
		}
		next := 0
		for g := int32(0); g < int32(tp.total()); g++ {
			row := int(tp.topicOf[g]) * n
			// Every numbered topic has a subscriber, so this ends.
			for !subscribed.has(row + next) {
				next = (next + 1) % n
			}
			lists[order[next]] = append(lists[order[next]], g)
			next = (next + 1) % n
		}
	}
	return tp.assignment(memberIDs(in.Members), lists)
}
