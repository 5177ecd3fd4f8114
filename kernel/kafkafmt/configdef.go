package kafkafmt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// This file holds Kafka 4.0's client configuration definitions as data:
// each key ConsumerConfig and ProducerConfig define (with
// CommonClientConfigs, SslConfigs.addClientSslSupport and
// SaslConfigs.addClientSaslSupport), its type, default and validator, as
// their ConfigDef.define calls state them (read from Kafka 4.0.0's source).

// configType is ConfigDef.Type.
type configType int

const (
	typeBoolean configType = iota
	typeString
	typeInt
	typeShort
	typeLong
	typeDouble
	typeList
	typeClass
	typePassword
)

var typeNames = [...]string{"BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}

// role says which clients define a key.
type role int

const (
	consumerRole role = 1 << iota
	producerRole
	bothRoles = consumerRole | producerRole
)

// validator is a ConfigDef.Validator: its Kafka spelling and a check that
// says what is wrong with a parsed value ("" when nothing is).
type validator struct {
	kafka string
	check func(v any) string
}

func atLeast(n float64) *validator {
	return &validator{kafka: fmt.Sprintf("atLeast(%s)", num(n)), check: func(v any) string {
		if toFloat(v) < n {
			return "must be at least " + num(n)
		}
		return ""
	}}
}

func between(a, b float64) *validator {
	return &validator{kafka: fmt.Sprintf("between(%s, %s)", num(a), num(b)), check: func(v any) string {
		if f := toFloat(v); f < a || f > b {
			return fmt.Sprintf("must be between %s and %s", num(a), num(b))
		}
		return ""
	}}
}

// in is ValidString.in: case-sensitive.
func in(values ...string) *validator {
	return &validator{kafka: "in(" + strings.Join(values, ", ") + ")", check: func(v any) string {
		for _, s := range values {
			if v.(string) == s {
				return ""
			}
		}
		return "must be one of " + strings.Join(values, ", ") + " (case-sensitive)"
	}}
}

// inAnyCase is CaseInsensitiveValidString.in.
func inAnyCase(values ...string) *validator {
	return &validator{kafka: "CaseInsensitiveValidString.in(" + strings.Join(values, ", ") + ")", check: func(v any) string {
		for _, s := range values {
			if strings.EqualFold(v.(string), s) {
				return ""
			}
		}
		return "must be one of " + strings.Join(values, ", ") + " (any case)"
	}}
}

var nonEmptyString = &validator{kafka: "NonEmptyString", check: func(v any) string {
	if v.(string) == "" {
		return "must not be empty"
	}
	return ""
}}

// gzipLevel is CompressionType.GZIP.levelValidator.
var gzipLevel = &validator{kafka: "[1,...,9] or -1", check: func(v any) string {
	if n := v.(int64); n > 9 || n < 1 && n != -1 {
		return "must be between 1 and 9 or equal to -1"
	}
	return ""
}}

// autoOffsetReset is AutoOffsetResetStrategy.Validator (4.0 adds
// by_duration:<ISO-8601 duration>).
var autoOffsetReset = &validator{kafka: "[earliest, latest, none, by_duration:PnDTnHnMn.nS]", check: func(v any) string {
	s := v.(string)
	switch {
	case s == "earliest" || s == "latest" || s == "none":
		return ""
	case strings.HasPrefix(s, "by_duration:") && isoDuration.MatchString(strings.TrimPrefix(s, "by_duration:")) &&
		!strings.HasPrefix(strings.TrimPrefix(s, "by_duration:"), "-"):
		return ""
	}
	return "must be earliest, latest, none or by_duration:<an ISO-8601 duration, not negative, such as PT15M>"
}}

// isoDuration is java.time.Duration.parse's pattern (days to seconds).
var isoDuration = regexp.MustCompile(`(?i)^[-+]?P(?:[-+]?[0-9]+D)?(?:T(?:[-+]?[0-9]+H)?(?:[-+]?[0-9]+M)?(?:[-+]?[0-9]+(?:[.,][0-9]{0,9})?S)?)?$`)

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// configKey is one key's definition.
type configKey struct {
	name  string
	typ   configType
	def   string // the default as Kafka's documentation writes it; "null" for none
	valid *validator
	roles role
	class string // where it is defined, e.g. ConsumerConfig
}

const (
	consumerConfig = "org.apache.kafka.clients.consumer.ConsumerConfig"
	producerConfig = "org.apache.kafka.clients.producer.ProducerConfig"
	sslConfigs     = "org.apache.kafka.common.config.SslConfigs"
	saslConfigs    = "org.apache.kafka.common.config.SaslConfigs"
)

func k(name string, typ configType, def string, valid *validator, roles role, class string) configKey {
	return configKey{name: name, typ: typ, def: def, valid: valid, roles: roles, class: class}
}

var clientKeys = func() map[string]configKey {
	var keys []configKey
	c, p, b := consumerRole, producerRole, bothRoles
	cc, pc := consumerConfig, producerConfig
	keys = append(keys,
		// Both clients (CommonClientConfigs names, each client's ConfigDef).
		k("bootstrap.servers", typeList, "", nil, b, cc),
		k("client.dns.lookup", typeString, "use_all_dns_ips", in("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"), b, cc),
		k("metadata.max.age.ms", typeLong, "300000", atLeast(0), b, cc),
		k("client.id", typeString, "", nil, b, cc),
		k("send.buffer.bytes", typeInt, "131072", atLeast(-1), b, cc),
		k("reconnect.backoff.ms", typeLong, "50", atLeast(0), b, cc),
		k("reconnect.backoff.max.ms", typeLong, "1000", atLeast(0), b, cc),
		k("retry.backoff.ms", typeLong, "100", atLeast(0), b, cc),
		k("retry.backoff.max.ms", typeLong, "1000", atLeast(0), b, cc),
		k("enable.metrics.push", typeBoolean, "true", nil, b, cc),
		k("metrics.sample.window.ms", typeLong, "30000", atLeast(0), b, cc),
		k("metrics.num.samples", typeInt, "2", atLeast(1), b, cc),
		k("metrics.recording.level", typeString, "INFO", in("INFO", "DEBUG", "TRACE"), b, cc),
		k("metric.reporters", typeList, "org.apache.kafka.common.metrics.JmxReporter", nil, b, cc),
		k("request.timeout.ms", typeInt, "30000", atLeast(0), b, cc),
		k("socket.connection.setup.timeout.ms", typeLong, "10000", nil, b, cc),
		k("socket.connection.setup.timeout.max.ms", typeLong, "30000", nil, b, cc),
		k("connections.max.idle.ms", typeLong, "540000", nil, b, cc),
		k("interceptor.classes", typeList, "", nil, b, cc),
		k("security.providers", typeString, "null", nil, b, cc),
		k("security.protocol", typeString, "PLAINTEXT", inAnyCase("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"), b, cc),
		k("metadata.recovery.strategy", typeString, "rebootstrap", inAnyCase("none", "rebootstrap"), b, cc),
		k("metadata.recovery.rebootstrap.trigger.ms", typeLong, "300000", atLeast(0), b, cc),
		// The consumer's.
		k("group.id", typeString, "null", nil, c, cc),
		k("group.instance.id", typeString, "null", nonEmptyString, c, cc),
		k("session.timeout.ms", typeInt, "45000", nil, c, cc),
		k("heartbeat.interval.ms", typeInt, "3000", nil, c, cc),
		k("partition.assignment.strategy", typeList, "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor", nil, c, cc),
		k("enable.auto.commit", typeBoolean, "true", nil, c, cc),
		k("auto.commit.interval.ms", typeInt, "5000", atLeast(0), c, cc),
		k("client.rack", typeString, "", nil, c, cc),
		k("max.partition.fetch.bytes", typeInt, "1048576", atLeast(0), c, cc),
		k("receive.buffer.bytes", typeInt, "65536", atLeast(-1), b, cc), // the producer's default is 32768
		k("fetch.min.bytes", typeInt, "1", atLeast(0), c, cc),
		k("fetch.max.bytes", typeInt, "52428800", atLeast(0), c, cc),
		k("fetch.max.wait.ms", typeInt, "500", atLeast(0), c, cc),
		k("auto.offset.reset", typeString, "latest", autoOffsetReset, c, cc),
		k("check.crcs", typeBoolean, "true", nil, c, cc),
		k("key.deserializer", typeClass, "null", nil, c, cc),
		k("value.deserializer", typeClass, "null", nil, c, cc),
		k("default.api.timeout.ms", typeInt, "60000", atLeast(0), c, cc),
		k("max.poll.records", typeInt, "500", atLeast(1), c, cc),
		k("max.poll.interval.ms", typeInt, "300000", atLeast(1), c, cc),
		k("exclude.internal.topics", typeBoolean, "true", nil, c, cc),
		k("internal.leave.group.on.close", typeBoolean, "true", nil, c, cc),
		k("internal.throw.on.fetch.stable.offset.unsupported", typeBoolean, "false", nil, c, cc),
		k("isolation.level", typeString, "read_uncommitted", in("read_committed", "read_uncommitted"), c, cc),
		k("allow.auto.create.topics", typeBoolean, "true", nil, c, cc),
		k("group.protocol", typeString, "classic", inAnyCase("CLASSIC", "CONSUMER"), c, cc),
		k("group.remote.assignor", typeString, "null", nil, c, cc),
		// The producer's.
		k("buffer.memory", typeLong, "33554432", atLeast(0), p, pc),
		k("retries", typeInt, "2147483647", between(0, math.MaxInt32), p, pc),
		k("acks", typeString, "all", in("all", "-1", "0", "1"), p, pc),
		k("compression.type", typeString, "none", in("none", "gzip", "snappy", "lz4", "zstd"), p, pc),
		k("compression.gzip.level", typeInt, "-1", gzipLevel, p, pc),
		k("compression.lz4.level", typeInt, "9", between(1, 17), p, pc),
		k("compression.zstd.level", typeInt, "3", between(-131072, 22), p, pc),
		k("batch.size", typeInt, "16384", atLeast(0), p, pc),
		k("partitioner.adaptive.partitioning.enable", typeBoolean, "true", nil, p, pc),
		k("partitioner.availability.timeout.ms", typeLong, "0", atLeast(0), p, pc),
		k("partitioner.ignore.keys", typeBoolean, "false", nil, p, pc),
		k("linger.ms", typeLong, "5", atLeast(0), p, pc),
		k("delivery.timeout.ms", typeInt, "120000", atLeast(0), p, pc),
		k("max.request.size", typeInt, "1048576", atLeast(0), p, pc),
		k("max.block.ms", typeLong, "60000", atLeast(0), p, pc),
		k("metadata.max.idle.ms", typeLong, "300000", atLeast(5000), p, pc),
		k("max.in.flight.requests.per.connection", typeInt, "5", atLeast(1), p, pc),
		k("key.serializer", typeClass, "null", nil, p, pc),
		k("value.serializer", typeClass, "null", nil, p, pc),
		k("partitioner.class", typeClass, "null", nil, p, pc),
		k("enable.idempotence", typeBoolean, "true", nil, p, pc),
		k("transaction.timeout.ms", typeInt, "60000", nil, p, pc),
		k("transactional.id", typeString, "null", nonEmptyString, p, pc),
	)
	// SslConfigs.addClientSslSupport and SaslConfigs.addClientSaslSupport,
	// in both clients.
	for _, s := range []struct {
		name string
		typ  configType
		def  string
	}{
		{"ssl.protocol", typeString, "TLSv1.3"}, {"ssl.provider", typeString, "null"},
		{"ssl.cipher.suites", typeList, "null"}, {"ssl.enabled.protocols", typeList, "TLSv1.2,TLSv1.3"},
		{"ssl.keystore.type", typeString, "JKS"}, {"ssl.keystore.location", typeString, "null"},
		{"ssl.keystore.password", typePassword, "null"}, {"ssl.key.password", typePassword, "null"},
		{"ssl.keystore.key", typePassword, "null"}, {"ssl.keystore.certificate.chain", typePassword, "null"},
		{"ssl.truststore.certificates", typePassword, "null"}, {"ssl.truststore.type", typeString, "JKS"},
		{"ssl.truststore.location", typeString, "null"}, {"ssl.truststore.password", typePassword, "null"},
		{"ssl.keymanager.algorithm", typeString, "SunX509"}, {"ssl.trustmanager.algorithm", typeString, "PKIX"},
		{"ssl.endpoint.identification.algorithm", typeString, "https"},
		{"ssl.secure.random.implementation", typeString, "null"}, {"ssl.engine.factory.class", typeClass, "null"},
	} {
		keys = append(keys, k(s.name, s.typ, s.def, nil, b, sslConfigs))
	}
	for _, s := range []struct {
		name  string
		typ   configType
		def   string
		valid *validator
	}{
		{"sasl.kerberos.service.name", typeString, "null", nil}, {"sasl.kerberos.kinit.cmd", typeString, "/usr/bin/kinit", nil},
		{"sasl.kerberos.ticket.renew.window.factor", typeDouble, "0.8", nil},
		{"sasl.kerberos.ticket.renew.jitter", typeDouble, "0.05", nil},
		{"sasl.kerberos.min.time.before.relogin", typeLong, "60000", nil},
		{"sasl.login.refresh.window.factor", typeDouble, "0.8", between(0.5, 1.0)},
		{"sasl.login.refresh.window.jitter", typeDouble, "0.05", between(0.0, 0.25)},
		{"sasl.login.refresh.min.period.seconds", typeShort, "60", between(0, 900)},
		{"sasl.login.refresh.buffer.seconds", typeShort, "300", between(0, 3600)},
		{"sasl.mechanism", typeString, "GSSAPI", nil}, {"sasl.jaas.config", typePassword, "null", nil},
		{"sasl.client.callback.handler.class", typeClass, "null", nil},
		{"sasl.login.callback.handler.class", typeClass, "null", nil}, {"sasl.login.class", typeClass, "null", nil},
		{"sasl.login.connect.timeout.ms", typeInt, "null", nil}, {"sasl.login.read.timeout.ms", typeInt, "null", nil},
		{"sasl.login.retry.backoff.max.ms", typeLong, "10000", nil}, {"sasl.login.retry.backoff.ms", typeLong, "100", nil},
		{"sasl.oauthbearer.scope.claim.name", typeString, "scope", nil}, {"sasl.oauthbearer.sub.claim.name", typeString, "sub", nil},
		{"sasl.oauthbearer.token.endpoint.url", typeString, "null", nil}, {"sasl.oauthbearer.jwks.endpoint.url", typeString, "null", nil},
		{"sasl.oauthbearer.jwks.endpoint.refresh.ms", typeLong, "3600000", nil},
		{"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", typeLong, "10000", nil},
		{"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", typeLong, "100", nil},
		{"sasl.oauthbearer.clock.skew.seconds", typeInt, "30", nil},
		{"sasl.oauthbearer.expected.audience", typeList, "null", nil}, {"sasl.oauthbearer.expected.issuer", typeString, "null", nil},
		{"sasl.oauthbearer.header.urlencode", typeBoolean, "false", nil},
	} {
		keys = append(keys, k(s.name, s.typ, s.def, s.valid, b, saslConfigs))
	}
	m := map[string]configKey{}
	for _, key := range keys {
		if _, dup := m[key.name]; dup {
			panic("kafkafmt: " + key.name + " defined twice")
		}
		m[key.name] = key
	}
	return m
}()

// javaTrim is String.trim: it drops every character up to U+0020 at both
// ends (ConfigDef.parseType trims each value so).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// javaListSplit is ConfigDef's LIST parse: "" is the empty list, else the
// trimmed value split at commas with blanks around them (\s*,\s*).
var listSep = regexp.MustCompile(`[ \t\n\x0B\f\r]*,[ \t\n\x0B\f\r]*`)

// javaClassName: a binary class name, as Class.forName takes one.
var javaClassName = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*(\.[\p{L}_$][\p{L}\p{N}_$]*)*$`)

// parse reads a raw value as ConfigDef.parseType does for the key's type,
// then applies its validator. It returns the parsed value (bool, string,
// int64, float64, []string) or what is wrong, Kafka's rule in brackets.
func (key configKey) parse(raw string) (any, string) {
	s := javaTrim(raw)
	var v any
	switch key.typ {
	case typeBoolean:
		switch {
		case strings.EqualFold(s, "true"):
			v = true
		case strings.EqualFold(s, "false"):
			v = false
		default:
			return nil, "must be true or false, in any case (Kafka: BOOLEAN)"
		}
	case typeString, typePassword:
		v = s
	case typeInt, typeShort, typeLong:
		bits := map[configType]int{typeInt: 32, typeShort: 16, typeLong: 64}[key.typ]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Sprintf("is not a whole number of %d bits (Kafka: %s)", bits, typeNames[key.typ])
		}
		v = n
	case typeDouble:
		f, err := strconv.ParseFloat(strings.TrimRight(s, "dDfF"), 64)
		if err != nil {
			return nil, "is not a number (Kafka: DOUBLE)"
		}
		v = f
	case typeList:
		if s == "" {
			v = []string{}
		} else {
			v = listSep.Split(s, -1)
		}
	case typeClass:
		if !javaClassName.MatchString(s) {
			return nil, "is not a Java class name (Kafka: CLASS, loaded with Class.forName)"
		}
		v = s
	}
	if key.valid != nil {
		if msg := key.valid.check(v); msg != "" {
			return nil, msg + " (Kafka: " + key.valid.kafka + ")"
		}
	}
	return v, ""
}
