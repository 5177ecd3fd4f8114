package sim

import (
	"fmt"
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
		Config:              coord.Config{ConsumerHeartbeatInterval: 2, ConsumerSessionTimeout: 9, MigrationPolicy: "bidirectional"},
		RecordsPerPartition: 10,
		Isolation:           "read_uncommitted",
	}
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

// worldInt is a world-level (broker) setting counted in ticks, at least min.
func worldInt(key string, min int, doc string, field func(*Config) *int) Setting {
	return Setting{Key: key, Allowed: fmt.Sprintf("a whole number of ticks from %d to 1000000", min), Doc: doc,
		get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(*field(w)) },
		set: func(w *Config, _ *ClientConfig, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < min || n > 1_000_000 {
				return fmt.Errorf("%s: %q is not a whole number from %d to 1000000", key, v, min)
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
		intSetting("session.timeout.ms", "ticks", "ticks of silence before the coordinator removes a member", func(c *ClientConfig) *int { return &c.SessionTimeout }),
		intSetting("max.poll.interval.ms", "ticks", "ticks between polls before the heartbeat thread leaves; also the rebalance timeout", func(c *ClientConfig) *int { return &c.MaxPollInterval }),
		intSetting("max.poll.records", "records", "records one poll returns at most", func(c *ClientConfig) *int { return &c.MaxPollRecords }),
		intSetting("auto.commit.interval.ms", "ticks", "ticks between auto-commits", func(c *ClientConfig) *int { return &c.AutoCommitInterval }),
		intSetting("transaction.timeout.ms", "ticks", "ticks an open transaction may last before the coordinator aborts it", func(c *ClientConfig) *int { return &c.TransactionTimeout }),
		intSetting("request.timeout.ms", "ticks", "ticks a client waits for an answer before it retries (JoinGroup: the rebalance timeout + 3)", func(c *ClientConfig) *int { return &c.RequestTimeout }),
		intSetting("retry.backoff.ms", "ticks", "ticks the producer waits before retrying an unanswered produce", func(c *ClientConfig) *int { return &c.RetryBackoff }),
		intSetting("processing.ticks", "ticks", "ticks to process one record", func(c *ClientConfig) *int { return &c.ProcessTicks }),
		intSetting("slow.processing.ticks", "ticks", "ticks to process a record marked slow", func(c *ClientConfig) *int { return &c.SlowTicks }),
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
		{Key: "transactional.id", Allowed: "a name, or none", Client: true, keepEarlier: true,
			Doc: "makes the producer transactional (none turns it off); a running member takes it after its batch, with a new producer",
			get: func(_ *Config, c *ClientConfig) string { return orNone(c.TransactionalID) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				if v == "none" || v == "" {
					c.TransactionalID = ""
					return nil
				}
				if !topo.ValidName(strings.ReplaceAll(v, ClientPlaceholder, "C")) {
					return fmt.Errorf("transactional.id: %q may hold only letters, digits, '.', '_', '-' and %s", v, ClientPlaceholder)
				}
				c.TransactionalID = v
				c.Idempotence = true
				return nil
			}},
		{Key: "group.instance.id", Allowed: "a name, or none", Client: true,
			Doc: "static membership (KIP-345); takes effect when the member next starts",
			get: func(_ *Config, c *ClientConfig) string { return orNone(c.InstanceID) },
			set: func(_ *Config, c *ClientConfig, v string) error {
				if v == "none" || v == "" {
					c.InstanceID = ""
					return nil
				}
				if !topo.ValidName(v) {
					return fmt.Errorf("group.instance.id: %q may hold only letters, digits, '.', '_' and '-'", v)
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
		worldInt("group.consumer.heartbeat.interval.ms", 1, "broker, group.protocol=consumer: ticks between a member's heartbeats",
			func(w *Config) *int { return &w.ConsumerHeartbeatInterval }),
		worldInt("group.consumer.session.timeout.ms", 1, "broker, group.protocol=consumer: ticks without a heartbeat before the coordinator fences a member",
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
		{Key: "group.initial.rebalance.delay.ms", Allowed: "a whole number of ticks from 0 to 1000000",
			Doc: "broker: how long the first rebalance of an empty group waits for more members (extended per new member)",
			get: func(w *Config, _ *ClientConfig) string { return strconv.Itoa(w.InitialRebalanceDelay) },
			set: func(w *Config, _ *ClientConfig, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 1_000_000 {
					return fmt.Errorf("group.initial.rebalance.delay.ms: %q is not a whole number from 0 to 1000000", v)
				}
				w.InitialRebalanceDelay = n
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
	sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key })
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// LookupSetting finds a key.
func LookupSetting(key string) (Setting, bool) {
	for _, s := range Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

func settingKeys() string {
	keys := make([]string, len(Settings))
	for i, s := range Settings {
		keys[i] = s.Key
	}
	return strings.Join(keys, ", ")
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
	cc.TransactionalID = strings.ReplaceAll(cc.TransactionalID, ClientPlaceholder, client)
	return cc
}

// ClientPlaceholder in transactional.id stands for the client id, so that
// `set producer transactional` gives every member its own id (tx-C1, tx-C2).
const ClientPlaceholder = "{client}"

// Get reads one key, for a client ("" for the defaults).
func (c *Config) Get(client, key string) (string, error) {
	s, ok := LookupSetting(key)
	if !ok {
		return "", fmt.Errorf("unknown setting %q (settings: %s)", key, settingKeys())
	}
	cc := c.Client
	if client != "" {
		cc = c.ForClient(client)
	}
	return s.get(c, &cc), nil
}

// Set changes one key, for every client (client "") or for one.
func (c *Config) Set(client, key, value string) error {
	s, ok := LookupSetting(key)
	if !ok {
		return fmt.Errorf("unknown setting %q (settings: %s)", key, settingKeys())
	}
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

// Rows lists every setting with its value and default, then the overrides.
func (c *Config) Rows() []ConfigRow {
	def := DefaultConfig()
	var rows []ConfigRow
	for _, s := range Settings {
		scope := "world"
		if s.Client {
			scope = "client"
		}
		rows = append(rows, ConfigRow{Key: s.Key, Value: s.get(c, &c.Client), Default: s.get(&def, &def.Client), Scope: scope})
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
		if k.key == "transactional.id" {
			cc = c.Client // show the typed form ({client}), not the client's own id
			for _, o := range c.Overrides {
				if o.Client == k.client {
					st, _ := LookupSetting(o.Key)
					_ = st.set(c, &cc, o.Value)
				}
			}
		}
		rows = append(rows, ConfigRow{Key: k.client + "." + k.key, Value: s.get(c, &cc), Default: s.get(&def, &def.Client), Scope: k.client})
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
func (c *Config) SetLines() []string {
	def := DefaultConfig()
	var lines []string
	add := func(s Setting) {
		if v := s.get(c, &c.Client); v != s.get(&def, &def.Client) {
			lines = append(lines, "set "+s.Key+" "+v)
		}
	}
	if s, ok := LookupSetting("transactional.id"); ok {
		add(s)
	}
	for _, s := range Settings {
		if s.Key != "transactional.id" && s.Key != "enable.auto.commit" {
			add(s)
		}
	}
	for _, o := range c.Overrides {
		lines = append(lines, "set "+o.Client+"."+o.Key+" "+o.Value)
	}
	return lines
}

func (c *Config) clone() Config {
	n := *c
	n.Overrides = append([]Override(nil), c.Overrides...)
	return n
}
