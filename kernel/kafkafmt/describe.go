package kafkafmt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Limits of ParseDescribe, checked while reading: a file past one is
// refused with an error naming the limit. They are twice what a kgrepl
// world of the largest shape needs (10,000 members, 1,000,000 partitions:
// a members table of 10,000 rows and an offsets table of 1,000,000), so the
// world's own bounds, not these, refuse a group that is too big to run.
const (
	MaxDescribeBytes      = 256 << 20 // the whole file
	MaxDescribeLineBytes  = 16 << 20  // one line (a member's assignment can be long)
	MaxDescribeRows       = 2_000_000 // table rows, every table and group together
	MaxAssignedPartitions = 4_000_000 // partitions listed in assignments, current and target together
)

// Protocol is a group's rebalance protocol.
type Protocol string

const (
	ProtocolUnknown  Protocol = ""         // the file does not show it
	ProtocolClassic  Protocol = "classic"  // JoinGroup/SyncGroup
	ProtocolConsumer Protocol = "consumer" // KIP-848's ConsumerGroupHeartbeat
)

// Group states as kafka-consumer-groups.sh prints them (Kafka's GroupState).
const (
	StateStable              = "Stable"
	StateEmpty               = "Empty"
	StatePreparingRebalance  = "PreparingRebalance"
	StateCompletingRebalance = "CompletingRebalance"
	StateAssigning           = "Assigning"   // consumer groups only
	StateReconciling         = "Reconciling" // consumer groups only
	StateDead                = "Dead"
)

var knownStates = []string{StateStable, StateEmpty, StatePreparingRebalance, StateCompletingRebalance,
	StateAssigning, StateReconciling, StateDead}

// Opt is a value a table may not give: Valid is false when Kafka printed
// "-" for it or the table has no such column.
type Opt[T any] struct {
	V     T
	Valid bool
}

func some[T any](v T) Opt[T] { return Opt[T]{V: v, Valid: true} }

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Group is one consumer group as the file describes it. Several tables of
// one group (say --state, then --members --verbose, then the offsets) add
// up to one Group.
type Group struct {
	ID string
	// State is the group's state as Kafka prints it (StateStable, ...),
	// from a --state table or a line of the tool's ("has no active members"
	// is Empty, "does not exist" is Dead); "" when the file does not say.
	State string
	// Rebalancing: the tool said "Warning: Consumer group 'G' is
	// rebalancing." (PreparingRebalance, CompletingRebalance, Assigning or
	// Reconciling, it does not say which).
	Rebalancing bool
	// Protocol is what the file shows: epochs (CURRENT-EPOCH, GROUP-EPOCH)
	// or a state only consumer groups have make it ProtocolConsumer, a
	// Kafka 4.x table printing "-" for them ProtocolClassic; otherwise
	// ProtocolUnknown (Kafka 3.x prints both kinds of group alike).
	Protocol Protocol
	// Assignor is ASSIGNMENT-STRATEGY of --state: the classic group's
	// protocol (range, roundrobin, sticky, cooperative-sticky, or a custom
	// assignor's name) or the consumer group's server-side assignor
	// (uniform, range); "" when not shown or empty.
	Assignor    string
	Coordinator Opt[Coordinator]
	// GroupEpoch and TargetAssignmentEpoch: --state --verbose (Kafka 4.x).
	GroupEpoch            Opt[int32]
	TargetAssignmentEpoch Opt[int32]
	NumMembers            Opt[int] // #MEMBERS of --state
	// Members come from a --members table, in the file's order (Kafka's
	// order: the coordinator's). nil when the file has no members table
	// for this group.
	Members []Member
	// Offsets come from the offsets table (plain --describe), in the file's
	// order. nil when the file has none for this group.
	Offsets []Offset
	// Tables lists the tables read for this group, in the file's order.
	Tables []Table
	// Line is where the group is first named.
	Line int
}

// Coordinator is COORDINATOR (ID) of --state: host:port (id).
type Coordinator struct {
	Host string
	Port int
	ID   int32
}

// Member is one row of --members [--verbose].
type Member struct {
	ConsumerID      string // the member id
	GroupInstanceID string // "" for a dynamic member
	Host            string // as Kafka prints it, e.g. /10.0.0.7
	ClientID        string
	Partitions      int // #PARTITIONS
	// Assignment is the current assignment (ASSIGNMENT in Kafka 2.3-3.x,
	// CURRENT-ASSIGNMENT in 4.x), sorted by topic then partition; Valid
	// only with --verbose ("-" is an empty assignment).
	Assignment Opt[[]TopicPartition]
	// Target is TARGET-ASSIGNMENT (Kafka 4.x --verbose); a classic group's
	// members print "-" (empty).
	Target       Opt[[]TopicPartition]
	CurrentEpoch Opt[int32] // the member epoch (consumer groups)
	TargetEpoch  Opt[int32] // the group's target assignment epoch
	// Upgraded: UPGRADED, printed when classic and consumer-protocol
	// members share a consumer group (true: uses the consumer protocol).
	Upgraded Opt[bool]
	Line     int
}

// Offset is one row of the offsets table.
type Offset struct {
	TopicPartition
	LeaderEpoch   Opt[int32] // LEADER-EPOCH (Kafka 4.x --describe --verbose)
	CurrentOffset Opt[int64] // the committed offset; invalid when none
	LogEndOffset  Opt[int64]
	Lag           Opt[int64]
	// ConsumerID, Host and ClientID name the member holding the
	// partition; "" when no member does (Kafka prints "-").
	ConsumerID, Host, ClientID string
	Line                       int
}

// TableKind is which view of the tool a table is.
type TableKind string

const (
	OffsetsTable TableKind = "offsets" // --describe [--offsets]
	MembersTable TableKind = "members" // --describe --members
	StateTable   TableKind = "state"   // --describe --state
)

// Table says what the file held: which view, with --verbose or not, in the
// format of which Kafka versions, at which line (its header's).
type Table struct {
	Kind    TableKind
	Verbose bool
	// Format names the Kafka versions that print this table so, e.g.
	// "Kafka 4.x", "Kafka 2.3-3.7", "Kafka 3.8-3.9", "Kafka 2.3-4.x".
	Format string
	Line   int
}

// LineError is a refusal: the line it is about (0 for the file as a whole)
// and what was wrong and what is allowed.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

func lineErr(line int, format string, args ...any) error {
	return &LineError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ParseDescribe reads the output of kafka-consumer-groups.sh --describe:
// the offsets table (plain --describe, also --offsets, and 4.x --verbose's
// LEADER-EPOCH), --members [--verbose] and --state [--verbose], as Kafka 2.3
// to 4.x print them (and the tables without a GROUP column of earlier
// versions, which Kafka's documentation still shows, when the pasted
// command names the group), for one group or several (--all-groups, several
// --group, or several outputs one after another), with the tool's own lines
// ("Consumer group 'G' has no active members.", "Warning: Consumer group
// 'G' is rebalancing.", "Error: Consumer group 'G' does not exist.") when
// stderr was kept, and a line holding the command itself. Columns are read
// where Kafka's padding puts them (so a value may hold spaces); a table
// whose spaces were squeezed (pasted through a chat or a web page) is split
// at whitespace instead. CRLF line ends and a UTF-8 byte-order mark are
// accepted; anything else that is not the tool's output is refused, naming
// the line, what was wrong and what is allowed. The groups come back in the
// order the file first names them.
func ParseDescribe(r io.Reader) ([]Group, error) {
	groups, _, err := parseDescribe(r, describeLimits{MaxDescribeBytes, MaxDescribeLineBytes, MaxDescribeRows, MaxAssignedPartitions})
	return groups, err
}

// describeLimits are the bounds a parse runs under (tests shrink them).
type describeLimits struct {
	bytes, line, rows, entries int
}

// parseDescribe is ParseDescribe under the given limits, also saying how
// many rows under an aligned header had to be read by words (tests expect
// none in the tool's own output).
func parseDescribe(r io.Reader, lim describeLimits) ([]Group, int, error) {
	p := &describeParser{groups: map[string]*groupBuilder{}, topics: map[string]string{}, lim: lim}
	sc := bufio.NewScanner(&limitedReader{r: r, left: int64(lim.bytes)})
	sc.Buffer(make([]byte, 0, min(64<<10, lim.line)), lim.line)
	n := 0
	for sc.Scan() {
		n++
		if err := p.line(n, sc.Bytes()); err != nil {
			return nil, 0, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, 0, lineErr(n+1, "longer than %s: kafka-consumer-groups.sh prints no line that long for a group kgrepl can hold", sizeText(lim.line))
		}
		if errors.Is(err, errTooBig) {
			return nil, 0, lineErr(0, "more than %s: a describe file of a group kgrepl can hold is smaller (at most %d table rows)", sizeText(lim.bytes), lim.rows)
		}
		return nil, 0, err
	}
	groups, err := p.finish()
	return groups, p.byWords, err
}

var errTooBig = errors.New("input over the size limit")

// limitedReader fails once more than left bytes were asked for, so that a
// file over the limit is refused rather than cut short.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(b []byte) (int, error) {
	if l.left < 0 {
		return 0, errTooBig
	}
	if int64(len(b)) > l.left+1 {
		b = b[:l.left+1]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	if l.left < 0 {
		return n, errTooBig
	}
	return n, err
}

type describeParser struct {
	groups  map[string]*groupBuilder
	order   []*groupBuilder
	table   *openTable // the table whose rows follow, if any
	rows    int
	entries int
	topics  map[string]string // interned topic names
	// commandGroup is the one group the last pasted command line names
	// (--group G), for tables without a GROUP column.
	commandGroup string
	commandLine  int
	byWords      int // rows under an aligned header read by words
	lim          describeLimits
}

type groupBuilder struct {
	g           Group
	members     map[string]int // consumer id -> first line
	instances   map[string]int // group instance id -> first line
	offsets     map[TopicPartition]int
	stateLine   int // line of the --state row
	stateFrom   int // line of the tool's message giving the state
	protoLine   int // line that fixed Protocol
	topicless   map[int][][]int32
	membersSeen bool
}

func (p *describeParser) group(id string, line int) *groupBuilder {
	gb := p.groups[id]
	if gb == nil {
		gb = &groupBuilder{g: Group{ID: id, Line: line}, members: map[string]int{}, instances: map[string]int{},
			offsets: map[TopicPartition]int{}}
		p.groups[id] = gb
		p.order = append(p.order, gb)
	}
	return gb
}

func (p *describeParser) line(n int, b []byte) error {
	if n == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	if len(b) > 0 && b[len(b)-1] == '\r' { // CRLF
		b = b[:len(b)-1]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return lineErr(n, "a NUL byte at column %d: a describe file is text, as kafka-consumer-groups.sh prints it", i+1)
	}
	if i := bytes.IndexByte(b, '\r'); i >= 0 {
		return lineErr(n, "a carriage return at column %d inside the line: lines end with LF or CRLF", i+1)
	}
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return lineErr(n, "byte %d (0x%02x) is not UTF-8: a describe file is UTF-8 text, as kafka-consumer-groups.sh prints it", i+1, b[i])
	}
	s := string(b)
	trimmed := strings.TrimSpace(s)
	switch {
	case trimmed == "":
		p.table = nil
		return nil
	case strings.Contains(trimmed, "kafka-consumer-groups"):
		// The command itself, pasted with its output.
		p.table = nil
		p.commandGroup, p.commandLine = commandGroup(trimmed), n
		return nil
	}
	if ok, err := p.message(n, trimmed); err != nil {
		return err
	} else if ok {
		p.table = nil
		return nil
	}
	if t, ok, err := parseHeader(n, s); err != nil {
		return err
	} else if ok {
		if t.groupless {
			if p.commandGroup == "" {
				return lineErr(n, "a table without a GROUP column, as Kafka before 2.3 printed it (and Kafka's documentation shows it): kgrepl takes its group from the command above it (kafka-consumer-groups.sh ... --describe --group G), and the file has no such line naming one group; add it")
			}
			t.group = p.commandGroup
		}
		p.table = t
		return nil
	}
	if p.table == nil {
		return lineErr(n, "%s is not part of kafka-consumer-groups.sh --describe output: expected a table's header (GROUP ...), a row under one, a blank line, or one of the tool's lines (Consumer group 'G' has no active members. / Warning: Consumer group 'G' is rebalancing. / Error: Consumer group 'G' does not exist.)", quote(trimmed))
	}
	p.rows++
	if p.rows > p.lim.rows {
		return lineErr(n, "more than %d table rows: a group kgrepl can hold has fewer", p.lim.rows)
	}
	return p.row(n, s)
}

// message reads one of the tool's own lines. ok: it was one.
func (p *describeParser) message(n int, s string) (ok bool, err error) {
	type form struct{ prefix, suffix, state string }
	forms := []form{
		{"Consumer group '", "' has no active members.", StateEmpty},
		{"Warning: Consumer group '", "' is rebalancing.", ""},
		{"Error: Consumer group '", "' does not exist.", StateDead},
		{"Error: The consumer group '", "' does not exist.", StateDead},
	}
	for _, f := range forms {
		if !strings.HasPrefix(s, f.prefix) || !strings.HasSuffix(s, f.suffix) || len(s) <= len(f.prefix)+len(f.suffix) {
			continue
		}
		id := s[len(f.prefix) : len(s)-len(f.suffix)]
		gb := p.group(id, n)
		if f.state == "" {
			if gb.g.State != "" && !rebalancingState(gb.g.State) {
				return true, lineErr(n, "says group %s is rebalancing, but line %d says it is %s", quote(id), gb.stateAt(), gb.g.State)
			}
			gb.g.Rebalancing = true
			if gb.stateFrom == 0 {
				gb.stateFrom = n
			}
			return true, nil
		}
		return true, gb.setState(f.state, n, true)
	}
	if strings.HasPrefix(s, "Error:") {
		return true, lineErr(n, "kafka-consumer-groups.sh reported an error: %s; describe a group the tool could read", quote(s))
	}
	return false, nil
}

func rebalancingState(s string) bool {
	return s == StatePreparingRebalance || s == StateCompletingRebalance || s == StateAssigning || s == StateReconciling
}

func (gb *groupBuilder) stateAt() int {
	if gb.stateLine != 0 {
		return gb.stateLine
	}
	return gb.stateFrom
}

// setState records a state from a --state row (fromMessage false) or from
// one of the tool's lines; two sources must agree.
func (gb *groupBuilder) setState(state string, n int, fromMessage bool) error {
	if gb.g.State != "" && gb.g.State != state {
		return lineErr(n, "says group %s is %s, but line %d says %s", quote(gb.g.ID), state, gb.stateAt(), gb.g.State)
	}
	if gb.g.Rebalancing && !rebalancingState(state) {
		return lineErr(n, "says group %s is %s, but line %d says it is rebalancing", quote(gb.g.ID), state, gb.stateFrom)
	}
	if state == StateEmpty && len(gb.g.Members) > 0 {
		return lineErr(n, "says group %s has no active members, but line %d lists member %s", quote(gb.g.ID), gb.g.Members[0].Line, quote(gb.g.Members[0].ConsumerID))
	}
	gb.g.State = state
	if fromMessage {
		if gb.stateFrom == 0 {
			gb.stateFrom = n
		}
	} else {
		gb.stateLine = n
	}
	if state == StateAssigning || state == StateReconciling {
		return gb.setProtocol(ProtocolConsumer, n, "state "+state)
	}
	return nil
}

// setProtocol records what a line shows of the group's protocol.
func (gb *groupBuilder) setProtocol(pr Protocol, n int, why string) error {
	if gb.g.Protocol != ProtocolUnknown && gb.g.Protocol != pr {
		return lineErr(n, "%s makes group %s a %s group, but line %d shows a %s group", why, quote(gb.g.ID), pr, gb.protoLine, gb.g.Protocol)
	}
	if gb.g.Protocol == ProtocolUnknown {
		gb.g.Protocol = pr
		gb.protoLine = n
	}
	return nil
}

func (p *describeParser) finish() ([]Group, error) {
	if len(p.order) == 0 {
		return nil, lineErr(0, "no group found: expected the output of kafka-consumer-groups.sh --describe --group G (with --members [--verbose] or --state, or neither), a table with at least one row or one of the tool's lines about a group")
	}
	out := make([]Group, 0, len(p.order))
	for _, gb := range p.order {
		if err := gb.resolveTopicless(); err != nil {
			return nil, err
		}
		if err := gb.checkAssignments(); err != nil {
			return nil, err
		}
		out = append(out, gb.g)
	}
	return out, nil
}

// checkAssignments refuses a partition in two members' current (or
// target) assignments: the coordinator never hands one partition to two
// members of a group.
func (gb *groupBuilder) checkAssignments() error {
	for _, which := range []string{"current", "target"} {
		owner := map[TopicPartition]int{}
		for i, m := range gb.g.Members {
			a := m.Assignment
			if which == "target" {
				a = m.Target
			}
			for _, tp := range a.V {
				if j, ok := owner[tp]; ok {
					o := gb.g.Members[j]
					return lineErr(m.Line, "partition %s is in the %s assignment of member %s (line %d) and of member %s: a partition has one owner in a group", tp, which, quote(o.ConsumerID), o.Line, quote(m.ConsumerID))
				}
				owner[tp] = i
			}
		}
	}
	return nil
}

// resolveTopicless fills in the topics of assignments Kafka 3.8 and 3.9
// printed without them ("(0,1), (2)"), from the offsets table of the same
// group, which names each held partition's topic and its member.
func (gb *groupBuilder) resolveTopicless() error {
	if len(gb.topicless) == 0 {
		return nil
	}
	held := map[string][]TopicPartition{}
	hasOffsets := gb.g.Offsets != nil
	for _, o := range gb.g.Offsets {
		if o.ConsumerID != "" {
			held[o.ConsumerID] = append(held[o.ConsumerID], o.TopicPartition)
		}
	}
	idx := make([]int, 0, len(gb.topicless))
	for i := range gb.topicless {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		m := &gb.g.Members[i]
		groups := gb.topicless[i]
		why := "the file has no offsets table (plain --describe) for group " + quote(gb.g.ID)
		if hasOffsets {
			why = fmt.Sprintf("the offsets table of group %s has no rows for member %s", quote(gb.g.ID), quote(m.ConsumerID))
		}
		tps := held[m.ConsumerID]
		if len(tps) == 0 {
			return lineErr(m.Line, "the assignment of member %s names no topics, as Kafka 3.8 and 3.9 print it (%s), and %s, which would name them: add that table to the file, or describe the group with Kafka 4.x's or 3.7's tool", quote(m.ConsumerID), topiclessText(groups), why)
		}
		sortTPs(tps)
		if !sameTopicless(groups, tps) {
			return lineErr(m.Line, "the assignment of member %s, %s, is not what the offsets table gives it (%s)", quote(m.ConsumerID), topiclessText(groups), tpsText(tps))
		}
		m.Assignment = some(tps)
	}
	return nil
}

// sameTopicless: the partition numbers of each topic of tps, as a
// multiset of lists, equal groups.
func sameTopicless(groups [][]int32, tps []TopicPartition) bool {
	key := func(ps []int32) string {
		s := append([]int32(nil), ps...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return fmt.Sprint(s)
	}
	count := map[string]int{}
	for _, g := range groups {
		count[key(g)]++
	}
	byTopic := map[string][]int32{}
	var topics []string
	for _, tp := range tps {
		if _, ok := byTopic[tp.Topic]; !ok {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	if len(topics) != len(groups) {
		return false
	}
	for _, t := range topics {
		k := key(byTopic[t])
		if count[k] == 0 {
			return false
		}
		count[k]--
	}
	return true
}

func topiclessText(groups [][]int32) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		nums := make([]string, len(g))
		for j, p := range g {
			nums[j] = fmt.Sprint(p)
		}
		parts[i] = "(" + strings.Join(nums, ",") + ")"
	}
	return strings.Join(parts, ", ")
}

func tpsText(tps []TopicPartition) string {
	if len(tps) == 0 {
		return "none"
	}
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = tp.String()
	}
	return strings.Join(parts, " ")
}

func sortTPs(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// quote shows a value from the file in an error, cut at 80 characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:80]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

// commandGroup is the group a pasted kafka-consumer-groups.sh command line
// names with --group G (or --group=G); "" when it names none or several.
func commandGroup(line string) string {
	f := strings.Fields(line)
	group := ""
	for i, tok := range f {
		v, ok := "", false
		switch {
		case tok == "--group" && i+1 < len(f):
			v, ok = f[i+1], true
		case strings.HasPrefix(tok, "--group="):
			v, ok = strings.TrimPrefix(tok, "--group="), true
		}
		if !ok {
			continue
		}
		v = strings.Trim(v, `'"`)
		if group != "" && group != v {
			return ""
		}
		group = v
	}
	return group
}

// sizeText says a byte count as the limits are stated: MiB, KiB or bytes.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
