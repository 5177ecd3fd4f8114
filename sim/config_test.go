package sim

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// Per-client overrides apply in the order they were set, and show config
// shows what the client runs with.
func TestOverridesApplyInTheOrderSet(t *testing.T) {
	c := DefaultConfig()
	if err := c.Set("C1", "enable.auto.commit", "true"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("C1", "commit.mode", "before"); err != nil {
		t.Fatal(err)
	}
	if got := c.ForClient("C1").Commit; got != CommitBefore {
		t.Errorf("C1 runs commit mode %s, want before (the last one set)", got)
	}
	for _, r := range c.Rows() {
		if r.Key == "C1.enable.auto.commit" && r.Value != "false" || r.Key == "C1.commit.mode" && r.Value != "before" {
			t.Errorf("show config row %s = %s disagrees with what C1 runs", r.Key, r.Value)
		}
	}
	// A later override of a key reads the ones before it.
	c = DefaultConfig()
	_ = c.Set("", "commit.mode", "before")
	_ = c.Set("C1", "enable.auto.commit", "true")
	_ = c.Set("C1", "enable.auto.commit", "false")
	if got := c.ForClient("C1").Commit; got != CommitAfter {
		t.Errorf("C1 runs commit mode %s, want after (auto, then auto turned off)", got)
	}
}

// SetLines remake any configuration exactly from the defaults, and a clone
// shares nothing with the original.
func TestSetLinesRemakeTheConfig(t *testing.T) {
	values := map[string][]string{}
	for _, s := range Settings {
		switch s.Key {
		case "partition.assignment.strategy":
			values[s.Key] = []string{"range", "roundrobin", "sticky", "cooperative-sticky", "cooperative-sticky,range"}
		case "sticky.rules":
			values[s.Key] = []string{"seed", "kafka"}
		case "commit.mode":
			values[s.Key] = []string{"auto", "after", "before"}
		case "enable.auto.commit", "enable.idempotence":
			values[s.Key] = []string{"true", "false"}
		case "transactional.id":
			values[s.Key] = []string{"none", "tx-" + ClientPlaceholder, "fixed"}
		case "group.instance.id":
			values[s.Key] = []string{"none", "inst"}
		case "isolation.level":
			values[s.Key] = []string{"read_committed", "read_uncommitted"}
		case "group.protocol":
			values[s.Key] = []string{"classic", "consumer"}
		case "group.consumer.migration.policy":
			values[s.Key] = []string{"disabled", "upgrade", "downgrade", "bidirectional"}
		case "group.remote.assignor":
			values[s.Key] = []string{"uniform", "range"}
		case "time":
			values[s.Key] = []string{"ticks", "ms"}
		case "tick.ms":
			values[s.Key] = []string{"1", "5", "7"}
		case "heartbeat.interval.ms":
			values[s.Key] = []string{"0", "1", "7"}
		case "linger.ms":
			values[s.Key] = []string{"0", "1", "3", "9000"} // 3 under a 5 ms tick: rounded up, not refused
		default:
			values[s.Key] = []string{"1", "7", "30", "9000"}
		}
	}
	rng := rand.New(rand.NewSource(1))
	refused, realTime := 0, 0
	for round := 0; round < 1200; round++ { // enough for 100 real-time configs among the settings drawn
		c := DefaultConfig()
		for i := rng.Intn(16); i > 0; i-- {
			s := Settings[rng.Intn(len(Settings))]
			client := ""
			if s.Client && rng.Intn(2) == 0 {
				client = []string{"C1", "C2"}[rng.Intn(2)]
			}
			vs := values[s.Key]
			before := c.Clone()
			if err := c.Set(client, s.Name(&c), vs[rng.Intn(len(vs))]); err != nil {
				// In real time a duration below a tick, or a tick longer
				// than a duration, is refused, and so is a heartbeat
				// interval not below the session timeout, in any clock;
				// a refusal changes nothing.
				if c.Time != TimeMS && before.Time != TimeMS && !strings.Contains(err.Error(), "Heartbeat must be set lower than the session timeout") {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(before, c) {
					t.Fatalf("a refused set (%v) changed the config", err)
				}
				refused++
			}
		}
		n := DefaultConfig()
		for _, l := range c.SetLines() {
			f := strings.Fields(l)
			client, key := "", f[1]
			if cl, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(cl, "C") && len(cl) > 1 && cl[1] >= '0' && cl[1] <= '9' {
				client, key = cl, k
			}
			if err := n.Set(client, key, f[2]); err != nil {
				t.Fatalf("%s: %v\n%v", l, err, c.SetLines())
			}
		}
		if !reflect.DeepEqual(c, n) {
			t.Fatalf("round %d: %v remade %+v, want %+v", round, c.SetLines(), n, c)
		}
		if c.Time == TimeMS {
			realTime++
		}
		k := c.Clone()
		_ = k.Set("C3", "max.poll.records", "9")
		if len(k.Overrides) == len(c.Overrides) {
			t.Fatal("a clone shares its overrides with the original")
		}
	}
	if refused == 0 || realTime < 100 {
		t.Errorf("the rounds drew %d refused sets and %d real-time configs: too few to test either", refused, realTime)
	}
}

// TestRepeatedOverridesKeepTheirEffect: a key set again for a client
// replaces its earlier override (so ForClient costs the settings a client
// has, not the sets typed), and every client's effective config equals
// the one got by applying every set in the order typed, over random
// sequences of per-client and world-wide sets of every client setting.
func TestRepeatedOverridesKeepTheirEffect(t *testing.T) {
	values := map[string][]string{
		"partition.assignment.strategy": {"range", "roundrobin", "sticky", "cooperative-sticky", "cooperative-sticky,range"},
		"sticky.rules":                  {"seed", "kafka"},
		"enable.auto.commit":            {"true", "false"},
		"commit.mode":                   {"auto", "after", "before"},
		"enable.idempotence":            {"true", "false"},
		"transactional.id":              {"none", "tx-" + ClientPlaceholder, "t1"},
		"group.instance.id":             {"none", "g1"},
		"group.protocol":                {"classic", "consumer"},
		"group.remote.assignor":         {"uniform", "range"},
	}
	var keys []string
	for _, s := range Settings {
		if !s.Client {
			continue
		}
		if _, ok := values[s.Key]; !ok {
			values[s.Key] = []string{"1", "5", "7"} // the whole-number settings
		}
		if s.Key == "heartbeat.interval.ms" {
			// Refused unless below session.timeout.ms (checkHeartbeat,
			// tested on its own): only the values no session timeout here
			// refuses, so that every set of the sequence applies.
			values[s.Key] = []string{"0"}
		}
		keys = append(keys, s.Key)
	}
	clients := []string{"C1", "C2", "C3"}
	for seed := int64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := DefaultConfig()
		ref := DefaultConfig() // every set kept, as typed
		var typed []Override
		for i := 0; i < 40; i++ {
			key := keys[rng.Intn(len(keys))]
			vals := values[key]
			v := vals[rng.Intn(len(vals))]
			client := ""
			if rng.Intn(4) > 0 {
				client = clients[rng.Intn(len(clients))]
			}
			if err := c.Set(client, key, v); err != nil {
				t.Fatalf("seed %d: set %s.%s %s: %v", seed, client, key, v, err)
			}
			if client == "" {
				if err := ref.Set("", key, v); err != nil {
					t.Fatal(err)
				}
			} else {
				typed = append(typed, Override{client, key, v})
			}
		}
		ref.Overrides = typed
		for _, cl := range clients {
			if got, want := c.ForClient(cl), ref.ForClient(cl); got != want {
				t.Fatalf("seed %d: %s runs with\n%+v\nwant (every set applied in order)\n%+v\noverrides %v\ntyped %v", seed, cl, got, want, c.Overrides, typed)
			}
		}
		seen := map[Override]bool{}
		for _, o := range c.Overrides {
			k := Override{Client: o.Client, Key: o.Key}
			if s, _ := LookupSetting(o.Key); seen[k] && !s.keepEarlier {
				t.Fatalf("seed %d: %s.%s is kept twice: %v", seed, o.Client, o.Key, c.Overrides)
			}
			seen[k] = true
		}
	}
}
