package kafkafmt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifyFixtures: each file in testdata/properties is read and
// classified; the result (or the refusal to read it) is its .golden file.
func TestClassifyFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/properties/*.properties")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".properties")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			p, err := ParseProperties(strings.NewReader(string(data)))
			if err != nil {
				b.WriteString("error: " + err.Error() + "\n")
			} else {
				c := Classify(p)
				for _, e := range c.Entries {
					b.WriteString(string(e.Kind) + "\t" + e.String() + "\n")
				}
				if err := c.Err(); err != nil {
					b.WriteString("--- Err():\n" + err.Error() + "\n")
				}
			}
			checkGolden(t, "properties/"+name+".golden", b.String())
		})
	}
}

func classifyOne(t *testing.T, text string) *Classification {
	t.Helper()
	p, err := ParseProperties(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return Classify(p)
}

func entry(t *testing.T, c *Classification, key string) Entry {
	t.Helper()
	for _, e := range c.Entries {
		if e.Key == key {
			return e
		}
	}
	t.Fatalf("no entry for %s", key)
	return Entry{}
}

// TestClassifyRules: Kafka's rules, one by one.
func TestClassifyRules(t *testing.T) {
	cases := []struct {
		text, key string
		kind      Kind
		want      string // in String()
	}{
		{"max.poll.records=0", "max.poll.records", Invalid, "max.poll.records=0: must be at least 1 (Kafka: atLeast(1))"},
		{"max.poll.records= 250 ", "max.poll.records", Modelled, "set max.poll.records 250"},
		{"max.poll.records=2147483648", "max.poll.records", Invalid, "is not a whole number of 32 bits (Kafka: INT)"},
		{"max.poll.interval.ms=0", "max.poll.interval.ms", Invalid, "must be at least 1 (Kafka: atLeast(1))"},
		{"auto.commit.interval.ms=0", "auto.commit.interval.ms", Modelled, "set auto.commit.interval.ms 0"},
		{"enable.auto.commit=True\ngroup.id=g", "enable.auto.commit", Modelled, "set enable.auto.commit true"},
		{"enable.auto.commit=1", "enable.auto.commit", Invalid, "must be true or false, in any case (Kafka: BOOLEAN)"},
		{"enable.auto.commit=true", "enable.auto.commit", Invalid, "cannot be set to true when default group id (null) is used"},
		{"group.protocol=Consumer", "group.protocol", Modelled, "set group.protocol consumer"},
		{"group.protocol=kip848", "group.protocol", Invalid, "must be one of CLASSIC, CONSUMER (any case)"},
		{"isolation.level=read_committed", "isolation.level", Modelled, "set isolation.level read_committed"},
		{"isolation.level=READ_COMMITTED", "isolation.level", Invalid, "must be one of read_committed, read_uncommitted (case-sensitive)"},
		{"group.instance.id=", "group.instance.id", Invalid, "must not be empty (Kafka: NonEmptyString)"},
		{"group.instance.id=pod 1", "group.instance.id", Invalid, "Group instance id is invalid"},
		{"group.instance.id=orders-7", "group.instance.id", Modelled, "set group.instance.id orders-7"},
		{"partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "partition.assignment.strategy", Modelled, "set partition.assignment.strategy range,cooperative-sticky: a group whose members all list these uses the first, range, and rebalances eagerly"},
		{"partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "partition.assignment.strategy", Modelled, "set partition.assignment.strategy cooperative-sticky"},
		{"partition.assignment.strategy=roundrobin", "partition.assignment.strategy", Modelled, "a short name"},
		{"partition.assignment.strategy=StickyAssignor", "partition.assignment.strategy", Invalid, "write org.apache.kafka.clients.consumer.StickyAssignor"},
		{"partition.assignment.strategy=com.acme.RackAwareAssignor", "partition.assignment.strategy", Unsupported, "custom assignor"},
		{"partition.assignment.strategy=range,org.apache.kafka.clients.consumer.RangeAssignor", "partition.assignment.strategy", Invalid, `the assignor name "range" is used twice`},
		{"partition.assignment.strategy=", "partition.assignment.strategy", Invalid, "an empty list"},
		{"group.protocol=consumer\nsession.timeout.ms=10000", "session.timeout.ms", Invalid, "cannot be set when group.protocol=CONSUMER"},
		{"group.remote.assignor=range", "group.remote.assignor", Invalid, "cannot be set when group.protocol=CLASSIC"},
		{"group.protocol=consumer\ngroup.remote.assignor=sticky", "group.remote.assignor", Unsupported, "uniform and range"},
		{"heartbeat.interval.ms=50000", "heartbeat.interval.ms", Invalid, "heartbeat.interval.ms 50000 must be lower than session.timeout.ms 45000"},
		{"session.timeout.ms=5000\nheartbeat.interval.ms=1000", "session.timeout.ms", Modelled, "INVALID_SESSION_TIMEOUT (26)"},
		{"transaction.timeout.ms=1000000", "transaction.timeout.ms", Modelled, "INVALID_TRANSACTION_TIMEOUT (50)"},
		{"acks=0", "enable.idempotence", Modelled, "(enable.idempotence=false): set enable.idempotence false: not in the file: acks=0 turns idempotence off"},
		{"enable.idempotence=true\nacks=1", "acks", Invalid, "Must set acks to all"},
		{"enable.idempotence=true\nretries=0", "retries", Invalid, "Must set retries to non-zero"},
		{"max.in.flight.requests.per.connection=6", "max.in.flight.requests.per.connection", Invalid, "must be set to at most 5. Current value is 6"},
		{"enable.idempotence=false\nmax.in.flight.requests.per.connection=6", "max.in.flight.requests.per.connection", Modelled, "set max.in.flight.requests.per.connection 6"},
		{"enable.idempotence=false\ntransactional.id=t", "transactional.id", Invalid, "Cannot set a transactional.id without also enabling idempotence"},
		{"retries=0\ntransactional.id=t", "transactional.id", Invalid, "Cannot set a transactional.id without also enabling idempotence"},
		{"transactional.id=tx-{client}", "transactional.id", Modelled, "set transactional.id tx-{client}"},
		{"delivery.timeout.ms=1000", "delivery.timeout.ms", Invalid, "linger.ms + request.timeout.ms = 30005"},
		{"linger.ms=-1", "linger.ms", Invalid, "must be at least 0 (Kafka: atLeast(0))"},
		{"compression.gzip.level=0", "compression.gzip.level", Invalid, "must be between 1 and 9 or equal to -1"},
		{"sasl.login.refresh.window.factor=0.4", "sasl.login.refresh.window.factor", Invalid, "must be between 0.5 and 1 (Kafka: between(0.5, 1))"},
		{"auto.offset.reset=by_duration:P1DT2H", "auto.offset.reset", Ignored, "starts at offset 0"},
		{"auto.offset.reset=by_duration:-PT1H", "auto.offset.reset", Invalid, "by_duration"},
		{"auto.offset.reset=Earliest", "auto.offset.reset", Invalid, "must be earliest, latest, none"},
		{"key.deserializer=not a class", "key.deserializer", Invalid, "is not a Java class name"},
		{"security.protocol=sasl_ssl", "security.protocol", Ignored, "ignored"},
		{"sesion.timeout.ms=1", "sesion.timeout.ms", Unknown, "did you mean session.timeout.ms?"},
		{"consumer.session.timeout.ms=1", "consumer.session.timeout.ms", Unknown, "a client's own file says session.timeout.ms"},
		{"group.initial.rebalance.delay.ms=0", "group.initial.rebalance.delay.ms", Unknown, "a broker config (GroupCoordinatorConfig)"},
		{"auto.include.jmx.reporter=true", "auto.include.jmx.reporter", Unknown, "removed in Kafka 4.0"},
		{"schema.registry.url=http://x", "schema.registry.url", Unknown, "passes such a key on to plugins"},
		{"metrics.context.team=a", "metrics.context.team", Ignored, "ignored"},
	}
	for _, c := range cases {
		e := entry(t, classifyOne(t, c.text), c.key)
		if e.Kind != c.kind || !strings.Contains(e.String(), c.want) {
			t.Errorf("%q: %s %s\nwant %s containing %q", c.text, e.Kind, e, c.kind, c.want)
		}
	}
}

func TestClassifyErrAndDuplicates(t *testing.T) {
	c := classifyOne(t, "max.poll.records=10\nfoo.bar=1\nmax.poll.records=0\n")
	e := entry(t, c, "max.poll.records")
	if e.Line != 3 || len(e.Earlier) != 1 || e.Earlier[0] != 1 || e.Value != "0" {
		t.Fatalf("the last value counts, earlier lines listed: %+v", e)
	}
	err := c.Err()
	if err == nil || !strings.Contains(err.Error(), "line 3: max.poll.records=0: must be at least 1 (Kafka: atLeast(1))") ||
		strings.Contains(err.Error(), "foo.bar") {
		t.Fatalf("Err() = %v: want max.poll.records refused, and not foo.bar, which Kafka passes on to plugins", err)
	}
	if e := entry(t, c, "foo.bar"); e.Kind != Unknown || e.Refused() || !strings.Contains(e.String(), "not a config of Kafka 4.0's consumer or producer") {
		t.Fatalf("foo.bar: %s %s, want Unknown, listed with why, not refused", e.Kind, e)
	}
	if err := classifyOne(t, "max.poll.records=10\nsecurity.protocol=SSL\n").Err(); err != nil {
		t.Fatalf("a file kgrepl can take: %v", err)
	}
}

// TestDefaultsAgreeWithDefinitions: each client default is the ConfigDef
// default the validation uses, and valid by its own rule.
func TestDefaultsAgreeWithDefinitions(t *testing.T) {
	for _, d := range Defaults {
		if d.Scope == ScopeBroker {
			if _, known := clientKeys[d.Key]; known {
				t.Errorf("%s is a broker config and a client one", d.Key)
			}
			continue
		}
		k, ok := clientKeys[d.Key]
		if !ok {
			t.Errorf("%s: not a client config", d.Key)
			continue
		}
		if k.def != d.Value {
			t.Errorf("%s: Defaults says %s, the definition %s", d.Key, d.Value, k.def)
		}
		if d.Value != "null" {
			if _, problem := k.parse(d.Value); problem != "" {
				t.Errorf("%s: the default %s is refused: %s", d.Key, d.Value, problem)
			}
		}
		if want := kgreplSettings[d.Key]; d.Setting != want {
			t.Errorf("%s: Defaults maps it to %q, Classify to %q", d.Key, d.Setting, want)
		}
	}
	for key := range kgreplSettings {
		if _, ok := DefaultFor(key, ScopeConsumer); ok {
			continue
		}
		if _, ok := DefaultFor(key, ScopeProducer); !ok {
			t.Errorf("%s: modelled but not in Defaults", key)
		}
	}
	if !strings.HasPrefix(DefaultsTSV(), "key\tvalue\tunit\tscope\t") || strings.Count(DefaultsTSV(), "\n") != len(Defaults)+1 {
		t.Errorf("DefaultsTSV:\n%s", DefaultsTSV())
	}
}
