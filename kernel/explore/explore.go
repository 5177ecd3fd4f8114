// Package explore answers "where, in this setup, can a failure cost me a
// duplicate or a lost record?": it branches a world at every tick of a
// window, for every member and every fault kind, runs each branch until the
// group is stable and has caught up, and classifies what happened against
// the configured delivery guarantee. Branches start from copies of one
// prefix (sim.World.Clone), not replays from tick 0, and run in parallel
// with results identical to a sequential run.
package explore

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kgrepl/kgrepl/kernel/health"
	"github.com/kgrepl/kgrepl/sim"
)

// Fault kinds, by the names `explore --faults` takes.
var FaultKinds = []string{"crash-now", "crash-after", "restart", "slow", "drop-produce", "drop-commit", "close", "close-now"}

// Fault is one injected failure.
type Fault struct {
	Kind   string
	Member string
}

// Command is the kgrepl command that injects the fault.
func (f Fault) Command() string {
	switch f.Kind {
	case "crash-now":
		return "crash " + f.Member + " now"
	case "crash-after":
		return "crash " + f.Member + " after 1"
	case "restart":
		return "restart " + f.Member
	case "slow":
		return "slow " + f.Member
	case "drop-produce":
		return "drop Produce response " + f.Member
	case "drop-commit":
		return "drop OffsetCommit response " + f.Member
	case "close":
		return "close " + f.Member
	case "close-now":
		return "close " + f.Member + " --now"
	}
	return ""
}

func (f Fault) apply(w *sim.World) error {
	switch f.Kind {
	case "crash-now":
		return w.CrashNow(f.Member)
	case "crash-after":
		return w.CrashAfter(f.Member, 1)
	case "restart":
		return w.Restart(f.Member)
	case "slow":
		return w.Slow(f.Member)
	case "drop-produce":
		w.Drop(sim.DropRule{Type: sim.Produce, Response: true, To: f.Member, Count: 1})
		return nil
	case "drop-commit":
		w.Drop(sim.DropRule{Type: sim.OffsetCommit, Response: true, To: f.Member, Count: 1})
		return nil
	case "close":
		return w.Close(f.Member)
	case "close-now":
		return w.CloseNow(f.Member)
	}
	return fmt.Errorf("no fault kind %q (kinds: %s)", f.Kind, strings.Join(FaultKinds, " "))
}

// Classes, in Jepsen's vocabulary where it applies, then Kafka's side.
const (
	LostWrite        = "lost-write"        // an input record committed past, with no visible output
	Duplicate        = "duplicate"         // one input record, several visible outputs
	AbortedRead      = "aborted-read"      // a read_committed reader returned an aborted or open record
	NonMonotonicRead = "nonmonotonic-read" // the audit reader lost a record it had already returned
	CommitRefused    = "commit-refused"    // an OffsetCommit or TxnOffsetCommit was refused (class:ERROR)
	FencedProducer   = "fenced-producer"   // a producer was fenced by a newer epoch
	ZombieWrite      = "zombie-write"      // a record written by a process that had lost its place
	Stalled          = "stalled"           // not stable and caught up within the bound
)

// Options say which branches to run.
type Options struct {
	From, To  int      // ticks (absolute), inclusive; To >= From >= the base tick
	Faults    []string // kinds; nil = all
	Members   []string // nil = every member live at the branch tick
	Bound     int      // ticks a branch may run before it counts as stalled
	Parallel  int      // workers; <= 1 runs sequentially
	Isolation string   // the audit reader's isolation level
	// Stop, when set, is polled before every tick any branch or the base
	// runs; once it reports true, Run returns ErrStopped.
	Stop func() bool
}

// ErrStopped is Run's error when Options.Stop asked it to stop.
var ErrStopped = errors.New("stopped")

// Outcome is what one branch did.
type Outcome struct {
	Tick       int
	Fault      Fault
	Classes    map[string]int // class -> count
	Duplicates []string
	Lost       []string
	Ran        int      // ticks the branch ran after the fault
	Log        []string // the commands after the fault, for the script
	// Unavailable counts the partition-ticks nobody could consume from the
	// fault on, by cause (sim.Unavailability, as metrics shows it).
	Unavailable sim.CauseCounts
	// Health is the group at the branch's end in words ("ok", or
	// "C2 stopped: UNRELEASED_INSTANCE_ID"; kernel/health).
	Health string
}

// UnavailableTotal is the branch's unavailability, every cause added up.
func (o *Outcome) UnavailableTotal() int {
	n := 0
	for _, c := range sim.Causes {
		n += o.Unavailable[c]
	}
	return n
}

// Healthy reports whether the branch's group ended healthy.
func (o *Outcome) Healthy() bool { return o.Health == "" || o.Health == "ok" }

// Violates reports whether the outcome breaks the guarantee.
func (o *Outcome) Violates(g Guarantee) bool {
	switch g {
	case AtLeastOnce:
		return o.Classes[LostWrite] > 0
	case AtMostOnce:
		return o.Classes[Duplicate] > 0
	}
	return o.Classes[LostWrite] > 0 || o.Classes[Duplicate] > 0 || o.Classes[AbortedRead] > 0 || o.Classes[NonMonotonicRead] > 0
}

// Guarantee is what the configuration promises.
type Guarantee string

const (
	AtLeastOnce Guarantee = "at-least-once"
	AtMostOnce  Guarantee = "at-most-once"
	ExactlyOnce Guarantee = "exactly-once"
)

// GuaranteeOf reads the guarantee off a world's configuration.
func GuaranteeOf(w *sim.World, isolation string) Guarantee {
	c := w.Cfg.Client
	switch {
	case c.Producer() == sim.ProducerTransactional && isolation == "read_committed":
		return ExactlyOnce
	case c.Producer() != sim.ProducerTransactional && c.Commit == sim.CommitBefore:
		return AtMostOnce
	}
	return AtLeastOnce
}

// Report is the whole exploration.
type Report struct {
	Base      int
	From, To  int // the window
	Guarantee Guarantee
	Isolation string
	Outcomes  []Outcome      // in (tick, member, fault) order
	Counts    map[string]int // class -> branches that show it
	// Shortest holds, per class, the index in Outcomes of the shortest
	// branch that shows it (the first in Outcomes' order among equals).
	Shortest   map[string]int
	Violations int
	// Unhealthy counts the branches whose group ended unhealthy; Sickest
	// is the index of the shortest of them (the first among equals), -1
	// when none did.
	Unhealthy int
	Sickest   int
	stops     []int // ticks between Base and To where a stop event happened
	output    string
}

type job struct {
	tick  int
	fault Fault
}

// plan is a sweep before it runs: its branches in order and, for each tick
// of the window, a copy of the base world at that tick to branch from. The
// copies are made by stepping one world through the window, so the prefix
// 0..t is simulated once for every branch at t (and once for all ticks).
//
// The branch list is made first, by stepping a world through the window
// (which members are live at each tick, where the stops are); the copies
// are made when a branch first needs one (cursor), by stepping a second
// world through the window again. Workers make them between branches, so
// a sweep runs on every core from its start: making them all first was
// about 1.5% of a sequential sweep spent on one core, while the others
// waited. A shard makes only the copies its branches need.
type plan struct {
	opts  Options
	kinds []string
	jobs  []job
	stops []int
	base  *sim.World
	// cursors[t-From] is the world at tick t once made (nil before); maker,
	// the world at the next tick to make, and the making are under mu.
	cursors []atomic.Pointer[sim.World]
	mu      sync.Mutex
	maker   *sim.World
	made    int // cursors made, in order
	// newReader makes a branch's audit reader (a test swaps in one that
	// re-reads the whole topic every tick).
	newReader func(w *sim.World, isolation string) lossReader
}

// lossReader is the audit reader a branch asks after every tick.
type lossReader interface {
	// lostSince reads again and reports whether a record the last read
	// returned is missing now.
	lostSince(w *sim.World) bool
}

func newPlan(base *sim.World, opts Options) (*plan, error) {
	if opts.From < base.Tick || opts.To < opts.From {
		return nil, fmt.Errorf("--ticks %d..%d: the window must start at or after the current tick %d and end after it starts", opts.From, opts.To, base.Tick)
	}
	if opts.To-opts.From > 10_000 {
		return nil, fmt.Errorf("--ticks %d..%d: at most 10000 ticks in one exploration", opts.From, opts.To)
	}
	kinds := opts.Faults
	if len(kinds) == 0 {
		kinds = FaultKinds
	}
	for _, k := range kinds {
		if (Fault{Kind: k}).Command() == "" {
			return nil, fmt.Errorf("--faults: no fault kind %q (kinds: %s)", k, strings.Join(FaultKinds, " "))
		}
	}
	if opts.Bound <= 0 {
		opts.Bound = 3000
	}
	if opts.Isolation == "" {
		opts.Isolation = base.Cfg.Isolation
	}
	p := &plan{opts: opts, kinds: kinds, base: base,
		newReader: func(w *sim.World, iso string) lossReader { return newAuditReader(w, iso) }}
	// The branches, tick by tick. Ticks with a stop event are remembered:
	// a script's step halts there.
	cur := base.Clone()
	advance := func() {
		if cur.Step() {
			p.stops = append(p.stops, cur.Tick)
		}
	}
	for cur.Tick < opts.From {
		if p.stopped() {
			return nil, ErrStopped
		}
		advance()
	}
	for t := opts.From; t <= opts.To; t++ {
		for cur.Tick < t {
			if p.stopped() {
				return nil, ErrStopped
			}
			advance()
		}
		if t == opts.From {
			p.maker = cur.Clone()
		}
		members := opts.Members
		if members == nil {
			members = cur.LiveMembers()
		}
		for _, m := range members {
			for _, k := range kinds {
				p.jobs = append(p.jobs, job{tick: t, fault: Fault{Kind: k, Member: m}})
			}
		}
	}
	p.cursors = make([]atomic.Pointer[sim.World], opts.To-opts.From+1)
	return p, nil
}

// cursor returns the world at tick t of the window (to clone, never to
// step), making it and those before it first if they are not made yet;
// nil once the sweep is stopped.
func (p *plan) cursor(t int) *sim.World {
	i := t - p.opts.From
	if c := p.cursors[i].Load(); c != nil {
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.makeCursors(i)
}

// prefetch makes the world at tick t+1 of the window, if it is in the
// window and not made yet, unless a worker is making one now. A worker
// that starts a branch at tick t calls it: the copies are then made a tick
// ahead, while the other workers still run branches at t, rather than
// when a worker first needs one, which the next worker to reach that
// tick, a branch later, often found still being made, and waited for.
func (p *plan) prefetch(t int) {
	i := t + 1 - p.opts.From
	if i >= len(p.cursors) || p.cursors[i].Load() != nil || !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	p.makeCursors(i)
}

// makeCursors makes the worlds up to index i of the window, under p.mu,
// and returns the one at i; nil once the sweep is stopped.
func (p *plan) makeCursors(i int) *sim.World {
	for ; p.made <= i; p.made++ {
		for p.maker.Tick < p.opts.From+p.made {
			if p.stopped() {
				return nil
			}
			p.maker.Step()
		}
		p.cursors[p.made].Store(p.maker.Clone())
	}
	return p.cursors[i].Load()
}

func (p *plan) stopped() bool { return p.opts.Stop != nil && p.opts.Stop() }

// run runs the branches at the given indexes of p.jobs and returns their
// outcomes in that order. Workers take the next index from a shared
// counter and write only their own slot, so the result is the same as a
// sequential run's.
//
// The caller raises the collector's percentage for the sweep (raiseGC).
func (p *plan) run(idx []int) ([]Outcome, error) {
	outcomes := make([]Outcome, len(idx))
	workers := min(p.opts.Parallel, len(idx))
	// Copies are made a tick ahead (prefetch) when other workers may need
	// them, and only as far as the last branch to run: the copies are made
	// in order, so one for a tick before it is never made in vain.
	parallel := workers > 1
	last := 0
	if len(idx) > 0 {
		last = p.jobs[idx[len(idx)-1]].tick
	}
	// work runs branch j in a copy made by the worker's Reuser: in the
	// storage of the worker's previous branch world, finished (its
	// outcome holds nothing of it), rather than allocated anew.
	work := func(j int, reuse *sim.Reuser) {
		if p.stopped() {
			return
		}
		jb := p.jobs[idx[j]]
		if c := p.cursor(jb.tick); c != nil {
			w := reuse.Clone(c)
			if parallel && jb.tick < last {
				p.prefetch(jb.tick)
			}
			outcomes[j] = p.runBranch(w, jb)
		}
	}
	if !parallel {
		var reuse sim.Reuser
		for j := range idx {
			work(j, &reuse)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var reuse sim.Reuser
				for j := int(next.Add(1)) - 1; j < len(idx); j = int(next.Add(1)) - 1 {
					work(j, &reuse)
				}
			}()
		}
		wg.Wait()
	}
	if p.stopped() {
		return nil, ErrStopped
	}
	return outcomes, nil
}

// Run explores from base, which is not changed.
func Run(base *sim.World, opts Options) (*Report, error) {
	defer raiseGC()()
	p, err := newPlan(base, opts)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(p.jobs))
	for i := range idx {
		idx[i] = i
	}
	outcomes, err := p.run(idx)
	if err != nil {
		return nil, err
	}
	return newReport(p.sweep(), outcomes), nil
}

// newReport tallies the outcomes of a whole sweep, in its order.
func newReport(sw Sweep, outcomes []Outcome) *Report {
	r := &Report{Base: sw.Base, From: sw.From, To: sw.To, Guarantee: sw.Guarantee, Isolation: sw.Isolation,
		Outcomes: outcomes, Counts: map[string]int{}, Shortest: map[string]int{}, Sickest: -1, stops: sw.Stops, output: sw.Output}
	for i := range outcomes {
		o := &outcomes[i]
		if o.Violates(r.Guarantee) {
			r.Violations++
		}
		if !o.Healthy() && o.Classes["fault-refused"] == 0 {
			r.Unhealthy++
			if r.Sickest < 0 || o.Ran < outcomes[r.Sickest].Ran {
				r.Sickest = i
			}
		}
		for c := range o.Classes {
			r.Counts[c]++
			if j, ok := r.Shortest[c]; !ok || o.Ran < outcomes[j].Ran {
				r.Shortest[c] = i
			}
		}
	}
	return r
}

// runBranch injects the fault and runs the branch until the group is
// stable and caught up. When no member is left running, the faulted
// client is restarted, as an orchestrator would.
func (p *plan) runBranch(w *sim.World, j job) Outcome {
	opts := p.opts
	o := Outcome{Tick: j.tick, Fault: j.fault, Classes: map[string]int{}}
	if err := j.fault.apply(w); err != nil {
		o.Classes["fault-refused"]++
		return o
	}
	pkts, zombies, unavail := w.Packets.Len(), w.ZombieWrites(), w.Unavail.ByCause
	reader := p.newReader(w, opts.Isolation)
	steps, restarted := 0, false
	flush := func() {
		if steps > 0 {
			o.Log = append(o.Log, "step "+strconv.Itoa(steps))
			steps = 0
		}
	}
	for o.Ran < opts.Bound {
		if opts.Stop != nil && opts.Stop() {
			return o // Run drops every outcome once stopped
		}
		live := w.HasLiveMember()
		// CaughtUp first: it is false on nearly every tick of a branch (the
		// group is unsettled on about one in six), and GroupSettled, which
		// walks the members, costs twice as much.
		if live && w.CaughtUp() && w.GroupSettled() {
			break
		}
		if !live && !restarted && w.Member(j.fault.Member) != nil && !w.Member(j.fault.Member).Alive {
			flush()
			if err := w.Restart(j.fault.Member); err == nil {
				o.Log = append(o.Log, "restart "+j.fault.Member)
			}
			restarted = true
		}
		stop := w.Step()
		o.Ran++
		steps++
		if stop {
			flush() // a script's step halts here too: the next ticks are a new step
		}
		if reader.lostSince(w) {
			o.Classes[NonMonotonicRead]++
		}
	}
	flush()
	if o.Ran >= opts.Bound {
		o.Classes[Stalled]++
	}
	c := w.Delivery(opts.Isolation)
	if c.Lost > 0 {
		o.Classes[LostWrite] = c.Lost
		o.Lost = c.LostNames
	}
	if c.Duplicates > 0 {
		o.Classes[Duplicate] = c.Duplicates
		o.Duplicates = c.DuplicateNames
	}
	w.Packets.ErrorsFrom(pkts, func(t sim.API, response bool, e sim.ErrorCode) {
		if response && (t == sim.OffsetCommit || t == sim.TxnOffsetCommit) {
			o.Classes[CommitRefused+":"+e.String()]++
		}
		if e == sim.ProducerFenced || e == sim.InvalidProducerEpoch {
			o.Classes[FencedProducer]++
		}
	})
	if n := w.ZombieWrites() - zombies; n > 0 {
		o.Classes[ZombieWrite] = n
	}
	for _, c := range sim.Causes {
		o.Unavailable[c] = w.Unavail.ByCause[c] - unavail[c]
	}
	o.Health = health.HealthOf(w).Words
	return o
}

// auditReader is the audit reader of one branch (`consume OUTPUT`, which
// reads the output topic from offset 0 at every call), asked after every
// tick whether it lost a record it had returned before: a
// nonmonotonic-read. Re-reading the topic each tick costs the whole log;
// this keeps, per output partition, how far the reader got, and looks only
// at what changed. It starts from the world at the fork point, so a branch
// never re-reads the prefix it shares with the others.
//
// What a read returns only grows, except as follows, which is what it
// checks (the engine guarantees the rest: a log is append-only, sim.Seq
// has no way to shorten one, and the only change to an old cell is a
// transaction marker turning its open records committed or aborted):
//   - read_uncommitted returns every data record, so a record is lost only
//     if a log got shorter;
//   - read_committed returns the data records below the LSO that are not
//     aborted (sim.PartitionLog.ReadCommitted). Records below the LSO are
//     never open (the LSO is the first offset of the oldest open
//     transaction, an invariant sim.CheckInvariants checks), and committed
//     or non-transactional records stay so: the reader loses one exactly
//     when the LSO moves back over it.
//
// The same definition means a read_committed read never returns an open
// or aborted record, so aborted-read (kept as a class, for readers that
// would) is never found by this reader. TestReaderMatchesRereads checks
// the reader against reading the whole topic every tick.
type auditReader struct {
	committed bool
	logs      []*sim.PartitionLog // the output partitions' (a world keeps its log objects for life)
	pos       []readPos
}

type readPos struct{ end, lso int }

func newAuditReader(w *sim.World, isolation string) *auditReader {
	out := w.Topo.Output
	a := &auditReader{committed: isolation == "read_committed", logs: make([]*sim.PartitionLog, out.Partitions), pos: make([]readPos, out.Partitions)}
	for p := range a.logs {
		l := w.Log(sim.TopicPartition{Topic: out.Name, Partition: p})
		a.logs[p], a.pos[p] = l, readPos{end: l.HW(), lso: l.LSO()}
	}
	return a
}

func (a *auditReader) lostSince(*sim.World) bool {
	lost := false
	for p, l := range a.logs {
		end := l.HW()
		if end < a.pos[p].end {
			lost = true // a log got shorter: its last records are gone
		}
		if a.committed {
			lso := l.LSO()
			for i := lso; i < min(a.pos[p].lso, end) && !lost; i++ {
				c := l.Cells.At(i)
				lost = c.IsData() && c.Txn != sim.TxnAborted && c.Txn != sim.TxnOpen
			}
			a.pos[p].lso = lso
		}
		a.pos[p].end = end
	}
	return lost
}

// Summary is one line per outcome's classes, e.g. "duplicate 2 (p2.3 p2.4)".
func (o *Outcome) Summary() string {
	if len(o.Classes) == 0 {
		return "ok"
	}
	var parts []string
	for _, c := range sortedKeys(o.Classes) {
		s := c + " " + strconv.Itoa(o.Classes[c])
		switch c {
		case Duplicate:
			s += " (" + strings.Join(o.Duplicates, " ") + ")"
		case LostWrite:
			s += " (" + strings.Join(o.Lost, " ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Code is one letter for the matrix view.
func (o *Outcome) Code() string {
	d, l := o.Classes[Duplicate] > 0, o.Classes[LostWrite] > 0
	switch {
	case o.Classes["fault-refused"] > 0:
		return "-"
	case o.Classes[Stalled] > 0:
		return "S"
	case d && l:
		return "B"
	case l:
		return "L"
	case d:
		return "D"
	case o.Classes[AbortedRead] > 0 || o.Classes[NonMonotonicRead] > 0:
		return "R"
	}
	return "."
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Script is a replayable kgrepl script for outcome i: the prefix that makes
// the base world, the steps to the branch tick, the fault, what the branch
// did after it, and the views that show the outcome.
func (r *Report) Script(prefix string, i int) string {
	o := r.Outcomes[i]
	var b strings.Builder
	b.WriteString(strings.TrimRight(prefix, "\n") + "\n")
	fmt.Fprintf(&b, "# explore: %s at tick %d -> %s\n", o.Fault.Command(), o.Tick, o.Summary())
	at := r.Base
	for _, s := range r.stops {
		if s <= o.Tick && s > at {
			fmt.Fprintf(&b, "step %d\n", s-at)
			at = s
		}
	}
	if n := o.Tick - at; n > 0 {
		fmt.Fprintf(&b, "step %d\n", n)
	}
	b.WriteString(o.Fault.Command() + "\n")
	for _, l := range o.Log {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "consume %s --isolation %s\nmetrics\n", r.output, r.Isolation)
	return b.String()
}
