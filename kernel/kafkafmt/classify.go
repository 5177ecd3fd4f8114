package kafkafmt

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kind is what kgrepl does with a key of a client's configuration.
type Kind string

const (
	// Modelled: kgrepl has the setting; Setting and SettingValue say what
	// to set.
	Modelled Kind = "modelled"
	// Ignored: a valid Kafka 4.0 client config kgrepl does not model.
	Ignored Kind = "ignored"
	// Unsupported: a valid Kafka value kgrepl cannot model (a custom
	// assignor, a value a config provider fills in at run time).
	Unsupported Kind = "unsupported"
	// Unknown: not a config of Kafka 4.0's consumer or producer.
	Unknown Kind = "unknown"
	// Invalid: a value Kafka 4.0's client refuses.
	Invalid Kind = "invalid"
)

// Entry is one key of the file and what kgrepl makes of it.
type Entry struct {
	Key   string
	Value string // as the file gives it (the last time it sets the key); [hidden] for a password, as Kafka logs it
	Line  int
	Kind  Kind
	// Setting is kgrepl's setting (Modelled) and SettingValue the value
	// to give `set` (Kafka's value normalised: booleans and group.protocol
	// in lower case, numbers trimmed, assignor class names as kgrepl's
	// short names). A .ms setting is in milliseconds, as Kafka counts.
	Setting, SettingValue string
	// Reason says why the key is not Modelled, with Kafka's rule where one
	// refuses it; for a Modelled key, a note or "".
	Reason string
	// Implied: the file does not set the key; another key's value makes
	// Kafka run with this one (acks=1 turns enable.idempotence off).
	Implied bool
	// Earlier lists the lines that set the key before Line (Java keeps
	// the last).
	Earlier []int
}

// Refused: Kafka's client would refuse the file for this entry, so kgrepl
// takes none of it (set --from). An Unknown key is not refused: Kafka
// itself passes it on to plugins and only logs it, so kgrepl lists it as
// ignored, with a suggestion for a likely typo; an Unsupported one is
// listed as not applied.
func (e Entry) Refused() bool {
	return e.Kind == Invalid
}

func (e Entry) String() string {
	s := fmt.Sprintf("line %d: %s=%s", e.Line, e.Key, e.Value)
	if e.Implied {
		s = fmt.Sprintf("line %d: (%s=%s)", e.Line, e.Key, e.Value)
	}
	switch e.Kind {
	case Modelled:
		s += ": set " + e.Setting + " " + e.SettingValue
	case Ignored:
		s += ": ignored (kgrepl does not model " + e.Key + ")"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s + EarlierNote(e.Earlier)
}

// EarlierNote says where else a file set a key it sets again (Java's
// Properties keeps the last): "" when nowhere.
func EarlierNote(earlier []int) string {
	if len(earlier) == 0 {
		return ""
	}
	lines := make([]string, len(earlier))
	for i, l := range earlier {
		lines[i] = strconv.Itoa(l)
	}
	return " (also set at line " + strings.Join(lines, ", ") + "; Java keeps the last)"
}

// Classification is a configuration, key by key, in the file's order (a
// key where the file first sets it), implied keys last.
type Classification struct {
	Entries []Entry
}

// Err is nil when Kafka's client would take the file, else an error
// listing each refused (Invalid) key with its line and reason.
func (c *Classification) Err() error {
	var lines []string
	for _, e := range c.Entries {
		if e.Refused() {
			lines = append(lines, e.String())
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// kgreplSettings maps the Kafka keys kgrepl models to its setting names
// (sim/config.go's Settings; `help set`).
var kgreplSettings = map[string]string{
	"session.timeout.ms":                    "session.timeout.ms",
	"heartbeat.interval.ms":                 "heartbeat.interval.ms",
	"max.poll.interval.ms":                  "max.poll.interval.ms",
	"max.poll.records":                      "max.poll.records",
	"enable.auto.commit":                    "enable.auto.commit",
	"auto.commit.interval.ms":               "auto.commit.interval.ms",
	"isolation.level":                       "isolation.level",
	"group.instance.id":                     "group.instance.id",
	"group.protocol":                        "group.protocol",
	"group.remote.assignor":                 "group.remote.assignor",
	"partition.assignment.strategy":         "partition.assignment.strategy",
	"request.timeout.ms":                    "request.timeout.ms",
	"retry.backoff.ms":                      "retry.backoff.ms",
	"linger.ms":                             "linger.ms",
	"enable.idempotence":                    "enable.idempotence",
	"transactional.id":                      "transactional.id",
	"transaction.timeout.ms":                "transaction.timeout.ms",
	"max.in.flight.requests.per.connection": "max.in.flight.requests.per.connection",
}

// ignoredWhy says, for keys that change what a real group does, why
// kgrepl's answer does not follow them.
var ignoredWhy = map[string]string{
	"auto.offset.reset":      "a kgrepl member without a committed offset starts at offset 0 (earliest)",
	"group.id":               "a kgrepl world has one group; new --from-describe names it from the describe output",
	"client.id":              "kgrepl names its members itself",
	"acks":                   "kgrepl's producers write with acks=all",
	"retries":                "kgrepl's producers retry until delivery",
	"fetch.max.wait.ms":      "a kgrepl fetch takes one round trip",
	"delivery.timeout.ms":    "kgrepl's producers retry until delivery",
	"retry.backoff.max.ms":   "kgrepl's retry backoff is fixed at retry.backoff.ms",
	"default.api.timeout.ms": "kgrepl's clients wait request.timeout.ms",
}

var assignorShort = map[string]string{
	"org.apache.kafka.clients.consumer.RangeAssignor":             "range",
	"org.apache.kafka.clients.consumer.RoundRobinAssignor":        "roundrobin",
	"org.apache.kafka.clients.consumer.StickyAssignor":            "sticky",
	"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}

// Kafka 4.0's broker bounds a client's value must keep to (GroupCoordinatorConfig,
// TransactionStateManagerConfig defaults).
const (
	brokerMinSessionTimeout = 6000
	brokerMaxSessionTimeout = 1800000
	brokerMaxTxnTimeout     = 900000
)

// Classify checks each key of a client's configuration against Kafka 4.0's
// ConsumerConfig and ProducerConfig (a kgrepl member is both, so one file
// may hold both clients' keys): its type, range and allowed values, and the
// rules the clients apply across keys when they start (group.protocol's
// unsupported keys, idempotence's acks/retries/max.in.flight, a
// transactional.id without idempotence, heartbeat below session timeout,
// enable.auto.commit without group.id, delivery.timeout.ms). Each key is
// then Modelled (with kgrepl's setting), Ignored (named, with why when it
// changes what a real group does), or refused: Invalid, Unknown (with a
// suggestion: a typo, a prefixed key, a broker config) or Unsupported.
func Classify(p *Properties) *Classification {
	c := &classifier{p: p, byKey: map[string]int{}}
	c.keys()
	c.crossRules()
	return &Classification{Entries: c.entries}
}

type classifier struct {
	p       *Properties
	entries []Entry
	byKey   map[string]int      // index in entries
	parsed  map[string]any      // parsed values of valid keys
	present map[string]bool     // keys set in the file
	last    map[string]Property // their last entries
	earlier map[string][]int    // earlier lines
}

func (c *classifier) keys() {
	c.parsed, c.present, c.last, c.earlier = map[string]any{}, map[string]bool{}, map[string]Property{}, map[string][]int{}
	for _, e := range c.p.Entries {
		if prev, ok := c.last[e.Key]; ok {
			c.earlier[e.Key] = append(c.earlier[e.Key], prev.Line)
		}
		c.last[e.Key] = e
		c.present[e.Key] = true
	}
	providers := c.present["config.providers"]
	for _, key := range c.p.Keys() {
		e := c.last[key]
		en := Entry{Key: key, Value: e.Value, Line: e.Line, Earlier: c.earlier[key]}
		def, known := clientKeys[key]
		switch {
		case known && providers && strings.Contains(e.Value, "${"):
			// AbstractConfig resolves ${provider:path:key} at run time.
			en.Kind, en.Reason = Ignored, "a config provider fills it in when the client starts (config.providers); kgrepl cannot read it"
			if _, modelled := kgreplSettings[key]; modelled {
				en.Kind = Unsupported
			}
		case known:
			v, problem := def.parse(e.Value)
			if problem != "" {
				en.Kind, en.Reason = Invalid, problem
				break
			}
			c.parsed[key] = v
			c.classifyValid(&en, def, v)
		case key == "config.providers" || strings.HasPrefix(key, "config.providers.") || strings.HasPrefix(key, "metrics.context."):
			// AbstractConfig's config providers and the metrics context
			// (CommonClientConfigs.METRICS_CONTEXT_PREFIX) take any key.
			en.Kind = Ignored
		default:
			en.Kind, en.Reason = Unknown, unknownWhy(key)
		}
		if known && def.typ == typePassword {
			en.Value = "[hidden]" // as Kafka's Password.toString shows it
		}
		c.byKey[key] = len(c.entries)
		c.entries = append(c.entries, en)
	}
}

func (c *classifier) classifyValid(en *Entry, def configKey, v any) {
	setting, modelled := kgreplSettings[def.name]
	if !modelled {
		en.Kind, en.Reason = Ignored, ignoredWhy[def.name]
		return
	}
	en.Kind, en.Setting = Modelled, setting
	switch x := v.(type) {
	case bool:
		en.SettingValue = strconv.FormatBool(x)
	case int64:
		en.SettingValue = strconv.FormatInt(x, 10)
	case string:
		en.SettingValue = x
	}
	switch def.name {
	case "group.protocol":
		en.SettingValue = strings.ToLower(en.SettingValue)
	case "group.instance.id":
		if msg := topicProblem(v.(string)); msg != "" {
			en.Kind, en.Setting, en.SettingValue = Invalid, "", ""
			en.Reason = "Group instance id is invalid: " + msg + " (Kafka: JoinGroupRequest.validateGroupInstanceId, InvalidConfigurationException)"
			return
		}
		en.Reason = "one file is one member's: kgrepl gives it to the members the file is applied to"
	case "isolation.level":
		en.Reason = "kgrepl applies it to the audit reader of the output topic (a world setting)"
	case "group.remote.assignor":
		if s := v.(string); s != "uniform" && s != "range" {
			en.Kind, en.Setting, en.SettingValue = Unsupported, "", ""
			en.Reason = "kgrepl models the broker's built-in server-side assignors, uniform and range (group.consumer.assignors' default)"
		}
	case "partition.assignment.strategy":
		c.assignors(en, v.([]string))
	case "session.timeout.ms":
		if n := v.(int64); n < brokerMinSessionTimeout || n > brokerMaxSessionTimeout {
			en.Reason = fmt.Sprintf("a broker with Kafka's defaults refuses a JoinGroup whose session timeout is outside group.min.session.timeout.ms..group.max.session.timeout.ms (%d..%d): INVALID_SESSION_TIMEOUT (26)", brokerMinSessionTimeout, brokerMaxSessionTimeout)
		}
	case "transaction.timeout.ms":
		if n := v.(int64); n > brokerMaxTxnTimeout {
			en.Reason = fmt.Sprintf("a broker with Kafka's defaults refuses InitProducerId with a timeout over transaction.max.timeout.ms (%d): INVALID_TRANSACTION_TIMEOUT (50)", brokerMaxTxnTimeout)
		}
	}
}

// assignors maps partition.assignment.strategy's class names to kgrepl's
// names (ConsumerPartitionAssignor.getAssignorInstances loads each).
func (c *classifier) assignors(en *Entry, list []string) {
	if len(list) == 0 {
		en.Kind, en.Setting, en.SettingValue = Invalid, "", ""
		en.Reason = "an empty list: the classic consumer's subscribe() refuses it (IllegalStateException: Must configure at least one partition assigner class name to partition.assignment.strategy configuration property)"
		return
	}
	var names, short []string
	seen := map[string]bool{}
	for _, a := range list {
		name, ok := assignorShort[a]
		if !ok {
			for _, s := range assignorShort {
				if a == s {
					name, ok = s, true
					short = append(short, a)
				}
			}
		}
		if !ok {
			for full, s := range assignorShort {
				if strings.HasSuffix(full, "."+a) {
					en.Kind, en.Setting, en.SettingValue = Invalid, "", ""
					en.Reason = fmt.Sprintf("%s is not a class Kafka can load: write %s (Kafka: ConsumerPartitionAssignor.getAssignorInstances, ClassNotFoundException), or %s", a, full, s)
					return
				}
			}
			if a == "" || !javaClassName.MatchString(a) {
				en.Kind, en.Setting, en.SettingValue = Invalid, "", ""
				en.Reason = fmt.Sprintf("%q is not a class name (Kafka: ConsumerPartitionAssignor.getAssignorInstances loads each with Class.forName)", a)
				return
			}
			en.Kind, en.Setting, en.SettingValue = Unsupported, "", ""
			en.Reason = fmt.Sprintf("%s is a custom assignor; kgrepl models range, roundrobin, sticky and cooperative-sticky", a)
			return
		}
		if seen[name] {
			en.Kind, en.Setting, en.SettingValue = Invalid, "", ""
			en.Reason = fmt.Sprintf("the assignor name %q is used twice (Kafka: ConsumerPartitionAssignor.getAssignorInstances, KafkaException)", name)
			return
		}
		seen[name] = true
		names = append(names, name)
	}
	en.SettingValue = strings.Join(names, ",")
	var notes []string
	if len(short) > 0 {
		notes = append(notes, fmt.Sprintf("%s: a short name, as librdkafka-based clients write it; the Java client needs the class name", strings.Join(short, ", ")))
	}
	if len(names) > 1 {
		mode := "eagerly"
		if !seen["range"] && !seen["roundrobin"] && !seen["sticky"] {
			mode = "cooperatively"
		}
		notes = append(notes, fmt.Sprintf("a group whose members all list these uses the first, %s, and rebalances %s (ConsumerCoordinator: cooperative only if every assignor listed supports it)", names[0], mode))
	}
	en.Reason = strings.Join(notes, "; ")
}

// unknownWhy suggests what an unknown key may be.
func unknownWhy(key string) string {
	base := "not a config of Kafka 4.0's consumer or producer"
	if key == "auto.include.jmx.reporter" {
		return base + ": removed in Kafka 4.0 (JmxReporter is in metric.reporters by default)"
	}
	for _, d := range Defaults {
		if d.Key == key && d.Scope == ScopeBroker {
			return base + ": a broker config (" + shortClass(d.Class) + "), which a client ignores; in kgrepl, set it with set " + key
		}
	}
	for _, prefix := range []string{"consumer.", "producer.", "main.consumer.", "restore.consumer.", "global.consumer.", "admin.", "kafka."} {
		if rest, ok := strings.CutPrefix(key, prefix); ok {
			if _, known := clientKeys[rest]; known {
				return fmt.Sprintf("%s: a prefixed key, as Kafka Streams, Connect and MirrorMaker configs write them; a client's own file says %s", base, rest)
			}
		}
	}
	best, bestD := "", 3
	for name := range clientKeys {
		if d := editDistance(key, name); d < bestD || d == bestD && name < best {
			best, bestD = name, d
		}
	}
	if best != "" && bestD <= 2 && len(key) > 4 {
		return fmt.Sprintf("%s; did you mean %s? (Kafka itself passes an unknown key on to plugins and only logs it as unused, so a misspelt key silently keeps the default)", base, best)
	}
	return base + " (Kafka passes such a key on to plugins, serializers for one, and logs it as unused)"
}

func shortClass(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		return c[i+1:]
	}
	return c
}

// editDistance is Levenshtein's, for suggestions.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// refuse turns key's entry Invalid with reason (a cross-key rule).
func (c *classifier) refuse(key, reason string) {
	i, ok := c.byKey[key]
	if !ok {
		return
	}
	e := &c.entries[i]
	if e.Kind == Invalid {
		return
	}
	e.Kind, e.Setting, e.SettingValue, e.Reason = Invalid, "", "", reason
}

func (c *classifier) intOf(key string) int64 {
	if v, ok := c.parsed[key].(int64); ok {
		return v
	}
	n, _ := strconv.ParseInt(clientKeys[key].def, 10, 64)
	return n
}

func (c *classifier) boolOf(key string) bool {
	if v, ok := c.parsed[key].(bool); ok {
		return v
	}
	return clientKeys[key].def == "true"
}

func (c *classifier) stringOf(key string) string {
	if v, ok := c.parsed[key].(string); ok {
		return v
	}
	return clientKeys[key].def
}

// set: the file sets key to a value Kafka reads as set (not blank).
func (c *classifier) set(key string) bool {
	return c.present[key] && javaTrim(c.last[key].Value) != ""
}

// crossRules applies what the clients check across keys when they start.
func (c *classifier) crossRules() {
	// ConsumerConfig.checkUnsupportedConfigs.
	protocol := strings.ToUpper(c.stringOf("group.protocol"))
	if protocol == "CONSUMER" {
		for _, key := range []string{"partition.assignment.strategy", "heartbeat.interval.ms", "session.timeout.ms"} {
			if c.set(key) {
				c.refuse(key, key+" cannot be set when group.protocol=CONSUMER: the broker's group.consumer.* settings and its assignor take its place (Kafka: ConsumerConfig.checkUnsupportedConfigs, ConfigException)")
			}
		}
	} else if protocol == "CLASSIC" && c.set("group.remote.assignor") {
		c.refuse("group.remote.assignor", "group.remote.assignor cannot be set when group.protocol=CLASSIC (Kafka: ConsumerConfig.checkUnsupportedConfigs, ConfigException)")
	}
	// ConsumerConfig.maybeOverrideEnableAutoCommit.
	if c.present["enable.auto.commit"] && c.boolOf("enable.auto.commit") && !c.present["group.id"] {
		c.refuse("enable.auto.commit", "enable.auto.commit cannot be set to true when default group id (null) is used: set group.id (Kafka: ConsumerConfig.maybeOverrideEnableAutoCommit, InvalidConfigurationException)")
	}
	// The classic consumer's Heartbeat.
	if protocol == "CLASSIC" && (c.present["heartbeat.interval.ms"] || c.present["session.timeout.ms"]) {
		hb, st := c.intOf("heartbeat.interval.ms"), c.intOf("session.timeout.ms")
		if hb >= st {
			why := fmt.Sprintf("heartbeat.interval.ms %d must be lower than session.timeout.ms %d (Kafka: the classic consumer's Heartbeat, IllegalArgumentException: Heartbeat must be set lower than the session timeout)", hb, st)
			c.refuse("heartbeat.interval.ms", why)
			c.refuse("session.timeout.ms", why)
		}
	}
	c.idempotence()
	// KafkaProducer.configureDeliveryTimeout.
	if c.present["delivery.timeout.ms"] {
		linger, req, dt := c.intOf("linger.ms"), c.intOf("request.timeout.ms"), c.intOf("delivery.timeout.ms")
		if dt < min(linger+req, math32) {
			c.refuse("delivery.timeout.ms", fmt.Sprintf("delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms = %d (Kafka: KafkaProducer.configureDeliveryTimeout, ConfigException)", linger+req))
		}
	}
}

const math32 = 1<<31 - 1

// idempotence is ProducerConfig.postProcessAndValidateIdempotenceConfigs.
func (c *classifier) idempotence() {
	userIdem := c.present["enable.idempotence"]
	idem := c.boolOf("enable.idempotence")
	disabledBy := ""
	if idem {
		if c.intOf("retries") == 0 {
			if userIdem {
				c.refuse("retries", "Must set retries to non-zero when using the idempotent producer (enable.idempotence=true) (Kafka: ProducerConfig.postProcessAndValidateIdempotenceConfigs, ConfigException)")
			} else {
				disabledBy = "retries=0"
			}
		}
		acks := c.stringOf("acks")
		if acks != "all" && acks != "-1" {
			if userIdem {
				c.refuse("acks", "Must set acks to all in order to use the idempotent producer (enable.idempotence=true) (Kafka: ProducerConfig.postProcessAndValidateIdempotenceConfigs, ConfigException)")
			} else if disabledBy == "" {
				disabledBy = "acks=" + acks
			}
		}
		if n := c.intOf("max.in.flight.requests.per.connection"); n > 5 {
			c.refuse("max.in.flight.requests.per.connection", fmt.Sprintf("To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most 5. Current value is %d; or set enable.idempotence=false (Kafka: ProducerConfig.postProcessAndValidateIdempotenceConfigs, ConfigException)", n))
		}
	}
	effective := idem && disabledBy == ""
	if c.present["transactional.id"] && !effective {
		c.refuse("transactional.id", "Cannot set a transactional.id without also enabling idempotence (Kafka: ProducerConfig.postProcessAndValidateIdempotenceConfigs, ConfigException)")
	}
	if disabledBy != "" {
		key, _, _ := strings.Cut(disabledBy, "=")
		c.entries = append(c.entries, Entry{Key: "enable.idempotence", Value: "false", Line: c.last[key].Line, Kind: Modelled,
			Setting: "enable.idempotence", SettingValue: "false", Implied: true,
			Reason: "not in the file: " + disabledBy + " turns idempotence off (Kafka: ProducerConfig.postProcessAndValidateIdempotenceConfigs)"})
	}
}

// sortedKeys lists the client keys Kafka 4.0 defines, sorted (for tests
// and documentation).
func sortedKeys() []string {
	keys := make([]string, 0, len(clientKeys))
	for k := range clientKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
