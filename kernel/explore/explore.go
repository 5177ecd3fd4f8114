// Package explore answers "where, in this setup, can a failure cost me a
// duplicate or a lost record?": it branches a world at every tick of a
// window, for every member and every fault kind, runs each branch until the
// group is stable and has caught up, and classifies what happened against
// the configured delivery guarantee. Branches start from copies of one
// prefix (sim.World.Clone), not replays from tick 0, and run in parallel
// with results identical to a sequential run.
package explore

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

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
}

// Outcome is what one branch did.
type Outcome struct {
	Tick       int
	Fault      Fault
	Classes    map[string]int // class -> count
	Duplicates []string
	Lost       []string
	Ran        int      // ticks the branch ran after the fault
	Log        []string // the commands after the fault, for the script
}

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
	Guarantee Guarantee
	Isolation string
	Outcomes  []Outcome      // in (tick, member, fault) order
	Counts    map[string]int // class -> branches that show it
	// Shortest holds, per class, the index in Outcomes of the shortest
	// branch that shows it.
	Shortest   map[string]int
	Violations int
	stops      []int // ticks between Base and To where a stop event happened
	output     string
}

type job struct {
	tick  int
	fault Fault
}

// Run explores from base, which is not changed.
func Run(base *sim.World, opts Options) (*Report, error) {
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
	// One copy of the world per tick of the window, made in order. Ticks
	// with a stop event are remembered: a script's step halts there.
	cursors := map[int]*sim.World{}
	var stops []int
	cur := base.Clone()
	advance := func() {
		if cur.Step() {
			stops = append(stops, cur.Tick)
		}
	}
	for cur.Tick < opts.From {
		advance()
	}
	var jobs []job
	for t := opts.From; t <= opts.To; t++ {
		for cur.Tick < t {
			advance()
		}
		cursors[t] = cur.Clone()
		members := opts.Members
		if members == nil {
			members = cur.LiveMembers()
		}
		for _, m := range members {
			for _, k := range kinds {
				jobs = append(jobs, job{tick: t, fault: Fault{Kind: k, Member: m}})
			}
		}
	}
	outcomes := make([]Outcome, len(jobs))
	work := func(i int) {
		outcomes[i] = runBranch(cursors[jobs[i].tick].Clone(), jobs[i], opts)
	}
	if opts.Parallel <= 1 {
		for i := range jobs {
			work(i)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int)
		for p := 0; p < opts.Parallel; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					work(i)
				}
			}()
		}
		for i := range jobs {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	r := &Report{Base: base.Tick, Guarantee: GuaranteeOf(base, opts.Isolation), Isolation: opts.Isolation,
		Outcomes: outcomes, Counts: map[string]int{}, Shortest: map[string]int{}, stops: stops, output: base.Topo.Output.Name}
	for i := range outcomes {
		o := &outcomes[i]
		if o.Violates(r.Guarantee) {
			r.Violations++
		}
		for c := range o.Classes {
			r.Counts[c]++
			if j, ok := r.Shortest[c]; !ok || o.Ran < outcomes[j].Ran {
				r.Shortest[c] = i
			}
		}
	}
	return r, nil
}

// runBranch injects the fault and runs the branch until the group is
// stable and caught up. When no member is left running, the faulted
// client is restarted, as an orchestrator would.
func runBranch(w *sim.World, j job, opts Options) Outcome {
	o := Outcome{Tick: j.tick, Fault: j.fault, Classes: map[string]int{}}
	if err := j.fault.apply(w); err != nil {
		o.Classes["fault-refused"]++
		return o
	}
	pkts, zombies := len(w.Packets), w.ZombieWrites
	prev := read(w, opts.Isolation)
	steps, restarted := 0, false
	flush := func() {
		if steps > 0 {
			o.Log = append(o.Log, "step "+strconv.Itoa(steps))
			steps = 0
		}
	}
	for o.Ran < opts.Bound {
		if w.GroupSettled() && w.CaughtUp() && len(w.LiveMembers()) > 0 {
			break
		}
		if len(w.LiveMembers()) == 0 && !restarted && w.Member(j.fault.Member) != nil && !w.Member(j.fault.Member).Alive {
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
		now := read(w, opts.Isolation)
		if !extends(prev, now) {
			o.Classes[NonMonotonicRead]++
		}
		prev = now
		if opts.Isolation == "read_committed" {
			for _, r := range now {
				if r.aborted || r.open {
					o.Classes[AbortedRead]++
				}
			}
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
	for _, p := range w.Packets[pkts:] {
		if p.Response && (p.Type == sim.OffsetCommit || p.Type == sim.TxnOffsetCommit) && p.Error != sim.None {
			o.Classes[CommitRefused+":"+p.Error.String()]++
		}
		if p.Error == sim.ProducerFenced || p.Error == sim.InvalidProducerEpoch {
			o.Classes[FencedProducer]++
		}
	}
	if n := w.ZombieWrites - zombies; n > 0 {
		o.Classes[ZombieWrite] = n
	}
	return o
}

type seen struct {
	part          string
	offset        int
	aborted, open bool
}

func read(w *sim.World, iso string) []seen {
	var out []seen
	for _, r := range w.ReadTopic(w.Topo.Output.Name, iso) {
		out = append(out, seen{part: r.Partition.String(), offset: r.Offset, aborted: r.Aborted, open: r.Open})
	}
	return out
}

// extends reports whether every record the reader returned before it
// returns again (reads from offset 0 only grow).
func extends(prev, now []seen) bool {
	have := make(map[[2]string]bool, len(now))
	for _, r := range now {
		have[[2]string{r.part, strconv.Itoa(r.offset)}] = true
	}
	for _, r := range prev {
		if !have[[2]string{r.part, strconv.Itoa(r.offset)}] {
			return false
		}
	}
	return true
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
