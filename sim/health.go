package sim

import "strings"

// FatalStop is a client whose newest process stopped with a fatal error.
type FatalStop struct {
	Client string
	// Error is the Kafka error that stopped it (UNRELEASED_INSTANCE_ID),
	// or what the client says when no error names it ("producer fenced").
	Error string
	// Reason is the whole reason, as the trace says it
	// ("UNRELEASED_INSTANCE_ID on ConsumerGroupHeartbeat").
	Reason string
}

// Health is the group as it stands: which clients run, which stopped with
// a fatal error, and which subscribed partitions have no member or one
// whose process is down.
type Health struct {
	Clients int      // clients that ever ran a process
	Running []string // clients whose newest process runs and is not a zombie, in Kafka's string order
	// Stopped lists the clients whose newest process stopped with a fatal
	// error; Down those whose newest process is not running otherwise
	// (crashed, closed, a zombie), in Kafka's string order.
	Stopped []FatalStop
	Down    []string
	// Unowned lists the subscribed input partitions no member of the group
	// holds; HeldByDown those held by a member whose process is not
	// running; in the world's input order.
	Unowned    []TopicPartition
	HeldByDown []TopicPartition
}

// OK reports whether the group is healthy: no member stopped with a fatal
// error, and every subscribed partition held by a member whose process
// runs.
func (h Health) OK() bool {
	return len(h.Stopped) == 0 && len(h.Unowned) == 0 && len(h.HeldByDown) == 0
}

// Health is the group's health now.
func (w *World) Health() Health {
	h := Health{Clients: len(w.clients)}
	for _, c := range w.clients {
		m := w.current[c]
		switch reason, fatal := w.Unavail.stopOf(c, m.Inc); {
		case m.Alive && !m.Zombie:
			h.Running = append(h.Running, c)
		case fatal && !m.Alive:
			h.Stopped = append(h.Stopped, FatalStop{Client: c, Error: errorOf(reason), Reason: reason})
		default:
			h.Down = append(h.Down, c)
		}
	}
	subscribed := map[string]bool{}
	for gm := range w.Group.AllMembers() {
		for _, t := range gm.Topics {
			subscribed[t] = true
		}
	}
	for _, c := range w.clients {
		for _, t := range w.current[c].Topics {
			subscribed[t] = true
		}
	}
	owners := ownersOf(w, nil)
	for i, tp := range w.layout.Inputs() {
		o := owners[i]
		switch {
		case !subscribed[tp.Topic]:
		case o.inc == 0:
			h.Unowned = append(h.Unowned, tp)
		default:
			if m := w.process(o.client, o.inc); m == nil || !m.Alive || m.Zombie {
				h.HeldByDown = append(h.HeldByDown, tp)
			}
		}
	}
	return h
}

// errorOf is the Kafka error a fatal stop's reason starts with
// ("UNRELEASED_INSTANCE_ID on ConsumerGroupHeartbeat"), or the reason
// itself when it names none ("producer fenced").
func errorOf(reason string) string {
	word, _, _ := strings.Cut(reason, " ")
	for _, r := range word {
		if (r < 'A' || r > 'Z') && r != '_' {
			return reason
		}
	}
	if word == "" {
		return reason
	}
	return word
}
