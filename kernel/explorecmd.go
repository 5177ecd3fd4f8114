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
	"sync"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/explore"
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
				"--save DIR writes one replayable script per class of outcome (the shortest branch that shows it).\n\n" +
				"A sweep too big for one machine splits into shards. Every machine runs the same script, then\n" +
				"  explore [options] --shard K/N --out FILE\n" +
				"which runs only the branches whose index i (in the order of the full sweep: tick, member, fault kind)\n" +
				"has i mod N = K-1, and writes their rows to FILE. Then, anywhere,\n" +
				"  explore --merge FILE... [--save DIR] [--json]\n" +
				"checks that the files are shards 1..N of one sweep and prints what the sweep run on one machine\n" +
				"prints, byte for byte (the shortest branch of a class is the first in the sweep's order among equals).",
			run: cmdExplore},
		{name: "compare", usage: "compare KEY V1,V2,... [KEY V1,V2,... ...] [--out FILE.svg|.png|.pdf] [--json]",
			summary: "rerun this branch's history under each combination of settings and tabulate the results",
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
				"range,cooperative-sticky+range` compares range with the list cooperative-sticky,range.",
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
	return &Result{Text: exploreText(rep)}, nil
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

func exploreText(rep *explore.Report) string {
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
	if len(classes) > 0 {
		t := &Table{Header: []string{"CLASS", "BRANCHES", "SHORTEST", "TICKS", "OUTCOME"}}
		for _, c := range classes {
			o := rep.Outcomes[rep.Shortest[c]]
			t.Add(c, strconv.Itoa(rep.Counts[c]), fmt.Sprintf("%s at tick %d", o.Fault.Command(), o.Tick), strconv.Itoa(o.Ran), o.Summary())
		}
		b.WriteString(t.Text())
	} else {
		b.WriteString("every branch: ok\n")
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
}

func exploreJSON(rep *explore.Report) map[string]any {
	var outs []exploreOutcomeJSON
	for _, o := range rep.Outcomes {
		outs = append(outs, exploreOutcomeJSON{Tick: o.Tick, Fault: o.Fault.Kind, Member: o.Fault.Member, Classes: o.Classes, Ran: o.Ran})
	}
	return map[string]any{"guarantee": rep.Guarantee, "isolation": rep.Isolation, "violations": rep.Violations,
		"counts": rep.Counts, "branches": len(rep.Outcomes), "outcomes": outs}
}

// --- compare ---

// columnName heads a compare column for a setting: the key, or when it is
// long its last word (partition.assignment.strategy -> strategy,
// session.timeout.ms -> timeout); the line above the table names the keys.
func columnName(key string) string {
	if len(key) <= 12 {
		return key
	}
	words := strings.Split(strings.TrimSuffix(key, ".ms"), ".")
	if n := len(words); n > 1 && words[n-1] == "id" {
		return words[n-2] + ".id" // group.instance.id -> instance.id
	}
	return words[len(words)-1]
}

type compareRow struct {
	Settings string `json:"settings"`
	// Protocol is the group's type at the end (classic or consumer); a
	// consumer group's Generation is its group epoch and its Rebalances
	// its epoch bumps (see metrics).
	Protocol   string `json:"protocol,omitempty"`
	Tick       int    `json:"tick"`
	Generation int    `json:"generation"`
	Rebalances int    `json:"rebalances"`
	Pause      int    `json:"pause_partition_ticks"`
	// PausedPerRebalance counts the partitions each rebalance paused, and
	// PausePerRebalance its partition x ticks, in generation order.
	PausedPerRebalance []int `json:"paused_per_rebalance"`
	PausePerRebalance  []int `json:"pause_per_rebalance"`
	Processed          int   `json:"processed"`
	Duplicates         int   `json:"duplicates"`
	Lost               int   `json:"lost"`
	// Assignment is each member's partitions at the end, by client id
	// (seed short names, e.g. {o0 p0}); Idle lists the members with none.
	Assignment map[string]string `json:"assignment"`
	Idle       []string          `json:"idle"`
	// parts counts each member's partitions, for the chart.
	parts map[string]int
	Error string `json:"error,omitempty"`
}

// fillRow reads a combination's results off the world it ended in.
func fillRow(row *compareRow, w *sim.World) {
	d := w.Delivery(w.Cfg.Isolation)
	row.Tick, row.Generation, row.Rebalances, row.Pause, row.Processed = w.Tick, generationOf(w.Group), w.Group.RebalanceStarts, w.Meter.Total, w.Processed()
	if w.Group.Type() == sim.ConsumerGroup {
		row.Protocol = string(sim.ConsumerGroup) // a classic row's line stays as it was
	}
	row.Duplicates, row.Lost = d.Duplicates, d.Lost
	row.PausedPerRebalance, row.PausePerRebalance = []int{}, []int{}
	for _, e := range w.Meter.Entries {
		row.PausedPerRebalance = append(row.PausedPerRebalance, len(e.Partitions))
		row.PausePerRebalance = append(row.PausePerRebalance, e.PartitionTicks)
	}
	row.Assignment, row.Idle, row.parts = map[string]string{}, []string{}, map[string]int{}
	for _, gm := range w.Group.Members() {
		row.Assignment[gm.ClientID] = w.Layout().PartList(gm.Assignment)
		row.parts[gm.ClientID] = len(gm.Assignment)
		if len(gm.Assignment) == 0 {
			row.Idle = append(row.Idle, gm.ClientID)
		}
	}
	natural.Sort(row.Idle)
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	var out []string
	for _, x := range xs {
		out = append(out, strconv.Itoa(x))
	}
	return strings.Join(out, " ")
}

// Compare reruns the current branch's history under each combination of
// the given settings (key -> values) and returns one row per combination.
func (s *Session) Compare(keys []string, values [][]string) ([]compareRow, error) {
	// Counted before any is built: 20 values of 7 keys are 20^7 combinations.
	var how []string
	var sizes []int
	for _, vs := range values {
		how = append(how, strconv.Itoa(len(vs)))
		sizes = append(sizes, len(vs))
	}
	if err := limitCompareCombos.checkProduct("compare", strings.Join(how, " x ")+" values", sizes...); err != nil {
		return nil, err
	}
	n := 1
	for _, k := range sizes {
		n *= k
	}
	ticks := s.World().Tick + 1
	if err := limitCompareWork.checkProduct("compare", fmt.Sprintf("%d combinations x %d ticks of history", n, ticks), n, ticks); err != nil {
		return nil, err
	}
	combos := [][]string{{}}
	for _, vs := range values {
		var next [][]string
		for _, c := range combos {
			for _, v := range vs {
				next = append(next, append(append([]string{}, c...), v))
			}
		}
		combos = next
	}
	script := s.cur.scriptLines(true)
	rows := make([]compareRow, len(combos))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, combo := range combos {
		wg.Add(1)
		go func(i int, combo []string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i] = runCombo(s, script, keys, combo)
		}(i, combo)
	}
	wg.Wait()
	if s.stopRequested() {
		return nil, interrupted("compare")
	}
	return rows, nil
}

// startKeys are the compared settings a member reads only when it starts
// (group.protocol, group.remote.assignor, group.instance.id): compared,
// each must be in force when `new` starts the world's members, for every
// member, or those would keep what they started with (a classic group
// that consumer-protocol joiners cannot enter; static members in the
// dynamic row). Other settings keep compare's rule (set right after
// `new`), so their comparisons are what they were.
func startKeys(keys []string) map[string]bool {
	out := map[string]bool{}
	for _, k := range keys {
		if k == "group.protocol" || k == "group.remote.assignor" || k == "group.instance.id" {
			out[k] = true
		}
	}
	return out
}

// settingLine is the set command that puts one of compare's values in
// force. Commas separate compare's values, so a list value of
// partition.assignment.strategy joins its assignors with + instead
// (cooperative-sticky+range is the list cooperative-sticky,range).
func settingLine(key, val string) string {
	if listSetting(key) {
		val = strings.ReplaceAll(val, "+", ",")
	}
	return "set " + key + " " + val
}

// listSetting: the key's value is a list (partition.assignment.strategy,
// for every client or for one).
func listSetting(key string) bool {
	if _, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(key, "C") {
		if _, found := sim.LookupSetting(k); found {
			key = k
		}
	}
	return key == "partition.assignment.strategy"
}

// runCombo runs the script with the settings put right after its `new`;
// the history's own changes of those keys are dropped (of a start setting,
// a client's own too), so the comparison is of the settings asked for.
// A command that read a file reads what it read then (scriptLine.file).
func runCombo(parent *Session, script []scriptLine, keys, vals []string) compareRow {
	var names []string
	for i := range keys {
		names = append(names, keys[i]+"="+vals[i])
	}
	row := compareRow{Settings: strings.Join(names, " ")}
	sess := NewSession()
	sess.interrupt = parent.interrupt // a Ctrl-C stops every combination (execLine keeps it)
	sess.compareKeys = map[string]bool{}
	for _, k := range keys {
		for _, st := range compareSettings(k) {
			sess.compareKeys[st] = true
		}
	}
	start := startKeys(keys)
	for _, l := range script {
		if parent.stopRequested() {
			row.Error = ErrInterrupted.Error()
			return row
		}
		f := strings.Fields(l.line)
		if len(f) >= 2 && f[0] == "set" {
			_, perClient, ok := strings.Cut(f[1], ".")
			if indexOf(keys, f[1]) < len(keys) || ok && sim.IsClientID(f[1][:strings.IndexByte(f[1], '.')]) && start[perClient] {
				continue
			}
		}
		sess.supply = l.file
		_, err := sess.execLine(l.line)
		sess.supply = nil
		if err != nil {
			row.Error = err.Error()
			return row
		}
		if len(f) > 0 && f[0] == "new" {
			for i := range keys {
				if _, err := sess.execLine(settingLine(keys[i], vals[i])); err != nil {
					row.Error = err.Error()
					return row
				}
			}
			if len(start) > 0 {
				// The members `new` starts were built before the settings:
				// build the world again with them in force.
				if err := sess.rebuildWith(start); err != nil {
					row.Error = "new: " + err.Error()
					return row
				}
			}
		}
	}
	fillRow(&row, sess.World())
	return row
}

// rebuildWith makes the branch's world again from its origin (its shape,
// an import's members and assignment) with the settings in force now,
// each of keys in force for every member (a client's own setting of one
// is dropped): compare's start settings, which members read only when
// they start.
func (s *Session) rebuildWith(keys map[string]bool) error {
	cfg := s.cur.world.Cfg.Clone()
	var kept []sim.Override
	for _, o := range cfg.Overrides {
		if !keys[o.Key] {
			kept = append(kept, o)
		}
	}
	cfg.Overrides = kept
	o := *s.cur.hist.origin
	o.cfg = cfg.Clone()
	w, err := o.world()
	if err != nil {
		return err
	}
	s.cur.hist = history{origin: &o}
	s.cur.world, s.cur.frozen, s.cur.cp = w, false, cpClock{}
	return nil
}

// compareSettings are the settings a compare KEY changes: a shortcut is
// the keys it stands for (commit and enable.auto.commit both set
// commit.mode; producer sets enable.idempotence and transactional.id).
func compareSettings(key string) []string {
	switch key {
	case "commit", "enable.auto.commit":
		return []string{"commit.mode"}
	case "producer":
		return []string{"enable.idempotence", "transactional.id"}
	}
	return []string{key}
}

func cmdCompare(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("compare", args, []string{"--out"}, []string{"--json"})
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 || len(pos)%2 != 0 {
		return nil, usageErr("compare", "want pairs of KEY and comma-separated values")
	}
	var keys []string
	var values [][]string
	combos := 1
	named := map[string]string{} // the setting a key changes -> the key that named it
	for i := 0; i < len(pos); i += 2 {
		key := pos[i]
		if key != "commit" && key != "producer" {
			if _, ok := sim.LookupSetting(key); !ok {
				return nil, fmt.Errorf("compare: unknown setting %q (see show config)", key)
			}
		}
		// A setting named twice would leave one list unused (the later
		// value of each combination wins): refuse it, shortcuts included.
		for _, st := range compareSettings(key) {
			first, ok := named[st]
			switch {
			case ok && first == key:
				return nil, usageErr("compare", "%s is named twice (name each setting once, with all its values in one list)", key)
			case ok:
				return nil, usageErr("compare", "%s and %s both change %s (name it once)", first, key, st)
			}
			named[st] = key
		}
		vs := strings.Split(pos[i+1], ",")
		combos = mulCap(combos, len(vs), limitCompareCombos.max)
		if combos > limitCompareCombos.max {
			// Compare names the bound, before any value is tried.
			values = append(values, vs)
			break
		}
		seen := map[string]bool{}
		for _, v := range vs {
			if v == "" {
				return nil, usageErr("compare", "%s: an empty value in %q (values are separated by single commas)", key, pos[i+1])
			}
			if seen[v] {
				return nil, usageErr("compare", "%s: %s is listed twice in %q (each value is one row)", key, v, pos[i+1])
			}
			seen[v] = true
			probe := NewSession()
			if _, err := probe.Exec(settingLine(key, v)); err != nil {
				// set's own words, which name the key and what it allows,
				// in compare's context (its usage, not set's).
				msg := strings.TrimPrefix(err.Error(), "set: ")
				msg = strings.TrimSuffix(msg, " (usage: "+lookup("set").usage+")")
				if listSetting(key) {
					// the list as typed here, with its + (settingLine)
					msg = strings.ReplaceAll(msg, strconv.Quote(strings.ReplaceAll(v, "+", ",")), strconv.Quote(v))
				}
				return nil, usageErr("compare", "%s", msg)
			}
		}
		keys, values = append(keys, key), append(values, vs)
	}
	rows, err := s.Compare(keys, values)
	if err != nil {
		return nil, err
	}
	if fl["--json"] == "true" {
		line := jsonLine(map[string]any{"rows": rows})
		return &Result{Text: line, JSON: line}, nil
	}
	// A column per key, with the values of the row's combination; the
	// combination's name (values joined by /) heads its assignment column.
	var header []string
	for _, k := range keys {
		header = append(header, columnName(k))
	}
	gen := "GEN"
	for _, r := range rows {
		if r.Protocol == string(sim.ConsumerGroup) {
			gen = "GEN/EPOCH" // a consumer group's row counts group epochs
		}
	}
	header = append(header, "TICK", gen, "REBALANCES", "PAUSED/REBALANCE", "PAUSE", "PROCESSED", "DUPLICATES", "LOST", "IDLE")
	t := &Table{Header: header}
	var names []string
	var vals [][]float64
	var notes []string
	members := map[string]bool{}
	for _, r := range rows {
		var combo []string
		for _, kv := range strings.Split(r.Settings, " ") {
			_, v, _ := strings.Cut(kv, "=")
			combo = append(combo, v)
		}
		name := strings.Join(combo, "/")
		names = append(names, name)
		if r.Error != "" {
			t.Add(append(combo, "-", "-", "-", "-", "-", "-", "-", "-", "-")...)
			notes = append(notes, fmt.Sprintf("%s: %s", name, r.Error))
			vals = append(vals, []float64{0, 0, 0, 0, 0})
			continue
		}
		t.Add(append(combo, strconv.Itoa(r.Tick), strconv.Itoa(r.Generation), strconv.Itoa(r.Rebalances), joinInts(r.PausedPerRebalance),
			strconv.Itoa(r.Pause), strconv.Itoa(r.Processed), strconv.Itoa(r.Duplicates), strconv.Itoa(r.Lost), dash(strings.Join(r.Idle, " ")))...)
		vals = append(vals, []float64{float64(r.Rebalances), float64(r.Pause), float64(r.Duplicates), float64(r.Lost), float64(len(r.Idle))})
		for m := range r.Assignment {
			members[m] = true
		}
	}
	var clients []string
	for m := range members {
		clients = append(clients, m)
	}
	natural.Sort(clients)
	// The final assignment: a row per member, a column per combination.
	at := &Table{Header: append([]string{"MEMBER"}, names...)}
	counts := make([][]float64, len(rows))
	for _, c := range clients {
		cells := []string{c}
		for _, r := range rows {
			a, ok := r.Assignment[c]
			if !ok {
				a = "-" // not in the group at the end
			}
			cells = append(cells, a)
		}
		at.Add(cells...)
	}
	for i, r := range rows {
		for _, c := range clients {
			counts[i] = append(counts[i], float64(r.parts[c]))
		}
	}
	text := fmt.Sprintf("this branch's history (%d commands) rerun under %d combination(s) of %s:\n", len(s.cur.hist.inputs), len(rows), strings.Join(keys, ", ")) + t.Fit(textWidth)
	if len(clients) > 0 {
		text += "\nfinal assignment ({} = idle, - = not in the group):\n" + at.Fit(textWidth)
	}
	for _, n := range notes {
		text += "error: " + n + "\n"
	}
	res := &Result{Text: text}
	// The grouped bars, inline in a notebook and written with --out.
	c, err := chart.CompareFigure(names, []string{"rebalances", "pause meter", "duplicates", "lost", "idle members"}, vals, clients, counts)
	if err != nil {
		return nil, fmt.Errorf("compare: %v", err)
	}
	svg, err := c.SVG()
	if err != nil {
		return nil, fmt.Errorf("compare: %v", err)
	}
	res.SVG = string(svg)
	res.HTML = t.HTML() + at.HTML() + InlineSVG(res.SVG)
	if out, ok := fl["--out"]; ok {
		data := svg
		switch strings.ToLower(filepath.Ext(out)) {
		case ".png":
			data, err = c.PNG()
		case ".pdf":
			data, err = c.PDF()
		case ".svg":
		default:
			return nil, usageErr("compare", "--out %q: the chart is .svg, .png or .pdf", out)
		}
		if err != nil {
			return nil, fmt.Errorf("compare: %v", err)
		}
		if err := writeAtomic(s.path(out), data); err != nil {
			return nil, fmt.Errorf("compare --out %s: %v", out, err)
		}
		res.Text += fmt.Sprintf("compare: wrote %s\n", out)
	}
	return res, nil
}
