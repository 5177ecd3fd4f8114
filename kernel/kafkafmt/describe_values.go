// describe_values.go: what a describe table's row says, its values read typed
// (cell) into the group being built: an offsets row, a members row, a state
// row; describe_table.go splits the row's text into those values.

package kafkafmt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// cell is a row's values by column, for reading them typed.
type cell struct {
	t    *openTable
	vals []string
	line int
	err  error
}

func (c *cell) get(col column) (string, bool) {
	for i, cc := range c.t.cols {
		if cc == col {
			return c.vals[i], true
		}
	}
	return "", false
}

func (c *cell) fail(col column, v, format string, args ...any) {
	if c.err == nil {
		c.err = lineErr(c.line, "%s %s %s", col, quote(v), fmt.Sprintf(format, args...))
	}
}

func (c *cell) str(col column) string {
	v, _ := c.get(col)
	return v
}

func (c *cell) nonEmpty(col column) string {
	v, ok := c.get(col)
	if ok && v == "" {
		c.fail(col, v, "is empty: each row has one")
	}
	return v
}

// dash reads a column where "-" means none.
func (c *cell) dash(col column) string {
	v := c.str(col)
	if v == "-" {
		return ""
	}
	return v
}

// int64 reads a column of a 64-bit number at least min, "-" for none.
func (c *cell) int64(col column, min int64, what string) Opt[int64] {
	return cellInt[int64](c, col, min, what, 64)
}

// int32 reads a column of a 32-bit number at least min, "-" for none.
func (c *cell) int32(col column, min int64, what string) Opt[int32] {
	return cellInt[int32](c, col, min, what, 32)
}

// cellInt reads a column of a number of bits bits at least min (what
// names it in the error), "-" for none.
func cellInt[T int32 | int64](c *cell, col column, min int64, what string, bits int) Opt[T] {
	v, ok := c.get(col)
	if !ok || v == "-" {
		return Opt[T]{}
	}
	x, err := parseDecimal(v, bits)
	if err != nil || x < min {
		c.fail(col, v, "is not %s or -", what)
		return Opt[T]{}
	}
	return some(T(x))
}

func (c *cell) count(col column) int {
	v := c.str(col)
	x, err := parseDecimal(v, 32)
	if err != nil || x < 0 {
		c.fail(col, v, "is not a whole number of 0 or more")
		return 0
	}
	return int(x)
}

// parseDecimal reads a number as Java prints it: digits, maybe a minus.
func parseDecimal(s string, bits int) (int64, error) {
	if s == "" || s[0] == '+' {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, bits)
}

func (p *describeParser) apply(n int, vals []string) error {
	t := p.table
	c := &cell{t: t, vals: vals, line: n}
	id := c.nonEmpty(colGroup)
	if c.err != nil {
		return c.err
	}
	switch t.kind {
	case OffsetsTable:
		return p.offsetRow(n, id, c)
	case MembersTable:
		return p.memberRow(n, id, c)
	}
	return p.stateRow(n, id, c)
}

// record notes the table in the group's Tables at its first row there.
func (p *describeParser) record(gb *groupBuilder) *Table {
	t := p.table
	i, ok := t.tableIndex[gb]
	if !ok {
		i = len(gb.g.Tables)
		gb.g.Tables = append(gb.g.Tables, Table{Kind: t.kind, Verbose: t.verbose, Format: t.format, Line: t.line})
		t.tableIndex[gb] = i
	}
	return &gb.g.Tables[i]
}

func (p *describeParser) intern(s string) string {
	if v, ok := p.topics[s]; ok {
		return v
	}
	p.topics[s] = s
	return s
}

func (p *describeParser) offsetRow(n int, id string, c *cell) error {
	topic := c.str(colTopic)
	if msg := topicProblem(topic); msg != "" {
		c.fail(colTopic, topic, "is not a topic name: %s", msg)
	}
	part := c.int32(colPartition, 0, "a partition number")
	if !part.Valid && c.err == nil {
		c.fail(colPartition, c.str(colPartition), "is not a partition number")
	}
	o := Offset{
		TopicPartition: TopicPartition{Topic: p.intern(topic), Partition: part.V},
		LeaderEpoch:    c.int32(colLeaderEpoch, -1, "a leader epoch"),
		CurrentOffset:  c.int64(colCurrentOffset, -1, "an offset"),
		LogEndOffset:   c.int64(colLogEndOffset, 0, "an offset"),
		Lag:            c.int64(colLag, -1<<63, "a number"),
		// Interned: a member's rows repeat them, and a row's line
		// string is then not kept alive by its substrings.
		ConsumerID: p.intern(c.dash(colConsumerID)),
		Host:       p.intern(c.dash(colHost)),
		ClientID:   p.intern(c.dash(colClientID)),
		Line:       n,
	}
	if c.err != nil {
		return c.err
	}
	// ConsumerGroupCommand.getLag: LAG is LOG-END-OFFSET - CURRENT-OFFSET
	// when both are known (and the offset is not -1), else "-".
	if o.CurrentOffset.Valid && o.CurrentOffset.V != -1 && o.LogEndOffset.Valid {
		if want := o.LogEndOffset.V - o.CurrentOffset.V; !o.Lag.Valid || o.Lag.V != want {
			return lineErr(n, "LAG %s is not LOG-END-OFFSET %d - CURRENT-OFFSET %d = %d, as Kafka computes it", quote(c.str(colLag)), o.LogEndOffset.V, o.CurrentOffset.V, want)
		}
	} else if o.Lag.Valid {
		return lineErr(n, "LAG %d where CURRENT-OFFSET or LOG-END-OFFSET is -: Kafka prints LAG - then", o.Lag.V)
	}
	gb := p.group(id, n)
	if first, dup := gb.offsets[o.TopicPartition]; dup {
		return lineErr(n, "partition %s of group %s is listed twice (first at line %d)", o.TopicPartition, quote(id), first)
	}
	gb.offsets[o.TopicPartition] = n
	p.record(gb)
	if gb.g.Offsets == nil {
		gb.g.Offsets = []Offset{}
	}
	gb.g.Offsets = append(gb.g.Offsets, o)
	return nil
}

func (p *describeParser) memberRow(n int, id string, c *cell) error {
	m := Member{
		ConsumerID:      c.nonEmpty(colConsumerID),
		GroupInstanceID: c.dash(colInstanceID), // Kafka prints it blank; kgrepl's views print -
		Host:            c.str(colHost),
		ClientID:        c.str(colClientID),
		Partitions:      c.count(colNumPartitions),
		Line:            n,
	}
	if m.GroupInstanceID != "" {
		if msg := topicProblem(m.GroupInstanceID); msg != "" {
			c.fail(colInstanceID, m.GroupInstanceID, "is not a group instance id (Kafka's rule, JoinGroupRequest.validateGroupInstanceId: that of topic names): %s", msg)
		}
	}
	var topicless [][]int32
	style := ""
	assignCol := colAssignment
	if _, ok := c.get(colCurrentAssignment); ok {
		assignCol = colCurrentAssignment
	}
	if v, ok := c.get(assignCol); ok && c.err == nil {
		a, err := p.parseAssignment(v)
		if err != nil {
			c.fail(assignCol, v, "%v", err)
		} else if a.topicless != nil {
			if assignCol == colCurrentAssignment {
				c.fail(assignCol, v, "names no topics; Kafka 4.x writes topic:p,p;topic:p")
			}
			topicless, style = a.topicless, "topicless"
			m.Assignment = Opt[[]TopicPartition]{Valid: true}
		} else {
			m.Assignment = some(a.tps)
			if len(a.tps) > 0 {
				style = a.style
			}
		}
		if c.err == nil {
			got := len(m.Assignment.V)
			for _, g := range topicless {
				got += len(g)
			}
			if got != m.Partitions {
				c.fail(colNumPartitions, c.str(colNumPartitions), "does not count the %d partitions of %s %s", got, assignCol, quote(v))
			}
		}
	}
	if v, ok := c.get(colTargetAssignment); ok && c.err == nil {
		a, err := p.parseAssignment(v)
		if err == nil && a.topicless != nil {
			err = fmt.Errorf("names no topics; Kafka 4.x writes topic:p,p;topic:p")
		}
		if err != nil {
			c.fail(colTargetAssignment, v, "%v", err)
		} else {
			m.Target = some(a.tps)
		}
	}
	m.CurrentEpoch = c.int32(colCurrentEpoch, -2, "a member epoch")
	m.TargetEpoch = c.int32(colTargetEpoch, 0, "an epoch")
	if v, ok := c.get(colUpgraded); ok {
		switch v {
		case "true", "false":
			m.Upgraded = some(v == "true")
		case "-":
		default:
			c.fail(colUpgraded, v, "is not true, false or -")
		}
	}
	if c.err != nil {
		return c.err
	}
	p.entries += len(m.Assignment.V) + len(m.Target.V)
	for _, g := range topicless {
		p.entries += len(g)
	}
	if p.entries > p.lim.entries {
		return lineErr(n, "more than %d partitions in the assignments listed so far: a group kgrepl can hold has fewer", p.lim.entries)
	}
	t := p.table
	if style != "" {
		if t.style != "" && t.style != style {
			return lineErr(n, "%s is written %s while line %d's is written %s: one table comes from one version of the tool", assignCol, styleName(style), t.styleLine, styleName(t.style))
		}
		t.style, t.styleLine = style, n
	}
	gb := p.group(id, n)
	if first, dup := gb.members[m.ConsumerID]; dup {
		return lineErr(n, "member %s of group %s is listed twice (first at line %d): member ids are unique in a group", quote(m.ConsumerID), quote(id), first)
	}
	if m.GroupInstanceID != "" {
		if first, dup := gb.instances[m.GroupInstanceID]; dup {
			return lineErr(n, "group instance id %s is held by two members of group %s (the other at line %d): the coordinator lets one member hold an instance id", quote(m.GroupInstanceID), quote(id), first)
		}
		gb.instances[m.GroupInstanceID] = n
	}
	if gb.g.State == StateEmpty {
		return lineErr(n, "lists member %s, but line %d says group %s has no active members", quote(m.ConsumerID), gb.stateAt(), quote(id))
	}
	if t.verbose && t.format == "Kafka 4.x" {
		pr, why := ProtocolClassic, "CURRENT-EPOCH -"
		if m.CurrentEpoch.Valid {
			pr, why = ProtocolConsumer, "CURRENT-EPOCH "+strconv.Itoa(int(m.CurrentEpoch.V))
		}
		if _, ok := c.get(colUpgraded); ok {
			pr, why = ProtocolConsumer, "the UPGRADED column"
		}
		if err := gb.setProtocol(pr, n, why); err != nil {
			return err
		}
	}
	gb.members[m.ConsumerID] = n
	tab := p.record(gb)
	switch {
	case t.groupless:
	case t.style == "topicless":
		tab.Format = "Kafka 3.8-3.9"
	case t.style == "named":
		tab.Format = "Kafka 2.3-3.7"
	}
	if topicless != nil {
		if gb.topicless == nil {
			gb.topicless = map[int][][]int32{}
		}
		gb.topicless[len(gb.g.Members)] = topicless
	}
	if gb.g.Members == nil {
		gb.g.Members = []Member{}
	}
	gb.g.Members = append(gb.g.Members, m)
	return nil
}

func styleName(style string) string {
	if style == "topicless" {
		return "without topics, as Kafka 3.8-3.9 print it"
	}
	return "topic(p,p), as Kafka 2.3-3.7 print it"
}

var coordinatorParts = regexp.MustCompile(`^(\S+):([0-9]+) {1,2}\((-?[0-9]+)\)$`)

func (p *describeParser) stateRow(n int, id string, c *cell) error {
	coord := c.str(colCoordinator)
	var co Coordinator
	if m := coordinatorParts.FindStringSubmatch(coord); m == nil {
		c.fail(colCoordinator, coord, "is not host:port (id)")
	} else {
		port, err1 := strconv.Atoi(m[2])
		nid, err2 := parseDecimal(m[3], 32)
		if err1 != nil || err2 != nil || port > 65535 {
			c.fail(colCoordinator, coord, "is not host:port (id) with a port up to 65535")
		}
		co = Coordinator{Host: m[1], Port: port, ID: int32(nid)}
	}
	strategy := c.dash(colStrategy)
	state := c.str(colState)
	known := false
	for _, s := range knownStates {
		known = known || s == state
	}
	if !known && c.err == nil {
		c.fail(colState, state, "is not a group state (%s)", strings.Join(knownStates, ", "))
	}
	groupEpoch := c.int32(colGroupEpoch, 0, "an epoch")
	targetEpoch := c.int32(colTargetAssignmentEpoch, 0, "an epoch")
	members := c.count(colNumMembers)
	if c.err != nil {
		return c.err
	}
	gb := p.group(id, n)
	if gb.stateLine != 0 {
		return lineErr(n, "a second --state row for group %s (the first at line %d)", quote(id), gb.stateLine)
	}
	if err := gb.setState(state, n, false); err != nil {
		return err
	}
	if p.table.verbose {
		pr, why := ProtocolClassic, "GROUP-EPOCH -"
		if groupEpoch.Valid {
			pr, why = ProtocolConsumer, "GROUP-EPOCH "+strconv.Itoa(int(groupEpoch.V))
		}
		if err := gb.setProtocol(pr, n, why); err != nil {
			return err
		}
	}
	gb.g.Coordinator = some(co)
	gb.g.Assignor = strategy
	gb.g.GroupEpoch, gb.g.TargetAssignmentEpoch = groupEpoch, targetEpoch
	gb.g.NumMembers = some(members)
	p.record(gb)
	return nil
}

// topicProblem says why s is not a legal topic name (Kafka's Topic.validate,
// which group instance ids follow too), or "" when it is one.
func topicProblem(s string) string {
	switch {
	case s == "":
		return "the empty string is not allowed"
	case s == "." || s == "..":
		return fmt.Sprintf("%q is not allowed", s)
	case len(s) > 249:
		return "longer than 249 characters"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf("%q is not an ASCII letter, digit, '.', '_' or '-'", r)
		}
	}
	return ""
}
