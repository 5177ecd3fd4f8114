// Package kafkafmt reads what a Kafka engineer already has, so that kgrepl
// can start from a real group and a real configuration:
//
//   - ParseDescribe reads the output of kafka-consumer-groups.sh --describe
//     (plain, --members [--verbose], --state [--verbose]) as Kafka 2.3 to
//     4.x print it, for classic and consumer-protocol (KIP-848) groups, into
//     typed Groups: members with their client ids, hosts, instance ids,
//     epochs and current and target assignments, and the offsets table.
//   - ParseProperties reads a client's .properties file by
//     java.util.Properties.load's rules, as Kafka's tools load one.
//   - Classify checks each key against Kafka 4.0's ConsumerConfig and
//     ProducerConfig definitions (types, ranges, allowed values and the
//     cross-key rules the clients enforce) and says what kgrepl does with
//     it: a kgrepl setting and the value to give it, a Kafka key kgrepl
//     does not model (ignored, by name), a key Kafka does not know (passed
//     on to plugins by Kafka, listed by kgrepl), a value kgrepl cannot
//     model, or a value Kafka's client refuses, with the reason.
//   - Defaults is Kafka 4.0's defaults for what kgrepl models (client and
//     broker), each with the Kafka class and constant it comes from.
//
// The package reads text and returns values; it knows nothing of the engine
// (sim) or the session. Kafka's own classes are named in comments where a
// rule follows them; no Kafka code is copied. docs/kafka-import.md lists the
// formats accepted.
package kafkafmt
