package kafkafmt

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "write the golden files in testdata/ anew (read the diff)")

// dumpGroups renders parsed groups as text for golden files: every field,
// so a change in what is read shows in the diff.
func dumpGroups(groups []Group) string {
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, "group %q (line %d)\n", g.ID, g.Line)
		fmt.Fprintf(&b, "  state=%q rebalancing=%v protocol=%q assignor=%q", g.State, g.Rebalancing, g.Protocol, g.Assignor)
		if g.Coordinator.Valid {
			c := g.Coordinator.V
			fmt.Fprintf(&b, " coordinator=%s:%d(%d)", c.Host, c.Port, c.ID)
		}
		fmt.Fprintf(&b, " group-epoch=%s target-assignment-epoch=%s members=%s\n", optInt(g.GroupEpoch), optInt(g.TargetAssignmentEpoch), optCount(g.NumMembers))
		for _, t := range g.Tables {
			fmt.Fprintf(&b, "  table %s verbose=%v %q (line %d)\n", t.Kind, t.Verbose, t.Format, t.Line)
		}
		if g.Members != nil {
			fmt.Fprintf(&b, "  %d members\n", len(g.Members))
		}
		for _, m := range g.Members {
			fmt.Fprintf(&b, "  member %q instance=%q host=%q client=%q partitions=%d epoch=%s target-epoch=%s upgraded=%s (line %d)\n",
				m.ConsumerID, m.GroupInstanceID, m.Host, m.ClientID, m.Partitions, optInt(m.CurrentEpoch), optInt(m.TargetEpoch), optBool(m.Upgraded), m.Line)
			if m.Assignment.Valid {
				fmt.Fprintf(&b, "    current: %s\n", tpsText(m.Assignment.V))
			}
			if m.Target.Valid {
				fmt.Fprintf(&b, "    target:  %s\n", tpsText(m.Target.V))
			}
		}
		if g.Offsets != nil {
			fmt.Fprintf(&b, "  %d offsets\n", len(g.Offsets))
		}
		for _, o := range g.Offsets {
			fmt.Fprintf(&b, "  offset %s leader-epoch=%s current=%s log-end=%s lag=%s member=%q host=%q client=%q (line %d)\n",
				o.TopicPartition, optInt(o.LeaderEpoch), optInt(o.CurrentOffset), optInt(o.LogEndOffset), optInt(o.Lag), o.ConsumerID, o.Host, o.ClientID, o.Line)
		}
	}
	return b.String()
}

func optCount(o Opt[int]) string {
	if !o.Valid {
		return "-"
	}
	return fmt.Sprint(o.V)
}

func optBool(o Opt[bool]) string {
	if !o.Valid {
		return "-"
	}
	return fmt.Sprint(o.V)
}

// checkGolden compares got with testdata/name, or writes it with -rewrite.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./kernel/kafkafmt -rewrite to write it, then read it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the code gives (go test -rewrite writes it anew; read the diff):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestDescribeFixtures: every file in testdata/describe is read and what
// was read (or the refusal) is compared with its .golden file.
func TestDescribeFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/describe/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			groups, err := ParseDescribe(strings.NewReader(string(data)))
			got := ""
			if err != nil {
				got = "error: " + err.Error() + "\n"
			} else {
				got = dumpGroups(groups)
			}
			checkGolden(t, "describe/"+name+".golden", got)
			// The same file with CRLF line ends and a byte-order mark
			// (a Windows editor) reads the same.
			crlf := "\ufeff" + strings.ReplaceAll(string(data), "\n", "\r\n")
			groups2, err2 := ParseDescribe(strings.NewReader(crlf))
			got2 := ""
			if err2 != nil {
				got2 = "error: " + err2.Error() + "\n"
			} else {
				got2 = dumpGroups(groups2)
			}
			if got2 != got {
				t.Errorf("with CRLF and a BOM:\n%s\nwithout:\n%s", got2, got)
			}
		})
	}
}

// TestPrinterMatchesFixtures: the fixtures written as each Kafka version
// prints them are what the test printer prints for the same groups, byte
// for byte (so the round-trip test below feeds the parser the tool's
// exact output).
func TestPrinterMatchesFixtures(t *testing.T) {
	for _, fx := range printedFixtures() {
		t.Run(fx.file, func(t *testing.T) {
			var b strings.Builder
			for i, part := range fx.parts {
				if i > 0 || fx.command {
					b.WriteString(kafkaCommand(part.mode, part.verbose, part.groups) + "\n")
				}
				b.WriteString(printDescribe(fx.version, part.mode, part.verbose, part.groups))
			}
			checkGolden(t, "describe/"+fx.file+".txt", b.String())
		})
	}
}

type fixturePart struct {
	mode    describeMode
	verbose bool
	groups  []Group
}

type printedFixture struct {
	file    string
	version kafkaVersion
	command bool // the first part is preceded by its command line too
	parts   []fixturePart
}

func tp(topic string, ps ...int32) []TopicPartition {
	out := make([]TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = TopicPartition{Topic: topic, Partition: p}
	}
	return out
}

func tps(lists ...[]TopicPartition) []TopicPartition {
	var out []TopicPartition
	for _, l := range lists {
		out = append(out, l...)
	}
	sortTPs(out)
	return out
}

func member(id, instance, host, client string, current []TopicPartition) Member {
	return Member{ConsumerID: id, GroupInstanceID: instance, Host: host, ClientID: client,
		Partitions: len(current), Assignment: some(current), Target: some([]TopicPartition{})}
}

// ordersGroup: a classic group of three members under range, orders with
// 12 partitions (so 4.0's sorting of partitions as strings shows: 10,11,8,9)
// and payments with 3.
func ordersGroup() Group {
	g := Group{ID: "orders-processing", State: StateStable, Assignor: "range",
		Coordinator: some(Coordinator{Host: "kafka-2.kafka-headless.prod.svc.cluster.local", Port: 9092, ID: 2}),
		NumMembers:  some(3)}
	g.Members = []Member{
		member("consumer-orders-processing-1-0b6a5e34-2f4d-4c1e-9d0a-7b1d2c3e4f50", "", "/10.20.1.17", "consumer-orders-processing-1",
			tps(tp("orders", 0, 1, 2, 3), tp("payments", 0))),
		member("consumer-orders-processing-2-5e0c1d2a-8f3b-4a6d-b1c2-d3e4f5a6b7c8", "", "/10.20.3.4", "consumer-orders-processing-2",
			tps(tp("orders", 4, 5, 6, 7), tp("payments", 1))),
		member("consumer-orders-processing-3-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "", "/10.20.2.250", "consumer-orders-processing-3",
			tps(tp("orders", 8, 9, 10, 11), tp("payments", 2))),
	}
	// Kafka's order: members by partition count, most first, each
	// member's partitions by number (ConsumerGroupCommand.
	// collectConsumerAssignment sorts by partition alone).
	for _, m := range g.Members {
		held := append([]TopicPartition(nil), m.Assignment.V...)
		sort.SliceStable(held, func(i, j int) bool { return held[i].Partition < held[j].Partition })
		for _, p := range held {
			off := int64(1000*p.Partition + 17)
			leo := off + int64(p.Partition%3)
			g.Offsets = append(g.Offsets, Offset{TopicPartition: p, CurrentOffset: some(off), LogEndOffset: some(leo),
				Lag: some(leo - off), ConsumerID: m.ConsumerID, Host: m.Host, ClientID: m.ClientID})
		}
	}
	return g
}

// billingGroup: a consumer-protocol group (KIP-848) reconciling: static
// members, member ids as the 4.x client makes them (a Uuid), C1 still
// owns billing-1, which its target gives to C2.
func billingGroup() Group {
	g := Group{ID: "billing", State: StateReconciling, Protocol: ProtocolConsumer, Assignor: "uniform",
		Coordinator: some(Coordinator{Host: "broker-1.example.com", Port: 9093, ID: 1}),
		GroupEpoch:  some(int32(12)), TargetAssignmentEpoch: some(int32(12)), NumMembers: some(2)}
	m1 := member("q5FhV2XbRr6-3m1KoZ0cJg", "billing-0", "/10.0.7.21", "billing-app-0", tps(tp("invoices", 0, 1)))
	m1.Target = some(tps(tp("invoices", 0)))
	m1.CurrentEpoch, m1.TargetEpoch = some(int32(11)), some(int32(12))
	m2 := member("Tn0mAzm3S9WlV7E1cQx_kw", "billing-1", "/10.0.7.22", "billing-app-1", tps(tp("invoices", 2)))
	m2.Target = some(tps(tp("invoices", 1, 2)))
	m2.CurrentEpoch, m2.TargetEpoch = some(int32(12)), some(int32(12))
	g.Members = []Member{m1, m2}
	g.Offsets = []Offset{
		{TopicPartition: TopicPartition{"invoices", 0}, LeaderEpoch: some(int32(4)), CurrentOffset: some(int64(5021)), LogEndOffset: some(int64(5021)), Lag: some(int64(0)), ConsumerID: m1.ConsumerID, Host: m1.Host, ClientID: m1.ClientID},
		{TopicPartition: TopicPartition{"invoices", 1}, LeaderEpoch: some(int32(4)), CurrentOffset: some(int64(4988)), LogEndOffset: some(int64(5102)), Lag: some(int64(114)), ConsumerID: m1.ConsumerID, Host: m1.Host, ClientID: m1.ClientID},
		{TopicPartition: TopicPartition{"invoices", 2}, CurrentOffset: Opt[int64]{}, LogEndOffset: some(int64(77)), ConsumerID: m2.ConsumerID, Host: m2.Host, ClientID: m2.ClientID},
	}
	return g
}

// auditGroup: an empty group with committed offsets.
func auditGroup() Group {
	g := Group{ID: "audit", State: StateEmpty, Assignor: "", Coordinator: some(Coordinator{Host: "localhost", Port: 9092, ID: 0}), NumMembers: some(0)}
	g.Offsets = []Offset{
		{TopicPartition: TopicPartition{"invoices", 0}, CurrentOffset: some(int64(120)), LogEndOffset: some(int64(180)), Lag: some(int64(60))},
		{TopicPartition: TopicPartition{"invoices", 1}, CurrentOffset: some(int64(99)), LogEndOffset: some(int64(99)), Lag: some(int64(0))},
	}
	return g
}

// migratingGroup: a consumer group during an online upgrade from classic:
// one member still speaks the classic protocol (UPGRADED false).
func migratingGroup() Group {
	g := Group{ID: "shipping", State: StateStable, Protocol: ProtocolConsumer, Assignor: "uniform",
		Coordinator: some(Coordinator{Host: "broker-3", Port: 9092, ID: 3}),
		GroupEpoch:  some(int32(5)), TargetAssignmentEpoch: some(int32(5)), NumMembers: some(2)}
	m1 := member("shipping-app-1-4c3b2a19-0f8e-4d7c-a6b5-c4d3e2f1a0b9", "", "/172.16.0.4", "shipping-app-1", tps(tp("parcels", 0, 2)))
	m1.Target = m1.Assignment
	m1.CurrentEpoch, m1.TargetEpoch, m1.Upgraded = some(int32(5)), some(int32(5)), some(false)
	m2 := member("Y2xhc3NpY3VwZ3JhZGVkMQ", "", "/172.16.0.5", "shipping-app-2", tps(tp("parcels", 1, 3)))
	m2.Target = m2.Assignment
	m2.CurrentEpoch, m2.TargetEpoch, m2.Upgraded = some(int32(5)), some(int32(5)), some(true)
	g.Members = []Member{m1, m2}
	return g
}

// staticPodsGroup: a classic group as a Kubernetes deployment runs one
// (kgrepl's import takes it: new --from-describe): four pods, each static
// (group.instance.id its pod name), all with the one client.id the
// deployment sets, so the client ids do not tell the members apart; range
// over orders (8 partitions) and refunds (2), Kafka's static members sorted
// by instance id.
func staticPodsGroup() Group {
	g := Group{ID: "orders-app", State: StateStable, Assignor: "range",
		Coordinator: some(Coordinator{Host: "kafka-1.kafka-headless.prod.svc.cluster.local", Port: 9092, ID: 1}),
		NumMembers:  some(4)}
	g.Members = []Member{
		member("orders-app-7b2d9e4f-1a3c-4e5b-8d6f-0a1b2c3d4e5f", "orders-app-2", "/10.42.1.23", "orders-app", tps(tp("orders", 4, 5), tp("refunds"))),
		member("orders-app-03c5e7a9-2b4d-4f6a-9c8e-1d2e3f4a5b6c", "orders-app-0", "/10.42.0.17", "orders-app", tps(tp("orders", 0, 1), tp("refunds", 0))),
		member("orders-app-e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b", "orders-app-3", "/10.42.2.9", "orders-app", tps(tp("orders", 6, 7))),
		member("orders-app-5a6b7c8d-9e0f-4a1b-2c3d-4e5f6a7b8c9d", "orders-app-1", "/10.42.0.31", "orders-app", tps(tp("orders", 2, 3), tp("refunds", 1))),
	}
	return g
}

// stablePaymentsGroup: a consumer-protocol group (KIP-848) at rest:
// target and current assignments equal, every member at the group epoch,
// member ids as the 4.x client makes them (a Uuid), dynamic members.
func stablePaymentsGroup() Group {
	g := Group{ID: "payments", State: StateStable, Protocol: ProtocolConsumer, Assignor: "uniform",
		Coordinator: some(Coordinator{Host: "broker-2.example.com", Port: 9093, ID: 2}),
		GroupEpoch:  some(int32(7)), TargetAssignmentEpoch: some(int32(7)), NumMembers: some(3)}
	add := func(id, host, client string, current []TopicPartition) {
		m := member(id, "", host, client, current)
		m.Target = m.Assignment
		m.CurrentEpoch, m.TargetEpoch = some(int32(7)), some(int32(7))
		g.Members = append(g.Members, m)
	}
	add("hX3kPq9ZT0iUf2vLw8bN1A", "/10.0.3.11", "payments-worker-1", tps(tp("payments", 0, 3)))
	add("Bq7sR2mNa4xYc6dJe0kWgQ", "/10.0.3.12", "payments-worker-2", tps(tp("payments", 1, 4)))
	add("vT5nL1oKp8rZy3hUi6jMfA", "/10.0.3.13", "payments-worker-3", tps(tp("payments", 2, 5)))
	return g
}

// classic4 is a classic group as Kafka 4.x's --verbose shows it: no
// epochs, "-" targets.
func classic4(g Group) Group {
	g.Protocol = ProtocolClassic
	return g
}

func printedFixtures() []printedFixture {
	orders, billing, audit, shipping := ordersGroup(), billingGroup(), auditGroup(), migratingGroup()
	pods, payments := staticPodsGroup(), stablePaymentsGroup()
	return []printedFixture{
		{file: "kafka37-offsets", version: v37, command: true, parts: []fixturePart{{modeOffsets, false, []Group{orders}}}},
		{file: "kafka37-members", version: v37, command: true, parts: []fixturePart{{modeMembers, false, []Group{orders}}}},
		{file: "kafka37-members-verbose", version: v37, command: true, parts: []fixturePart{{modeMembers, true, []Group{orders}}}},
		{file: "kafka37-state", version: v37, command: true, parts: []fixturePart{{modeState, false, []Group{orders}}}},
		{file: "kafka37-all-groups", version: v37, parts: []fixturePart{{modeOffsets, false, []Group{orders, audit}}, {modeMembers, true, []Group{orders, audit}}, {modeState, false, []Group{orders, audit}}}},
		{file: "kafka39-offsets-all-groups", version: v38, parts: []fixturePart{{modeOffsets, false, []Group{orders, audit}}}},
		{file: "kafka39-members-verbose-no-topics", version: v38, command: true, parts: []fixturePart{{modeMembers, true, []Group{orders}}}},
		{file: "kafka39-members-verbose-with-offsets", version: v38, command: true, parts: []fixturePart{{modeMembers, true, []Group{orders}}, {modeOffsets, false, []Group{orders}}}},
		{file: "kafka39-state", version: v38, parts: []fixturePart{{modeState, false, []Group{orders, audit}}}},
		{file: "kafka40-classic-members-verbose", version: v40, command: true, parts: []fixturePart{{modeMembers, true, []Group{classic4(orders)}}}},
		{file: "kafka40-consumer-describe-all", version: v40, command: true, parts: []fixturePart{{modeState, true, []Group{billing}}, {modeMembers, true, []Group{billing}}, {modeOffsets, true, []Group{billing}}}},
		{file: "kafka40-empty-group", version: v40, parts: []fixturePart{{modeState, false, []Group{audit}}, {modeMembers, true, []Group{audit}}, {modeOffsets, false, []Group{audit}}}},
		{file: "kafka40-migration", version: v40, command: true, parts: []fixturePart{{modeMembers, true, []Group{shipping}}}},
		{file: "kafka41-members-verbose", version: v41, command: true, parts: []fixturePart{{modeMembers, true, []Group{classic4(orders), billing}}}},
		{file: "kafka37-static-pods", version: v37, command: true, parts: []fixturePart{{modeState, false, []Group{pods}}, {modeMembers, true, []Group{pods}}}},
		{file: "kafka40-consumer-stable", version: v40, command: true, parts: []fixturePart{{modeState, true, []Group{payments}}, {modeMembers, true, []Group{payments}}}},
	}
}

// TestDescribeRefusals: inputs that are not the tool's output are refused
// with the line and the reason.
func TestDescribeRefusals(t *testing.T) {
	header := "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"
	row := func(group, topic, part, cur, leo, lag, cid, host, client string) string {
		return javaFormat("", []field{{15, " "}, {15, " "}, {10, " "}, {15, " "}, {15, " "}, {15, " "}, {15, " "}, {15, " "}, {0, ""}},
			group, topic, part, cur, leo, lag, cid, host, client) + "\n"
	}
	members := "GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"
	mrow := func(group, cid, inst, host, client, n, assign string) string {
		return javaFormat("", []field{{15, " "}, {15, " "}, {17, " "}, {15, " "}, {15, " "}, {15, " "}, {0, ""}},
			group, cid, inst, host, client, n, assign) + "\n"
	}
	cases := []struct{ name, in, want string }{
		{"empty", "", "no group found"},
		{"blank", "\n\n   \n", "no group found"},
		{"header only", header, "no group found"},
		{"prose", "hello world\n", `line 1: "hello world" is not part of kafka-consumer-groups.sh --describe output`},
		{"log line", "SLF4J: Failed to load class\n" + header, `line 1: "SLF4J: Failed to load class" is not part`},
		{"unknown header", "GROUP TOPIC PARTITION LAG\n", "line 1: a header kafka-consumer-groups.sh does not print"},
		{"tool error", "\nError: Executing consumer group command failed due to timeout\n", "line 2: kafka-consumer-groups.sh reported an error"},
		{"truncated row", header + "orders-group    orders          0          5\n", "line 2: "},
		{"partition not a number", header + row("g", "orders", "x", "1", "2", "1", "-", "-", "-"), `line 2: PARTITION "x" is not a partition number`},
		{"bad topic", header + row("g", "or ders", "0", "1", "2", "1", "-", "-", "-"), "line 2: "},
		{"lag wrong", header + row("g", "orders", "0", "5", "9", "3", "-", "-", "-"), `line 2: LAG "3" is not LOG-END-OFFSET 9 - CURRENT-OFFSET 5 = 4`},
		{"lag without offset", header + row("g", "orders", "0", "-", "9", "3", "-", "-", "-"), "line 2: LAG 3 where CURRENT-OFFSET or LOG-END-OFFSET is -"},
		{"duplicate partition", header + row("g", "orders", "0", "1", "2", "1", "-", "-", "-") + row("g", "orders", "0", "1", "2", "1", "-", "-", "-"), "line 3: partition orders-0 of group \"g\" is listed twice (first at line 2)"},
		{"duplicate member", members + mrow("g", "c-1", "", "/h", "c", "0", "-") + mrow("g", "c-1", "", "/h", "c", "0", "-"), `line 3: member "c-1" of group "g" is listed twice (first at line 2)`},
		{"duplicate instance", members + mrow("g", "c-1", "pod-0", "/h", "c", "0", "-") + mrow("g", "c-2", "pod-0", "/h", "c", "0", "-"), `line 3: group instance id "pod-0" is held by two members`},
		{"bad instance id", members + mrow("g", "c-1", "pod/0", "/h", "c", "0", "-"), `line 2: GROUP-INSTANCE-ID "pod/0" is not a group instance id`},
		{"count mismatch", members + mrow("g", "c-1", "", "/h", "c", "3", "t(0,1)"), `line 2: #PARTITIONS "3" does not count the 2 partitions of ASSIGNMENT "t(0,1)"`},
		{"two owners", members + mrow("g", "c-1", "", "/h", "c", "1", "t(0)") + mrow("g", "c-2", "", "/h", "c", "1", "t(0)"), "line 3: partition t-0 is in the current assignment of member \"c-1\" (line 2) and of member \"c-2\""},
		{"bad assignment", members + mrow("g", "c-1", "", "/h", "c", "1", "t(x)"), `has "x" where a partition number goes`},
		{"assignment twice", members + mrow("g", "c-1", "", "/h", "c", "2", "t(0,0)"), "lists partition 0 twice"},
		{"topicless unresolved", members + mrow("g", "c-1", "", "/h", "c", "2", "(0,1)"), `line 2: the assignment of member "c-1" names no topics, as Kafka 3.8 and 3.9 print it ((0,1)), and the file has no offsets table`},
		{"mixed styles", members + mrow("g", "c-1", "", "/h", "c", "1", "t(0)") + mrow("g", "c-2", "", "/h", "c", "1", "(1)"), "line 3: ASSIGNMENT is written without topics"},
		{"empty but members", "\nConsumer group 'g' has no active members.\n" + members + mrow("g", "c-1", "", "/h", "c", "0", "-"), `line 4: lists member "c-1", but line 2 says group "g" has no active members`},
		{"state conflict", "\nConsumer group 'g' has no active members.\n\nWarning: Consumer group 'g' is rebalancing.\n", `line 4: says group "g" is rebalancing, but line 2 says it is Empty`},
		{"nul", header + "g\x00\n", "line 2: a NUL byte at column 2"},
		{"not utf-8", header + "g\xff\xfe\n", "line 2: byte 2 (0xff) is not UTF-8"},
		{"lone cr", header + "g\rx\n", "line 2: a carriage return at column 2"},
		{"groupless without command", "TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\nt 0 1 2 1 c /h c\n", "line 1: a table without a GROUP column"},
		{"too few words", header + "g orders 0\n", `line 2: "g orders 0": 3 values where the header (line 1) has 9 columns`},
		{"bad state", "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\ng               b:9092  (1)               range                Sleeping             0\n", `line 2: STATE "Sleeping" is not a group state`},
		{"second state row", "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\ng               b:9092  (1)               range                Stable               1\ng               b:9092  (1)               range                Stable               1\n", "line 3: a second --state row for group \"g\" (the first at line 2)"},
		{"protocol conflict", "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH   #MEMBERS\ng               b:9092  (1)               range                Stable               -               -                         1\n\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   \ng               Tn0mAzm3S9WlV7E1cQx_kw /h              c               0               3               -                    3               -                   \n", "line 5: CURRENT-EPOCH 3 makes group \"g\" a consumer group, but line 2 shows a classic group"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseDescribe(strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %T is not a *LineError", err)
			}
		})
	}
}

// TestDescribeLimits: a file past a bound is refused, naming the bound.
func TestDescribeLimits(t *testing.T) {
	offsets := printDescribe(v40, modeOffsets, false, []Group{ordersGroup()})
	members := printDescribe(v40, modeMembers, true, []Group{ordersGroup()})
	full := describeLimits{MaxDescribeBytes, MaxDescribeLineBytes, MaxDescribeRows, MaxAssignedPartitions}
	cases := []struct {
		name string
		text string
		lim  func(l describeLimits) describeLimits
		want string
	}{
		{"bytes", offsets, func(l describeLimits) describeLimits { l.bytes = len(offsets) - 1; return l }, "more than " + sizeText(len(offsets)-1)},
		{"bytes at the limit", offsets, func(l describeLimits) describeLimits { l.bytes = len(offsets); return l }, ""},
		{"line", offsets, func(l describeLimits) describeLimits { l.line = 100; return l }, "line 2: longer than 100 bytes"},
		{"rows", offsets, func(l describeLimits) describeLimits { l.rows = 14; return l }, "line 17: more than 14 table rows"},
		{"rows at the limit", offsets, func(l describeLimits) describeLimits { l.rows = 15; return l }, ""},
		{"assigned partitions", members, func(l describeLimits) describeLimits { l.entries = 14; return l }, "line 5: more than 14 partitions in the assignments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := parseDescribe(strings.NewReader(c.text), c.lim(full))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused at the limit: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// endless yields lines of spaces for ever.
type endless struct{}

func (endless) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = ' '
		if i%1024 == 1023 {
			b[i] = '\n'
		}
	}
	return len(b), nil
}

// TestDescribeSizeLimitWired: ParseDescribe itself stops an endless input
// at MaxDescribeBytes.
func TestDescribeSizeLimitWired(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 256 MiB")
	}
	_, err := ParseDescribe(endless{})
	if err == nil || !strings.Contains(err.Error(), "more than 256 MiB") {
		t.Fatalf("got %v", err)
	}
}
