package javaorder

// The Java hashCode and compareTo of the keys Kafka's assignors hash.

import "unicode/utf16"

// StringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the string's UTF-16 code units, in 32-bit arithmetic.
func StringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		r1, r2 := utf16.EncodeRune(r)
		h = 31*h + int32(r1)
		h = 31*h + int32(r2)
	}
	return h
}

// StringCompare is String.compareTo: UTF-16 code units in order, then length.
func StringCompare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

// IntegerHash is java.lang.Integer.hashCode: the value itself.
func IntegerHash(i int) int32 { return int32(i) }

// TopicPartitionHash is org.apache.kafka.common.TopicPartition.hashCode:
// 31 * (31 + partition) + topic.hashCode().
func TopicPartitionHash(topic string, partition int) int32 {
	return 31*(31+int32(partition)) + StringHash(topic)
}
