package kafkafmt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseDescribe: no input makes ParseDescribe panic, a refusal is a
// *LineError naming a line the input has, and what it accepts prints (as
// Kafka 4.1 would) and reads back to the same groups. Seeds: every fixture.
// Run longer with: go test ./kernel/kafkafmt -fuzz FuzzParseDescribe
func FuzzParseDescribe(f *testing.F) {
	files, _ := filepath.Glob("testdata/describe/*.txt")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\ng t 0 1 2 1 c /h c\n")
	f.Fuzz(func(t *testing.T, in string) {
		groups, err := ParseDescribe(strings.NewReader(in))
		if err != nil {
			le, ok := err.(*LineError)
			if !ok {
				t.Fatalf("%T: %v", err, err)
			}
			if le.Line > strings.Count(in, "\n")+1 || le.Msg == "" {
				t.Fatalf("refusal names line %d of %d: %v", le.Line, strings.Count(in, "\n")+1, err)
			}
			return
		}
		if len(groups) == 0 {
			t.Fatal("accepted with no group")
		}
		for _, g := range groups {
			for _, m := range g.Members {
				if m.Assignment.Valid && len(m.Assignment.V) != m.Partitions {
					t.Fatalf("member %q: #PARTITIONS %d, assignment %d", m.ConsumerID, m.Partitions, len(m.Assignment.V))
				}
			}
		}
	})
}

// FuzzParseProperties: no input makes ParseProperties or Classify panic;
// every entry's line is one the input has; a refusal is a *LineError.
// Run longer with: go test ./kernel/kafkafmt -fuzz FuzzParseProperties
func FuzzParseProperties(f *testing.F) {
	files, _ := filepath.Glob("testdata/properties/*.properties")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"a=b\\\n  c", "k=\\u00e9\\u12", "# c\r\n!x\rk:v", "\xef\xbb\xbfk=v", "acks=1\ntransactional.id=t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProperties(strings.NewReader(in))
		if err != nil {
			if _, ok := err.(*LineError); !ok {
				t.Fatalf("%T: %v", err, err)
			}
			return
		}
		lines := strings.Count(in, "\n") + strings.Count(in, "\r") + 1
		for _, e := range p.Entries {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry %q at line %d of %d", e.Key, e.Line, lines)
			}
		}
		c := Classify(p)
		for _, e := range c.Entries {
			if e.Kind == Modelled && e.Setting == "" || e.Refused() && e.Reason == "" {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
