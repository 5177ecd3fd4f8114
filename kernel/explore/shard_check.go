// shard_check.go: the checks of a shard file read back (Sweep.check,
// shardRow.check) against what a sweep can write; shard_file.go reads it,
// shard.go merges the parts.

package explore

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

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
