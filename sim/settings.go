// settings.go: the keys `set` takes, one Setting each (its value's rule,
// its doc, whether a client may have its own, how it reads and writes the
// Config), built once as the Settings table; config.go holds the Config
// they read and write, config_time.go how durations read in each clock.

package sim

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/assign/server"
)

// Setting describes one key `set` accepts.
type Setting struct {
	Key     string
	Allowed string // what values are allowed, for help and errors
	Client  bool   // can be set per client (set Cn.KEY VALUE)
	Doc     string
	get     func(*Config, *ClientConfig) string
	set     func(*Config, *ClientConfig, string) error
	// keepEarlier: what a client's config holds after this key is set
	// twice can depend on the first value, so an earlier per-client
	// override of it is kept when the client sets it again:
	// enable.auto.commit false turns auto into after but keeps before, and
	// transactional.id tx-C1 turns idempotence on, which a later none
	// leaves on. Every other setter writes the same fields whatever the
	// value and whatever they held.
	keepEarlier bool
	// Duration: the value is a time, in the world's unit (Config.Time).
	Duration bool
	// realKey, when set, is the key's name in real time (processing.ms
	// for processing.ticks); on the page's scale either name is taken.
	realKey string
	// min is a duration's smallest value (0: none allowed).
	min int
	// allowedMS and docMS, when set, are Allowed and Doc in real time, for
	// a setting whose real-time values are not a Duration's (processing.ms).
	allowedMS, docMS string
}

// Name is the key as a world with this configuration names it.
func (s Setting) Name(c *Config) string {
	if s.realKey != "" && c.Time == TimeMS {
		return s.realKey
	}
	return s.Key
}

// DocIn is Doc for a world with this configuration: in real time a
// duration counts milliseconds, not ticks.
func (s Setting) DocIn(c *Config) string {
	if s.docMS != "" && c.Time == TimeMS {
		return s.docMS
	}
	if !s.Duration || c.Time != TimeMS {
		return s.Doc
	}
	return strings.ReplaceAll(s.Doc, "ticks", "milliseconds")
}

// AllowedIn is Allowed for a world with this configuration: a duration's
// unit and bounds follow its clock.
func (s Setting) AllowedIn(c *Config) string {
	if s.allowedMS != "" && c.Time == TimeMS {
		return s.allowedMS
	}
	if !s.Duration || c.Time != TimeMS {
		return s.Allowed
	}
	from := strconv.Itoa(c.TickMS) + " (one tick)"
	if s.min == 0 {
		from = "0 (none), or " + from
	}
	return fmt.Sprintf("a whole number of milliseconds from %s to %d, rounded up to whole ticks", from, MaxDurationMS)
}

// intSetting is a per-client setting counted in unit (ticks, records), from 1 to 1000000.
func intSetting(key, unit, doc string, field func(*ClientConfig) *int) Setting {
	return Setting{Key: key, Allowed: "a whole number of " + unit + " from 1 to 1000000", Client: true, Doc: doc,
		get: func(_ *Config, c *ClientConfig) string { return strconv.Itoa(*field(c)) },
		set: func(_ *Config, c *ClientConfig, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1_000_000 {
				return fmt.Errorf("%s: %q is not a whole number from 1 to 1000000", key, v)
			}
			*field(c) = n
			return nil
		}}
}

// clientDuration is a per-client duration: ticks on the page's scale,
// milliseconds in real time.
func clientDuration(key, doc string, field func(*ClientConfig) *int) Setting {
	return clientDurationFrom(key, 1, doc, field)
}

// clientDurationFrom is a per-client duration of at least min (0: none).
func clientDurationFrom(key string, min int, doc string, field func(*ClientConfig) *int) Setting {
	return Setting{Key: key, Allowed: fmt.Sprintf("a whole number of ticks from %d to 1000000", min), Client: true, Doc: doc, Duration: true, min: min,
		get: func(_ *Config, c *ClientConfig) string { return strconv.Itoa(*field(c)) },
		set: func(w *Config, c *ClientConfig, v string) error {
			name := key
			if real := overrideDurations[key]; w.Time == TimeMS && real != "" {
				name = real
			}
			n, err := w.duration(name, v, min)
			if err != nil {
				return err
			}
			*field(c) = n
			return nil
		}}
}

// lingerSetting is linger.ms: a per-client duration from 0, which in real
// time may be under a tick (rounded up to one: lingerKey).
func lingerSetting() Setting {
	s := clientDurationFrom(lingerKey, 0, "ticks the producer lingers to gather invoices into one batch per output partition: 0 sends each run of one input partition's records at once; "+
		"more gathers every invoice a member sends in its turn of a tick into one Produce per output partition, sent at the end of its turn or before its next other request", func(c *ClientConfig) *int { return &c.Linger })
	s.set = func(w *Config, c *ClientConfig, v string) error {
		n, err := strconv.Atoi(v)
		if w.Time != TimeMS {
			if err != nil || n < 0 || n > maxDurationTicks {
				return fmt.Errorf("%s: %q is not a whole number from 0 to %d: 0 sends each run's invoices at once, more gathers a member's turn into one batch per output partition", lingerKey, v, maxDurationTicks)
			}
		} else if err != nil || n < 0 || n > MaxDurationMS {
			return fmt.Errorf("%s: %q is not a whole number of milliseconds from 0 to %d: 0 sends each run's invoices at once, more (rounded up to whole ticks, one at least) gathers a member's turn into one batch per output partition", lingerKey, v, MaxDurationMS)
		}
		c.Linger = n
		return nil
	}
	s.allowedMS = fmt.Sprintf("a whole number of milliseconds from 0 to %d, rounded up to whole ticks", MaxDurationMS)
	return s
}

// worldDuration is a world-level (broker) duration, at least min: ticks
// on the page's scale, milliseconds in real time.
func worldDuration(key string, min int, doc string, field func(*Config) *int) Setting {
	return Setting{Key: key, Allowed: fmt.Sprintf("a whole number of ticks from %d to 1000000", min), Doc: doc, Duration: true, min: min,
		get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(*field(w)) },
		set: func(w *Config, _ *ClientConfig, v string) error {
			n, err := w.duration(key, v, min)
			if err != nil {
				return err
			}
			*field(w) = n
			return nil
		}}
}

// worldMaxSize is a broker setting counting group members: 1 to Kafka's
// default, Integer.MAX_VALUE.
func worldMaxSize(key, doc string, field func(*Config) *int) Setting {
	return Setting{Key: key, Allowed: "a whole number of members from 1 to 2147483647", Doc: doc,
		get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(*field(w)) },
		set: func(w *Config, _ *ClientConfig, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > math.MaxInt32 {
				return fmt.Errorf("%s: %q is not a whole number from 1 to 2147483647", key, v)
			}
			*field(w) = n
			return nil
		}}
}

func boolValue(key, v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is not true or false", key, v)
}

// Settings lists every key, sorted by name.
var Settings = buildSettings()

func buildSettings() []Setting {
	var s []Setting
	for _, part := range [][]Setting{assignorSettings(), clientTimeSettings(), deliverySettings(), membershipSettings(), brokerGroupSettings(), worldSettings()} {
		s = append(s, part...)
	}
	sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key })
	return s
}

// assignorSettings are the keys that choose who reads which partition: the classic
// protocol's client-side assignors and their rules, the consumer protocol's
// server-side one.
func assignorSettings() []Setting {
	return []Setting{
		{Key: "partition.assignment.strategy", Allowed: "range | roundrobin | sticky | cooperative-sticky", Client: true,
			Doc: "the assignors in order of preference, one or a list as in Kafka (cooperative-sticky,range): the group runs the one its members vote for; " +
				"a member is cooperative only if every assignor it lists is. For every member it switches them all at the next rebalance (the seed's shortcut); " +
				"set Cn.partition.assignment.strategy takes effect when Cn next starts",
			get: func(_ *Config, c *ClientConfig) string { return c.Assignor },
			set: func(_ *Config, c *ClientConfig, v string) error {
				names, err := assign.ParseList(v)
				if err != nil {
					return err
				}
				c.Assignor = strings.Join(names, ",")
				return nil
			}},
		{Key: "sticky.rules", Allowed: "seed | kafka", Client: true,
			Doc: "rule set of the sticky assignors: the seed's small rules or Kafka 4.x's algorithm",
			get: func(_ *Config, c *ClientConfig) string { return c.StickyRules.String() },
			set: func(_ *Config, c *ClientConfig, v string) error {
				switch v {
				case "seed":
					c.StickyRules = assign.SeedRules
				case "kafka":
					c.StickyRules = assign.KafkaRules
				default:
					return fmt.Errorf("sticky.rules: %q is not seed or kafka", v)
				}
				return nil
			}},
		{Key: "group.remote.assignor", Allowed: "uniform | range", Client: true,
			Doc: "group.protocol=consumer: the server-side assignor the member asks for (the group uses the one most members ask for); takes effect when the member next starts",
			get: func(_ *Config, c *ClientConfig) string { return c.RemoteAssignor },
			set: func(_ *Config, c *ClientConfig, v string) error {
				if _, err := server.New(v); err != nil {
					return fmt.Errorf("group.remote.assignor: %q is not uniform or range", v)
				}
				c.RemoteAssignor = v
				return nil
			}},
	}
}

// clientTimeSettings are a client's durations and rates: how long it waits,
// polls, lingers and processes.
func clientTimeSettings() []Setting {
	return []Setting{
		clientDuration("session.timeout.ms", "ticks of silence before the coordinator removes a member", func(c *ClientConfig) *int { return &c.SessionTimeout }),
		clientDurationFrom("heartbeat.interval.ms", 0, "ticks between a classic member's heartbeats, below session.timeout.ms: it learns of a rebalance at its next heartbeat, and a crashed member was last heard at its last one; 0 is the page's implicit heartbeat, heard every tick", func(c *ClientConfig) *int { return &c.HeartbeatInterval }),
		clientDuration("max.poll.interval.ms", "ticks between polls before the heartbeat thread leaves; also the rebalance timeout", func(c *ClientConfig) *int { return &c.MaxPollInterval }),
		intSetting("max.poll.records", "records", "records one poll returns at most", func(c *ClientConfig) *int { return &c.MaxPollRecords }),
		clientDuration("auto.commit.interval.ms", "ticks between auto-commits", func(c *ClientConfig) *int { return &c.AutoCommitInterval }),
		clientDuration("transaction.timeout.ms", "ticks an open transaction may last before the coordinator aborts it", func(c *ClientConfig) *int { return &c.TransactionTimeout }),
		clientDuration("request.timeout.ms", "ticks a client waits for an answer before it retries (JoinGroup: the rebalance timeout + 3)", func(c *ClientConfig) *int { return &c.RequestTimeout }),
		clientDuration("retry.backoff.ms", "ticks the producer waits before retrying an unanswered produce", func(c *ClientConfig) *int { return &c.RetryBackoff }),
		lingerSetting(),
		withRealKey("processing.ms", processingSetting()),
		withRealKey("slow.processing.ms", clientDuration("slow.processing.ticks", "ticks to process a record marked slow", func(c *ClientConfig) *int { return &c.SlowTicks })),
	}
}

// deliverySettings are the keys that decide what a member's output and
// offsets promise: when it commits, and whether its producer is idempotent
// or transactional.
func deliverySettings() []Setting {
	return []Setting{
		{Key: "enable.auto.commit", Allowed: "true | false", Client: true, keepEarlier: true,
			Doc: "true is commit mode auto; false switches auto to commit after processing",
			get: func(_ *Config, c *ClientConfig) string { return strconv.FormatBool(c.Commit == CommitAuto) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				b, err := boolValue("enable.auto.commit", v)
				if err != nil {
					return err
				}
				if b {
					c.Commit = CommitAuto
				} else if c.Commit == CommitAuto {
					c.Commit = CommitAfter
				}
				return nil
			}},
		{Key: "commit.mode", Allowed: "auto | after | before", Client: true,
			Doc: "when offsets are committed (shortcut: set commit after|before|auto)",
			get: func(_ *Config, c *ClientConfig) string { return string(c.Commit) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				switch CommitMode(v) {
				case CommitAuto, CommitAfter, CommitBefore:
					c.Commit = CommitMode(v)
					return nil
				}
				return fmt.Errorf("commit.mode: %q is not auto, after or before", v)
			}},
		{Key: "enable.idempotence", Allowed: "true | false", Client: true,
			Doc: "PID and sequence numbers, so the broker writes a retried produce once; a running member takes it after its batch, with a new producer",
			get: func(_ *Config, c *ClientConfig) string { return strconv.FormatBool(c.Idempotence) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				b, err := boolValue("enable.idempotence", v)
				if err == nil {
					c.Idempotence = b
				}
				return err
			}},
		// max.in.flight.requests.per.connection is a setting so that what
		// `new --kafka-defaults` gives (Kafka's 5, ProducerConfig
		// MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION) is written by SetLines:
		// a saved real-time world loads, and compare reruns it, with the
		// limit its producers ran with (0 was read back before, so a
		// loaded world sent what the saved one held).
		{Key: "max.in.flight.requests.per.connection", Allowed: "a whole number from 0 to 1000000 (0: no limit)", Client: true,
			Doc: "Produce requests of one output partition a producer keeps in flight, the rest held in order (0, the page's, is no limit; Kafka's default is 5); takes effect with the member's next producer",
			get: func(_ *Config, c *ClientConfig) string { return strconv.Itoa(c.MaxInFlight) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 1_000_000 {
					return fmt.Errorf("max.in.flight.requests.per.connection: %q is not a whole number from 0 to 1000000", v)
				}
				c.MaxInFlight = n
				return nil
			}},
		{Key: "transactional.id", Allowed: "NAME | per-member | none", Client: true, keepEarlier: true,
			Doc: "makes the producer transactional (none turns it off); per-member: each member its own, tx-" + ClientPlaceholder +
				" (" + ClientPlaceholder + " in a name stands for the client id); a running member takes it after its batch, with a new producer",
			get: func(_ *Config, c *ClientConfig) string { return orNone(c.TransactionalID) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				id, err := memberIDPattern("transactional.id", v, "tx-"+ClientPlaceholder)
				if err != nil {
					return err
				}
				c.TransactionalID = id
				if id != "" {
					c.Idempotence = true
				}
				return nil
			}},
	}
}

// membershipSettings are the keys that decide how a member joins its group:
// static membership and the group protocol.
func membershipSettings() []Setting {
	return []Setting{
		{Key: "group.instance.id", Allowed: "NAME | per-member | none", Client: true,
			Doc: "static membership (KIP-345); per-member: each member its own, its client id (" + ClientPlaceholder +
				" in a name stands for it); no world starts with two members holding one; takes effect when the member next starts",
			get: func(_ *Config, c *ClientConfig) string { return orNone(c.InstanceID) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				id, err := memberIDPattern("group.instance.id", v, ClientPlaceholder)
				if err != nil {
					return err
				}
				c.InstanceID = id
				return nil
			}},
		{Key: "group.protocol", Allowed: "classic | consumer", Client: true,
			Doc: "the group protocol: classic (JoinGroup/SyncGroup, client-side assignor) or consumer (KIP-848: ConsumerGroupHeartbeat, server-side assignor); takes effect when the member next starts",
			get: func(_ *Config, c *ClientConfig) string { return c.GroupProtocol },
			set: func(_ *Config, c *ClientConfig, v string) error {
				if v != string(ClassicGroup) && v != string(ConsumerGroup) {
					return fmt.Errorf("group.protocol: %q is not classic or consumer", v)
				}
				c.GroupProtocol = v
				return nil
			}},
	}
}

// brokerGroupSettings are the broker's group coordinator settings: the
// consumer protocol's heartbeats and sessions, migration between protocols,
// the groups' sizes and the first rebalance's delay.
func brokerGroupSettings() []Setting {
	return []Setting{
		worldDuration("group.consumer.heartbeat.interval.ms", 1, "broker, group.protocol=consumer: ticks between a member's heartbeats",
			func(w *Config) *int { return &w.ConsumerHeartbeatInterval }),
		worldDuration("group.consumer.session.timeout.ms", 1, "broker, group.protocol=consumer: ticks without a heartbeat before the coordinator fences a member",
			func(w *Config) *int { return &w.ConsumerSessionTimeout }),
		{Key: "group.consumer.migration.policy", Allowed: "disabled | upgrade | downgrade | bidirectional",
			Doc: "broker: whether a classic group converts to a consumer group when a consumer-protocol member joins (upgrade), and back when the last one leaves (downgrade)",
			get: func(w *Config, _ *ClientConfig) string { return w.MigrationPolicy },
			set: func(w *Config, _ *ClientConfig, v string) error {
				for _, p := range MigrationPolicies {
					if p == v {
						w.MigrationPolicy = v
						return nil
					}
				}
				return fmt.Errorf("group.consumer.migration.policy: %q is not disabled, upgrade, downgrade or bidirectional", v)
			}},
		worldMaxSize("group.consumer.max.size", "broker: the most members a consumer group admits; a new one is refused GROUP_MAX_SIZE_REACHED, and a classic group with more is not upgraded",
			func(w *Config) *int { return &w.ConsumerMaxSize }),
		worldMaxSize("group.max.size", "broker: the most members a classic group may have; a consumer group with more is not downgraded",
			func(w *Config) *int { return &w.ClassicMaxSize }),
		worldDuration("group.initial.rebalance.delay.ms", 0, "broker: how long the first rebalance of an empty group waits for more members (extended per new member)",
			func(w *Config) *int { return &w.InitialRebalanceDelay }),
	}
}

// worldSettings are the world's own keys: its clock (time, tick.ms), how much
// of its past it keeps, its input and what the audit reader sees.
func worldSettings() []Setting {
	return []Setting{
		{Key: "isolation.level", Allowed: "read_uncommitted | read_committed",
			Doc: "what the audit reader of invoices sees",
			get: func(w *Config, _ *ClientConfig) string { return w.Isolation },
			set: func(w *Config, _ *ClientConfig, v string) error {
				if v != "read_uncommitted" && v != "read_committed" {
					return fmt.Errorf("isolation.level: %q is not read_uncommitted or read_committed", v)
				}
				w.Isolation = v
				return nil
			}},
		{Key: "time", Allowed: "ticks | ms",
			Doc: "the unit of every .ms setting: ticks (the page's scale) or milliseconds (real time, a tick lasting tick.ms); switching converts every duration, so the world runs as before",
			get: func(w *Config, _ *ClientConfig) string { return string(w.Time) },
			set: func(w *Config, c *ClientConfig, v string) error { return w.setTime(c, TimeUnit(v)) }},
		{Key: "tick.ms", Allowed: fmt.Sprintf("a whole number of milliseconds from %d to %d", MinTickMS, MaxTickMS),
			Doc: "real time: how long a tick lasts, the clock's resolution and every message's time in flight; every duration is at least one tick",
			get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(w.TickMS) },
			set: func(w *Config, c *ClientConfig, v string) error { return w.setTickMS(c, v) }},
		{Key: historyKey, Duration: true, min: -1,
			Allowed:   "-1 or 0 (all), or 1 to 1000000 ticks",
			allowedMS: fmt.Sprintf("-1 or 0 (all), or a whole number of milliseconds from tick.ms (one tick) to %d, rounded up to whole ticks", MaxDurationMS),
			Doc:       "how much of its past a world keeps in detail: the packets, events and their texts of the last history.ms ticks (whole chunks at a time, so a little more); older detail is let go of, while every count (processed, duplicates, losses, delivery, metrics) stays exact; -1 or 0 (the default) keeps everything; set while the world runs, it applies from then on, and past tick 0 it can only narrow (a wider window would show detail already let go of: make the world again with it, new --keep-settings)",
			get:       func(w *Config, _ *ClientConfig) string { return strconv.Itoa(w.HistoryTicks) },
			set: func(w *Config, _ *ClientConfig, v string) error {
				n, err := w.duration(historyKey, v, -1)
				if err != nil {
					return err
				}
				w.HistoryTicks = n
				return nil
			}},
		{Key: "records.per.partition", Allowed: "a whole number of records from 0 to 1000000",
			Doc: "records each input partition holds when the world is made (new)",
			get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(w.RecordsPerPartition) },
			set: func(w *Config, _ *ClientConfig, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 1_000_000 {
					return fmt.Errorf("records.per.partition: %q is not a whole number from 0 to 1000000", v)
				}
				w.RecordsPerPartition = n
				return nil
			}},
	}
}

func withRealKey(real string, s Setting) Setting {
	s.realKey = real
	return s
}

// LookupSetting finds a key, by either of its names.
func LookupSetting(key string) (Setting, bool) {
	for _, s := range Settings {
		if s.Key == key || s.realKey != "" && s.realKey == key {
			return s, true
		}
	}
	return Setting{}, false
}

// memberIDPattern reads an id setting's value (transactional.id,
// group.instance.id): none (or "") is no id, per-member the pattern
// perMember, else a pattern of letters, digits, '.', '_', '-' and
// ClientPlaceholder.
func memberIDPattern(key, v, perMember string) (string, error) {
	switch v {
	case "none", "":
		return "", nil
	case PerMember:
		return perMember, nil
	}
	if !validIDPattern(v) {
		return "", fmt.Errorf("%s: %q may hold only letters, digits, '.', '_', '-' and %s (or say per-member or none)", key, v, ClientPlaceholder)
	}
	return v, nil
}
