package kernel

// A quiet summary's records (quiet.go) as runs: a run of records a
// partition, taken from each poll's and processing's event, kept as the
// events come (records processed, records in hand), and written back as
// the ranges a name per record would have made.

import (
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

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
