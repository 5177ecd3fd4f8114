package kafkafmt

import "strings"

// Scope is where a config lives.
type Scope string

const (
	ScopeConsumer Scope = "consumer"
	ScopeProducer Scope = "producer"
	ScopeBroker   Scope = "broker"
)

// Default is one of Kafka 4.0's defaults.
type Default struct {
	Key   string
	Value string // Kafka's default, as Kafka's documentation writes it ("null": none)
	Unit  string // "ms", "records" or ""
	Scope Scope
	// Class and Constant say where Kafka defines it: the constant naming
	// the key and, where it has one, the constant holding the default.
	Class, Constant string
	// Setting is kgrepl's setting ("" when kgrepl does not model it) and
	// SettingValue the default in kgrepl's spelling, for `set`.
	Setting, SettingValue string
}

const (
	groupCoordinatorConfig = "org.apache.kafka.coordinator.group.GroupCoordinatorConfig"
	txnStateManagerConfig  = "org.apache.kafka.coordinator.transaction.TransactionStateManagerConfig"
)

// Defaults are Kafka 4.0's defaults for what kgrepl models, client and
// broker, and for the keys next to them that decide timing (for new
// --kafka-defaults). The client rows agree with the ConfigDef table this
// package validates with (a test checks it).
var Defaults = []Default{
	// ConsumerConfig.
	{"session.timeout.ms", "45000", "ms", ScopeConsumer, consumerConfig, "SESSION_TIMEOUT_MS_CONFIG (ConfigDef default 45000)", "session.timeout.ms", "45000"},
	{"heartbeat.interval.ms", "3000", "ms", ScopeConsumer, consumerConfig, "HEARTBEAT_INTERVAL_MS_CONFIG (ConfigDef default 3000)", "heartbeat.interval.ms", "3000"},
	{"max.poll.interval.ms", "300000", "ms", ScopeConsumer, consumerConfig, "MAX_POLL_INTERVAL_MS_CONFIG (ConfigDef default 300000)", "max.poll.interval.ms", "300000"},
	{"max.poll.records", "500", "records", ScopeConsumer, consumerConfig, "MAX_POLL_RECORDS_CONFIG, DEFAULT_MAX_POLL_RECORDS", "max.poll.records", "500"},
	{"enable.auto.commit", "true", "", ScopeConsumer, consumerConfig, "ENABLE_AUTO_COMMIT_CONFIG (ConfigDef default true)", "enable.auto.commit", "true"},
	{"auto.commit.interval.ms", "5000", "ms", ScopeConsumer, consumerConfig, "AUTO_COMMIT_INTERVAL_MS_CONFIG (ConfigDef default 5000)", "auto.commit.interval.ms", "5000"},
	{"isolation.level", "read_uncommitted", "", ScopeConsumer, consumerConfig, "ISOLATION_LEVEL_CONFIG, DEFAULT_ISOLATION_LEVEL", "isolation.level", "read_uncommitted"},
	{"group.instance.id", "null", "", ScopeConsumer, consumerConfig, "GROUP_INSTANCE_ID_CONFIG (ConfigDef default null)", "group.instance.id", "none"},
	{"group.protocol", "classic", "", ScopeConsumer, consumerConfig, "GROUP_PROTOCOL_CONFIG, DEFAULT_GROUP_PROTOCOL", "group.protocol", "classic"},
	{"group.remote.assignor", "null", "", ScopeConsumer, consumerConfig, "GROUP_REMOTE_ASSIGNOR_CONFIG, DEFAULT_GROUP_REMOTE_ASSIGNOR (null: the broker's first group.consumer.assignors)", "group.remote.assignor", "uniform"},
	{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "", ScopeConsumer, consumerConfig, "PARTITION_ASSIGNMENT_STRATEGY_CONFIG (ConfigDef default List.of(RangeAssignor.class, CooperativeStickyAssignor.class))", "partition.assignment.strategy", "range,cooperative-sticky"},
	{"request.timeout.ms", "30000", "ms", ScopeConsumer, consumerConfig, "REQUEST_TIMEOUT_MS_CONFIG (ConfigDef default 30000)", "request.timeout.ms", "30000"},
	{"retry.backoff.ms", "100", "ms", ScopeConsumer, consumerConfig, "RETRY_BACKOFF_MS_CONFIG, CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS", "retry.backoff.ms", "100"},
	{"retry.backoff.max.ms", "1000", "ms", ScopeConsumer, consumerConfig, "RETRY_BACKOFF_MAX_MS_CONFIG, CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MAX_MS", "", ""},
	{"auto.offset.reset", "latest", "", ScopeConsumer, consumerConfig, "AUTO_OFFSET_RESET_CONFIG (ConfigDef default AutoOffsetResetStrategy.LATEST)", "", ""},
	{"fetch.max.wait.ms", "500", "ms", ScopeConsumer, consumerConfig, "FETCH_MAX_WAIT_MS_CONFIG, DEFAULT_FETCH_MAX_WAIT_MS", "", ""},
	{"default.api.timeout.ms", "60000", "ms", ScopeConsumer, consumerConfig, "DEFAULT_API_TIMEOUT_MS_CONFIG (ConfigDef default 60000)", "", ""},
	// ProducerConfig.
	{"enable.idempotence", "true", "", ScopeProducer, producerConfig, "ENABLE_IDEMPOTENCE_CONFIG (ConfigDef default true)", "enable.idempotence", "true"},
	{"transactional.id", "null", "", ScopeProducer, producerConfig, "TRANSACTIONAL_ID_CONFIG (ConfigDef default null)", "transactional.id", "none"},
	{"transaction.timeout.ms", "60000", "ms", ScopeProducer, producerConfig, "TRANSACTION_TIMEOUT_CONFIG (ConfigDef default 60000)", "transaction.timeout.ms", "60000"},
	{"request.timeout.ms", "30000", "ms", ScopeProducer, producerConfig, "REQUEST_TIMEOUT_MS_CONFIG (ConfigDef default 30 * 1000)", "request.timeout.ms", "30000"},
	{"retry.backoff.ms", "100", "ms", ScopeProducer, producerConfig, "RETRY_BACKOFF_MS_CONFIG, CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS", "retry.backoff.ms", "100"},
	{"delivery.timeout.ms", "120000", "ms", ScopeProducer, producerConfig, "DELIVERY_TIMEOUT_MS_CONFIG (ConfigDef default 120 * 1000)", "", ""},
	{"linger.ms", "5", "ms", ScopeProducer, producerConfig, "LINGER_MS_CONFIG (ConfigDef default 5; 0 before Kafka 4.0)", "linger.ms", "5"},
	{"acks", "all", "", ScopeProducer, producerConfig, "ACKS_CONFIG (ConfigDef default \"all\")", "", ""},
	{"max.in.flight.requests.per.connection", "5", "", ScopeProducer, producerConfig, "MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION (ConfigDef default 5)", "max.in.flight.requests.per.connection", "5"},
	// The broker's group coordinator.
	{"group.initial.rebalance.delay.ms", "3000", "ms", ScopeBroker, groupCoordinatorConfig, "GROUP_INITIAL_REBALANCE_DELAY_MS_CONFIG, GROUP_INITIAL_REBALANCE_DELAY_MS_DEFAULT", "group.initial.rebalance.delay.ms", "3000"},
	{"group.min.session.timeout.ms", "6000", "ms", ScopeBroker, groupCoordinatorConfig, "GROUP_MIN_SESSION_TIMEOUT_MS_CONFIG, GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT", "", ""},
	{"group.max.session.timeout.ms", "1800000", "ms", ScopeBroker, groupCoordinatorConfig, "GROUP_MAX_SESSION_TIMEOUT_MS_CONFIG, GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT", "", ""},
	{"group.consumer.heartbeat.interval.ms", "5000", "ms", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_CONFIG, CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT", "group.consumer.heartbeat.interval.ms", "5000"},
	{"group.consumer.min.heartbeat.interval.ms", "5000", "ms", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_MIN_HEARTBEAT_INTERVAL_MS_CONFIG, CONSUMER_GROUP_MIN_HEARTBEAT_INTERVAL_MS_DEFAULT", "", ""},
	{"group.consumer.max.heartbeat.interval.ms", "15000", "ms", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_MAX_HEARTBEAT_INTERVAL_MS_CONFIG, CONSUMER_GROUP_MAX_HEARTBEAT_INTERVAL_MS_DEFAULT", "", ""},
	{"group.consumer.session.timeout.ms", "45000", "ms", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_SESSION_TIMEOUT_MS_CONFIG, CONSUMER_GROUP_SESSION_TIMEOUT_MS_DEFAULT", "group.consumer.session.timeout.ms", "45000"},
	{"group.consumer.min.session.timeout.ms", "45000", "ms", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_MIN_SESSION_TIMEOUT_MS_CONFIG, CONSUMER_GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT", "", ""},
	{"group.consumer.max.session.timeout.ms", "60000", "ms", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS_CONFIG, CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT", "", ""},
	{"group.consumer.assignors", "uniform,range", "", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_ASSIGNORS_CONFIG, CONSUMER_GROUP_ASSIGNORS_DEFAULT (UniformAssignor, RangeAssignor)", "", ""},
	{"group.consumer.migration.policy", "bidirectional", "", ScopeBroker, groupCoordinatorConfig, "CONSUMER_GROUP_MIGRATION_POLICY_CONFIG, CONSUMER_GROUP_MIGRATION_POLICY_DEFAULT", "group.consumer.migration.policy", "bidirectional"},
	// The broker's transaction coordinator.
	{"transaction.max.timeout.ms", "900000", "ms", ScopeBroker, txnStateManagerConfig, "TRANSACTIONS_MAX_TIMEOUT_MS_CONFIG, TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT", "", ""},
	{"transaction.abort.timed.out.transaction.cleanup.interval.ms", "10000", "ms", ScopeBroker, txnStateManagerConfig, "TRANSACTIONS_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS_CONFIG, ..._DEFAULT", "", ""},
}

// DefaultFor gives a key's default in a scope.
func DefaultFor(key string, scope Scope) (Default, bool) {
	for _, d := range Defaults {
		if d.Key == key && d.Scope == scope {
			return d, true
		}
	}
	return Default{}, false
}

// DefaultsTSV is Defaults as tab-separated text with a header line.
func DefaultsTSV() string {
	var b strings.Builder
	b.WriteString("key\tvalue\tunit\tscope\tclass\tconstant\tkgrepl setting\tkgrepl value\n")
	for _, d := range Defaults {
		b.WriteString(strings.Join([]string{d.Key, d.Value, d.Unit, string(d.Scope), d.Class, d.Constant, d.Setting, d.SettingValue}, "\t") + "\n")
	}
	return b.String()
}
