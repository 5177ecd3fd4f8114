package sim

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
	"github.com/kgrepl/kgrepl/sim/client"
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
	// HistoryTicks is history.ms: how much of its past a world keeps in
	// detail (its packets, events and their texts), a duration in the
	// world's unit as every other (ticks on the page's scale, ms in real
	// time; HistoryWindow gives the engine's ticks). 0 or -1 (the default
	// 0) keeps everything, exactly as a world always did; a window lets
	// go of older detail while every count stays exact (sim/history.go).
	HistoryTicks int
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
	cc.HeartbeatInterval = 3_000        // ConsumerConfig heartbeat.interval.ms
	cc.MaxPollInterval = 300_000        // ConsumerConfig max.poll.interval.ms
	cc.MaxPollRecords = 500             // ConsumerConfig max.poll.records
	cc.AutoCommitInterval = 5_000       // ConsumerConfig auto.commit.interval.ms
	cc.TransactionTimeout = 60_000      // ProducerConfig transaction.timeout.ms
	cc.RetryBackoff = 100               // CommonClientConfigs retry.backoff.ms
	cc.Linger = 5                       // ProducerConfig linger.ms (Kafka 4.0; 0 before): one tick of 5 ms, a member's turn (producer.lingerAppend)
	cc.MaxInFlight = client.MaxInFlight // ProducerConfig max.in.flight.requests.per.connection, per output partition (producer.flight)
	cc.RequestTimeout = 30_000          // ConsumerConfig and ProducerConfig request.timeout.ms
	cc.ProcessTicks = DefaultTickMS     // processing.ms: one tick
	cc.SlowTicks = 360_000              // slow.processing.ms: six minutes, past max.poll.interval.ms
	c.InitialRebalanceDelay = 3_000     // GroupCoordinatorConfig group.initial.rebalance.delay.ms
	c.ConsumerHeartbeatInterval = 5_000 // GroupCoordinatorConfig group.consumer.heartbeat.interval.ms
	c.ConsumerSessionTimeout = 45_000   // GroupCoordinatorConfig group.consumer.session.timeout.ms
	return c
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
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
		// A world-wide set may change every client (time ticks converts
		// every duration, rounding up): checked on the result, which is
		// dropped when refused.
		before := c.Clone()
		cc := c.Client
		if err := s.set(c, &cc, value); err != nil {
			*c = before
			return err
		}
		c.Client = cc
		if err := c.checkHeartbeats(); err != nil {
			*c = before
			return err
		}
		return nil
	}
	cc := c.ForClient(client)
	if err := s.set(c, &cc, value); err != nil {
		return err
	}
	if err := checkHeartbeat(cc, client); err != nil {
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
		case "transactional.id", "enable.auto.commit", "time", "tick.ms", "heartbeat.interval.ms":
		default:
			add(s)
		}
	}
	// After session.timeout.ms, which it must stay below: the page's
	// default heartbeat is 0 (implicit), so each set passes checkHeartbeat.
	if s, ok := LookupSetting("heartbeat.interval.ms"); ok {
		add(s)
	}
	for _, o := range c.heartbeatSafeOverrides() {
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

// HeartbeatRule is the words of Kafka's refusal (the classic consumer's
// Heartbeat constructor, IllegalArgumentException) that checkHeartbeat's
// error ends with.
const HeartbeatRule = "Heartbeat must be set lower than the session timeout"

// checkHeartbeat refuses a client configuration whose heartbeat.interval.ms
// is not below its session.timeout.ms, as Kafka's classic consumer does
// (Heartbeat's constructor: "Heartbeat must be set lower than the session
// timeout"). who names the client ("" for every client).
func checkHeartbeat(cc ClientConfig, who string) error {
	if cc.HeartbeatInterval > 0 && cc.HeartbeatInterval >= cc.SessionTimeout {
		prefix := ""
		if who != "" {
			prefix = who + "."
		}
		return fmt.Errorf("%sheartbeat.interval.ms %d must be lower than %ssession.timeout.ms %d (Kafka's classic consumer refuses it: %s)",
			prefix, cc.HeartbeatInterval, prefix, cc.SessionTimeout, HeartbeatRule)
	}
	return nil
}

// checkHeartbeats checks every client's configuration after a world-wide
// set: the world's, and each client's with its own settings.
func (c *Config) checkHeartbeats() error {
	if err := checkHeartbeat(c.Client, ""); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, o := range c.Overrides {
		if !seen[o.Client] {
			seen[o.Client] = true
			if err := checkHeartbeat(c.ForClient(o.Client), o.Client); err != nil {
				return err
			}
		}
	}
	return nil
}

// heartbeatSafeOverrides is Overrides in an order that SetLines' lines can
// be applied in, each set passing checkHeartbeat: the world's settings come
// first in those lines, so a client whose session.timeout.ms and
// heartbeat.interval.ms are both its own may need the two in the other
// order than typed (its heartbeat 1000 typed while the world's session
// was 45000, then its session 2000, then the world's session 50: replayed
// with the world's 50 first, its heartbeat must follow its session). The
// two write separate fields, so either order gives the same client; one
// of the two orders always passes, since both end states do.
func (c *Config) heartbeatSafeOverrides() []Override {
	out := append([]Override(nil), c.Overrides...)
	type pair struct{ session, hb int }
	at := map[string]*pair{}
	for i, o := range out {
		switch o.Key {
		case "session.timeout.ms", "heartbeat.interval.ms":
			p := at[o.Client]
			if p == nil {
				p = &pair{-1, -1}
				at[o.Client] = p
			}
			if o.Key == "session.timeout.ms" {
				p.session = i
			} else {
				p.hb = i
			}
		}
	}
	for _, p := range at {
		if p.session < 0 || p.hb < 0 {
			continue
		}
		session, _ := strconv.Atoi(out[p.session].Value)
		hb, _ := strconv.Atoi(out[p.hb].Value)
		first, second := p.session, p.hb
		if first > second {
			first, second = second, first
		}
		// Before the first of the two, the client has the world's pair.
		sessionFirst := p.session < p.hb
		bad := false
		if sessionFirst {
			bad = c.Client.HeartbeatInterval > 0 && c.Client.HeartbeatInterval >= session
		} else {
			bad = hb > 0 && hb >= c.Client.SessionTimeout
		}
		if bad {
			out[first], out[second] = out[second], out[first]
		}
	}
	return out
}
