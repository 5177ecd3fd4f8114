package sim

import (
	"fmt"
	"regexp"
	"strings"
)

// The world's inputs: each is applied between ticks, checks its arguments
// first, and leaves the world unchanged when it returns an error.

// clientIDPattern is a client id: C1, C2, ... C999999, with no leading zero
// (C01 would be a client beside C1, and C0 comes before the first).
var clientIDPattern = regexp.MustCompile(`^C[1-9][0-9]{0,5}$`)

// IsClientID reports whether s is a client id (C1 to C999999).
func IsClientID(s string) bool { return clientIDPattern.MatchString(s) }

// checkClientID refuses what is not a client id, saying what one is.
func checkClientID(client string) error {
	if IsClientID(client) {
		return nil
	}
	return fmt.Errorf("%s is not a client id (client ids are C1 to C999999: C and a number from 1 to 999999, no leading zero)", client)
}

// Join starts a member process that joins the group. topics nil means
// every input topic.
func (w *World) Join(client string, static bool, topics []string) error {
	if err := checkClientID(client); err != nil {
		return fmt.Errorf("join %s: %v", client, err)
	}
	if m := w.current[client]; m != nil && m.Alive {
		who := "member " + m.MemberID
		if m.MemberID == "" {
			who = "joining, no member id yet" // a process that has not had its JoinGroup or first heartbeat answered
		}
		return fmt.Errorf("join %s: %s is already running (%s); use restart %s for a new instance", client, client, who, client)
	}
	for _, t := range topics {
		found := false
		for _, in := range w.Topo.Inputs {
			if in.Name == t {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("join %s --topics: no input topic %q (input topics: %s)", client, t, strings.Join(w.layout.InputTopics(), ","))
		}
	}
	if static && w.Cfg.ForClient(client).InstanceID == "" {
		w.Cfg.Overrides = append(w.Cfg.Overrides, Override{Client: client, Key: "group.instance.id", Value: client})
	}
	m := w.newProcess(client)
	if len(topics) > 0 {
		m.Topics = append([]string{}, topics...)
	}
	w.touch(m)
	m.Start()
	return nil
}

// Close is the graceful shutdown real applications use: consumer.wakeup()
// from a shutdown hook, so the poll loop finishes the batch in hand (and
// commits it, as the commit mode says), its next poll() throws
// WakeupException, and close() commits (auto-commit: the positions, now all
// processed; KafkaConsumer.close -> ConsumerCoordinator.close ->
// maybeAutoCommitOffsetsSync) and sends LeaveGroup (none for a static
// member; AbstractCoordinator.maybeLeaveGroup).
func (w *World) Close(client string) error { return w.close(client, false) }

// CloseNow breaks out of the batch after the record in hand and closes:
// under auto-commit close() commits the positions poll() returned, so the
// rest of the batch is skipped (a real Kafka pitfall).
func (w *World) CloseNow(client string) error { return w.close(client, true) }

func (w *World) close(client string, now bool) error {
	verb := "close"
	if now {
		verb = "close --now"
	}
	m, err := w.live(verb, client)
	if err != nil {
		return err
	}
	w.touch(m)
	if !m.Close(now) {
		return fmt.Errorf("%s %s: %s is already closing", verb, client, client)
	}
	return nil
}

// CrashNow kills the process at once.
func (w *World) CrashNow(client string) error {
	m, err := w.live("crash", client)
	if err != nil {
		return err
	}
	w.touch(m)
	m.Crash(false)
	return nil
}

// CrashAfter crashes the process once it has finished n more records.
func (w *World) CrashAfter(client string, n int) error {
	m, err := w.live("crash", client)
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("crash %s after %d: N is a number of records >= 1 (use crash %s now to crash at once)", client, n, client)
	}
	w.touch(m)
	m.CrashAfter(n)
	return nil
}

// Restart starts a new instance with the same client id,
// group.instance.id and transactional.id. The old process stops, unless it
// is stuck in a slow record: then it runs on as a zombie.
func (w *World) Restart(client string) error {
	old := w.current[client]
	if old == nil {
		return fmt.Errorf("restart %s: no member %s (members: %s)", client, client, w.running())
	}
	w.touch(old)
	if old.Alive {
		if busy, slow := old.Processing(); busy && slow {
			old.Zombie = true
			w.trace.Eventf(EvZombie, client, "%s (process %d) is stuck in a slow record and keeps running as a zombie", client, old.Inc)
		} else {
			w.trace.Eventf(EvClosed, client, "%s (process %d) stops for the restart", client, old.Inc)
			old.Ended = "stopped for the restart"
			old.Stop()
		}
	}
	w.startInstance(client)
	return nil
}

// Slow marks the member's next record slow.
func (w *World) Slow(client string) error {
	m, err := w.live("slow", client)
	if err != nil {
		return err
	}
	w.touch(m)
	m.Slow()
	return nil
}

// ProduceInput appends n upstream records to an input partition.
func (w *World) ProduceInput(tp TopicPartition, n int) error {
	isInput := false
	for _, t := range w.layout.Inputs() {
		if t == tp {
			isInput = true
		}
	}
	if !isInput {
		return fmt.Errorf("produce %s: not an input partition (input partitions: %s)", tp, strings.Join(partitionNames(w.layout.Inputs()), " "))
	}
	if n < 1 || n > 1_000_000 {
		return fmt.Errorf("produce %s %d: N is a number of records from 1 to 1000000", tp, n)
	}
	first := w.broker.Log(tp).HW()
	w.broker.Append(tp, n)
	w.Unavail.touch(w, []TopicPartition{tp})
	// "%d records appended to %s (%s..%s)" (a steady producer sends this
	// every few ticks).
	w.trace.Input(tp, n, first)
	return nil
}

// partitionNames spells tps by their full names.
func partitionNames(tps []TopicPartition) []string {
	var out []string
	for _, tp := range tps {
		out = append(out, tp.String())
	}
	return out
}

// Set changes a setting for every client (client "") or one client. Live
// members take it at once, except group.instance.id and group.protocol,
// which a process reads when it starts, the producer settings
// (enable.idempotence, transactional.id), which a member takes at its next
// batch boundary by closing its producer and creating a new one
// (replaceProducer), and partition.assignment.strategy set for one client,
// which its next process reads (Kafka's ConsumerCoordinator takes the
// assignor list, and with it eager or cooperative, when the consumer is
// created: SPEC §4a). Set for every client, partition.assignment.strategy
// is the seed's shortcut: every live member and the coordinator's record
// of every member switch at once, from the next rebalance.
func (w *World) Set(client, key, value string) error {
	if client != "" {
		// The caller (kernel's set) names the command.
		if err := checkClientID(client); err != nil {
			return fmt.Errorf("%s.%s: %v", client, key, err)
		}
	}
	if key == "tick.ms" && w.Tick > 0 && w.Cfg.Time == TimeMS {
		// Times already shown are ticks x tick.ms: a new tick length
		// would rewrite the past. (A value refused anyway says why first.)
		if c := w.Cfg.Clone(); c.Set(client, key, value) != nil {
			return c.Set(client, key, value)
		}
		return fmt.Errorf("tick.ms: the clock is at tick %d, and a real-time world's tick keeps its length once the clock runs (the times already shown would change); set it at tick 0 (after new)", w.Tick)
	}
	if c := w.Cfg.Clone(); client == "" && c.Set(client, key, value) == nil && c.HistoryWindow() != w.window.ticks {
		// history.ms, or a time unit or tick that rounds it anew
		if err := w.canSwitchHistory(c.HistoryWindow()); err != nil {
			return fmt.Errorf("%s %s: %v", key, value, err)
		}
	}
	if err := w.Cfg.Set(client, key, value); err != nil {
		return err
	}
	w.switchHistory(w.Cfg.HistoryWindow())
	w.coordCfg = w.Cfg.EngineCoord()
	for _, c := range w.clients {
		if client != "" && c != client {
			continue
		}
		m := w.current[c]
		if m == nil || !m.Alive {
			continue
		}
		w.touch(m)
		m.Reconfigure(w.Cfg.Engine(c), client == "" && key == "partition.assignment.strategy")
	}
	if client == "" && key == "partition.assignment.strategy" {
		w.Group.ReplaceProtocols(func(c string) []string { return w.Cfg.ForClient(c).Assignors() })
	}
	return nil
}

// SetProducer is the shortcut `set producer plain|idempotent|transactional`.
func (w *World) SetProducer(mode string) error {
	switch ProducerMode(mode) {
	case ProducerPlain:
		if err := w.Set("", "transactional.id", "none"); err != nil {
			return err
		}
		return w.Set("", "enable.idempotence", "false")
	case ProducerIdempotent:
		if err := w.Set("", "transactional.id", "none"); err != nil {
			return err
		}
		return w.Set("", "enable.idempotence", "true")
	case ProducerTransactional:
		return w.Set("", "transactional.id", "tx-"+ClientPlaceholder)
	}
	return fmt.Errorf("set producer: %q is not plain, idempotent or transactional", mode)
}
