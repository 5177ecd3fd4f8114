package assign

// rangeAssignor is Kafka's RangeAssignor (eager): each topic on its own, its
// subscribers in Kafka's member order (static members by group.instance.id,
// then dynamic members by member id); with n partitions and k subscribers
// every subscriber gets a contiguous range of n/k partitions and the first
// n%k subscribers one more.
type rangeAssignor struct{}

func (rangeAssignor) Name() string       { return "range" }
func (rangeAssignor) Protocol() Protocol { return Eager }

func (rangeAssignor) Assign(in Input) Assignment {
	tp := newTopology(in.Members, in.Partitions).withTopicOf()
	subscribers := make([][]int32, len(tp.names))
	for _, mi := range kafkaOrder(in.Members) {
		for _, t := range tp.subs(in.Members[mi]) {
			subscribers[t] = append(subscribers[t], int32(mi))
		}
	}
	lists := make([][]int32, len(in.Members))
	for t, subs := range subscribers {
		if len(subs) == 0 {
			continue
		}
		n, k := tp.count(int32(t)), int32(len(subs))
		per, extra := n/k, n%k
		for i, m := range subs {
			i := int32(i)
			start := per*i + min(i, extra)
			length := per
			if i < extra {
				length++
			}
			for g := tp.base[t] + start; g < tp.base[t]+start+length; g++ {
				lists[m] = append(lists[m], g)
			}
		}
	}
	return tp.assignment(memberIDs(in.Members), lists)
}

func memberIDs(members []Member) []string {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.MemberID
	}
	return ids
}
