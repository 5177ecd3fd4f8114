package server

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Uuid is Kafka's org.apache.kafka.common.Uuid: two signed 64-bit halves.
// Kafka names every topic by one; the server-side assignors key their hashed
// collections by it, so its hash code decides their iteration order.
type Uuid struct {
	MostSignificantBits  int64
	LeastSignificantBits int64
}

// TopicID derives kgrepl's id for a topic name: Java's
// UUID.nameUUIDFromBytes(name.getBytes(UTF_8)) (an MD5 name-based UUID,
// version 3, IETF variant), read as Kafka's Uuid. Kafka itself gives each
// topic a random id when it is created; deriving it from the name keeps
// kgrepl deterministic while the assignors still see Kafka-shaped ids
// (SPEC §11).
func TopicID(name string) Uuid {
	sum := md5.Sum([]byte(name)) // Go strings are UTF-8, as getBytes(UTF_8)
	sum[6] = sum[6]&0x0f | 0x30  // version 3
	sum[8] = sum[8]&0x3f | 0x80  // IETF variant
	return Uuid{
		MostSignificantBits:  int64(binary.BigEndian.Uint64(sum[0:8])),
		LeastSignificantBits: int64(binary.BigEndian.Uint64(sum[8:16])),
	}
}

// HashCode is Uuid.hashCode: the two halves xored, then the high and low
// 32 bits of that xored.
func (u Uuid) HashCode() int32 {
	x := u.MostSignificantBits ^ u.LeastSignificantBits
	return int32(x>>32) ^ int32(x)
}

// Compare is Uuid.compareTo: the most significant halves as signed longs,
// then the least significant ones. It returns -1, 0 or 1.
func (u Uuid) Compare(o Uuid) int {
	switch {
	case u.MostSignificantBits < o.MostSignificantBits:
		return -1
	case u.MostSignificantBits > o.MostSignificantBits:
		return 1
	case u.LeastSignificantBits < o.LeastSignificantBits:
		return -1
	case u.LeastSignificantBits > o.LeastSignificantBits:
		return 1
	}
	return 0
}

// String is Uuid.toString: the 16 bytes in URL-safe base64 without padding,
// as kafka-topics.sh --describe prints a TopicId.
func (u Uuid) String() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(u.MostSignificantBits))
	binary.BigEndian.PutUint64(b[8:16], uint64(u.LeastSignificantBits))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Canonical is java.util.UUID.toString's 8-4-4-4-12 hex form of the same
// bits, handy when comparing with Java's output.
func (u Uuid) Canonical() string {
	const hex = "0123456789abcdef"
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(u.MostSignificantBits))
	binary.BigEndian.PutUint64(b[8:16], uint64(u.LeastSignificantBits))
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// ParseUuid is Uuid.fromString: 22 characters of URL-safe base64 without
// padding, as String prints them.
func ParseUuid(s string) (Uuid, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return Uuid{}, fmt.Errorf("topic id %q is not a Kafka Uuid: want 22 characters of URL-safe base64 (16 bytes)", s)
	}
	return Uuid{
		MostSignificantBits:  int64(binary.BigEndian.Uint64(b[0:8])),
		LeastSignificantBits: int64(binary.BigEndian.Uint64(b[8:16])),
	}, nil
}
