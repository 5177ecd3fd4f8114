package kernel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// handBuiltConsumerGroup turns the stable three-member classic group of
// `new --members 3` into a consumer group in the middle of a reconciliation,
// field by field (sim's exported names), so the views can be checked
// without driving the protocol: C3-1 has joined at group epoch 4, C1-1 must
// still revoke p2, C3-1 waits for it (UNRELEASED_PARTITIONS).
func handBuiltConsumerGroup(t *testing.T) *Session {
	t.Helper()
	s := NewSession()
	if _, err := s.Exec("new --members 3"); err != nil {
		t.Fatal(err)
	}
	w := s.World()
	g := w.Group.Describe()
	ms := g.Members
	if len(ms) != 3 {
		t.Fatalf("want 3 members, got %d", len(ms))
	}
	tp := func(topic string, p int) sim.TopicPartition { return sim.TopicPartition{Topic: topic, Partition: p} }
	g.Type, g.State, g.GroupEpoch, g.AssignmentEpoch, g.Assignor, g.Leader = sim.ConsumerGroup, sim.Reconciling, 4, 4, "uniform", ""
	ms[0].MemberEpoch, ms[0].MemberState = 3, "UNREVOKED_PARTITIONS"
	ms[0].Assignment = []sim.TopicPartition{tp("orders", 0), tp("orders", 1), tp("payments", 2)}
	ms[0].Target = []sim.TopicPartition{tp("orders", 0), tp("orders", 1)}
	ms[0].Revoking = []sim.TopicPartition{tp("payments", 2)}
	ms[1].MemberEpoch, ms[1].MemberState = 4, "STABLE"
	ms[1].Assignment = []sim.TopicPartition{tp("orders", 2), tp("payments", 0)}
	ms[1].Target = ms[1].Assignment
	ms[2].MemberEpoch, ms[2].MemberState, ms[2].InstanceID = 4, "UNRELEASED_PARTITIONS", ""
	ms[2].Assignment = []sim.TopicPartition{tp("payments", 1)}
	ms[2].Target = []sim.TopicPartition{tp("payments", 1), tp("payments", 2)}
	w.Group.Hooks().SetConsumerGroup(g)
	return s
}

func TestDescribeConsumerGroupViews(t *testing.T) {
	s := handBuiltConsumerGroup(t)
	cases := []struct{ cmd, want string }{
		{"describe group --state", `Consumer group 'billing' is rebalancing (Reconciling, group epoch 4, target assignment epoch 4).

GROUP   COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE       GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH #MEMBERS
billing B1 (1)           uniform             Reconciling 4           4                       3
`},
		{"describe group --members --verbose", `Consumer group 'billing' is rebalancing (Reconciling, group epoch 4, target assignment epoch 4).

GROUP   CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT    TARGET-EPOCH TARGET-ASSIGNMENT
billing C1-1        /C1  C1        3           3             orders:0,1;payments:2 4            orders:0,1
billing C2-1        /C2  C2        2           4             orders:2;payments:0   4            orders:2;payments:0
billing C3-1        /C3  C3        1           4             payments:1            4            payments:1,2
`},
		{"describe group", `Consumer group 'billing' is rebalancing (Reconciling, group epoch 4, target assignment epoch 4).

GROUP   TOPIC    PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
billing orders   0         -              10             10  C1-1        /C1  C1
billing orders   1         -              10             10  C1-1        /C1  C1
billing orders   2         -              10             10  C2-1        /C2  C2
billing payments 0         -              10             10  C2-1        /C2  C2
billing payments 1         -              10             10  C3-1        /C3  C3
billing payments 2         -              10             10  C1-1        /C1  C1
`},
	}
	for _, c := range cases {
		got, err := s.Exec(c.cmd)
		if err != nil {
			t.Fatalf("%s: %v", c.cmd, err)
		}
		if got != strings.TrimSuffix(c.want, "\n") && got != c.want {
			t.Errorf("%s:\n--- got\n%s\n--- want\n%s", c.cmd, got, c.want)
		}
	}
}

func TestDescribeConsumerGroupMigrationAndStatic(t *testing.T) {
	s := handBuiltConsumerGroup(t)
	g := s.World().Group.Describe()
	g.State = sim.Stable
	ms := g.Members
	ms[1].ClassicMember = true // C2 not restarted yet with group.protocol=consumer
	ms[2].InstanceID = "i-3"
	s.World().Group.Hooks().SetConsumerGroup(g)
	got, err := s.Exec("describe group --members --verbose")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "GROUP CONSUMER-ID GROUP-INSTANCE-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT UPGRADED" {
		t.Fatalf("header: %q", lines[0])
	}
	want := [][]string{
		{"billing", "C1-1", "-", "/C1", "C1", "3", "3", "orders:0,1;payments:2", "4", "orders:0,1", "true"},
		{"billing", "C2-1", "-", "/C2", "C2", "2", "4", "orders:2;payments:0", "4", "orders:2;payments:0", "false"},
		{"billing", "C3-1", "i-3", "/C3", "C3", "1", "4", "payments:1", "4", "payments:1,2", "true"},
	}
	for i, w := range want {
		if f := strings.Fields(lines[i+1]); strings.Join(f, " ") != strings.Join(w, " ") {
			t.Errorf("row %d: got %q, want %q", i, lines[i+1], strings.Join(w, " "))
		}
	}
	// Without --verbose: Kafka's five (six with instance ids) columns only.
	got, _ = s.Exec("describe group --members")
	if h := strings.Fields(strings.Split(got, "\n")[0]); len(h) != 6 || h[5] != "#PARTITIONS" {
		t.Errorf("--members header: %q", h)
	}
}

func TestDescribeConsumerGroupJSON(t *testing.T) {
	s := handBuiltConsumerGroup(t)
	got, err := s.Exec("describe group --json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(got), &d); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if d["protocol"] != "consumer" || d["group_epoch"] != 4.0 || d["assignment_epoch"] != 4.0 || d["assignor"] != "uniform" {
		t.Errorf("group fields: %s", got)
	}
	if d["generation"] != nil || d["leader"] != nil {
		t.Errorf("a consumer group has no generation and no leader (null): %s", got)
	}
	for _, k := range []string{"group", "state", "generation", "protocol", "assignor", "leader", "members", "offsets"} {
		if _, ok := d[k]; !ok {
			t.Errorf("SPEC §6 key %q missing: %s", k, got)
		}
	}
	ms := d["members"].([]any)
	m0 := ms[0].(map[string]any)
	if m0["member_epoch"] != 3.0 || strings.Join(anyStrings(m0["target"]), " ") != "orders-0 orders-1" ||
		strings.Join(anyStrings(m0["partitions"]), " ") != "orders-0 orders-1 payments-2" || m0["member_state"] != "UNREVOKED_PARTITIONS" ||
		strings.Join(anyStrings(m0["revoking"]), " ") != "payments-2" {
		t.Errorf("member 0: %v", m0)
	}
	m2 := ms[2].(map[string]any)
	if strings.Join(anyStrings(m2["target"]), " ") != "payments-1 payments-2" || m2["instance_id"] != nil {
		t.Errorf("member 2: %v", m2)
	}
	// The owner of payments-2 is C1 until it revokes it, even while the
	// group reconciles.
	for _, o := range d["offsets"].([]any) {
		o := o.(map[string]any)
		if o["partition"] == "payments-2" && o["client_id"] != "C1" {
			t.Errorf("payments-2 owner: %v", o)
		}
	}
}

// A classic group's describe --json keeps exactly SPEC §6's keys and the
// ones it printed before: no consumer-group field leaks in.
func TestDescribeClassicJSONHasNoConsumerFields(t *testing.T) {
	s := NewSession()
	got, err := s.Exec("describe group --json")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"group_epoch", "assignment_epoch", "member_epoch", "target", "upgraded"} {
		if strings.Contains(got, `"`+k+`"`) {
			t.Errorf("classic describe --json has %q: %s", k, got)
		}
	}
	if !strings.Contains(got, `"generation":1,"protocol":"classic"`) {
		t.Errorf("classic describe --json changed: %s", got)
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// Under consumer, metrics count by group epoch: generation is the group
// epoch (sim counts a rebalance at each epoch bump), and the line says so.
func TestMetricsConsumerGroup(t *testing.T) {
	s := handBuiltConsumerGroup(t)
	w := s.World()
	w.Group.RebalanceStarts = 3 // as sim counts a consumer group's epoch bumps
	got, err := s.Exec("metrics --json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatal(err)
	}
	if m["generation"] != 4.0 || m["group_epoch"] != 4.0 || m["protocol"] != "consumer" || m["rebalances"] != 3.0 {
		t.Errorf("metrics --json under consumer: %s", got)
	}
	text, _ := s.Exec("metrics")
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "group epoch (group.protocol=consumer) 4 rebalances 3") {
		t.Errorf("metrics text:\n%s", text)
	}
	// The classic line has neither field.
	c := NewSession()
	got, _ = c.Exec("metrics --json")
	if strings.Contains(got, `"protocol"`) || strings.Contains(got, `"group_epoch"`) {
		t.Errorf("classic metrics --json gained consumer fields: %s", got)
	}
}

// Status lines name the group epoch of a consumer group where they name
// a classic group's generation.
func TestStatusLinesConsumerGroup(t *testing.T) {
	s := handBuiltConsumerGroup(t)
	if got := EpochText(s.World().Group); got != "group epoch 4" {
		t.Errorf("EpochText = %q", got)
	}
	c := NewSession()
	if got := EpochText(c.World().Group); got != "generation 1" {
		t.Errorf("classic EpochText = %q", got)
	}
}

// explore under group.protocol=consumer checks the same guarantees as under
// classic: with transactions and read_committed no branch duplicates or
// loses a record (exactly-once holds through the reconciliation), and
// without them a crash in the middle of a batch is found to duplicate.
func TestExploreConsumerGroup(t *testing.T) {
	run := func(settings string) map[string]any {
		t.Helper()
		s := checkedSession(t)
		for _, c := range strings.Split(settings+"; set group.protocol consumer; new --members 2 --keep-settings; join C3; step 4", "; ") {
			if _, err := s.Exec(c); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
		}
		if s.World().Group.Type() != sim.ConsumerGroup {
			t.Fatalf("not a consumer group")
		}
		got, err := s.Exec("explore --ticks 4..6 --faults crash-now,crash-after,close-now --json")
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(got), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	eos := run("set producer transactional; set isolation.level read_committed")
	if eos["guarantee"] != "exactly-once" || eos["violations"] != 0.0 || eos["branches"] != 27.0 {
		t.Errorf("transactional, consumer protocol: %v", eos)
	}
	alo := run("set commit after")
	counts := alo["counts"].(map[string]any)
	if alo["guarantee"] != "at-least-once" || counts["duplicate"] == nil || counts["stalled"] != nil {
		t.Errorf("commit after, consumer protocol: want duplicates found and no stalled branch: %v", alo["counts"])
	}
}
