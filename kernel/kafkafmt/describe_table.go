// describe_table.go: the layout of kafka-consumer-groups.sh --describe's
// tables: their columns and widths, the header that names them, and how a
// row's text splits into its values (aligned or by words); what the values
// say is read in describe_values.go.

package kafkafmt

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// column is one of the tool's columns.
type column int

const (
	colGroup column = iota
	colTopic
	colPartition
	colLeaderEpoch
	colCurrentOffset
	colLogEndOffset
	colLag
	colConsumerID
	colHost
	colClientID
	colInstanceID
	colNumPartitions
	colAssignment
	colCurrentEpoch
	colCurrentAssignment
	colTargetEpoch
	colTargetAssignment
	colUpgraded
	colCoordinator
	colStrategy
	colState
	colGroupEpoch
	colTargetAssignmentEpoch
	colNumMembers
)

var columnNames = [...]string{
	colGroup: "GROUP", colTopic: "TOPIC", colPartition: "PARTITION", colLeaderEpoch: "LEADER-EPOCH",
	colCurrentOffset: "CURRENT-OFFSET", colLogEndOffset: "LOG-END-OFFSET", colLag: "LAG",
	colConsumerID: "CONSUMER-ID", colHost: "HOST", colClientID: "CLIENT-ID", colInstanceID: "GROUP-INSTANCE-ID",
	colNumPartitions: "#PARTITIONS", colAssignment: "ASSIGNMENT", colCurrentEpoch: "CURRENT-EPOCH",
	colCurrentAssignment: "CURRENT-ASSIGNMENT", colTargetEpoch: "TARGET-EPOCH", colTargetAssignment: "TARGET-ASSIGNMENT",
	colUpgraded: "UPGRADED", colCoordinator: "COORDINATOR (ID)", colStrategy: "ASSIGNMENT-STRATEGY", colState: "STATE",
	colGroupEpoch: "GROUP-EPOCH", colTargetAssignmentEpoch: "TARGET-ASSIGNMENT-EPOCH", colNumMembers: "#MEMBERS",
}

func (c column) String() string { return columnNames[c] }

var columnByName = func() map[string]column {
	m := map[string]column{}
	for c, n := range columnNames {
		m[n] = column(c)
	}
	return m
}()

// The headers the tool prints (ConsumerGroupCommand.printOffsets,
// printMembers, printStates; Scala in Kafka 2.3-3.7, Java from 3.8).
var (
	offsetsColumns = []column{colGroup, colTopic, colPartition, colCurrentOffset, colLogEndOffset, colLag,
		colConsumerID, colHost, colClientID}
	offsetsVerboseColumns = []column{colGroup, colTopic, colPartition, colLeaderEpoch, colCurrentOffset,
		colLogEndOffset, colLag, colConsumerID, colHost, colClientID}
	stateColumns        = []column{colGroup, colCoordinator, colStrategy, colState, colNumMembers}
	stateVerboseColumns = []column{colGroup, colCoordinator, colStrategy, colState, colGroupEpoch,
		colTargetAssignmentEpoch, colNumMembers}
)

func sameColumns(a, b []column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// membersLayout reads a --members header: GROUP CONSUMER-ID
// [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS, then nothing, ASSIGNMENT
// (2.3-3.9 --verbose), or CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH
// TARGET-ASSIGNMENT [UPGRADED] (4.x --verbose).
func membersLayout(cols []column) (verbose bool, format string, ok bool) {
	rest := cols
	take := func(c column) bool {
		if len(rest) > 0 && rest[0] == c {
			rest = rest[1:]
			return true
		}
		return false
	}
	if !take(colGroup) || !take(colConsumerID) {
		return false, "", false
	}
	take(colInstanceID)
	if !take(colHost) || !take(colClientID) || !take(colNumPartitions) {
		return false, "", false
	}
	switch {
	case len(rest) == 0:
		return false, "Kafka 2.3-4.x", true
	case sameColumns(rest, []column{colAssignment}):
		return true, "Kafka 2.3-3.9", true
	case sameColumns(rest, []column{colCurrentEpoch, colCurrentAssignment, colTargetEpoch, colTargetAssignment}),
		sameColumns(rest, []column{colCurrentEpoch, colCurrentAssignment, colTargetEpoch, colTargetAssignment, colUpgraded}):
		return true, "Kafka 4.x", true
	}
	return false, "", false
}

// width is how Kafka pads a column: fixed (its format's %-Ns) or at least
// min (the longest value, at least min); the last column is not padded
// (Kafka 4.x pads TARGET-ASSIGNMENT, which then has trailing spaces).
type width struct{ fixed, min int }

// widthOf gives a column's padding in a table; state4 picks Kafka 4.x's
// --state layout over 2.3-3.9's (printStates changed in 4.0).
func widthOf(kind TableKind, state4 bool, c column) width {
	switch c {
	case colGroup:
		if kind == StateTable && !state4 {
			return width{min: 25} // 2.3-3.9 pad GROUP to the coordinator's width, at least 25
		}
		return width{min: 15}
	case colTopic, colConsumerID, colHost, colClientID:
		return width{min: 15}
	case colInstanceID:
		return width{min: 17}
	case colPartition:
		return width{fixed: 10}
	case colLeaderEpoch, colCurrentOffset, colLogEndOffset, colLag, colNumPartitions, colCurrentEpoch, colTargetEpoch, colGroupEpoch:
		return width{fixed: 15}
	case colCurrentAssignment, colTargetAssignment:
		return width{min: 20}
	case colCoordinator:
		if state4 {
			return width{min: 25}
		}
		return width{fixed: 25}
	case colStrategy:
		return width{fixed: 20}
	case colState:
		if state4 {
			return width{fixed: 20}
		}
		return width{fixed: 15}
	case colTargetAssignmentEpoch:
		return width{fixed: 25}
	}
	return width{}
}

// openTable is the table whose rows follow its header.
type openTable struct {
	kind    TableKind
	verbose bool
	format  string
	cols    []column
	starts  []int // each column's first position, in UTF-16 units as Java pads
	aligned bool  // the header is padded as Kafka pads it: read rows by position
	state4  bool
	// groupless: the header has no GROUP column (Kafka before 2.3); the
	// group is the one the command line above it names.
	groupless bool
	group     string
	line      int
	// tableIndex: for each group with rows here, its Tables entry.
	tableIndex map[*groupBuilder]int
	// style of ASSIGNMENT values seen (2.3-3.9 --verbose): "named" or
	// "topicless"; a table has one.
	style, styleRow string
	styleLine       int
	vals            []string // a row's values, reused row to row
}

// parseHeader reads a table's header. ok is false for a line that is not
// one; a line of column names in an order the tool never prints is refused.
func parseHeader(n int, s string) (*openTable, bool, error) {
	lead := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(lead, "GROUP") && !strings.HasPrefix(lead, "TOPIC") &&
		!strings.HasPrefix(lead, "CONSUMER-ID") && !strings.HasPrefix(lead, "COORDINATOR") {
		return nil, false, nil
	}
	var cols []column
	var starts []int
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		name := s[i:j]
		if name == "COORDINATOR" && strings.HasPrefix(s[j:], " (ID)") {
			name, j = "COORDINATOR (ID)", j+len(" (ID)")
		}
		c, ok := columnByName[name]
		if !ok {
			return nil, false, nil
		}
		cols = append(cols, c)
		starts = append(starts, i)
		i = j
	}
	if len(cols) < 3 {
		return nil, false, nil
	}
	groupless := cols[0] != colGroup
	if groupless {
		// Kafka before 2.3 printed no GROUP column (and Kafka's
		// documentation still shows its tables so).
		cols = append([]column{colGroup}, cols...)
		starts = append([]int{-1}, starts...)
	}
	t := &openTable{cols: cols, starts: starts, line: n, tableIndex: map[*groupBuilder]int{}, groupless: groupless}
	switch {
	case sameColumns(cols, offsetsColumns):
		t.kind, t.format = OffsetsTable, "Kafka 2.3-4.x"
	case sameColumns(cols, offsetsVerboseColumns):
		t.kind, t.verbose, t.format = OffsetsTable, true, "Kafka 4.x"
	case sameColumns(cols, stateColumns):
		t.kind, t.format = StateTable, "Kafka 2.3-4.x"
	case sameColumns(cols, stateVerboseColumns):
		t.kind, t.verbose, t.format, t.state4 = StateTable, true, "Kafka 4.x", true
	default:
		verbose, format, ok := membersLayout(cols)
		if !ok {
			return nil, false, lineErr(n, "a header kafka-consumer-groups.sh does not print: %s; its tables are %s (--describe), %s (4.x --describe --verbose), %s (--members) followed by nothing, ASSIGNMENT (2.3-3.9 --verbose) or CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT [UPGRADED] (4.x --verbose), and %s (--state; 4.x --verbose adds GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH before #MEMBERS)",
				quote(strings.TrimSpace(s)), colList(offsetsColumns), colList(offsetsVerboseColumns),
				"GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS", colList(stateColumns))
		}
		t.kind, t.verbose, t.format = MembersTable, verbose, format
	}
	if groupless {
		if t.verbose && t.format == "Kafka 4.x" {
			return nil, false, lineErr(n, "a Kafka 4.x header without its GROUP column: %s", quote(strings.TrimSpace(s)))
		}
		t.format = "Kafka before 2.3"
		return t, true, nil // read by words: older versions pad otherwise
	}
	if strings.ContainsRune(s, '\t') {
		return t, true, nil
	}
	// Aligned if every column but the last is padded as Kafka pads it.
	check := func(state4 bool) bool {
		for i := 0; i+1 < len(cols); i++ {
			w := starts[i+1] - starts[i] - 1
			r := widthOf(t.kind, state4, cols[i])
			if r.fixed > 0 && w != max(r.fixed, len(columnNames[cols[i]])) || w < r.min {
				return false
			}
		}
		return true
	}
	if t.kind == StateTable && !t.verbose {
		switch {
		case check(true):
			t.aligned, t.state4, t.format = true, true, "Kafka 4.x"
		case check(false):
			t.aligned, t.format = true, "Kafka 2.3-3.9"
		}
	} else {
		t.aligned = check(t.state4)
	}
	return t, true, nil
}

func colList(cols []column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.String()
	}
	return strings.Join(names, " ")
}

// unitLine indexes a line by UTF-16 code units, the unit Java's Formatter
// pads by (String.length()).
type unitLine struct {
	s   string
	off []int // off[u]: byte offset of unit u; nil for an ASCII line
	n   int   // units
}

func newUnitLine(s string) unitLine {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return unitLine{s: s, n: len(s)}
	}
	off := make([]int, 0, len(s)+1)
	for i, r := range s {
		off = append(off, i)
		if utf16.RuneLen(r) == 2 {
			off = append(off, i)
		}
	}
	off = append(off, len(s))
	return unitLine{s: s, off: off, n: len(off) - 1}
}

func (l unitLine) at(u int) int {
	if l.off == nil {
		return u
	}
	return l.off[u]
}

func (l unitLine) slice(a, b int) string { return l.s[l.at(a):l.at(b)] }

func (l unitLine) spaceAt(u int) bool { return u < l.n && l.s[l.at(u)] == ' ' }

var coordinatorRE = regexp.MustCompile(`^\S+ {1,2}\(-?[0-9]+\)`)

// splitAligned cuts a row where the header's columns start: a value that
// overflows its fixed width (a 19-digit offset, a long coordinator) pushes
// the rest right by as much, as Java's %-Ns does.
func (t *openTable) splitAligned(s string) ([]string, bool) {
	l := newUnitLine(s)
	if cap(t.vals) < len(t.cols) {
		t.vals = make([]string, len(t.cols))
	}
	vals := t.vals[:len(t.cols)]
	clear(vals)
	pos := t.starts[0]
	for i := 0; i < pos; i++ {
		if !l.spaceAt(i) {
			return nil, false // not indented as the header
		}
	}
	for i, c := range t.cols {
		if pos >= l.n {
			break
		}
		if i == len(t.cols)-1 {
			vals[i] = strings.TrimRight(l.slice(pos, l.n), " ")
			break
		}
		end := pos + t.starts[i+1] - t.starts[i] - 1
		if c == colCoordinator {
			m := coordinatorRE.FindString(l.s[l.at(pos):])
			if m == "" {
				return nil, false
			}
			vEnd := pos + utf16Len(m)
			if vEnd < end {
				for u := vEnd; u < end && u < l.n; u++ {
					if !l.spaceAt(u) {
						return nil, false
					}
				}
				vEnd = end
			}
			vals[i] = m
			if vEnd < l.n && !l.spaceAt(vEnd) {
				return nil, false
			}
			pos = vEnd + 1
			continue
		}
		if end >= l.n {
			vals[i] = strings.TrimRight(l.slice(pos, l.n), " ")
			pos = l.n
			continue
		}
		if l.spaceAt(end) {
			vals[i] = strings.TrimRight(l.slice(pos, end), " ")
			pos = end + 1
			continue
		}
		// Overflow: the value runs on to the next space.
		k := end
		for k < l.n && !l.spaceAt(k) {
			k++
		}
		vals[i] = l.slice(pos, k)
		pos = k + 1
	}
	return vals, true
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// blankable: the columns whose value can be empty, which a row split at
// whitespace then lacks: a dynamic member's GROUP-INSTANCE-ID and 2.3-3.9's
// ASSIGNMENT-STRATEGY of an empty group.
func blankable(c column) bool { return c == colInstanceID || c == colStrategy }

// splitTokens cuts a row at whitespace: for tables whose padding was lost.
// COORDINATOR (ID)'s value is two words; the last column takes the rest.
func (t *openTable) splitTokens(s string) ([]string, error) {
	// Kafka 2.3-3.7 join an assignment's topics with ", ": one word here.
	f := strings.Fields(strings.ReplaceAll(s, "), ", "),"))
	if t.groupless {
		f = append([]string{t.group}, f...)
	}
	values := len(f) - t.coordinatorWords()
	if values < len(t.cols) {
		// Too few words: blank values (a dynamic member's instance id).
		nb := 0
		for _, c := range t.cols {
			if blankable(c) {
				nb++
			}
		}
		if len(t.cols)-values != nb {
			return nil, fmt.Errorf("%d values where the header (line %d) has %d columns", values, t.line, len(t.cols))
		}
		return t.fill(f, true)
	}
	return t.fill(f, false)
}

func (t *openTable) coordinatorWords() int {
	for _, c := range t.cols {
		if c == colCoordinator {
			return 1
		}
	}
	return 0
}

func (t *openTable) fill(f []string, blanks bool) ([]string, error) {
	vals := make([]string, len(t.cols))
	k := 0
	for i, c := range t.cols {
		if blanks && blankable(c) {
			continue
		}
		if k >= len(f) {
			return nil, fmt.Errorf("no value for %s (the header at line %d has %d columns)", c, t.line, len(t.cols))
		}
		if i == len(t.cols)-1 {
			vals[i] = strings.Join(f[k:], " ")
			break
		}
		if c == colCoordinator && k+1 < len(f) && strings.HasPrefix(f[k+1], "(") {
			vals[i] = f[k] + " " + f[k+1]
			k += 2
			continue
		}
		vals[i] = f[k]
		k++
	}
	return vals, nil
}

func (p *describeParser) row(n int, s string) error {
	t := p.table
	if t.aligned {
		if vals, ok := t.splitAligned(s); ok {
			err := p.apply(n, vals)
			if err == nil {
				return nil
			}
			// A row whose spaces were squeezed under a header that kept
			// them: try words; if that fails too, the first reason holds.
			vals2, err2 := t.splitTokens(s)
			if err2 == nil {
				if p.apply(n, vals2) == nil {
					p.byWords++
					return nil
				}
			}
			if err2 != nil && utf16Len(s) <= t.starts[len(t.starts)-1] {
				// The row stops before the last column: cut short, or its
				// spaces squeezed; counting its values says more.
				return lineErr(n, "%s: %v; a %s row has %s", quote(strings.TrimSpace(s)), err2, t.kind, colList(t.cols))
			}
			return err
		}
	}
	vals, err := t.splitTokens(s)
	if err != nil {
		return lineErr(n, "%s: %v; a %s row has %s", quote(strings.TrimSpace(s)), err, t.kind, colList(t.cols))
	}
	return p.apply(n, vals)
}
