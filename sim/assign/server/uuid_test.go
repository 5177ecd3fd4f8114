package server

import "testing"

// The expected values in this file are what Java 17 printed for the same
// operations (UUID.nameUUIDFromBytes and Kafka's Uuid from the mirrored
// sources).

func TestTopicIDIsJavasNameUUID(t *testing.T) {
	for _, c := range []struct {
		name, canonical, kafka string
		hash                   int32
	}{
		{"orders", "12c500ed-0b78-3910-9fb4-6af0f246be87", "EsUA7Qt4ORCftGrw8ka-hw", 1951395210},
		{"payments", "84d5eaf7-13c9-3eec-b3d2-c4a83e64dc9a", "hNXq9xPJPuyz0sSoPmTcmg", 447401001},
		{"invoices", "56deca22-a707-3148-a5f7-ea3ae6391d67", "Vt7KIqcHMUil9-o65jkdZw", -1307112393},
		{"topic-ü", "3869ff48-cc4b-3295-9b18-3b9d8892fb2b", "OGn_SMxLMpWbGDudiJL7Kw", -408416917},
	} {
		id := TopicID(c.name)
		if id.Canonical() != c.canonical || id.String() != c.kafka || id.HashCode() != c.hash {
			t.Errorf("TopicID(%q) = %s %s hash %d; Java: %s %s hash %d",
				c.name, id.Canonical(), id, id.HashCode(), c.canonical, c.kafka, c.hash)
		}
		back, err := ParseUuid(c.kafka)
		if err != nil || back != id {
			t.Errorf("ParseUuid(%q) = %v, %v; want %v", c.kafka, back, err, id)
		}
	}
}

func TestUuidHashAndCompareAsKafka(t *testing.T) {
	t1, err1 := ParseUuid("T1-A4s3VTwiI5CTbEp6POw")
	t2, err2 := ParseUuid("T2-B4s3VTwiI5YHbPp6YUe")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if t1.HashCode() != 418407434 || t2.HashCode() != 885118816 {
		t.Errorf("hash codes %d %d; Kafka: 418407434 885118816", t1.HashCode(), t2.HashCode())
	}
	if t1.MostSignificantBits != 5719431763388092168 {
		t.Errorf("most significant bits %d; Kafka: 5719431763388092168", t1.MostSignificantBits)
	}
	if t1.Compare(t2) != -1 || t2.Compare(t1) != 1 || t1.Compare(t1) != 0 {
		t.Errorf("Compare disagrees with Uuid.compareTo (t1 < t2)")
	}
	for _, bad := range []string{"", "short", "T1-A4s3VTwiI5CTbEp6POw==", "!!!!!!!!!!!!!!!!!!!!!!"} {
		if _, err := ParseUuid(bad); err == nil {
			t.Errorf("ParseUuid(%q) accepted", bad)
		}
	}
}
