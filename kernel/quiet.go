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
