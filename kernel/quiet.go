package kernel

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

// The quiet output level. Demos print it by default, and `run`/`step` do
// with --quiet: narration, protocol events, errors and the views the script
// asks for stay as they are, while the routine per-record lines (poll()
// returned, processed, a successful commit, a committed transaction's state
// changes and COMMIT markers) are summarised, one line per member:
//
//	t=12..20 C1 processed o0.3..o0.5, p0.3..p0.5; last commit o0@6 p0@6
//
// A summary is closed by a line that changes what happens to its member's
// records (a revocation, a crash, a removal, a zombie, a refused commit,
// the external sink called again, a stop event) and at the end of the
// command, but it is printed where its first event was: every line's first
// tick is at or after the one above it, so the output reads in tick order
// ("C1 processed o2.3..o2.5" still comes before "C1 revokes {o2}"). The
// members' assignments of one tick (C1 gen 2: {...}, C2 gen 2: {...}) are
// one line.

// quietFlushes names the summaries a shown event prints first: none for
// the protocol's lines, its member's (and that member's transactional
// id's) for a line about a member, all of them for a stop event or a line
// about no member in particular.
func quietFlushes(e sim.Event) []string {
	switch {
	case e.Stop:
		return nil
	case e.Kind == sim.EvGroupState || e.Kind == sim.EvGeneration || e.Kind == sim.EvAssigned ||
		e.Kind == sim.EvStarted || e.Kind == sim.EvInput:
		return []string{""} // no summary has the key ""
	case e.Member != "":
		return []string{e.Member, "tx-" + e.Member}
	}
	if id, _, ok := strings.Cut(e.Text, ":"); ok && !strings.Contains(id, " ") {
		return []string{id} // a transactional id's line: tx-C2: ...
	}
	return nil
}

// quietSummary gathers one member's (or one transactional id's) routine lines.
type quietSummary struct {
	key      string
	slot     int // where in the output its line goes (-1: nowhere, past the narration's bound)
	from, to int
	label    string       // how the member is named in its lines: C2, or C2 (process 1) for an old instance
	records  quietRecords // records polled, processed, in hand
	commits  int
	commit   string  // the last successful commit: "o0@6 p0@6"
	txnDone  int     // transactions that reached CompleteCommit
	txnState string  // the state the last transition reached
	markers  string  // the offsets of the last COMMIT marker
	again    runList // records the external sink was called for again
}

type quietLog struct {
	order []string
	sums  map[string]*quietSummary
	// names is how the summaries spell a partition in a run of records
	// (partNames): its records' names less ".offset", kept per partition
	// for the layout they were read in.
	names partNames
	taker *runTaker // takeRuns's, made at its first use
	// lastSum is the summary quietAdd took the last event into (nil when
	// flushed since), looked at before sums.
	lastSum *quietSummary
}

// partNames spells a partition as its records' names do, less ".offset"
// (o2, orders-2): what runOfName reads back from a record's name, kept
// per partition by its input number (sim.RecordRun.Part, which every run
// of input records carries), so that a summary of a busy tick's records
// does not spell a name for each run and read it back.
type partNames struct {
	layout recordNamer
	byPart []string // "" not spelled yet
}

// recordNamer spells record off of tp (the world's layout).
type recordNamer interface {
	Name(sim.TopicPartition, int) string
}

// of is how tp, the input partition numbered part, is spelled.
func (n *partNames) of(layout recordNamer, tp sim.TopicPartition, part int) string {
	if n.layout != layout {
		*n = partNames{layout: layout}
	}
	if part < 0 { // not an input partition's run: spelled, not kept
		return strings.TrimSuffix(layout.Name(tp, 0), ".0")
	}
	if part >= len(n.byPart) {
		n.byPart = append(n.byPart, make([]string, part+1-len(n.byPart))...)
	}
	if n.byPart[part] == "" {
		n.byPart[part] = strings.TrimSuffix(layout.Name(tp, 0), ".0")
	}
	return n.byPart[part]
}

var (
	txnTransition = regexp.MustCompile(`^(\S+): (\w+) -> (\w+) \(pid (\d+) epoch \d+\)$`)
	sinkAgain     = regexp.MustCompile(`^external sink called again for (\S+) `)
	commitMarker  = regexp.MustCompile(`^COMMIT marker: offsets (.*) of pid (\d+) committed$`)
)

// quietKey reports whether e is a routine line, and which summary it goes to.
func (s *Session) quietKey(e sim.Event) (key string, ok bool) {
	switch e.Kind {
	case sim.EvPolled, sim.EvProcessed, sim.EvSideEffect:
		return e.Member, e.Member != ""
	case sim.EvCommitted:
		if e.Member != "" {
			return e.Member, true
		}
		if m := commitMarker.FindStringSubmatch(e.Text); m != nil {
			pid, _ := strconv.ParseInt(m[2], 10, 64)
			for _, t := range s.World().Txn.Entries() {
				if t.PID == pid {
					return t.TransactionalID, true
				}
			}
		}
	case sim.EvTxnState:
		// Only the happy path is routine; aborts, fencing and timeouts are shown.
		if m := txnTransition.FindStringSubmatch(e.Text); m != nil {
			switch sim.TxnState(m[3]) {
			case sim.TxnOngoing, sim.TxnPrepareCommit, sim.TxnCompleteCommit:
				return m[1], true
			}
		}
	}
	return "", false
}

// routineLabel is how a routine event's text names its member: the text
// before " poll() returned" or " processed" (C2, or C2 (process 1) for an
// old instance) for a poll or a processing, "" for any other event.
func routineLabel(e sim.Event) string {
	if e.Kind != sim.EvPolled && e.Kind != sim.EvProcessed {
		return ""
	}
	label, _, _ := strings.Cut(e.Text, " poll() returned")
	label, _, _ = strings.Cut(label, " processed")
	return label
}

// quietAdd takes a routine event into its summary; label is how its
// text names its member (routineLabel).
func (s *Session) quietAdd(key, label string, e *sim.Event) {
	q := &s.quiet
	if q.sums == nil {
		q.sums = map[string]*quietSummary{}
	}
	// A member's poll and processing of a tick follow each other: the
	// summary of the last event is looked up first.
	sum := q.lastSum
	if sum == nil || sum.key != key {
		sum = q.sums[key]
	}
	// An old instance (a zombie) and the new one get separate lines.
	if label != "" && sum != nil && sum.label != "" && sum.label != label {
		s.quietFlush(key)
		sum = nil
	}
	if sum == nil {
		// Its line counts against the narration's bound (Session.sayLine);
		// past it the summary has no place (-1) and is not written.
		slot := -1
		if s.sayLine() {
			slot = s.out.reserve()
		}
		sum = &quietSummary{key: key, from: e.Tick, slot: slot}
		q.sums[key] = sum
		q.order = append(q.order, key)
	}
	q.lastSum = sum
	sum.to = e.Tick
	if label != "" {
		sum.label = label
	}
	switch e.Kind {
	case sim.EvPolled, sim.EvProcessed:
		q.takeRuns(e.Records, &sum.records, e.Kind == sim.EvProcessed, s.World().Layout())
	case sim.EvSideEffect:
		if m := sinkAgain.FindStringSubmatch(e.Text); m != nil {
			// o2.3, or a run of them: o2.3..o2.9
			first, last, isRange := strings.Cut(m[1], "..")
			r, ok := runOfName(first)
			if l, ok2 := runOfName(last); isRange && ok && ok2 && l.p == r.p && l.first >= r.first {
				r.n = l.first - r.first + 1
			} else if isRange {
				r = quietRun{p: m[1]}
			}
			sum.again.add(r)
		}
	case sim.EvCommitted:
		if m := commitMarker.FindStringSubmatch(e.Text); m != nil && e.Member == "" {
			sum.markers = m[1]
		} else {
			sum.commits++
			_, sum.commit, _ = strings.Cut(e.Text, " committed ")
		}
	case sim.EvTxnState:
		m := txnTransition.FindStringSubmatch(e.Text)
		sum.txnState = m[3]
		if sim.TxnState(m[3]) == sim.TxnCompleteCommit {
			sum.txnDone++
		}
	}
}

// quietFlush writes and forgets the summaries of the given keys (all of
// them when none is given), each in the place its first event holds.
func (s *Session) quietFlush(keys ...string) {
	q := &s.quiet
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var keep []string
	for _, k := range q.order {
		if len(keys) > 0 && !want[k] {
			keep = append(keep, k)
			continue
		}
		sum := q.sums[k]
		delete(q.sums, k)
		if q.lastSum == sum {
			q.lastSum = nil
		}
		ticks := strconv.Itoa(sum.from)
		if sum.to != sum.from {
			ticks += ".." + strconv.Itoa(sum.to)
		}
		if c := clockOf(s.World()); c.real {
			// t=TIME..TIME (A..B): a real-time summary's span.
			at := c.at(sum.from)
			if sum.to != sum.from {
				at += ".." + c.at(sum.to)
			}
			ticks = at + " (" + ticks + ")"
		}
		t := plain
		if len(sum.again.runs) > 0 {
			t = duplicate
		}
		s.out.fill(sum.slot, s.paint(t, fmt.Sprintf("t=%-4s %s", ticks, sum.text()))+"\n")
	}
	q.order = keep
}

func (sum *quietSummary) text() string {
	var parts []string
	if sum.txnState != "" || sum.markers != "" {
		// A transactional id: tx-C1.
		var p string
		switch sum.txnDone {
		case 0:
			p = sum.key + ":"
		case 1:
			p = sum.key + ": 1 transaction committed,"
		default:
			p = fmt.Sprintf("%s: %d transactions committed,", sum.key, sum.txnDone)
		}
		if sum.txnState != "" {
			p += " now " + sum.txnState
		}
		if sum.markers != "" {
			if !strings.HasSuffix(p, ":") {
				p += ";"
			}
			p += " COMMIT marker offsets " + sum.markers
		}
		return strings.TrimSuffix(p, ",")
	}
	name := sum.label
	if name == "" {
		name = sum.key
	}
	if len(sum.records.done.runs) > 0 {
		parts = append(parts, "processed "+recordRanges(sum.records.done.runs))
	}
	// Records polled and not yet processed are the batch in hand.
	inHand := sum.records.inHand
	if len(inHand) > 0 {
		parts = append(parts, "polled "+recordRanges(inHand))
	}
	line := name + " " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		line = name
	}
	if len(sum.again.runs) > 0 {
		line += "; the external sink called again for " + recordRanges(sum.again.runs) + " (a duplicate side effect)"
	}
	switch {
	case sum.commits == 1 && len(parts) == 0:
		line += " committed " + sum.commit
	case sum.commits == 1:
		line += "; committed " + sum.commit
	case sum.commits > 1 && len(parts) == 0:
		line += fmt.Sprintf(" made %d commits, the last %s", sum.commits, sum.commit)
	case sum.commits > 1:
		line += fmt.Sprintf("; %d commits, the last %s", sum.commits, sum.commit)
	}
	return line
}

// quietRun is a run of records a summary gathers: n records of partition
// p (the name's part before its last dot: o2) from offset first, or, with
// n 0, a name that is not a record's, p, kept as it is. A run, not a name
// per record, so that a summary over hours of steady traffic holds a run
// per poll and per tick's processing, not a string per record.
type quietRun struct {
	p        string
	first, n int
	// in is the input partition's number plus one (sim.RecordRun.Part+1)
	// for a run read from an event's records, 0 for one read from a name:
	// what runList.add looks a partition's last run up by, where a map by
	// p cost a string's hash for each of the hundreds of runs of a busy
	// tick.
	in int
}

// runOfName is the record name's run of one; false (a name kept as it is)
// for a name that is not spelled partition.offset.
func runOfName(name string) (quietRun, bool) {
	i := strings.LastIndexByte(name, '.')
	off, err := strconv.Atoi(name[i+1:])
	if i <= 0 || err != nil {
		return quietRun{p: name}, false
	}
	return quietRun{p: name[:i], first: off, n: 1}, true
}

// quietRunOf is a run of an event's records as a summary keeps it. A run
// of a partition's records, spelled partition.offset, is that partition's
// name and the offset (runOfName of the name, without spelling it:
// names); a record named otherwise is a run of its own name.
func quietRunOf(r sim.RecordRun, layout recordNamer, names *partNames) quietRun {
	q := quietRun{p: r.Name}
	if r.Name == "" {
		q = quietRun{p: names.of(layout, r.TP, r.Part), first: r.First, n: max(r.Count, 1), in: max(r.Part+1, 0)}
	} else if q2, ok := runOfName(r.Name); ok {
		q, q.n = q2, max(r.Count, 1)
	}
	return q
}

// runTaker takes an event's runs of records into a summary's records
// (quietRecords.polled or processed). Its yield is made once a command
// and handed to Records.EachRun as it is: a range over Records.Runs in
// quietAdd made the iterator and its loop body closures, on the heap, for
// each of the hundreds of polls and processings a busy tick has (a tenth
// of the CPU of T1's quiet run in the REPL, allocating).
type runTaker struct {
	into      *quietRecords
	processed bool
	layout    recordNamer
	names     *partNames
	yield     func(sim.RecordRun) bool
}

func (t *runTaker) take(r sim.RecordRun) bool {
	var q quietRun
	if k := r.Part; r.Name == "" && k >= 0 && k < len(t.names.byPart) && t.names.byPart[k] != "" {
		// quietRunOf's run of a partition spelled already (of this
		// layout: takeRuns), read here: a call, and a look at the layout,
		// a run cost a sixth of the narration.
		q = quietRun{p: t.names.byPart[k], first: r.First, n: max(r.Count, 1), in: k + 1}
	} else {
		q = quietRunOf(r, t.layout, t.names)
	}
	if t.processed {
		t.into.processed(q)
	} else {
		t.into.polled(q)
	}
	return true
}

// takeRuns takes recs into the records into, as polled or as processed.
func (q *quietLog) takeRuns(recs sim.Records, into *quietRecords, processed bool, layout recordNamer) {
	t := q.taker
	if t == nil {
		t = &runTaker{}
		t.yield = t.take
		q.taker = t
	}
	if q.names.layout != layout {
		q.names = partNames{layout: layout} // as partNames.of would, before take reads its spellings
	}
	t.into, t.processed, t.layout, t.names = into, processed, layout, &q.names
	recs.EachRun(t.yield)
	t.into, t.layout, t.names = nil, nil, nil // holds no summary past the event
}

// runList is runs recordRanges writes: each run that continues the last
// one of its partition is added to it (recordRanges would join them), so
// that hours of steady traffic are a run a partition, not one a tick.
type runList struct {
	runs []quietRun
	// Each partition's last run, by index. While every run of records came
	// with its input number (quietRun.in) and they are of at most
	// numberedRuns partitions, by number: the partition in[k]'s last run is
	// at[k], looked for from the one after the last found (a member's
	// processing takes its partitions in turn). Past either, by partition
	// name in last, for good: a name read from a record's text may spell an
	// input partition without its number. An input partition's name and
	// number go together (a layout spells each partition its own way), so
	// both find the same runs.
	in, at []int32
	next   int
	last   map[string]int
}

// numberedRuns is the most partitions a runList finds by number (a var for
// tests): a member of 100,000 partitions' world holds a hundred or so.
var numberedRuns = 64

func (l *runList) add(r quietRun) {
	if r.n <= 0 {
		l.runs = append(l.runs, r)
		return
	}
	if r.in > 0 && l.last == nil {
		if k := l.numbered(int32(r.in)); k >= 0 {
			if j := l.at[k]; l.runs[j].first+l.runs[j].n == r.first {
				l.runs[j].n += r.n
				return
			}
			l.at[k] = int32(len(l.runs))
			l.runs = append(l.runs, r)
			return
		}
		if len(l.in) < numberedRuns {
			l.in, l.at = append(l.in, int32(r.in)), append(l.at, int32(len(l.runs)))
			l.runs = append(l.runs, r)
			return
		}
	}
	if l.last == nil {
		l.last = map[string]int{}
		for _, j := range l.at {
			l.last[l.runs[j].p] = int(j)
		}
		l.in, l.at = nil, nil
	}
	if k, ok := l.last[r.p]; ok && l.runs[k].first+l.runs[k].n == r.first {
		l.runs[k].n += r.n
		return
	}
	l.last[r.p] = len(l.runs)
	l.runs = append(l.runs, r)
}

// numbered is where in l.in the input number in is, -1 if nowhere.
func (l *runList) numbered(in int32) int {
	for k := l.next; k < len(l.in); k++ {
		if l.in[k] == in {
			l.next = k + 1
			return k
		}
	}
	for k := 0; k < min(l.next, len(l.in)); k++ {
		if l.in[k] == in {
			l.next = k + 1
			return k
		}
	}
	return -1
}

// quietRecords are a summary's records: those processed, and those polled
// and not processed yet (the batch in hand), polled minus processed, each
// processed record cancelling the earliest poll of it, as one name per
// record counted them. It is kept as the events come: a record processed
// cancels the earliest poll of it in hand, or, polled before the summary
// began, waits in early for a poll of it to cancel (every cancel takes
// the earliest poll there is, so the polls cancelled are the first ones,
// whatever the order).
type quietRecords struct {
	done   runList
	inHand []quietRun // in poll order
	early  []quietRun // processed, no poll of it seen yet
}

func (q *quietRecords) polled(r quietRun) {
	if !sharesRecords(q.early, r) {
		q.inHand = addRun(q.inHand, r) // cancelRuns would find none of r's records
		return
	}
	var left []quietRun
	q.early, left = cancelRuns(q.early, r)
	for _, l := range left {
		q.inHand = addRun(q.inHand, l)
	}
}

func (q *quietRecords) processed(r quietRun) {
	q.done.add(r)
	if q.cancelAtAnEnd(r) {
		return
	}
	var left []quietRun
	q.inHand, left = cancelRuns(q.inHand, r)
	q.early = append(q.early, left...)
}

// cancelAtAnEnd cancels r's records in hand, in place, as cancelRuns
// would, where the first run in hand that shares a record with r holds
// every one of r's at its start or at its end: steady processing takes
// the records in hand in the order they were polled. It reports false,
// and changes nothing, otherwise.
func (q *quietRecords) cancelAtAnEnd(r quietRun) bool {
	if r.n <= 0 {
		return false
	}
	for k := range q.inHand {
		s := &q.inHand[k]
		if s.n <= 0 || s.p != r.p || s.first+s.n <= r.first || r.first+r.n <= s.first {
			continue // cancelRuns keeps it as it is
		}
		switch {
		case s.first == r.first && r.n <= s.n:
			s.first, s.n = s.first+r.n, s.n-r.n
		case s.first < r.first && s.first+s.n == r.first+r.n:
			s.n -= r.n
		default:
			return false
		}
		if s.n == 0 {
			q.inHand = append(q.inHand[:k], q.inHand[k+1:]...)
		}
		return true
	}
	return false
}

// cancelRuns cancels r's records once each in list (runs in order, the
// earliest first): it returns what is left of list, in order, and the
// records of r it found nowhere.
func cancelRuns(list []quietRun, r quietRun) (kept, notFound []quietRun) {
	need := []quietRun{r}
	for _, s := range list {
		switch {
		case len(need) == 0 || s.p != r.p || (s.n == 0) != (r.n == 0):
			kept = append(kept, s)
		case s.n == 0: // a name kept as it is: cancelled by the same name
			need = nil
		default:
			// What need covers of s is cancelled, and needed no more;
			// the rest of s stays, in order.
			kept = append(kept, runsMinus([]quietRun{s}, need)...)
			need = runsMinus(need, []quietRun{s})
		}
	}
	return kept, need
}

// sharesRecords reports whether cancelRuns(list, r) would cancel any of
// r's records: where it would not, it returns list as it is and r not
// found, which need not be made. The runs a summary holds as processed
// before their poll (quietRecords.early) are those in hand when it began,
// and each of the polls that follow, of later records, would copy them.
func sharesRecords(list []quietRun, r quietRun) bool {
	for _, s := range list {
		if s.p != r.p || (s.n == 0) != (r.n == 0) {
			continue
		}
		if s.n == 0 || s.first < r.first+r.n && r.first < s.first+s.n {
			return true
		}
	}
	return false
}

// addRun appends r to runs, as a longer last run when it continues it.
func addRun(runs []quietRun, r quietRun) []quietRun {
	if k := len(runs) - 1; k >= 0 && r.n > 0 && runs[k].n > 0 && runs[k].p == r.p && runs[k].first+runs[k].n == r.first {
		runs[k].n += r.n
		return runs
	}
	return append(runs, r)
}

// runsMinus is the records of a (runs of one partition, in order) that
// none of b's runs covers, in a's order.
func runsMinus(a, b []quietRun) []quietRun {
	for _, cut := range b {
		var kept []quietRun
		for _, r := range a {
			lo, hi := max(r.first, cut.first), min(r.first+r.n, cut.first+cut.n)
			if lo >= hi {
				kept = append(kept, r)
				continue
			}
			if r.first < lo {
				kept = append(kept, quietRun{p: r.p, first: r.first, n: lo - r.first, in: r.in})
			}
			if hi < r.first+r.n {
				kept = append(kept, quietRun{p: r.p, first: hi, n: r.first + r.n - hi, in: r.in})
			}
		}
		a = kept
	}
	return a
}

// recordRanges writes records as runs per partition, partitions in the
// order they first appear: o0.3 o0.4 o0.5 p0.3 → "o0.3..o0.5, p0.3". A
// record done again starts a new run (o2.3..o2.5 o2.3..o2.5).
func recordRanges(in []quietRun) string {
	type run struct{ first, last int }
	var parts []string
	runs := map[string][]run{}
	for _, q := range in {
		if q.n == 0 {
			parts = append(parts, q.p) // not a record name: kept as it is
			runs[q.p] = nil
			continue
		}
		p, off := q.p, q.first
		rs, seen := runs[p]
		if !seen {
			parts = append(parts, p)
		}
		if k := len(rs); k > 0 && rs[k-1].last+1 == off {
			rs[k-1].last = off + q.n - 1
		} else {
			rs = append(rs, run{off, off + q.n - 1})
		}
		runs[p] = rs
	}
	var out []string
	for _, p := range parts {
		rs := runs[p]
		if rs == nil {
			out = append(out, p)
			continue
		}
		var words []string
		for _, r := range rs {
			w := p + "." + strconv.Itoa(r.first)
			if r.last != r.first {
				w += ".." + p + "." + strconv.Itoa(r.last)
			}
			words = append(words, w)
		}
		out = append(out, strings.Join(words, " "))
	}
	return strings.Join(out, ", ")
}

// output collects what the command running now prints. A quiet summary
// holds its place from its first event on (reserve) and is written in
// when it closes (fill), so the lines stay in tick order.
type output struct {
	parts []string
	n     int // bytes in parts
}

func (o *output) Reset()   { o.parts, o.n = o.parts[:0], 0 }
func (o *output) Len() int { return o.n }

func (o *output) add(text string) {
	o.parts = append(o.parts, text)
	o.n += len(text)
}

// reserve keeps an empty place for a line written later with fill.
func (o *output) reserve() int {
	o.parts = append(o.parts, "")
	return len(o.parts) - 1
}

func (o *output) fill(i int, text string) {
	if i < 0 {
		return // a line past the narration's bound (Session.sayLine)
	}
	o.parts[i] = text
	o.n += len(text)
}

func (o *output) String() string { return strings.Join(o.parts, "") }

// assignedLine matches a member's assignment event: C1 gen 2: {o0 p0}, or
// under the consumer protocol C2 epoch 2: {o0 o1 o2}.
var assignedLine = regexp.MustCompile(`^C\d+ (gen|epoch) \d+: \{[^}]*\}$`)

// mergeAssigned joins the members' assignment lines of one tick that
// follow each other (the events from index i on, starting with one) into one line, members in
// natural order (C2 before C10); it returns the line and how many events
// it took.
func mergeAssigned(evs *sim.EventLog, i int) (string, int) {
	var texts []string
	tick := evs.At(i).Tick
	j := i
	for ; j < evs.Len() && evs.KindAt(j) == sim.EvAssigned; j++ {
		e := evs.At(j)
		if e.Tick != tick || !assignedLine.MatchString(e.Text) {
			break
		}
		texts = append(texts, e.Text)
	}
	sort.SliceStable(texts, func(a, b int) bool {
		return natural.Less(strings.Fields(texts[a])[0], strings.Fields(texts[b])[0])
	})
	return strings.Join(texts, " · "), j - i
}
