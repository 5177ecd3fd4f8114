package kafkafmt

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// This file prints describe output from a Group the way each version of
// kafka-consumer-groups.sh does (ConsumerGroupCommand's printOffsets,
// printMembers and printStates), stdout and stderr interleaved as `2>&1`
// keeps them, so that tests can feed the parser exactly what the tool
// writes. The versions differ:
//
//   - v37, Kafka 2.3-3.7 (Scala): a table is "\n" + header + "\n", then
//     rows each ending "\n"; --members --verbose adds ASSIGNMENT as
//     topic(0,1), other(2); --state pads GROUP to the coordinator's width
//     (at least 25) and COORDINATOR (ID) to 25, coordinator "host:port (id)".
//   - v38, Kafka 3.8-3.9 (Java): the offsets table's header and each row
//     start with "\n" and the table does not end with one; the members
//     header is printed even when the tool printed a line instead of rows;
//     ASSIGNMENT lost its topics: (0,1), (2), partitions sorted as strings;
//     the coordinator is "host:port  (id)".
//   - v40, Kafka 4.0: the offsets table ends with "\n"; --describe
//     --verbose adds LEADER-EPOCH; --members --verbose prints CURRENT-EPOCH
//     CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT [UPGRADED], an
//     assignment as topic:0,1;other:2 (partitions sorted as strings);
//     --state pads GROUP and COORDINATOR (ID) to their own widths, STATE to
//     20, prints "-" for an empty strategy, and with --verbose GROUP-EPOCH
//     and TARGET-ASSIGNMENT-EPOCH.
//   - v41, Kafka 4.1 on: as 4.0 with partitions sorted as numbers
//     (KAFKA-18901's change to getAssignmentString).
type kafkaVersion int

const (
	v37 kafkaVersion = iota
	v38
	v40
	v41
)

var allVersions = []kafkaVersion{v37, v38, v40, v41}

func (v kafkaVersion) String() string {
	return [...]string{"2.3-3.7", "3.8-3.9", "4.0", "4.1+"}[v]
}

type describeMode int

const (
	modeOffsets describeMode = iota
	modeMembers
	modeState
)

func (m describeMode) String() string { return [...]string{"offsets", "members", "state"}[m] }

// javaPad is Java's %-Ns: s, then spaces up to n UTF-16 units.
func javaPad(s string, n int) string {
	l := 0
	for _, r := range s {
		l += utf16.RuneLen(r)
	}
	if l >= n {
		return s
	}
	return s + strings.Repeat(" ", n-l)
}

func javaLen(s string) int {
	l := 0
	for _, r := range s {
		l += utf16.RuneLen(r)
	}
	return l
}

// format fills a Java format made of %-Ns (width>0), %s (width 0) and the
// literal text between, given as a list of (width, suffix) pairs.
type field struct {
	width int
	after string // text printed after the value ("" or " ")
}

func javaFormat(prefix string, fields []field, vals ...string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i, f := range fields {
		if f.width > 0 {
			b.WriteString(javaPad(vals[i], f.width))
		} else {
			b.WriteString(vals[i])
		}
		b.WriteString(f.after)
	}
	return b.String()
}

func dashOr(s string, ok bool) string {
	if !ok {
		return "-"
	}
	return s
}

func optInt[T int32 | int64](o Opt[T]) string {
	if !o.Valid {
		return "-"
	}
	return strconv.FormatInt(int64(o.V), 10)
}

// printDescribe prints the groups, sorted by id as the tool's TreeMap does.
func printDescribe(v kafkaVersion, mode describeMode, verbose bool, groups []Group) string {
	gs := append([]Group(nil), groups...)
	sort.Slice(gs, func(i, j int) bool { return gs[i].ID < gs[j].ID })
	var b strings.Builder
	for _, g := range gs {
		switch mode {
		case modeOffsets:
			printOffsets(&b, v, verbose, g)
		case modeMembers:
			printMembers(&b, v, verbose, g)
		case modeState:
			printState(&b, v, verbose, g)
		}
	}
	return b.String()
}

// shouldPrint is shouldPrintMemberState: the tool's line about the group's
// state (stderr for Empty and rebalancing, stdout for the errors), and
// whether rows follow. exists false: the tool found no such group.
func shouldPrint(b *strings.Builder, g Group, rows int, exists bool) bool {
	if !exists {
		b.WriteString("\nError: The consumer group '" + g.ID + "' does not exist.\n")
		return false
	}
	switch {
	case g.State == StateDead:
		b.WriteString("\nError: Consumer group '" + g.ID + "' does not exist.\n")
	case g.State == StateEmpty:
		b.WriteString("\nConsumer group '" + g.ID + "' has no active members.\n")
	case g.Rebalancing || rebalancingState(g.State):
		b.WriteString("\nWarning: Consumer group '" + g.ID + "' is rebalancing.\n")
	}
	return g.State != StateDead && rows > 0
}

func printOffsets(b *strings.Builder, v kafkaVersion, verbose bool, g Group) {
	if !shouldPrint(b, g, len(g.Offsets), true) {
		return
	}
	gw, tw, cw, hw := 15, 15, 15, 15
	for _, o := range g.Offsets {
		gw = max(gw, javaLen(g.ID))
		tw = max(tw, javaLen(o.Topic))
		cw = max(cw, javaLen(dashOr(o.ConsumerID, o.ConsumerID != "")))
		hw = max(hw, javaLen(dashOr(o.Host, o.Host != "")))
	}
	verbose = verbose && v >= v40
	fields := []field{{gw, " "}, {tw, " "}, {10, " "}}
	if verbose {
		fields = append(fields, field{15, " "})
	}
	fields = append(fields, field{15, " "}, field{15, " "}, field{15, " "}, field{cw, " "}, field{hw, " "}, field{0, ""})
	header := []string{"GROUP", "TOPIC", "PARTITION"}
	if verbose {
		header = append(header, "LEADER-EPOCH")
	}
	header = append(header, "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	row := func(o Offset) []string {
		r := []string{g.ID, o.Topic, strconv.Itoa(int(o.Partition))}
		if verbose {
			r = append(r, optInt(o.LeaderEpoch))
		}
		return append(r, optInt(o.CurrentOffset), optInt(o.LogEndOffset), optInt(o.Lag),
			dashOr(o.ConsumerID, o.ConsumerID != ""), dashOr(o.Host, o.Host != ""), dashOr(o.ClientID, o.ClientID != ""))
	}
	if v == v37 {
		b.WriteString(javaFormat("\n", fields, header...) + "\n")
		for _, o := range g.Offsets {
			b.WriteString(javaFormat("", fields, row(o)...) + "\n")
		}
		return
	}
	b.WriteString(javaFormat("\n", fields, header...))
	for _, o := range g.Offsets {
		b.WriteString(javaFormat("\n", fields, row(o)...))
	}
	if v >= v40 {
		b.WriteString("\n")
	}
}

// assignmentText is how each version prints a member's assignment.
func assignmentText(v kafkaVersion, tps []TopicPartition) string {
	if len(tps) == 0 {
		return "-"
	}
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	var parts []string
	for topic, ps := range byTopic {
		nums := make([]string, len(ps))
		sorted := append([]int32(nil), ps...)
		if v == v37 || v == v41 {
			sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		}
		for i, p := range sorted {
			nums[i] = strconv.Itoa(int(p))
		}
		if v == v38 || v == v40 {
			sort.Strings(nums) // .map(Object::toString).sorted()
		}
		switch v {
		case v37:
			parts = append(parts, topic+"("+strings.Join(nums, ",")+")")
		case v38:
			parts = append(parts, "("+strings.Join(nums, ",")+")")
		default:
			parts = append(parts, topic+":"+strings.Join(nums, ","))
		}
	}
	sort.Strings(parts)
	if v >= v40 {
		return strings.Join(parts, ";")
	}
	return strings.Join(parts, ", ")
}

func printMembers(b *strings.Builder, v kafkaVersion, verbose bool, g Group) {
	show := shouldPrint(b, g, len(g.Members), true)
	gw, cw, iw, hw, clw, caw, taw := 15, 15, 17, 15, 15, 20, 20
	withInstance, classic, consumer := false, false, false
	if show {
		for _, m := range g.Members {
			gw = max(gw, javaLen(g.ID))
			cw = max(cw, javaLen(m.ConsumerID))
			iw = max(iw, javaLen(m.GroupInstanceID))
			hw = max(hw, javaLen(m.Host))
			clw = max(clw, javaLen(m.ClientID))
			withInstance = withInstance || m.GroupInstanceID != ""
			if v >= v40 {
				caw = max(caw, javaLen(assignmentText(v, m.Assignment.V)))
				taw = max(taw, javaLen(assignmentText(v, m.Target.V)))
				classic = classic || m.Upgraded.Valid && !m.Upgraded.V
				consumer = consumer || m.Upgraded.Valid && m.Upgraded.V
			}
		}
	} else if v == v37 {
		return // Scala printed the header only under shouldPrint
	}
	fields := []field{{gw, " "}, {cw, " "}}
	header := []string{"GROUP", "CONSUMER-ID"}
	if withInstance {
		fields = append(fields, field{iw, " "})
		header = append(header, "GROUP-INSTANCE-ID")
	}
	fields = append(fields, field{hw, " "}, field{clw, " "}, field{15, " "})
	header = append(header, "HOST", "CLIENT-ID", "#PARTITIONS")
	mixed := classic && consumer
	tail := []field{{15, " "}, {caw, " "}, {15, " "}, {taw, ""}}
	if mixed {
		tail = []field{{15, " "}, {caw, " "}, {15, " "}, {taw, " "}, {0, ""}}
	}
	b.WriteString(javaFormat("\n", fields, header...))
	if verbose {
		if v >= v40 {
			h := []string{"CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"}
			if mixed {
				h = append(h, "UPGRADED")
			}
			b.WriteString(javaFormat("", tail, h...))
		} else {
			b.WriteString("ASSIGNMENT")
		}
	}
	b.WriteString("\n")
	if !show && v == v37 {
		return
	}
	for _, m := range g.Members {
		r := []string{g.ID, m.ConsumerID}
		if withInstance {
			r = append(r, m.GroupInstanceID)
		}
		r = append(r, m.Host, m.ClientID, strconv.Itoa(m.Partitions))
		b.WriteString(javaFormat("", fields, r...))
		if verbose {
			if v >= v40 {
				t := []string{optInt(m.CurrentEpoch), assignmentText(v, m.Assignment.V), optInt(m.TargetEpoch), assignmentText(v, m.Target.V)}
				if mixed {
					t = append(t, dashOr(strconv.FormatBool(m.Upgraded.V), m.Upgraded.Valid))
				}
				b.WriteString(javaFormat("", tail, t...))
			} else {
				b.WriteString(assignmentText(v, m.Assignment.V))
			}
		}
		b.WriteString("\n")
	}
}

func printState(b *strings.Builder, v kafkaVersion, verbose bool, g Group) {
	if !shouldPrint(b, g, 1, true) {
		return
	}
	c := g.Coordinator.V
	sep := "  ("
	if v == v37 {
		sep = " ("
	}
	coord := c.Host + ":" + strconv.Itoa(c.Port) + sep + strconv.Itoa(int(c.ID)) + ")"
	cl := max(25, javaLen(coord))
	members := strconv.Itoa(g.NumMembers.V)
	if v <= v38 {
		f := []field{{cl, " "}, {25, " "}, {20, " "}, {15, " "}, {0, ""}}
		b.WriteString(javaFormat("\n", f, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"))
		b.WriteString(javaFormat("\n", f, g.ID, coord, g.Assignor, g.State, members))
		b.WriteString("\n")
		return
	}
	gl := max(15, javaLen(g.ID))
	strategy := dashOr(g.Assignor, g.Assignor != "")
	if verbose {
		f := []field{{gl, " "}, {cl, " "}, {20, " "}, {20, " "}, {15, " "}, {25, " "}, {0, ""}}
		b.WriteString(javaFormat("\n", f, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"))
		b.WriteString(javaFormat("\n", f, g.ID, coord, strategy, g.State, optInt(g.GroupEpoch), optInt(g.TargetAssignmentEpoch), members))
	} else {
		f := []field{{gl, " "}, {cl, " "}, {20, " "}, {20, " "}, {0, ""}}
		b.WriteString(javaFormat("\n", f, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"))
		b.WriteString(javaFormat("\n", f, g.ID, coord, strategy, g.State, members))
	}
	b.WriteString("\n")
}

// kafkaCommand is the line a user pastes above the output.
func kafkaCommand(mode describeMode, verbose bool, groups []Group) string {
	s := "$ bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092 --describe"
	if len(groups) == 1 {
		s += " --group " + groups[0].ID
	} else {
		s += " --all-groups"
	}
	switch mode {
	case modeMembers:
		s += " --members"
	case modeState:
		s += " --state"
	}
	if verbose {
		s += " --verbose"
	}
	return s
}
