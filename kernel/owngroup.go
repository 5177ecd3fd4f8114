package kernel

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/kernel/kafkafmt"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

// A user's own group: new --from-describe FILE starts the world as
// kafka-consumer-groups.sh --describe showed a real group, and set --from
// FILE takes a client's .properties (docs/kafka-import.md). Both read a
// file, and the session keeps what they read with the command (fileRead),
// so that back, fork, compare, save and load replay them without the file.

// fileRead is a file a command read, as the command took it: its name as
// typed (for messages) and its text with the transport's marks undone that
// the parsers ignore anyway (a UTF-8 byte-order mark, CRLF line ends; a
// .properties file's lone CR, which Java ends a line at too, and its
// comments' ISO-8859-1 bytes, as the UTF-8 of the characters Java reads).
// That text is what a session file carries and what a replay parses.
type fileRead struct {
	name string
	text string
}

// readFile is the text a command reads from path: from the disk, or what a
// replay supplies (the text the command read when it was typed). raw is
// what the parser should read (the file's own bytes, so that its errors
// point at them); the session records f. normalise makes f's text.
func (s *Session) readFile(cmd, path string, max int64, kind string, normalise func([]byte) string) (raw []byte, f *fileRead, err error) {
	if s.supply != nil {
		f, s.supply = s.supply, nil
		s.read = f
		return []byte(f.text), f, nil
	}
	data, err := readRegularFile(s.path(path), max, cmd, kind)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", cmd, err) // cmd names the file
	}
	f = &fileRead{name: path, text: normalise(data)}
	s.read = f
	return data, f, nil
}

// describeText is a describe file as new records it: without a UTF-8
// byte-order mark and with LF line ends (ParseDescribe ignores both).
func describeText(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	return strings.ReplaceAll(string(b), "\r\n", "\n")
}

// propertiesText is a .properties file as set --from records it: every
// line end LF (java.util.Properties ends a line at LF, CR or CRLF alike)
// and each byte past ASCII, which ParseProperties takes only in a comment,
// as the UTF-8 of the ISO-8859-1 character Java reads there.
func propertiesText(b []byte) string {
	t := strings.ReplaceAll(string(b), "\r\n", "\n")
	t = strings.ReplaceAll(t, "\r", "\n")
	if isASCII(t) {
		return t
	}
	var out strings.Builder
	for i := 0; i < len(t); i++ {
		out.WriteRune(rune(t[i]))
	}
	return out.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// --- new --from-describe ---

// importedMember is one member of an imported group: kgrepl's name for it
// and the file's.
type importedMember struct {
	client     string // kgrepl's: C1..Cn
	clientID   string // CLIENT-ID
	host       string // HOST, as Kafka prints it (/10.0.7.21)
	memberID   string // CONSUMER-ID
	instanceID string // GROUP-INSTANCE-ID, "" for a dynamic member
	partitions int
}

// importedNames are the names an imported group's file gives its members,
// for the views that show them (describe group --real-names, show names).
type importedNames struct {
	file    string
	members []importedMember // in natural order of client
	byID    map[string]*importedMember
}

func (n *importedNames) member(client string) *importedMember {
	if n == nil {
		return nil
	}
	return n.byID[client]
}

// clientID and host are what a view prints for a member: kgrepl's
// (C1, /C1), or the file's with real (describe group --real-names) when
// the member came from the file. A member that joined later has no other
// name.
func (n *importedNames) clientID(client string, real bool) string {
	if m := n.member(client); real && m != nil {
		return m.clientID
	}
	return client
}

func (n *importedNames) host(client string, real bool) string {
	if m := n.member(client); real && m != nil {
		return m.host
	}
	return "/" + client
}

// importOptions are new's options that shape an import.
type importOptions struct {
	file   string
	group  string          // --group
	topics []sim.TopicSpec // --topics: topics to add, or partition counts to raise
	output *sim.TopicSpec  // --output
	keep   bool            // --keep-settings
	rawCmd string          // "new --from-describe FILE", for errors
}

// importPlan is a group read from a describe file, ready to start.
type importPlan struct {
	topo     sim.Topology
	start    []sim.StartMember
	names    *importedNames
	settings []importSetting
	notes    []string
}

// importSetting is a setting the file gives the world: set client.key
// value (client "" for every member), and why when it is not read off the
// file as is.
type importSetting struct {
	client, key, value, why string
}

func (st importSetting) String() string {
	k := st.key
	if st.client != "" {
		k = st.client + "." + k
	}
	s := k + " " + st.value
	if st.why != "" {
		s += " (" + st.why + ")"
	}
	return s
}

// kgreplAssignors are the client-side assignors kgrepl models, as Kafka
// names their protocols (ConsumerPartitionAssignor.name()).
var kgreplAssignors = []string{"range", "roundrobin", "sticky", "cooperative-sticky"}

// planImport reads one group of a describe file into a world's start: its
// topics and partition counts (from the assignments and the offsets table,
// and --topics), its members numbered C1..Cn, each owning its current
// assignment, and the settings the file states (protocol, assignor,
// instance ids).
func planImport(groups []kafkafmt.Group, opt importOptions) (*importPlan, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", opt.rawCmd, fmt.Sprintf(format, args...))
	}
	var g *kafkafmt.Group
	var ids []string
	for i := range groups {
		ids = append(ids, strconv.Quote(groups[i].ID))
		if groups[i].ID == opt.group {
			g = &groups[i]
		}
	}
	switch {
	case opt.group != "" && g == nil:
		return nil, fail("--group %q: the file describes no such group (it describes %s)", opt.group, strings.Join(ids, ", "))
	case g == nil && len(groups) > 1:
		return nil, fail("the file describes %d groups (%s): choose one with --group G", len(groups), strings.Join(ids, ", "))
	case g == nil:
		g = &groups[0]
	}
	p := &importPlan{}
	if g.State == kafkafmt.StateDead {
		return nil, fail("the file says group %q does not exist (the tool's \"Error: Consumer group '%s' does not exist.\"): there is no group to start from", g.ID, g.ID)
	}
	if strings.IndexFunc(g.ID, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 || !utf8.ValidString(g.ID) {
		return nil, fail("group id %q holds a control character: kgrepl prints the group id in its prompt and views", g.ID)
	}

	// The members, and what each owns.
	type member struct {
		kafkafmt.Member
		owned []kafkafmt.TopicPartition
	}
	var ms []member
	held := map[string][]kafkafmt.TopicPartition{}
	var heldOrder []string
	firstRow := map[string]kafkafmt.Offset{}
	for _, o := range g.Offsets {
		if o.ConsumerID == "" {
			continue
		}
		if _, ok := held[o.ConsumerID]; !ok {
			heldOrder = append(heldOrder, o.ConsumerID)
			firstRow[o.ConsumerID] = o
		}
		held[o.ConsumerID] = append(held[o.ConsumerID], o.TopicPartition)
	}
	switch {
	case g.Members != nil:
		for _, m := range g.Members {
			mm := member{Member: m}
			switch {
			case m.Assignment.Valid:
				mm.owned = m.Assignment.V
			case g.Offsets != nil:
				mm.owned = held[m.ConsumerID]
				if len(mm.owned) != m.Partitions {
					return nil, fail("line %d: member %q has #PARTITIONS %d, but the offsets table gives it %d: the two tables disagree (were they printed at different times?); describe the group with --members --verbose",
						m.Line, m.ConsumerID, m.Partitions, len(mm.owned))
				}
			default:
				return nil, fail("line %d: the members table of group %q has no assignment (kafka-consumer-groups.sh --describe --members without --verbose), and the file has no offsets table (plain --describe) to take it from: describe the group with --members --verbose",
					m.Line, g.ID)
			}
			ms = append(ms, mm)
		}
	case g.Offsets != nil && len(heldOrder) > 0:
		for _, id := range heldOrder {
			o := firstRow[id]
			ms = append(ms, member{Member: kafkafmt.Member{ConsumerID: id, Host: o.Host, ClientID: o.ClientID, Line: o.Line}, owned: held[id]})
		}
		p.notes = append(p.notes, "the file has no members table: the members are those its offsets table names (a member that owns no partition is not there), none of them static as far as it shows")
	}
	if len(ms) == 0 && g.NumMembers.Valid && g.NumMembers.V > 0 {
		return nil, fail("the file says group %q has %d member(s) (#MEMBERS of --state) but lists none: add the output of kafka-consumer-groups.sh --describe --group %s --members --verbose",
			g.ID, g.NumMembers.V, g.ID)
	}
	if err := limitMembers.check(opt.rawCmd, len(ms)); err != nil {
		return nil, err
	}
	switch {
	case g.Rebalancing || g.State == kafkafmt.StatePreparingRebalance || g.State == kafkafmt.StateCompletingRebalance ||
		g.State == kafkafmt.StateAssigning || g.State == kafkafmt.StateReconciling:
		state := g.State
		if state == "" {
			state = "rebalancing"
		}
		p.notes = append(p.notes, fmt.Sprintf("the file shows the group %s: kgrepl starts it Stable, each member owning its current assignment (the rebalance in progress, and any target assignment, are not imported)", state))
	}

	// The topics and their partition counts: every partition the file
	// names (current and target assignments, the offsets table), then
	// --topics.
	count := map[string]int{}
	seen := func(tp kafkafmt.TopicPartition) {
		count[tp.Topic] = max(count[tp.Topic], int(tp.Partition)+1)
	}
	for _, m := range g.Members {
		for _, tp := range m.Assignment.V {
			seen(tp)
		}
		for _, tp := range m.Target.V {
			seen(tp)
		}
	}
	for _, o := range g.Offsets {
		seen(o.TopicPartition)
	}
	given := map[string]bool{}
	for _, t := range opt.topics {
		if given[t.Name] {
			return nil, fail("--topics names %s twice (name each topic once)", t.Name)
		}
		given[t.Name] = true
		if n, ok := count[t.Name]; ok && t.Partitions < n {
			return nil, fail("--topics %s:%d: the file shows %s-%d, so %s has at least %d partitions", t.Name, t.Partitions, t.Name, n-1, t.Name, n)
		}
		count[t.Name] = max(count[t.Name], t.Partitions)
	}
	if len(count) == 0 {
		return nil, fail("the file names no partition of group %q (no assignment, no offsets table): give its topics with --topics NAME:P,...", g.ID)
	}
	var names []string
	for t := range count {
		names = append(names, t)
	}
	sort.Strings(names)
	p.topo = sim.Topology{Group: g.ID, Output: sim.TopicSpec{Name: "invoices", Partitions: 1}}
	if opt.output != nil {
		p.topo.Output = *opt.output
	}
	for _, t := range names {
		if t == p.topo.Output.Name {
			why := "kgrepl's default output topic"
			if opt.output != nil {
				why = "the output topic --output names"
			}
			return nil, fail("topic %s: the group reads it, and it is %s; name another output with --output NAME:P", t, why)
		}
		p.topo.Inputs = append(p.topo.Inputs, sim.TopicSpec{Name: t, Partitions: count[t]})
	}
	p.topo.Members = len(ms)

	// kgrepl's names, C1..Cn, given in the order of the consumer ids as
	// Kafka sorts them (String.compareTo), and so that kgrepl's member ids
	// (C1-1, C10-1, C2-1, ...) sort as those do: where an assignor orders
	// dynamic members by member id (range, roundrobin), it orders these as
	// it ordered the real ones.
	clients := make([]string, len(ms))
	for i := range clients {
		clients[i] = "C" + strconv.Itoa(i+1)
	}
	sort.Strings(clients)
	byID := make([]int, len(ms))
	for i := range byID {
		byID[i] = i
	}
	sort.SliceStable(byID, func(a, b int) bool { return ms[byID[a]].ConsumerID < ms[byID[b]].ConsumerID })
	client := make([]string, len(ms))
	for rank, i := range byID {
		client[i] = clients[rank]
	}
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return natural.Less(client[order[a]], client[order[b]]) })
	p.names = &importedNames{file: opt.file, byID: map[string]*importedMember{}}
	for _, i := range order {
		m := ms[i]
		var owned []sim.TopicPartition
		for _, tp := range m.owned {
			owned = append(owned, sim.TopicPartition{Topic: tp.Topic, Partition: int(tp.Partition)})
		}
		p.start = append(p.start, sim.StartMember{Client: client[i], Owned: owned})
		p.names.members = append(p.names.members, importedMember{client: client[i], clientID: m.ClientID, host: m.Host,
			memberID: m.ConsumerID, instanceID: m.GroupInstanceID, partitions: len(owned)})
	}
	if p.start == nil {
		p.start = []sim.StartMember{}
	}
	for i := range p.names.members {
		p.names.byID[p.names.members[i].client] = &p.names.members[i]
	}

	// The settings the file states.
	set := func(client, key, value, why string) {
		p.settings = append(p.settings, importSetting{client, key, value, why})
	}
	switch g.Protocol {
	case kafkafmt.ProtocolConsumer:
		set("", "group.protocol", "consumer", "")
	case kafkafmt.ProtocolClassic:
		set("", "group.protocol", "classic", "")
	default:
		set("", "group.protocol", "classic", "the file does not show the protocol: Kafka 3.x prints both kinds of group alike")
	}
	if g.Protocol == kafkafmt.ProtocolConsumer {
		for _, i := range order {
			if u := ms[i].Upgraded; u.Valid && !u.V {
				set(client[i], "group.protocol", "classic", "UPGRADED false: a classic member of the consumer group")
			}
		}
	}
	assignorKey, known := "partition.assignment.strategy", kgreplAssignors
	if g.Protocol == kafkafmt.ProtocolConsumer {
		assignorKey, known = "group.remote.assignor", []string{"uniform", "range"}
	}
	switch {
	case g.Assignor == "":
		p.notes = append(p.notes, fmt.Sprintf("the file does not show the group's assignor (--state shows it): %s stays as it is", assignorKey))
	case contains(known, g.Assignor):
		set("", assignorKey, g.Assignor, "")
	default:
		p.notes = append(p.notes, fmt.Sprintf("the group's assignor, %s, is not one kgrepl models (%s): %s stays as it is, so the members own what the file says until the next rebalance, which kgrepl's assignor computes",
			g.Assignor, strings.Join(known, ", "), assignorKey))
	}
	if !opt.keep {
		set("", "sticky.rules", "kafka", "Kafka's sticky algorithm, as a real group runs it")
	}
	for _, i := range order {
		if id := ms[i].GroupInstanceID; id != "" {
			set(client[i], "group.instance.id", id, "")
		}
	}
	return p, nil
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// importWorld reads a describe file for new --from-describe: the file
// (what a replay supplies, else the disk), parsed and planned, the
// settings applied to cfg.
func importWorld(s *Session, opt importOptions, cfg *sim.Config) (*importPlan, *fileRead, error) {
	raw, f, err := s.readFile(opt.rawCmd, opt.file, kafkafmt.MaxDescribeBytes, "describe file", describeText)
	if err != nil {
		return nil, nil, err
	}
	groups, err := kafkafmt.ParseDescribe(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v (a describe file is what kafka-consumer-groups.sh --describe --group G --members --verbose prints)", opt.rawCmd, err)
	}
	p, err := planImport(groups, opt)
	if err != nil {
		return nil, nil, err
	}
	for _, st := range p.settings {
		if err := cfg.Set(st.client, st.key, st.value); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", opt.rawCmd, err)
		}
	}
	return p, f, nil
}

// importReport is what new --from-describe prints: the world, the
// settings the file gave it, the members with kgrepl's names beside the
// file's, and what was not imported.
func importReport(p *importPlan, w *sim.World, opt importOptions) string {
	var b strings.Builder
	var ins []string
	for _, t := range p.topo.Inputs {
		ins = append(ins, fmt.Sprintf("%s (%d)", t.Name, t.Partitions))
	}
	fmt.Fprintf(&b, "new world from %s: group %s, input %s, output %s (%d), %d member(s), %s %s, %s, %d records per partition\n",
		opt.file, p.topo.Group, strings.Join(ins, ", "), p.topo.Output.Name, p.topo.Output.Partitions, len(p.start),
		w.Group.State(), EpochText(w.Group), w.Group.Type(), w.Cfg.RecordsPerPartition)
	var sets []string
	for _, st := range p.settings {
		if st.key != "group.instance.id" {
			sets = append(sets, st.String())
		}
	}
	fmt.Fprintf(&b, "set: %s\n", strings.Join(sets, "; "))
	if len(p.names.members) > 0 {
		t := &Table{Header: []string{"KGREPL", "CLIENT-ID", "HOST", "GROUP-INSTANCE-ID", "#PARTITIONS", "CONSUMER-ID"}}
		for _, m := range p.names.members {
			t.Add(m.client, m.clientID, m.host, dash(m.instanceID), strconv.Itoa(m.partitions), m.memberID)
		}
		b.WriteString(t.Text())
		fmt.Fprintf(&b, "kgrepl names the members C1..C%d in the order of their consumer ids, as Kafka sorts them; show names lists them again, describe group --real-names shows the file's names\n", len(p.start))
	}
	for _, n := range p.notes {
		b.WriteString("note: " + n + "\n")
	}
	fmt.Fprintf(&b, "not imported: committed offsets and log end offsets (each partition starts with records.per.partition records, %d, nothing committed)", w.Cfg.RecordsPerPartition)
	return b.String()
}

// importedNames are the names the file of the branch's new
// --from-describe gives its members; nil in a world new made itself.
func (s *Session) importedNames() *importedNames {
	if o := s.cur.hist.origin; o != nil {
		return o.names
	}
	return nil
}

// cmdShowNames is show names: the members of an imported group, kgrepl's
// names beside the file's.
func cmdShowNames(s *Session) (*Result, error) {
	n := s.importedNames()
	if n == nil {
		return &Result{Text: "this world's members have only kgrepl's names (C1, C2, ...): new --from-describe FILE starts a world from a real group, whose members keep the names the file gives them"}, nil
	}
	t := &Table{Header: []string{"KGREPL", "CLIENT-ID", "HOST", "GROUP-INSTANCE-ID", "CONSUMER-ID"}}
	for _, m := range n.members {
		t.Add(m.client, m.clientID, m.host, dash(m.instanceID), m.memberID)
	}
	text := fmt.Sprintf("the members of group %s as %s names them (members that joined since have kgrepl's names only):\n", s.cur.hist.origin.topo.Group, n.file) + t.Text()
	return &Result{Text: strings.TrimRight(text, "\n"), Table: t, HTML: s.htmlOf(t)}, nil
}
