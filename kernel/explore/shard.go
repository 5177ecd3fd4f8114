package explore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// A sweep outgrows one machine by its branches: each is independent of the
// others once the world at its tick is known, and every machine can make
// that world itself from the same script. So a sweep splits into N shards:
// every machine builds the same branch list (the script, then the window's
// ticks x members x fault kinds, in Run's order), shard K runs the branches
// whose index i has i mod N = K-1, and writes their outcomes, each with its
// index, to one file. Merge puts the files' rows back in index order and
// tallies them as Run does, so the merged report is the single-machine
// report: the same counts, and the same shortest branch per class, since
// "shortest" breaks ties by index over the whole list, never within a shard.
//
// Round-robin, not contiguous blocks: a branch's cost depends on its tick
// (late ticks in a window catch a rebalance, early ones do not), so blocks
// would give one machine all the long branches; with rows tagged by index,
// merging round-robin shards is as simple as merging blocks.

// Sweep is what every shard of one sweep shares: the world it starts from
// and the branches it runs. Merge refuses files whose sweeps differ.
type Sweep struct {
	// Prefix is the script that makes the base world (the caller's: Run
	// does not know it); the counterexample scripts start with it.
	Prefix    string    `json:"prefix"`
	Base      int       `json:"base"`
	From      int       `json:"from"`
	To        int       `json:"to"`
	Faults    []string  `json:"faults"`
	Members   []string  `json:"members"` // as given; null = every member live at each tick
	Bound     int       `json:"bound"`
	Isolation string    `json:"isolation"`
	Guarantee Guarantee `json:"guarantee"`
	Output    string    `json:"output"`
	Stops     []int     `json:"stops"`
	Branches  int       `json:"branches"` // in the whole sweep
}

func (p *plan) sweep() Sweep {
	return Sweep{Base: p.base.Tick, From: p.opts.From, To: p.opts.To, Faults: p.kinds, Members: p.opts.Members,
		Bound: p.opts.Bound, Isolation: p.opts.Isolation, Guarantee: GuaranteeOf(p.base, p.opts.Isolation),
		Output: p.base.Topo.Output.Name, Stops: p.stops, Branches: len(p.jobs)}
}

// Part is one shard's rows: Outcomes[j] is branch Index[j] of the sweep.
type Part struct {
	K, N     int
	Sweep    Sweep
	Index    []int
	Outcomes []Outcome
}

// CheckShard refuses a shard that is not K of N with 1 <= K <= N.
func CheckShard(k, n int) error {
	if n < 1 {
		return fmt.Errorf("shard %d/%d: N, the number of shards, is at least 1", k, n)
	}
	if k < 1 || k > n {
		return fmt.Errorf("shard %d/%d: K is from 1 to N (here 1 to %d)", k, n, n)
	}
	return nil
}

// ShardIndexes are the branches of a sweep of total branches that shard K
// of N runs: every index i with i mod N = K-1, in order.
func ShardIndexes(k, n, total int) []int {
	var idx []int
	for i := k - 1; i < total; i += n {
		idx = append(idx, i)
	}
	return idx
}

// isShard reports whether idx is exactly the indexes of shard K of N of a
// sweep of total branches (without building them: total comes from a file).
func isShard(idx []int, k, n, total int) bool {
	want := 0
	if total >= k {
		want = (total-k)/n + 1
	}
	if total < 0 || len(idx) != want {
		return false
	}
	for j, i := range idx {
		if i != k-1+j*n {
			return false
		}
	}
	return true
}

// RunShard runs shard K of N of the sweep Run(base, opts) would run: the
// outcomes it returns are exactly Run's at those indexes.
func RunShard(base *sim.World, opts Options, k, n int) (*Part, error) {
	if err := CheckShard(k, n); err != nil {
		return nil, err
	}
	defer raiseGC()()
	p, err := newPlan(base, opts)
	if err != nil {
		return nil, err
	}
	idx := ShardIndexes(k, n, len(p.jobs))
	outcomes, err := p.run(idx)
	if err != nil {
		return nil, err
	}
	return &Part{K: k, N: n, Sweep: p.sweep(), Index: idx, Outcomes: outcomes}, nil
}

// Merge puts shards 1..N of one sweep together into the report Run gives
// for the whole sweep. names name the parts in errors (file names).
func Merge(parts []*Part, names []string) (*Report, Sweep, error) {
	if len(parts) == 0 {
		return nil, Sweep{}, fmt.Errorf("no shard to merge")
	}
	first := parts[0]
	byK := map[int]int{}
	for i, p := range parts {
		if err := CheckShard(p.K, p.N); err != nil {
			return nil, Sweep{}, fmt.Errorf("%s: %v", names[i], err)
		}
		if p.N != first.N {
			return nil, Sweep{}, fmt.Errorf("%s is shard %d/%d and %s is shard %d/%d: the sweep was split two ways", names[0], first.K, first.N, names[i], p.K, p.N)
		}
		if field, a, b := sweepDiff(first.Sweep, p.Sweep); field != "" {
			return nil, Sweep{}, fmt.Errorf("%s and %s are shards of different sweeps: they differ in %s (%s vs %s)", names[0], names[i], field, a, b)
		}
		if j, ok := byK[p.K]; ok {
			return nil, Sweep{}, fmt.Errorf("shard %d/%d given twice (%s and %s)", p.K, p.N, names[j], names[i])
		}
		byK[p.K] = i
		if !isShard(p.Index, p.K, p.N, p.Sweep.Branches) || len(p.Outcomes) != len(p.Index) {
			return nil, Sweep{}, fmt.Errorf("%s: its rows are not the branches of shard %d/%d of a sweep of %d", names[i], p.K, p.N, p.Sweep.Branches)
		}
	}
	if len(byK) != first.N {
		var missing []string
		for k := 1; k <= first.N && len(missing) < 10; k++ {
			if _, ok := byK[k]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", k, first.N))
			}
		}
		if n := first.N - len(byK) - len(missing); n > 0 {
			missing = append(missing, fmt.Sprintf("and %d more", n))
		}
		return nil, Sweep{}, fmt.Errorf("shards missing: %s (every shard of the sweep is needed)", strings.Join(missing, " "))
	}
	outcomes := make([]Outcome, first.Sweep.Branches)
	for _, p := range parts {
		for j, i := range p.Index {
			outcomes[i] = p.Outcomes[j]
		}
	}
	return newReport(first.Sweep, outcomes), first.Sweep, nil
}

// sweepDiff names the first field (by its JSON name, in Sweep's order)
// where two sweeps differ, with both values; "" when they are the same.
func sweepDiff(a, b Sweep) (field, va, vb string) {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var ma, mb map[string]json.RawMessage
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	t := reflect.TypeFor[Sweep]()
	for i := range t.NumField() {
		k, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if string(ma[k]) != string(mb[k]) {
			return k, short(string(ma[k])), short(string(mb[k]))
		}
	}
	return "", "", ""
}

func short(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// The shard file: JSON lines. A header (the format, the shard and the
// sweep), one row per branch in index order, and an end line with the row
// count, so that a file cut short is refused. encoding/json sorts map keys,
// so the same shard gives the same bytes on every machine.
const shardFormat = "kgrepl explore shard v2"

// shardFormatV1 is the format before rows carried their unavailability
// and health: such a file cannot make the report this kgrepl prints.
const shardFormatV1 = "kgrepl explore shard v1"

type shardHeader struct {
	Format string `json:"format"`
	Shard  string `json:"shard"`
	Sweep  Sweep  `json:"sweep"`
}

type shardRow struct {
	Branch     int            `json:"branch"`
	Tick       int            `json:"tick"`
	Fault      string         `json:"fault"`
	Member     string         `json:"member"`
	Classes    map[string]int `json:"classes"`
	Duplicates []string       `json:"duplicates,omitempty"`
	Lost       []string       `json:"lost,omitempty"`
	Ran        int            `json:"ticks"`
	Log        []string       `json:"log,omitempty"`
	// The partition-ticks nobody could consume by cause (sim.Causes'
	// order), and the health at the end in words.
	Unavailable []int  `json:"unavailable"`
	Health      string `json:"health"`
}

type shardEnd struct {
	End int `json:"end"` // rows
}

// Write writes the part as a shard file.
func (p *Part) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(shardHeader{Format: shardFormat, Shard: fmt.Sprintf("%d/%d", p.K, p.N), Sweep: p.Sweep}); err != nil {
		return err
	}
	for j, o := range p.Outcomes {
		row := shardRow{Branch: p.Index[j], Tick: o.Tick, Fault: o.Fault.Kind, Member: o.Fault.Member, Classes: o.Classes,
			Duplicates: o.Duplicates, Lost: o.Lost, Ran: o.Ran, Log: o.Log, Health: o.Health, Unavailable: []int{}}
		for _, c := range sim.Causes {
			row.Unavailable = append(row.Unavailable, o.Unavailable[c])
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return enc.Encode(shardEnd{End: len(p.Outcomes)})
}

// ReadPart reads a shard file that Write wrote.
func ReadPart(r io.Reader) (*Part, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<30)
	line := 0
	next := func(v any) (bool, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return false, err
			}
			return false, nil
		}
		line++
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return false, fmt.Errorf("line %d: %v", line, err)
		}
		return true, nil
	}
	var h shardHeader
	if ok, err := next(&h); err != nil || !ok || h.Format != shardFormat {
		if err == nil && h.Format == shardFormatV1 {
			return nil, fmt.Errorf("a shard file of an older kgrepl (%q, without each branch's unavailability and health): run its shard again with this one", shardFormatV1)
		}
		if err != nil {
			return nil, fmt.Errorf("not a shard file of explore --shard (%v)", err)
		}
		return nil, fmt.Errorf("not a shard file of explore --shard (its first line is not a %q header)", shardFormat)
	}
	k, n, err := ParseShard(h.Shard)
	if err != nil {
		return nil, fmt.Errorf("line 1: %v", err)
	}
	if err := h.Sweep.check(); err != nil {
		return nil, fmt.Errorf("line 1: %v", err)
	}
	p := &Part{K: k, N: n, Sweep: h.Sweep}
	for {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("cut short after line %d: no end line (%d rows read)", line, len(p.Outcomes))
		}
		line++
		text := sc.Text()
		if strings.HasPrefix(text, `{"end":`) {
			var e shardEnd
			if err := json.Unmarshal([]byte(text), &e); err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			if e.End != len(p.Outcomes) {
				return nil, fmt.Errorf("line %d: the end line counts %d rows, the file has %d", line, e.End, len(p.Outcomes))
			}
			if sc.Scan() {
				return nil, fmt.Errorf("line %d: text after the end line", line+1)
			}
			return p, nil
		}
		var row shardRow
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if row.Classes == nil {
			row.Classes = map[string]int{}
		}
		if err := row.check(h.Sweep); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		p.Index = append(p.Index, row.Branch)
		o := Outcome{Tick: row.Tick, Fault: Fault{Kind: row.Fault, Member: row.Member}, Classes: row.Classes,
			Duplicates: row.Duplicates, Lost: row.Lost, Ran: row.Ran, Log: row.Log, Health: row.Health}
		for k, c := range sim.Causes {
			o.Unavailable[c] = row.Unavailable[k]
		}
		p.Outcomes = append(p.Outcomes, o)
	}
}

// A shard file is read by another machine, maybe edited on the way: what
// Merge takes from it goes into the report (its verdict, its table) and,
// with --save, into counterexample scripts someone will run. So every
// field is checked against what a sweep can produce: the header's window,
// faults, members, guarantee and isolation, and each row's fault, member
// and tick as its branch index gives them (Run's order: tick, then member,
// then fault kind), its classes, counts, ticks, record names and the
// commands it logged (a branch logs only steps and a restart of its
// faulted member). A file that passes is one a sweep could have written.

var (
	nameRe       = regexp.MustCompile(`^[A-Za-z0-9._()-]{1,255}$`) // a topic or a record name
	errorClassRe = regexp.MustCompile(`^` + CommitRefused + `:[A-Z_]{1,64}$`)
	healthRe     = regexp.MustCompile(`^[A-Za-z0-9 ._:;,(){}-]{0,1000}$`) // kernel/health's words
)

// maxPartitions bounds the partitions of a world (the kernel's limit on a
// world's partitions, input and output together).
const maxPartitions = 1000

// check refuses a sweep header no sweep writes.
func (sw Sweep) check() error {
	if sw.From < sw.Base || sw.To < sw.From || sw.Bound < 1 || sw.Branches < 0 {
		return fmt.Errorf("the sweep's window %d..%d from tick %d, bound %d, %d branches: not a sweep's", sw.From, sw.To, sw.Base, sw.Bound, sw.Branches)
	}
	if len(sw.Faults) == 0 {
		return fmt.Errorf("the sweep names no fault kind")
	}
	for i, f := range sw.Faults {
		if (Fault{Kind: f}).Command() == "" || slices.Contains(sw.Faults[:i], f) {
			return fmt.Errorf("the sweep's fault kinds %q: each one of %s, once", sw.Faults, strings.Join(FaultKinds, " "))
		}
	}
	for i, m := range sw.Members {
		if !sim.IsClientID(m) || slices.Contains(sw.Members[:i], m) {
			return fmt.Errorf("the sweep's members %q: each a client id (C1 to C999999), once", sw.Members)
		}
	}
	if sw.Members != nil && sw.Branches != (sw.To-sw.From+1)*len(sw.Members)*len(sw.Faults) {
		return fmt.Errorf("the sweep counts %d branches; its window, members and fault kinds make %d", sw.Branches, (sw.To-sw.From+1)*len(sw.Members)*len(sw.Faults))
	}
	if sw.Branches%len(sw.Faults) != 0 {
		return fmt.Errorf("the sweep counts %d branches, not a whole number for each of its %d fault kinds", sw.Branches, len(sw.Faults))
	}
	switch sw.Guarantee {
	case AtLeastOnce, AtMostOnce, ExactlyOnce:
	default:
		return fmt.Errorf("the sweep's guarantee %q is not %s, %s or %s", sw.Guarantee, AtLeastOnce, AtMostOnce, ExactlyOnce)
	}
	if sw.Isolation != "read_committed" && sw.Isolation != "read_uncommitted" {
		return fmt.Errorf("the sweep's isolation %q is not read_committed or read_uncommitted", sw.Isolation)
	}
	if !nameRe.MatchString(sw.Output) {
		return fmt.Errorf("the sweep's output topic %q is not a topic name", sw.Output)
	}
	for i, t := range sw.Stops {
		if t <= sw.Base || t > sw.To || i > 0 && t <= sw.Stops[i-1] {
			return fmt.Errorf("the sweep's stop ticks %v: each after tick %d and up to %d, in order", sw.Stops, sw.Base, sw.To)
		}
	}
	return nil
}

// knownClass reports whether a branch can be tallied in class c.
func knownClass(c string) bool {
	switch c {
	case LostWrite, Duplicate, AbortedRead, NonMonotonicRead, FencedProducer, ZombieWrite, Stalled, "fault-refused":
		return true
	}
	return errorClassRe.MatchString(c)
}

// check refuses a row the sweep sw cannot have written.
func (row shardRow) check(sw Sweep) error {
	i := row.Branch
	if i < 0 || i >= sw.Branches {
		return fmt.Errorf("branch %d: not a branch of a sweep of %d", i, sw.Branches)
	}
	if want := sw.Faults[i%len(sw.Faults)]; row.Fault != want {
		return fmt.Errorf("branch %d: fault %q, where the sweep's order puts %q", i, row.Fault, want)
	}
	if row.Tick < sw.From || row.Tick > sw.To {
		return fmt.Errorf("branch %d: tick %d outside the window %d..%d", i, row.Tick, sw.From, sw.To)
	}
	if !sim.IsClientID(row.Member) {
		return fmt.Errorf("branch %d: member %q is not a client id", i, row.Member)
	}
	if n := len(sw.Members); n > 0 {
		per := n * len(sw.Faults)
		if m, t := sw.Members[(i%per)/len(sw.Faults)], sw.From+i/per; row.Member != m || row.Tick != t {
			return fmt.Errorf("branch %d: %s at tick %d, where the sweep's order puts %s at tick %d", i, row.Member, row.Tick, m, t)
		}
	}
	if row.Ran < 0 || row.Ran > sw.Bound {
		return fmt.Errorf("branch %d: ran %d ticks, outside 0..%d (the sweep's bound)", i, row.Ran, sw.Bound)
	}
	for c, n := range row.Classes {
		if !knownClass(c) || n < 1 {
			return fmt.Errorf("branch %d: class %.40q counted %d: not a class a branch is tallied in, at least once", i, c, n)
		}
	}
	for _, names := range [][]string{row.Duplicates, row.Lost} {
		if len(names) > sw.Bound*64 {
			return fmt.Errorf("branch %d: %d record names for a branch of at most %d ticks", i, len(names), sw.Bound)
		}
		for _, name := range names {
			if !nameRe.MatchString(name) {
				return fmt.Errorf("branch %d: %.40q is not a record name", i, name)
			}
		}
	}
	steps, restarts := 0, 0
	for _, l := range row.Log {
		if n, ok := strings.CutPrefix(l, "step "); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v < 1 || strconv.Itoa(v) != n {
				return fmt.Errorf("branch %d: logged %.40q, not step N", i, l)
			}
			steps += v
			continue
		}
		if l != "restart "+row.Member || restarts > 0 {
			return fmt.Errorf("branch %d: logged %.40q; a branch logs steps and at most one restart of its member", i, l)
		}
		restarts++
	}
	if steps != row.Ran {
		return fmt.Errorf("branch %d: its logged steps add up to %d ticks, its row says it ran %d", i, steps, row.Ran)
	}
	if len(row.Unavailable) != len(sim.Causes) {
		return fmt.Errorf("branch %d: %d counts of unavailability, want one per cause (%d)", i, len(row.Unavailable), len(sim.Causes))
	}
	for _, n := range row.Unavailable {
		// A fault's branch counts partitions of a world of at most
		// maxPartitions for at most its ticks (and the tick the fault
		// landed in).
		if n < 0 || n > (row.Ran+1)*maxPartitions {
			return fmt.Errorf("branch %d: unavailability %d: not a count of partition x ticks of a branch of %d ticks", i, n, row.Ran)
		}
	}
	if !healthRe.MatchString(row.Health) {
		return fmt.Errorf("branch %d: health %.40q is not what a branch ends with (ok, or a line of words)", i, row.Health)
	}
	return nil
}

// ParseShard reads "K/N".
func ParseShard(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("shard %q: want K/N, shard K of N, e.g. 2/4", s)
	}
	return k, n, CheckShard(k, n)
}
