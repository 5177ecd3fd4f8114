package sim

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/assign/server"
	"github.com/kgrepl/kgrepl/sim/coord"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// Override is one per-client setting (set Cn.KEY VALUE).
type Override struct{ Client, Key, Value string }

// Config is the whole world's configuration: client defaults, per-client
// overrides and the world-level settings.
type Config struct {
	Client ClientConfig
	// Overrides are applied over the defaults in the order they were set,
	// as typed: a later one wins, and one that reads another setting
	// (enable.auto.commit false keeps a commit mode other than auto) sees
	// the ones before it.
	Overrides []Override
	// World-level settings.
	RecordsPerPartition int    // records.per.partition
	Isolation           string // isolation.level of the audit reader
	// Time is the unit of every duration setting (the .ms keys and the
	// record processing times): ticks (the page's scale, the default) or
	// milliseconds (real time, SPEC §3a). Client, Overrides and the
	// coordinator's settings hold each duration as it was set, in this
	// unit; Engine and EngineCoord give the engine its ticks.
	Time TimeUnit
	// TickMS is tick.ms: the milliseconds a tick lasts in real time, the
	// clock's resolution and every message's time in flight.
	TickMS int
	// The broker's group settings (group.initial.rebalance.delay.ms,
	// group.consumer.heartbeat.interval.ms and session.timeout.ms,
	// group.consumer.migration.policy), which the group coordinator reads.
	coord.Config
}

// DefaultConfig gives the seed's defaults (SPEC §3).
func DefaultConfig() Config {
	return Config{
		Client: ClientConfig{
			Assignor:           "range",
			StickyRules:        assign.SeedRules,
			SessionTimeout:     6,
			MaxPollInterval:    12,
			MaxPollRecords:     3,
			Commit:             CommitAuto,
			AutoCommitInterval: 5,
			Idempotence:        true,
			TransactionTimeout: 30,
			RetryBackoff:       3,
			// Kafka's 30 s sits below its 45 s session timeout; 30/45 of
			// our 6 is 4, and one more tick lets a follower's SyncGroup
			// outlast a leader that finishes a full batch (3 records)
			// before it sends the plan.
			RequestTimeout: 5,
			ProcessTicks:   1,
			SlowTicks:      15,
			GroupProtocol:  "classic",
			RemoteAssignor: "uniform",
		},
		Config: coord.Config{ConsumerHeartbeatInterval: 2, ConsumerSessionTimeout: 9, MigrationPolicy: "bidirectional",
			ConsumerMaxSize: math.MaxInt32, ClassicMaxSize: math.MaxInt32},
		RecordsPerPartition: 10,
		Isolation:           "read_uncommitted",
		Time:                TimeTicks,
		TickMS:              DefaultTickMS,
	}
}

// KafkaDefaultConfig is `new --kafka-defaults`: real time, with Kafka
// 4.0's client and broker defaults in milliseconds (kernel/kafkafmt's
// Defaults names where Kafka defines each, and a test checks they agree),
// Kafka's sticky rules, and kgrepl's own settings (the page's backlog of
// records.per.partition; processing.ms one tick; a slow record stalls six
// minutes, past max.poll.interval.ms as the page's does).
func KafkaDefaultConfig() Config {
	c := DefaultConfig()
	c.Time, c.TickMS = TimeMS, DefaultTickMS
	cc := &c.Client
	// Kafka's default is the list [RangeAssignor, CooperativeStickyAssignor]
	// (ConsumerConfig PARTITION_ASSIGNMENT_STRATEGY_CONFIG): every member
	// lists both, so the group votes range (ClassicGroup.selectProtocol),
	// and a client whose list holds an eager-only assignor rebalances
	// eagerly (ConsumerCoordinator's constructor).
	cc.Assignor = "range,cooperative-sticky"
	cc.StickyRules = assign.KafkaRules
	cc.SessionTimeout = 45_000          // ConsumerConfig session.timeout.ms
	cc.MaxPollInterval = 300_000        // ConsumerConfig max.poll.interval.ms
	cc.MaxPollRecords = 500             // ConsumerConfig max.poll.records
	cc.AutoCommitInterval = 5_000       // ConsumerConfig auto.commit.interval.ms
	cc.TransactionTimeout = 60_000      // ProducerConfig transaction.timeout.ms
	cc.RetryBackoff = 100               // CommonClientConfigs retry.backoff.ms
	cc.RequestTimeout = 30_000          // ConsumerConfig and ProducerConfig request.timeout.ms
	cc.ProcessTicks = DefaultTickMS     // processing.ms: one tick
	cc.SlowTicks = 360_000              // slow.processing.ms: six minutes, past max.poll.interval.ms
	c.InitialRebalanceDelay = 3_000     // GroupCoordinatorConfig group.initial.rebalance.delay.ms
	c.ConsumerHeartbeatInterval = 5_000 // GroupCoordinatorConfig group.consumer.heartbeat.interval.ms
	c.ConsumerSessionTimeout = 45_000   // GroupCoordinatorConfig group.consumer.session.timeout.ms
	return c
}

// TimeUnit is the unit of a world's duration settings.
type TimeUnit string

const (
	TimeTicks TimeUnit = "ticks" // the page's scale: every .ms setting counts ticks
	TimeMS    TimeUnit = "ms"    // real time: .ms settings are milliseconds, a tick lasts tick.ms
)

// DefaultTickMS is tick.ms's default: a tick is one message's flight, and
// 5 ms is what a request to a broker in the same region takes with
// Kafka 4.0's defaults (linger.ms 5, a network round trip and an acks=all
// write of well under 5 ms), so every message's latency stays realistic:
// a JoinGroup, a commit or a produce answered in 10 ms.
const DefaultTickMS = 5

// MaxTickMS bounds tick.ms: a message longer than a second in flight is an
// outage, not a latency. MinTickMS: a message between a client and a
// broker (a request through the network and the broker's handling) takes
// about a millisecond at the least, so a finer tick would make every
// message faster than messages can be.
const (
	MinTickMS = 1
	MaxTickMS = 1000
)

// MaxDurationMS is the largest millisecond value a duration setting takes:
// Kafka's own bound for its int-typed .ms configs (Integer.MAX_VALUE).
const MaxDurationMS = 2147483647

// maxDurationTicks is the largest value a duration setting takes in ticks.
const maxDurationTicks = 1_000_000

// Ticks gives a duration setting's value in ticks: itself on the page's
// scale, and in real time rounded up to whole ticks.
func (c *Config) Ticks(v int) int {
	if c.Time != TimeMS || v <= 0 {
		return v
	}
	return (v + c.TickMS - 1) / c.TickMS
}

// Engine is a client's configuration as the engine runs it: the
// client's settings (ForClient) with every duration in ticks.
func (c *Config) Engine(client string) ClientConfig {
	cc := c.ForClient(client)
	if c.Time == TimeMS {
		for _, f := range clientDurations(&cc) {
			*f = c.Ticks(*f)
		}
	}
	return cc
}

// EngineCoord is the broker's group settings as the coordinator runs them:
// every duration in ticks.
func (c *Config) EngineCoord() coord.Config {
	g := c.Config
	if c.Time == TimeMS {
		for _, f := range worldDurations(&g) {
			*f = c.Ticks(*f)
		}
	}
	return g
}

func clientDurations(cc *ClientConfig) []*int {
	return []*int{&cc.SessionTimeout, &cc.MaxPollInterval, &cc.AutoCommitInterval, &cc.TransactionTimeout,
		&cc.RetryBackoff, &cc.RequestTimeout, &cc.ProcessTicks, &cc.SlowTicks}
}

func worldDurations(g *coord.Config) []*int {
	return []*int{&g.InitialRebalanceDelay, &g.ConsumerHeartbeatInterval, &g.ConsumerSessionTimeout}
}

// duration reads a duration setting's value in the world's unit: whole
// ticks from min on the page's scale; in real time whole milliseconds, at
// least one tick (0 where min allows it: none).
func (c *Config) duration(key, v string, min int) (int, error) {
	n, err := strconv.Atoi(v)
	if c.Time != TimeMS {
		if err != nil || n < min || n > maxDurationTicks {
			return 0, fmt.Errorf("%s: %q is not a whole number from %d to %d", key, v, min, maxDurationTicks)
		}
		return n, nil
	}
	if err != nil || n < min || n > MaxDurationMS {
		return 0, fmt.Errorf("%s: %q is not a whole number of milliseconds from %d to %d", key, v, max(min, c.TickMS), MaxDurationMS)
	}
	if n > 0 && n < c.TickMS {
		return 0, fmt.Errorf("%s: %d ms is less than one tick (tick.ms %d): a duration is at least one tick and rounds up to whole ticks; give at least %d, or a finer tick (set tick.ms)", key, n, c.TickMS, c.TickMS)
	}
	return n, nil
}

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
	if !s.Duration || c.Time != TimeMS {
		return s.Doc
	}
	return strings.ReplaceAll(s.Doc, "ticks", "milliseconds")
}

// AllowedIn is Allowed for a world with this configuration: a duration's
// unit and bounds follow its clock.
func (s Setting) AllowedIn(c *Config) string {
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
	return Setting{Key: key, Allowed: "a whole number of ticks from 1 to 1000000", Client: true, Doc: doc, Duration: true, min: 1,
		get: func(_ *Config, c *ClientConfig) string { return strconv.Itoa(*field(c)) },
		set: func(w *Config, c *ClientConfig, v string) error {
			name := key
			if real := overrideDurations[key]; w.Time == TimeMS && real != "" {
				name = real
			}
			n, err := w.duration(name, v, 1)
			if err != nil {
				return err
			}
			*field(c) = n
			return nil
		}}
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
	s := []Setting{
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
		clientDuration("session.timeout.ms", "ticks of silence before the coordinator removes a member", func(c *ClientConfig) *int { return &c.SessionTimeout }),
		clientDuration("max.poll.interval.ms", "ticks between polls before the heartbeat thread leaves; also the rebalance timeout", func(c *ClientConfig) *int { return &c.MaxPollInterval }),
		intSetting("max.poll.records", "records", "records one poll returns at most", func(c *ClientConfig) *int { return &c.MaxPollRecords }),
		clientDuration("auto.commit.interval.ms", "ticks between auto-commits", func(c *ClientConfig) *int { return &c.AutoCommitInterval }),
		clientDuration("transaction.timeout.ms", "ticks an open transaction may last before the coordinator aborts it", func(c *ClientConfig) *int { return &c.TransactionTimeout }),
		clientDuration("request.timeout.ms", "ticks a client waits for an answer before it retries (JoinGroup: the rebalance timeout + 3)", func(c *ClientConfig) *int { return &c.RequestTimeout }),
		clientDuration("retry.backoff.ms", "ticks the producer waits before retrying an unanswered produce", func(c *ClientConfig) *int { return &c.RetryBackoff }),
		withRealKey("processing.ms", clientDuration("processing.ticks", "ticks to process one record", func(c *ClientConfig) *int { return &c.ProcessTicks })),
		withRealKey("slow.processing.ms", clientDuration("slow.processing.ticks", "ticks to process a record marked slow", func(c *ClientConfig) *int { return &c.SlowTicks })),
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
		{Key: "transactional.id", Allowed: "NAME | per-member | none", Client: true, keepEarlier: true,
			Doc: "makes the producer transactional (none turns it off); per-member: each member its own, tx-" + ClientPlaceholder +
				" (" + ClientPlaceholder + " in a name stands for the client id); a running member takes it after its batch, with a new producer",
			get: func(_ *Config, c *ClientConfig) string { return orNone(c.TransactionalID) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				if v == "none" || v == "" {
					c.TransactionalID = ""
					return nil
				}
				if v == PerMember {
					v = "tx-" + ClientPlaceholder
				}
				if !validIDPattern(v) {
					return fmt.Errorf("transactional.id: %q may hold only letters, digits, '.', '_', '-' and %s (or say per-member or none)", v, ClientPlaceholder)
				}
				c.TransactionalID = v
				c.Idempotence = true
				return nil
			}},
		{Key: "group.instance.id", Allowed: "NAME | per-member | none", Client: true,
			Doc: "static membership (KIP-345); per-member: each member its own, its client id (" + ClientPlaceholder +
				" in a name stands for it); no world starts with two members holding one; takes effect when the member next starts",
			get: func(_ *Config, c *ClientConfig) string { return orNone(c.InstanceID) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				if v == "none" || v == "" {
					c.InstanceID = ""
					return nil
				}
				if v == PerMember {
					v = ClientPlaceholder
				}
				if !validIDPattern(v) {
					return fmt.Errorf("group.instance.id: %q may hold only letters, digits, '.', '_', '-' and %s (or say per-member or none)", v, ClientPlaceholder)
				}
				c.InstanceID = v
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
		worldDuration("group.initial.rebalance.delay.ms", 0, "broker: how long the first rebalance of an empty group waits for more members (extended per new member)",
			func(w *Config) *int { return &w.InitialRebalanceDelay }),
		{Key: "time", Allowed: "ticks | ms",
			Doc: "the unit of every .ms setting: ticks (the page's scale) or milliseconds (real time, a tick lasting tick.ms); switching converts every duration, so the world runs as before",
			get: func(w *Config, _ *ClientConfig) string { return string(w.Time) },
			set: func(w *Config, c *ClientConfig, v string) error { return w.setTime(c, TimeUnit(v)) }},
		{Key: "tick.ms", Allowed: fmt.Sprintf("a whole number of milliseconds from %d to %d", MinTickMS, MaxTickMS),
			Doc: "real time: how long a tick lasts, the clock's resolution and every message's time in flight; every duration is at least one tick",
			get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(w.TickMS) },
			set: func(w *Config, c *ClientConfig, v string) error { return w.setTickMS(c, v) }},
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
	sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key })
	return s
}

func withRealKey(real string, s Setting) Setting {
	s.realKey = real
	return s
}

// setTime switches the unit of every duration, converting each (the
// client-wide ones in c, the broker's and every override in w), so that
// the world runs exactly as before: a duration of n ticks is n x tick.ms
// milliseconds, and back.
func (w *Config) setTime(c *ClientConfig, to TimeUnit) error {
	if to != TimeTicks && to != TimeMS {
		return fmt.Errorf("time: %q is not ticks or ms", string(to))
	}
	if to == w.Time {
		return nil
	}
	conv := func(v int) int {
		if to == TimeMS {
			return v * w.TickMS
		}
		return (v + w.TickMS - 1) / w.TickMS
	}
	cc, g := *c, w.Config
	var past []string
	check := func(name string, v int) {
		if to == TimeTicks && v > maxDurationTicks {
			past = append(past, fmt.Sprintf("%s (%d ticks)", name, v))
		}
	}
	for i, f := range clientDurations(&cc) {
		*f = conv(*f)
		check(clientDurationKeys[i], *f)
	}
	for i, f := range worldDurations(&g) {
		*f = conv(*f)
		check(worldDurationKeys[i], *f)
	}
	var over []Override // a new array: a copy of this Config may share the old one
	if len(w.Overrides) > 0 {
		over = make([]Override, len(w.Overrides))
	}
	for i, o := range w.Overrides {
		if _, ok := overrideDurations[o.Key]; ok {
			n, _ := strconv.Atoi(o.Value) // validated when it was set
			o.Value = strconv.Itoa(conv(n))
			check(o.Client+"."+o.Key, conv(n))
		}
		over[i] = o
	}
	if len(past) > 0 {
		return fmt.Errorf("time ticks: %s would be past %d ticks, the most a duration counts on the page's scale (tick.ms %d); lower them first", strings.Join(past, ", "), maxDurationTicks, w.TickMS)
	}
	*c, w.Config, w.Overrides, w.Time = cc, g, over, to
	return nil
}

// Names of the durations, in clientDurations' and worldDurations' order.
var (
	clientDurationKeys = []string{"session.timeout.ms", "max.poll.interval.ms", "auto.commit.interval.ms", "transaction.timeout.ms",
		"retry.backoff.ms", "request.timeout.ms", "processing.ms", "slow.processing.ms"}
	worldDurationKeys = []string{"group.initial.rebalance.delay.ms", "group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms"}
	// overrideDurations: the per-client durations by the key an override
	// keeps, each with its name in real time.
	overrideDurations = map[string]string{"session.timeout.ms": "session.timeout.ms", "max.poll.interval.ms": "max.poll.interval.ms",
		"auto.commit.interval.ms": "auto.commit.interval.ms", "transaction.timeout.ms": "transaction.timeout.ms",
		"retry.backoff.ms": "retry.backoff.ms", "request.timeout.ms": "request.timeout.ms",
		"processing.ticks": "processing.ms", "slow.processing.ticks": "slow.processing.ms"}
)

// setTickMS sets tick.ms. In real time every duration keeps its
// milliseconds and is rounded to the new tick, so none may be shorter than
// it.
func (w *Config) setTickMS(c *ClientConfig, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < MinTickMS || n > MaxTickMS {
		return fmt.Errorf("tick.ms: %q is not a whole number of milliseconds from %d to %d: a tick is one message's flight, and a message between a client and a broker takes at least %d ms (finer would make messages faster than they can be); over %d ms it is an outage, not a latency", v, MinTickMS, MaxTickMS, MinTickMS, MaxTickMS)
	}
	if w.Time == TimeMS {
		var short []string
		note := func(name string, d int) {
			if d > 0 && d < n {
				short = append(short, fmt.Sprintf("%s (%d ms)", name, d))
			}
		}
		cc, g := *c, w.Config
		for i, f := range clientDurations(&cc) {
			note(clientDurationKeys[i], *f)
		}
		for i, f := range worldDurations(&g) {
			note(worldDurationKeys[i], *f)
		}
		for _, o := range w.Overrides {
			if real, ok := overrideDurations[o.Key]; ok {
				d, _ := strconv.Atoi(o.Value)
				note(o.Client+"."+real, d)
			}
		}
		if len(short) > 0 {
			return fmt.Errorf("tick.ms: a tick of %d ms is longer than %s: every duration is at least one tick; raise them first, or choose a tick of at most the shortest", n, strings.Join(short, ", "))
		}
	}
	w.TickMS = n
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
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

// settingKeys names every key as this world names it.
func (c *Config) settingKeys() string {
	keys := make([]string, len(Settings))
	for i, s := range Settings {
		keys[i] = s.Name(c)
	}
	return strings.Join(keys, ", ")
}

// lookup finds a key as this world names it: in real time, a duration
// named in ticks (processing.ticks) is refused with its real-time name.
func (c *Config) lookup(key string) (Setting, error) {
	s, ok := LookupSetting(key)
	if !ok {
		return s, fmt.Errorf("unknown setting %q (settings: %s)", key, c.settingKeys())
	}
	if c.Time == TimeMS && s.realKey != "" && key == s.Key {
		return s, fmt.Errorf("%s: this world runs in real time (time ms), where it is %s, in milliseconds (tick.ms %d)", key, s.realKey, c.TickMS)
	}
	return s, nil
}

// ConfigRow is one line of `show config`.
type ConfigRow struct {
	Key, Value, Default, Scope string
}

// ForClient gives the effective configuration of one client: the defaults
// with that client's overrides applied in the order they were set.
func (c *Config) ForClient(client string) ClientConfig {
	cc := c.Client
	for _, o := range c.Overrides {
		if o.Client == client {
			s, _ := LookupSetting(o.Key)
			_ = s.set(c, &cc, o.Value) // validated when it was set
		}
	}
	expandIDs(&cc, client)
	return cc
}

// ClientPlaceholder in transactional.id and group.instance.id stands for
// the client id, so that `set producer transactional` and `set
// group.instance.id per-member` give every member its own id (tx-C1,
// tx-C2; C1, C2), as a deployment gives each pod its own.
const ClientPlaceholder = "{client}"

// PerMember is the value of transactional.id and group.instance.id that
// gives each member its own id, derived from its client id.
const PerMember = "per-member"

// expandIDs puts the client id in place of ClientPlaceholder in the ids
// that are one member's own.
func expandIDs(cc *ClientConfig, client string) {
	cc.TransactionalID = strings.ReplaceAll(cc.TransactionalID, ClientPlaceholder, client)
	cc.InstanceID = strings.ReplaceAll(cc.InstanceID, ClientPlaceholder, client)
}

// validIDPattern: a name of letters, digits, '.', '_' and '-', which may
// hold ClientPlaceholder (a client id is such a name).
func validIDPattern(v string) bool {
	return topo.ValidName(strings.ReplaceAll(v, ClientPlaceholder, "C"))
}

// Get reads one key, for a client ("" for the defaults).
func (c *Config) Get(client, key string) (string, error) {
	s, err := c.lookup(key)
	if err != nil {
		return "", err
	}
	cc := c.Client
	if client != "" {
		cc = c.ForClient(client)
	}
	return s.get(c, &cc), nil
}

// Set changes one key, for every client (client "") or for one.
func (c *Config) Set(client, key, value string) error {
	s, err := c.lookup(key)
	if err != nil {
		return err
	}
	key = s.Key // an override is kept under the key's one name
	if client != "" && !s.Client {
		return fmt.Errorf("%s is a world setting, not a client one: use set %s %s", key, key, value)
	}
	if client == "" {
		cc := c.Client
		if err := s.set(c, &cc, value); err != nil {
			return err
		}
		c.Client = cc
		return nil
	}
	cc := c.ForClient(client)
	if err := s.set(c, &cc, value); err != nil {
		return err
	}
	// A key set again for the same client replaces its earlier override
	// (unless keepEarlier): applying the two in order equals applying the
	// last alone, since such a setter writes the same fields whatever it
	// is given, and the one setter that reads a field
	// (enable.auto.commit reads the commit mode) writes only that field,
	// which the later override of the commit mode writes again. So
	// ForClient, which applies every override of a client on each call,
	// costs the settings a client has, not the sets typed: 20,000 sets of
	// one key took 17 s. (TestRepeatedOverridesKeepTheirEffect checks the
	// equivalence on random sequences of every client setting.)
	if !s.keepEarlier {
		for i, o := range c.Overrides {
			if o.Client == client && o.Key == key {
				// A new slice: a copy of this Config may share the array.
				kept := make([]Override, 0, len(c.Overrides))
				kept = append(kept, c.Overrides[:i]...)
				for _, o := range c.Overrides[i+1:] {
					if o.Client != client || o.Key != key {
						kept = append(kept, o)
					}
				}
				c.Overrides = kept
				break
			}
		}
	}
	c.Overrides = append(c.Overrides, Override{Client: client, Key: key, Value: value})
	return nil
}

// Defaults is the configuration a world of this clock starts from: the
// page's (DefaultConfig) on its scale, Kafka's (KafkaDefaultConfig) in
// real time.
func (c *Config) Defaults() Config {
	if c.Time == TimeMS {
		return KafkaDefaultConfig()
	}
	return DefaultConfig()
}

// Rows lists every setting with its value and default (in real time,
// Kafka's: what new --kafka-defaults gives), then the overrides.
func (c *Config) Rows() []ConfigRow {
	def := c.Defaults()
	var rows []ConfigRow
	for _, s := range Settings {
		scope := "world"
		if s.Client {
			scope = "client"
		}
		rows = append(rows, ConfigRow{Key: s.Name(c), Value: s.get(c, &c.Client), Default: s.get(&def, &def.Client), Scope: scope})
	}
	// One row per client and key set for it, showing the value that client
	// runs with (the overrides applied in order), so the table agrees with
	// what runs.
	type ck struct{ client, key string }
	seen := map[ck]bool{}
	var keys []ck
	for _, o := range c.Overrides {
		if k := (ck{o.Client, o.Key}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].client != keys[j].client {
			return keys[i].client < keys[j].client
		}
		return keys[i].key < keys[j].key
	})
	for _, k := range keys {
		s, _ := LookupSetting(k.key)
		cc := c.ForClient(k.client)
		if k.key == "transactional.id" || k.key == "group.instance.id" {
			cc = c.Client // show the typed form ({client}), not the client's own id
			for _, o := range c.Overrides {
				if o.Client == k.client {
					st, _ := LookupSetting(o.Key)
					_ = st.set(c, &cc, o.Value)
				}
			}
		}
		rows = append(rows, ConfigRow{Key: k.client + "." + s.Name(c), Value: s.get(c, &cc), Default: s.get(&def, &def.Client), Scope: k.client})
	}
	return rows
}

// Clone is a deep copy: changing one never shows in the other.
func (c Config) Clone() Config { return c.clone() }

// SetLines are `set` commands that make this configuration from the
// defaults, exactly: world and client-wide settings first (transactional.id
// before enable.idempotence, which it implies; enable.auto.commit is left to
// commit.mode, which holds all of it), then the per-client overrides in the
// order they were set.
//
// The clock comes first: tick.ms, then time ms, which converts the
// defaults' durations to milliseconds; every duration after it is written
// in milliseconds and compared with the converted default.
func (c *Config) SetLines() []string {
	def := DefaultConfig()
	var lines []string
	if c.TickMS != def.TickMS {
		lines = append(lines, "set tick.ms "+strconv.Itoa(c.TickMS))
		def.TickMS = c.TickMS
	}
	if c.Time != def.Time {
		lines = append(lines, "set time "+string(c.Time))
		_ = def.setTime(&def.Client, c.Time)
	}
	add := func(s Setting) {
		if v := s.get(c, &c.Client); v != s.get(&def, &def.Client) {
			lines = append(lines, "set "+s.Name(c)+" "+v)
		}
	}
	if s, ok := LookupSetting("transactional.id"); ok {
		add(s)
	}
	for _, s := range Settings {
		switch s.Key {
		case "transactional.id", "enable.auto.commit", "time", "tick.ms":
		default:
			add(s)
		}
	}
	for _, o := range c.Overrides {
		s, _ := LookupSetting(o.Key)
		lines = append(lines, "set "+o.Client+"."+s.Name(c)+" "+o.Value)
	}
	return lines
}

func (c *Config) clone() Config {
	n := *c
	n.Overrides = append([]Override(nil), c.Overrides...)
	return n
}
