package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

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
	// Partitions is the base world's partitions, input and output: what
	// bounds a branch's unavailability counts (partition x ticks).
	Partitions int   `json:"partitions"`
	Stops      []int `json:"stops"`
	Branches   int   `json:"branches"` // in the whole sweep
}

func (p *plan) sweep() Sweep {
	return Sweep{Base: p.base.Tick, From: p.opts.From, To: p.opts.To, Faults: p.kinds, Members: p.opts.Members,
		Bound: p.opts.Bound, Isolation: p.opts.Isolation, Guarantee: GuaranteeOf(p.base, p.opts.Isolation),
		Output: p.base.Topo.Output.Name, Partitions: len(p.base.Layout().Inputs()) + len(p.base.Layout().Outputs()),
		Stops: p.stops, Branches: len(p.jobs)}
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
// The fields are compared in place: the script a sweep carries may be
// hundreds of megabytes, and marshalling each sweep to compare them made
// copies of it. Only a differing field is written out, cut to what the
// error shows.
func sweepDiff(a, b Sweep) (field, va, vb string) {
	t := reflect.TypeFor[Sweep]()
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range t.NumField() {
		fa, fb := ra.Field(i), rb.Field(i)
		if fa.Kind() == reflect.String && fa.String() == fb.String() || fa.Kind() != reflect.String && reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			continue
		}
		k, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		return k, shortJSON(fa), shortJSON(fb)
	}
	return "", "", ""
}

// shortJSON is a value as JSON, as short() shows it: a long string or list
// is cut before it is marshalled (the cut is past what short keeps).
func shortJSON(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); len(s) > 64 {
			v = reflect.ValueOf(s[:64])
		}
	case reflect.Slice:
		if v.Len() > 20 {
			v = v.Slice(0, 20)
		}
	}
	j, _ := json.Marshal(v.Interface())
	return short(string(j))
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
const shardFormat = "kgrepl explore shard v3"

// shardFormatV1 is the format before rows carried their unavailability
// and health: such a file cannot make the report this kgrepl prints.
const shardFormatV1 = "kgrepl explore shard v1"

// shardFormatV2 is the format before the sweep carried its world's
// partitions (a v2 file's counts were checked against 1,000 partitions,
// the kernel's limit when v2 was written, which refused the shards of
// bigger worlds).
const shardFormatV2 = "kgrepl explore shard v2"

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
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return ParsePart(data)
}

// ParsePart reads a shard file's bytes. It copies nothing but what the
// Part keeps: lines are read in place, and the header (whose script may be
// most of a file of hundreds of megabytes) is decoded once, straight from
// the bytes; a json.Decoder would have copied it into its buffer first.
func ParsePart(data []byte) (*Part, error) {
	line := 0
	rest := data
	next := func() ([]byte, bool) {
		if len(rest) == 0 {
			return nil, false
		}
		line++
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		return bytes.TrimSuffix(l, []byte("\r")), true // as bufio.ScanLines read them
	}
	first, ok := next()
	var h shardHeader
	if ok {
		if err := decodeHeader(first, &h); err != nil {
			return nil, fmt.Errorf("not a shard file of explore --shard (%v)", err)
		}
	}
	if !ok || h.Format != shardFormat {
		if h.Format == shardFormatV1 {
			return nil, fmt.Errorf("a shard file of an older kgrepl (%q, without each branch's unavailability and health): run its shard again with this one", shardFormatV1)
		}
		if h.Format == shardFormatV2 {
			return nil, fmt.Errorf("a shard file of an older kgrepl (%q, without its world's partitions): run its shard again with this one", shardFormatV2)
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
		text, ok := next()
		if !ok {
			return nil, fmt.Errorf("cut short after line %d: no end line (%d rows read)", line, len(p.Outcomes))
		}
		if bytes.HasPrefix(text, []byte(`{"end":`)) {
			var e shardEnd
			if err := json.Unmarshal(text, &e); err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			if e.End != len(p.Outcomes) {
				return nil, fmt.Errorf("line %d: the end line counts %d rows, the file has %d", line, e.End, len(p.Outcomes))
			}
			if _, more := next(); more {
				return nil, fmt.Errorf("line %d: text after the end line", line)
			}
			return p, nil
		}
		var row shardRow
		dec := json.NewDecoder(bytes.NewReader(text))
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

// decodeHeader decodes a shard file's header line, refusing a field a
// header does not have (as json.Decoder.DisallowUnknownFields would)
// without the copy of the line a Decoder makes: the line is decoded in
// place, and its keys are checked in a second pass that keeps no value.
func decodeHeader(line []byte, h *shardHeader) error {
	if err := json.Unmarshal(line, h); err != nil {
		return err
	}
	var keys struct {
		top   map[string]skipJSON
		sweep struct {
			Sweep map[string]skipJSON `json:"sweep"`
		}
	}
	if err := json.Unmarshal(line, &keys.top); err != nil {
		return err
	}
	if err := json.Unmarshal(line, &keys.sweep); err != nil {
		return err
	}
	if k := unknownKey(keys.top, reflect.TypeFor[shardHeader]()); k != "" {
		return fmt.Errorf("json: unknown field %q", k)
	}
	if k := unknownKey(keys.sweep.Sweep, reflect.TypeFor[Sweep]()); k != "" {
		return fmt.Errorf("json: unknown field %q", k)
	}
	return nil
}

// UnmarshalJSON decodes a sweep as encoding/json does, but its script in
// one copy (scriptText): a string with escapes is first unquoted into a
// byte slice and then copied into a string, two copies of what may be
// most of a 256 MiB shard file.
func (sw *Sweep) UnmarshalJSON(data []byte) error {
	type plain Sweep
	var aux struct {
		*plain
		Prefix scriptText `json:"prefix"`
	}
	aux.plain = (*plain)(sw)
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	sw.Prefix = string(aux.Prefix)
	return nil
}

// scriptText is a JSON string decoded into one new string.
type scriptText string

// UnmarshalJSON unquotes a JSON string literal as encoding/json does
// (\uXXXX with surrogate pairs, invalid UTF-8 and lone surrogates as
// U+FFFD) into a strings.Builder of the literal's size: one allocation.
// json.Unmarshal has checked the literal is valid JSON before it calls
// this.
func (st *scriptText) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return fmt.Errorf("the sweep's prefix is not a string")
	}
	data = data[1 : len(data)-1]
	var b strings.Builder
	b.Grow(len(data))
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\\' && i+1 < len(data):
			switch e := data[i+1]; e {
			case '"', '\\', '/', '\'':
				b.WriteByte(e)
				i += 2
			case 'b':
				b.WriteByte('\b')
				i += 2
			case 'f':
				b.WriteByte('\f')
				i += 2
			case 'n':
				b.WriteByte('\n')
				i += 2
			case 'r':
				b.WriteByte('\r')
				i += 2
			case 't':
				b.WriteByte('\t')
				i += 2
			case 'u':
				r, ok := hex4(data[i+2:])
				if !ok {
					return fmt.Errorf("the sweep's prefix: a bad \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
						r2, ok2 = hex4(data[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						b.WriteRune(dec)
						i += 6
						break
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default:
				return fmt.Errorf("the sweep's prefix: a bad escape \\%c", e)
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(data[i : i+size])
			}
			i += size
		}
	}
	*st = scriptText(b.String())
	return nil
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// skipJSON takes any JSON value and keeps nothing of it.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// unknownKey is a key of m that no field of t names, in sorted order; ""
// when there is none.
func unknownKey(m map[string]skipJSON, t reflect.Type) string {
	var bad []string
	for k := range m {
		found := false
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == k {
				found = true
			}
		}
		if !found {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	if len(bad) == 0 {
		return ""
	}
	return bad[0]
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

// maxPartitions bounds the partitions of a world a header may name: the
// engine's bound on a partition's number is 2^31-1 (Kafka's int32), and a
// world's memory estimate stops far below 2^31 partitions in all.
const maxPartitions = math.MaxInt32

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
	// In one pass, marking each client id's number: checking each member
	// against those before it took 3.4 s for 60,000 members, and a header
	// may list 999,999.
	seen := make([]uint64, 1_000_000/64)
	for _, m := range sw.Members {
		bad := !sim.IsClientID(m)
		if !bad {
			id, _ := strconv.Atoi(m[1:])
			bad = seen[id/64]&(1<<(id%64)) != 0
			seen[id/64] |= 1 << (id % 64)
		}
		if bad {
			return fmt.Errorf("the sweep's members %s: each a client id (C1 to C999999), once", shortList(sw.Members))
		}
	}
	if sw.Members != nil {
		// Products checked for overflow: the window comes from the file.
		made, ok := mulChecked(sw.To-sw.From+1, len(sw.Members), len(sw.Faults))
		if !ok || sw.To-sw.From+1 < 1 {
			return fmt.Errorf("the sweep counts %d branches; its window %d..%d, %d members and %d fault kinds make more than any sweep", sw.Branches, sw.From, sw.To, len(sw.Members), len(sw.Faults))
		}
		if sw.Branches != made {
			return fmt.Errorf("the sweep counts %d branches; its window, members and fault kinds make %d", sw.Branches, made)
		}
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
	if sw.Partitions < 2 || sw.Partitions > maxPartitions {
		return fmt.Errorf("the sweep's world has %d partitions: a world has at least 2 (an input and the output) and at most %d", sw.Partitions, maxPartitions)
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
		if len(names)/64 > sw.Bound { // a division: Bound*64 may overflow
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
			// Checked: steps that add up to the row's ticks only by
			// overflowing were merged, and --save wrote a step kgrepl refuses.
			if v > row.Ran-steps {
				return fmt.Errorf("branch %d: its logged steps add up to more than the %d ticks its row says it ran", i, row.Ran)
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
		// A fault's branch counts partitions of its world for at most
		// its ticks (and the tick the fault landed in).
		if most, ok := mulChecked(row.Ran+1, sw.Partitions); n < 0 || ok && n > most {
			return fmt.Errorf("branch %d: unavailability %d: not a count of partition x ticks of a branch of %d ticks in a world of %d partitions", i, n, row.Ran, sw.Partitions)
		}
	}
	if !healthRe.MatchString(row.Health) {
		return fmt.Errorf("branch %d: health %.40q is not what a branch ends with (ok, or a line of words)", i, row.Health)
	}
	return nil
}

// mulChecked multiplies whole numbers, reporting false for a negative
// factor or a product past the largest int.
func mulChecked(xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		if x != 0 && p > math.MaxInt/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// shortList is a list of names for an error: the first few, and how many.
func shortList(xs []string) string {
	if len(xs) <= 8 {
		return fmt.Sprintf("%q", xs)
	}
	return fmt.Sprintf("%q... (%d in all)", xs[:8], len(xs))
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
