package kafkafmt_test

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/kafkafmt"
	"github.com/kgrepl/kgrepl/sim"
)

// TestSettingsExistInKgrepl: every kgrepl setting the package maps a Kafka
// key to is one `set` knows (sim's exported Settings), and `set` takes the
// default in kgrepl's spelling. partition.assignment.strategy's default is
// a list (range,cooperative-sticky, as SPEC §4a spells Kafka's); kgrepl's
// setting takes one name today, so each name of the list is tried alone.
func TestSettingsExistInKgrepl(t *testing.T) {
	for _, d := range kafkafmt.Defaults {
		if d.Setting == "" {
			continue
		}
		if _, ok := sim.LookupSetting(d.Setting); !ok {
			t.Errorf("%s maps to %s, which kgrepl's set does not know", d.Key, d.Setting)
			continue
		}
		values := []string{d.SettingValue}
		if d.Setting == "partition.assignment.strategy" {
			values = strings.Split(d.SettingValue, ",")
		}
		for _, v := range values {
			c := sim.KafkaDefaultConfig() // Kafka's defaults are milliseconds
			if err := c.Set("", d.Setting, v); err != nil {
				t.Errorf("set %s %s: %v", d.Setting, v, err)
			}
		}
	}
	// Every Modelled entry names a setting set knows.
	p, err := kafkafmt.ParseProperties(strings.NewReader(strings.Join([]string{
		"session.timeout.ms=45000", "heartbeat.interval.ms=3000", "max.poll.interval.ms=300000", "max.poll.records=500", "enable.auto.commit=true",
		"group.id=g", "auto.commit.interval.ms=5000", "isolation.level=read_committed", "group.instance.id=pod-1",
		"group.protocol=classic", "partition.assignment.strategy=range", "request.timeout.ms=30000",
		"retry.backoff.ms=100", "enable.idempotence=true", "transactional.id=tx-1", "transaction.timeout.ms=60000",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range kafkafmt.Classify(p).Entries {
		if e.Kind != kafkafmt.Modelled {
			continue
		}
		n++
		if _, ok := sim.LookupSetting(e.Setting); !ok {
			t.Errorf("%s maps to %s, which kgrepl's set does not know", e.Key, e.Setting)
		}
	}
	if n != 15 {
		t.Errorf("%d keys modelled, want 15", n)
	}
}

// TestKafkaDefaultsAreNewKafkaDefaults: new --kafka-defaults
// (sim.KafkaDefaultConfig) holds every Kafka default this package maps to
// a kgrepl setting, in milliseconds where Kafka counts them: the one table
// of where each default comes from (Defaults) and the world agree.
// partition.assignment.strategy is Kafka's list, range,cooperative-sticky,
// as Kafka lists it.
func TestKafkaDefaultsAreNewKafkaDefaults(t *testing.T) {
	c := sim.KafkaDefaultConfig()
	if c.Time != sim.TimeMS {
		t.Fatalf("KafkaDefaultConfig runs on the page's scale (time %s)", c.Time)
	}
	n := 0
	for _, d := range kafkafmt.Defaults {
		if d.Setting == "" {
			continue
		}
		want := d.SettingValue
		got, err := c.Get("", d.Setting)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("new --kafka-defaults: %s is %s, Kafka's %s default (%s.%s) is %s", d.Setting, got, d.Scope, d.Class, d.Constant, want)
		}
		n++
	}
	if n < 15 {
		t.Errorf("only %d defaults checked", n)
	}
}
