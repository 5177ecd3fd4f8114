package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/explore"
	"github.com/kgrepl/kgrepl/kernel/health"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

func init() {
	cmds := []*command{
		{name: "explore", usage: "explore [--ticks A..B] [--faults K,...] [--members Cn,...] [--bound N] [--parallel N] [--isolation L] [--save DIR] [--shard K/N --out FILE] [--json] | explore --merge FILE [FILE ...] [--save DIR] [--json]",
			summary: "branch at every tick x member x fault kind; find duplicates and losses",
			help: "From the current state, injects each fault at each tick of the window (default: now..now+20), runs each\n" +
				"branch until the group is stable and caught up (or --bound ticks, default 3000), and classifies it against the\n" +
				"configured guarantee. Fault kinds: " + strings.Join(explore.FaultKinds, " ") + ".\n" +
				"--save DIR writes one replayable script per class of outcome (the shortest branch that shows it).\n" +
				"Each class's row also has, over its branches, the unavailability from the fault on (partition x ticks\n" +
				"nobody could consume, as metrics counts them) and how many ended unhealthy (see help metrics); the\n" +
				"lines under the table give both over every branch, with the shortest branch that ended unhealthy.\n" +
				"In real time (time ms) the table's ticks read as time: TICKS as a duration, UNAVAILABLE in\n" +
				"partition x seconds.\n\n" +
				"A sweep too big for one machine splits into shards. Every machine runs the same script, then\n" +
				"  explore [options] --shard K/N --out FILE\n" +
				"which runs only the branches whose index i (in the order of the full sweep: tick, member, fault kind)\n" +
				"has i mod N = K-1, and writes their rows to FILE. Then, anywhere,\n" +
				"  explore --merge FILE... [--save DIR] [--json]\n" +
				"checks that the files are shards 1..N of one sweep and prints what the sweep run on one machine\n" +
				"prints, byte for byte (the shortest branch of a class is the first in the sweep's order among equals).",
			run: cmdExplore},
		{name: "compare", usage: "compare KEY V1,V2,... [KEY V1,V2,... ...] [--out FILE.svg|.png|.pdf] [--csv FILE] [--json]",
			summary: "rerun this branch's history under each combination of settings, tabulate the results and say which is best",
			help: "e.g. `compare partition.assignment.strategy range,cooperative-sticky` after a few joins, or\n" +
				"`compare commit after,before producer idempotent,transactional` after a crash. KEY may also be commit or producer.\n" +
				"`compare group.protocol classic,consumer` answers \"what would migrating to KIP-848 do to my\n" +
				"group?\": the history is rerun with every member on each protocol (group.protocol and\n" +
				"group.remote.assignor are put in force before `new` starts the members). Combine it with the\n" +
				"assignors: `compare group.protocol classic,consumer partition.assignment.strategy\n" +
				"range,cooperative-sticky` (a consumer group ignores the client-side strategy), or\n" +
				"`group.remote.assignor uniform,range` for the server-side one. Under consumer GEN/EPOCH is the\n" +
				"group epoch and a rebalance is a group epoch bump (see help metrics).\n" +
				"`compare group.instance.id none,per-member` after a restart or a crash compares dynamic and\n" +
				"static membership: group.instance.id too is put in force for every member (an imported\n" +
				"group's own ids included) before `new` starts them; `transactional.id none,per-member` the\n" +
				"producers.\n" +
				"Commas separate the values compared, so a list value of partition.assignment.strategy is\n" +
				"written with + between its assignors: `compare partition.assignment.strategy\n" +
				"range,cooperative-sticky+range` compares range with the list cooperative-sticky,range.\n\n" +
				"The table has a row per combination: the unavailability and its causes (PAUSE, the pause meter,\n" +
				"is its rebalance cause), the most lag, duplicates, lost, idle members and the health at the end\n" +
				"(see help metrics). A column equal in every row is left out and listed once (same in all: ...).\n" +
				"The verdict names the best combination on unavailability, duplicates and lost records and by how\n" +
				"much against the next best, among the rows that ended healthy; a row that ended unhealthy is\n" +
				"named with what is wrong (consumer ended dead: C1..C12 stopped: UNRELEASED_INSTANCE_ID; 48\n" +
				"partitions unowned; dead: no member running). Then each member at the end, a column per\n" +
				"combination (stopped: by a fatal error). Every table fits 100 columns: a wider one is shown in\n" +
				"blocks of columns, each repeating the row's names.\n" +
				"--csv FILE writes a line per combination with every metric (and each member's end) for a\n" +
				"spreadsheet; --json prints the rows, the columns equal in all and the verdict. The chart (inline\n" +
				"in a notebook; --out writes it) has a panel per metric, each on its own axis.",
			run: cmdCompare},
	}
	// Listed before demo, with the other analyses.
	at := indexOfCommand("demo")
	commands = append(commands[:at], append(cmds, commands[at:]...)...)
}

func indexOfCommand(name string) int {
	for i, c := range commands {
		if c.name == name {
			return i
		}
	}
	return len(commands)
}

func parseExploreTicks(s string, now int) (int, int, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, usageErr("explore", "--ticks %q: want A..B, e.g. %d..%d", s, now, now+20)
	}
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, usageErr("explore", "--ticks %q: A and B are tick numbers", s)
	}
	return from, to, nil
}

// checkExplore bounds an exploration before it starts: how far ahead its
// window starts, the window, the branches and the ticks they may run.
func checkExplore(w *sim.World, opts explore.Options) error {
	if opts.From < w.Tick || opts.To < opts.From {
		return fmt.Errorf("explore --ticks %d..%d: the window must start at or after the current tick %d and end at or after it starts", opts.From, opts.To, w.Tick)
	}
	// Subtractions, not sums: From and To may be near the largest int.
	if err := limitStep.checkSum("explore --ticks", fmt.Sprintf("window start %d - now %d", opts.From, w.Tick), opts.From, -w.Tick); err != nil {
		return err
	}
	if err := limitExploreWindow.checkSum("explore --ticks", fmt.Sprintf("ticks %d..%d", opts.From, opts.To), opts.To, -opts.From, 1); err != nil {
		return err
	}
	if err := limitClock.checkf("explore --ticks", opts.To, fmt.Sprintf("the window's end %d", opts.To)); err != nil {
		return err
	}
	members := len(opts.Members)
	if members == 0 {
		members = len(w.Clients()) // every member live in the window is one of these
	}
	kinds := len(opts.Faults)
	if kinds == 0 {
		kinds = len(explore.FaultKinds)
	}
	ticks := opts.To - opts.From + 1
	if err := limitExploreBranches.checkProduct("explore", fmt.Sprintf("%d ticks x %d members x %d fault kinds", ticks, members, kinds), ticks, members, kinds); err != nil {
		return err
	}
	bound := opts.Bound
	if bound <= 0 {
		bound = 3000
	}
	branches := ticks * members * kinds
	return limitExploreWork.checkProduct("explore", fmt.Sprintf("%d branches x --bound %d", branches, bound), branches, bound)
}

// maxShardFile bounds what explore --merge reads, per file and for all
// the files together: a row is a few hundred bytes, and a sweep has at
// most limitExploreBranches rows.
const maxShardFile = 256 << 20

func cmdExplore(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("explore", args, []string{"--ticks", "--faults", "--members", "--bound", "--parallel", "--isolation", "--save", "--shard", "--out"}, []string{"--json", "--merge"})
	if err != nil {
		return nil, err
	}
	if fl["--merge"] == "true" {
		return exploreMerge(s, pos, fl)
	}
	if err := needArgs("explore", pos, 0, 0); err != nil {
		return nil, err
	}
	w := s.World()
	opts := explore.Options{From: w.Tick, To: w.Tick + 20, Parallel: runtime.NumCPU(), Isolation: w.Cfg.Isolation}
	if v, ok := fl["--ticks"]; ok {
		if opts.From, opts.To, err = parseExploreTicks(v, w.Tick); err != nil {
			return nil, err
		}
	}
	if v, ok := fl["--faults"]; ok {
		opts.Faults = strings.Split(v, ",")
		for i, f := range opts.Faults {
			if slices.Contains(opts.Faults[:i], f) {
				return nil, fmt.Errorf("explore --faults %s: %s is listed twice (each branch would run twice)", v, f)
			}
		}
	}
	if v, ok := fl["--members"]; ok {
		for _, m := range strings.Split(v, ",") {
			if w.Member(m) == nil {
				return nil, fmt.Errorf("explore --members: no member %s (members: %s)", m, strings.Join(natural.Sorted(w.Clients()), " "))
			}
			if slices.Contains(opts.Members, m) {
				return nil, fmt.Errorf("explore --members %s: %s is listed twice (each branch would run twice)", v, m)
			}
			opts.Members = append(opts.Members, m)
		}
	}
	if v, ok := fl["--bound"]; ok {
		if opts.Bound, err = parseCount("explore", "--bound", v, 1, limitStep.max); err != nil {
			return nil, err
		}
	}
	if v, ok := fl["--parallel"]; ok {
		if opts.Parallel, err = parseCount("explore", "--parallel", v, 1, limitExploreParallel.max); err != nil {
			return nil, err
		}
	}
	if v, ok := fl["--isolation"]; ok {
		if v != "read_committed" && v != "read_uncommitted" {
			return nil, usageErr("explore", "--isolation %q is not read_committed or read_uncommitted", v)
		}
		opts.Isolation = v
	}
	shard, sharded := fl["--shard"]
	out, hasOut := fl["--out"]
	var k, n int
	switch {
	case sharded:
		if k, n, err = parseShard(shard); err != nil {
			return nil, err
		}
		if !hasOut {
			return nil, usageErr("explore", "--shard %s writes its rows to a file: add --out FILE", shard)
		}
		if _, ok := fl["--save"]; ok || fl["--json"] == "true" {
			return nil, usageErr("explore", "--shard runs part of a sweep; --save and --json show the whole sweep: give them to explore --merge")
		}
	case hasOut:
		return nil, usageErr("explore", "--out FILE holds the rows of a shard: add --shard K/N (--shard 1/1 writes the whole sweep)")
	}
	if err := checkExplore(w, opts); err != nil {
		return nil, err
	}
	opts.Stop = s.stopRequested
	// More workers than cores run no faster, and each holds a branch that
	// grows with its ticks: memory stays at cores x one branch.
	opts.Parallel = min(opts.Parallel, runtime.NumCPU())
	if sharded {
		return exploreShard(s, w, opts, k, n, out)
	}
	rep, err := explore.Run(w, opts)
	if errors.Is(err, explore.ErrStopped) {
		return nil, interrupted("explore")
	}
	if err != nil {
		return nil, fmt.Errorf("explore: %v", err)
	}
	return exploreResult(s, rep, s.cur.script(), fl)
}

// parseShard reads --shard K/N: 1 <= K <= N, and no more shards than a
// sweep may have branches.
func parseShard(v string) (k, n int, err error) {
	a, b, ok := strings.Cut(v, "/")
	k, errK := strconv.Atoi(a)
	n, errN := strconv.Atoi(b)
	if !ok || errK != nil || errN != nil {
		return 0, 0, usageErr("explore", "--shard %q: want K/N, shard K of N (1 <= K <= N), e.g. 2/4", v)
	}
	if err := explore.CheckShard(k, n); err != nil {
		return 0, 0, fmt.Errorf("explore --%v", err)
	}
	if err := limitExploreShards.check("explore --shard", n); err != nil {
		return 0, 0, err
	}
	return k, n, nil
}

// exploreShard runs shard K of N and writes its rows, with the sweep they
// belong to, to out.
func exploreShard(s *Session, w *sim.World, opts explore.Options, k, n int, out string) (*Result, error) {
	part, err := explore.RunShard(w, opts, k, n)
	if errors.Is(err, explore.ErrStopped) {
		return nil, interrupted("explore")
	}
	if err != nil {
		return nil, fmt.Errorf("explore: %v", err)
	}
	part.Sweep.Prefix = s.cur.script()
	var buf bytes.Buffer
	if err := part.Write(&buf); err != nil {
		return nil, fmt.Errorf("explore --out %s: %v", out, err)
	}
	if err := writeAtomic(s.path(out), buf.Bytes()); err != nil {
		return nil, fmt.Errorf("explore --out %s: %v", out, err)
	}
	return &Result{Text: fmt.Sprintf("explore: shard %d/%d: %d of %d branches (ticks %d..%d) written to %s; explore --merge puts the shards' files together",
		k, n, len(part.Outcomes), part.Sweep.Branches, opts.From, opts.To, out)}, nil
}

// exploreMerge puts shard files together and shows the sweep as explore
// run on one machine shows it.
func exploreMerge(s *Session, files []string, fl map[string]string) (*Result, error) {
	for _, f := range []string{"--ticks", "--faults", "--members", "--bound", "--parallel", "--isolation", "--shard", "--out"} {
		if _, ok := fl[f]; ok {
			return nil, usageErr("explore", "--merge reads the sweep from its files: %s belongs to the runs of the shards", f)
		}
	}
	if len(files) == 0 {
		return nil, usageErr("explore", "--merge needs the shards' files (explore --shard K/N --out FILE writes one)")
	}
	if err := limitExploreBranches.checkf("explore --merge", len(files), fmt.Sprintf("%d files", len(files))); err != nil {
		return nil, err
	}
	var parts []*explore.Part
	total := 0
	for _, f := range files {
		if s.stopRequested() {
			return nil, interrupted("explore")
		}
		// The files together are bounded too: each is looked at before it
		// is read, and read into one buffer of its size, which goes once
		// it is parsed (explore.ParsePart copies only what it keeps).
		var err error
		if st, serr := os.Stat(s.path(f)); serr == nil && st.Mode().IsRegular() && st.Size() <= maxShardFile && total+int(st.Size()) > maxShardFile {
			err = fmt.Errorf("the shard files together are over the limit of a shard file (%d bytes)", maxShardFile)
		}
		var data []byte
		if err == nil {
			data, err = readRegularFile(s.path(f), maxShardFile, "explore --merge", "shard file")
		}
		if err == nil && total+len(data) > maxShardFile {
			err = fmt.Errorf("the shard files together are over the limit of a shard file (%d bytes)", maxShardFile)
		}
		var p *explore.Part
		if err == nil {
			p, err = explore.ParsePart(data)
		}
		if err == nil {
			err = limitExploreBranches.checkf("explore --merge", p.Sweep.Branches, fmt.Sprintf("a sweep of %d branches", p.Sweep.Branches))
		}
		if err != nil {
			return nil, fmt.Errorf("explore --merge %s: %v", f, err)
		}
		total += len(data)
		if len(parts) > 0 && p.Sweep.Prefix == parts[0].Sweep.Prefix {
			// The same script as the first file's, compared in place: one
			// copy of it is kept, not one a file.
			p.Sweep.Prefix = parts[0].Sweep.Prefix
		}
		parts = append(parts, p)
	}
	rep, sweep, err := explore.Merge(parts, files)
	if err != nil {
		return nil, fmt.Errorf("explore --merge: %v", err)
	}
	// The script the shards carry starts every counterexample --save
	// writes: like a session file, it may hold world inputs only.
	if err := checkWorldInputs(sweep.Prefix); err != nil {
		return nil, fmt.Errorf("explore --merge: the shards' script, %v", err)
	}
	return exploreResult(s, rep, sweep.Prefix, fl)
}

// checkWorldInputs refuses a script with a line that is not a world input
// (or a comment), or with more than one input on a line, naming the line.
func checkWorldInputs(script string) error {
	// Line by line in place: a list of its lines cost 16 bytes a line
	// beside the script (2.4 times a script of short lines).
	n := 0
	for rest := script; ; {
		n++
		raw, after, more := strings.Cut(rest, "\n")
		code, _, _ := strings.Cut(raw, "#")
		if err := checkInputLine(code, "the script"); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if !more {
			return nil
		}
		rest = after
	}
}

// exploreResult shows a whole sweep (--json or the text), after writing
// its counterexamples with --save; prefix is the script that makes the
// world the sweep started from.
func exploreResult(s *Session, rep *explore.Report, prefix string, fl map[string]string) (*Result, error) {
	if dir, ok := fl["--save"]; ok {
		if err := saveCounterexamples(rep, prefix, s.path(dir)); err != nil {
			return nil, fmt.Errorf("explore --save %s: %v", dir, err)
		}
	}
	if fl["--json"] == "true" {
		line := jsonLine(exploreJSON(rep))
		return &Result{Text: line, JSON: line}, nil
	}
	return &Result{Text: exploreText(rep, clockOf(s.World()))}, nil
}

func classFile(class string) string { return strings.ReplaceAll(class, ":", "_") + ".kg" }

func saveCounterexamples(rep *explore.Report, prefix, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Every file is checked before any is written, so a refused save
	// writes nothing (one a folder or a device, another was written).
	for class := range rep.Shortest {
		if err := checkWritable(filepath.Join(dir, classFile(class))); err != nil {
			return fmt.Errorf("%s: %v", classFile(class), err)
		}
	}
	for class, i := range rep.Shortest {
		if err := writeAtomic(filepath.Join(dir, classFile(class)), []byte(rep.Script(prefix, i))); err != nil {
			return fmt.Errorf("%s: %v", classFile(class), err)
		}
	}
	return nil
}

// exploreText is the report in words; its table's counts of ticks read
// as time in real time (clk.count), as compare's do.
func exploreText(rep *explore.Report, clk clock) string {
	var b strings.Builder
	members := map[string]bool{}
	kinds := map[string]bool{}
	for _, o := range rep.Outcomes {
		members[o.Fault.Member] = true
		kinds[o.Fault.Kind] = true
	}
	fmt.Fprintf(&b, "explore: ticks %d..%d, %d member(s) x %d fault kind(s): %d branches; guarantee %s (reader %s)\n",
		rep.From, rep.To, len(members), len(kinds), len(rep.Outcomes), rep.Guarantee, rep.Isolation)
	fmt.Fprintf(&b, "violations of %s: %d of %d branches\n\n", rep.Guarantee, rep.Violations, len(rep.Outcomes))
	classes := make([]string, 0, len(rep.Counts))
	for c := range rep.Counts {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	spread := classSpreads(rep)
	if len(classes) > 0 {
		// UNAVAILABLE and HEALTH are over every branch of the class, as
		// compare shows them for a combination: the partition x ticks
		// nobody could consume from the fault on, and how many branches
		// ended with the group unhealthy.
		t := &Table{Header: []string{"CLASS", "BRANCHES", "SHORTEST", "TICKS", "UNAVAILABLE", "HEALTH", "OUTCOME"}}
		for _, c := range classes {
			o := rep.Outcomes[rep.Shortest[c]]
			sp := spread[c]
			t.Add(c, strconv.Itoa(rep.Counts[c]), fmt.Sprintf("%s at %s", o.Fault.Command(), clk.tickAt(o.Tick)), clk.count(o.Ran, aSpan),
				sp.unavailable(clk), sp.health(), o.Summary())
		}
		b.WriteString(t.Text())
	} else {
		b.WriteString("every branch: ok\n")
	}
	if all := spread[""]; all.branches > 0 {
		if clk.real {
			fmt.Fprintf(&b, "unavailable from the fault on: %s a branch (%s on average), partition x seconds\n", all.unavailable(clk), clk.count(all.sum/all.branches, partitionTicks))
		} else {
			fmt.Fprintf(&b, "unavailable from the fault on: %s %s a branch (%d on average)\n", all.unavailable(clk), health.Unit, all.sum/all.branches)
		}
	}
	if rep.Unhealthy == 0 {
		b.WriteString("health at the end: every branch ended healthy\n")
	} else {
		o := rep.Outcomes[rep.Sickest]
		ran := strconv.Itoa(o.Ran) + " ticks"
		if clk.real {
			ran = clk.dur(o.Ran)
		}
		fmt.Fprintf(&b, "health at the end: %d of %d branches ended unhealthy; the shortest, %s at %s (%s): %s\n",
			rep.Unhealthy, len(rep.Outcomes), o.Fault.Command(), clk.tickAt(o.Tick), ran, o.Health)
	}
	// The matrix: one row per fault and member, one column per tick.
	b.WriteString("\n. ok  D duplicate  L lost  B both  R read anomaly  S stalled  - fault not possible\n")
	type key struct{ kind, member string }
	rows := map[key][]string{}
	var order []key
	for _, o := range rep.Outcomes {
		k := key{o.Fault.Kind, o.Fault.Member}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], o.Code())
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].member != order[j].member {
			return order[i].member < order[j].member
		}
		return indexOf(explore.FaultKinds, order[i].kind) < indexOf(explore.FaultKinds, order[j].kind)
	})
	t := &Table{Header: []string{"MEMBER", "FAULT", fmt.Sprintf("TICKS %d..%d", rep.From, rep.To)}}
	for _, k := range order {
		t.Add(k.member, k.kind, strings.Join(rows[k], ""))
	}
	b.WriteString(t.Text())
	return b.String()
}

// classSpread is the unavailability and health over the branches of a
// class (of every branch that ran, under "").
type classSpread struct {
	branches, lo, hi, sum, unhealthy int
}

func (c classSpread) unavailable(clk clock) string {
	if c.branches == 0 {
		return "-"
	}
	if c.lo == c.hi {
		return clk.count(c.lo, partitionTicks)
	}
	return clk.count(c.lo, partitionTicks) + ".." + clk.count(c.hi, partitionTicks)
}

func (c classSpread) health() string {
	switch {
	case c.branches == 0:
		return "-"
	case c.unhealthy == 0:
		return "ok"
	}
	return fmt.Sprintf("%d unhealthy", c.unhealthy)
}

// classSpreads tallies each class's branches (a refused fault's branch did
// not run: it counts in no spread).
func classSpreads(rep *explore.Report) map[string]classSpread {
	out := map[string]classSpread{}
	add := func(class string, o *explore.Outcome) {
		c, u := out[class], o.UnavailableTotal()
		if c.branches == 0 || u < c.lo {
			c.lo = u
		}
		c.hi = max(c.hi, u)
		c.branches++
		c.sum += u
		if !o.Healthy() {
			c.unhealthy++
		}
		out[class] = c
	}
	for i := range rep.Outcomes {
		o := &rep.Outcomes[i]
		if o.Classes["fault-refused"] > 0 {
			continue
		}
		add("", o)
		for c := range o.Classes {
			add(c, o)
		}
	}
	return out
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return len(xs)
}

type exploreOutcomeJSON struct {
	Tick    int            `json:"tick"`
	Fault   string         `json:"fault"`
	Member  string         `json:"member"`
	Classes map[string]int `json:"classes"`
	Ran     int            `json:"ticks"`
	// From the fault on, as metrics --json and compare --json name them;
	// the health at the end as its ok and words.
	Unavailable int               `json:"unavailable_partition_ticks"`
	ByCause     map[string]int    `json:"unavailable_by_cause"`
	Health      exploreHealthJSON `json:"health"`
}

type exploreHealthJSON struct {
	OK    bool   `json:"ok"`
	Words string `json:"words"`
}

func exploreJSON(rep *explore.Report) map[string]any {
	var outs []exploreOutcomeJSON
	for _, o := range rep.Outcomes {
		j := exploreOutcomeJSON{Tick: o.Tick, Fault: o.Fault.Kind, Member: o.Fault.Member, Classes: o.Classes, Ran: o.Ran,
			Unavailable: o.UnavailableTotal(), ByCause: map[string]int{}, Health: exploreHealthJSON{OK: o.Healthy(), Words: o.Health}}
		for _, c := range sim.Causes {
			j.ByCause[c.String()] = o.Unavailable[c]
		}
		outs = append(outs, j)
	}
	return map[string]any{"guarantee": rep.Guarantee, "isolation": rep.Isolation, "violations": rep.Violations,
		"counts": rep.Counts, "branches": len(rep.Outcomes), "unhealthy": rep.Unhealthy, "outcomes": outs}
}
