package kernel

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/digits"
	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/sim"
)

// Limits (SPEC §10). Every command's work is bounded, and checked before
// the command starts: a request past a bound is refused with an error that
// names the bound and the value given. A world's shape is bounded by what
// it is estimated to cost against the heap guard's threshold (worldcost.go);
// the other bounds are chosen so that any value a user may type inside them
// stays far from exhausting memory on the project's 24 GiB machine.
//
// Each limit is declared once, here or in worldcost.go; the commands' help
// texts quote them from this table.
type limit struct {
	name string // how errors and help name it
	max  int    // fromHeap: worldBudget's, read at each use
}

// fromHeap as a limit's max: the bound is derived from the heap limit when
// it is stated (worldBudget; tests change the heap limit).
const fromHeap = -1

var (
	// A world's shape is bounded by its estimated cost (worldcost.go):
	// limitMembers, limitPartitionRecords and limitWorldBytes.
	// Ticks one `step` or `run` may advance.
	limitStep = limit{"ticks in one step or run", 1_000_000}
	// Ticks `run until stable` and `run until polled|processed` wait
	// before they fail: a group that never settles cannot hang a script
	// (Ctrl-C stops the wait sooner). At the largest shapes a tick costs
	// milliseconds (BenchmarkTickLargest), so the wait is minutes there.
	limitRunUntil = limit{"ticks a run until stable, polled or processed waits", 100_000}
	// Lines of narration one command prints (a step's or run's events, one
	// a line): past it they are counted, and trace --events lists them.
	// About 60 bytes a line.
	limitNarration = limit{"lines of narration a command prints", 100_000}
	// Bytes of one line of narration: an event of a big world can name
	// every partition a member holds (a rebalance of 100,000 partitions
	// narrated 3.3 MB in 79 lines, the leader's plan 789 KB in one); past
	// it the line is cut at a space and says what it left out, and trace
	// --events prints the event whole.
	limitNarrationLine = limit{"bytes of one line of narration", 4096}
	// Drop rules pending at once: every packet sent is checked against each.
	limitDropRules = limit{"drop rules pending in a world", 100}
	// Per-client settings a world keeps (set Cn.KEY VALUE; a key set again
	// for a client replaces its earlier value, except enable.auto.commit
	// and transactional.id, whose earlier values can still matter).
	limitOverrides = limit{"per-client settings in a world", 10_000}
	// A world's clock.
	limitClock = limit{"ticks in a world's life", 10_000_000}
	// explore: the window, the branches (window x members x fault kinds),
	// the work (branches x --bound) and the workers.
	limitExploreWindow   = limit{"ticks in an explore window", 1_000}
	limitExploreBranches = limit{"explore branches: window ticks x members x fault kinds", 10_000}
	limitExploreWork     = limit{"ticks of explore work: branches x --bound", 30_000_000}
	limitExploreParallel = limit{"explore workers, --parallel", 64}
	// explore --shard K/N: N, no more shards than a sweep may have branches.
	limitExploreShards = limit{"shards of an explore sweep, the N of --shard K/N", 10_000}
	// compare: combinations, counted before any is built, and the ticks
	// rerun (combinations x the branch's ticks).
	limitCompareCombos = limit{"compare combinations", 256}
	limitCompareWork   = limit{"ticks of compare work: combinations x the branch's ticks", 50_000_000}
	// Pictures: samples a chart keeps (ticks x series), cells a diagram
	// draws (each log its last cells, at most draw.MaxLogs logs: the bound
	// is never reached, and guards it), rows a sequence diagram draws.
	limitPlotSamples  = limit{"chart samples: ticks x series", 5_000_000}
	limitDiagramCells = limit{"log cells drawn in a diagram", 50_000}
	// An animated diagram lays out and draws every cell of every frame
	// before it writes each part once: BenchmarkAnimatedDiagram allocates
	// about 20 KB a cell a frame while it is made (most of it garbage at once).
	limitAnimationCells = limit{"log cells drawn in an animated diagram: frames x cells", 200_000}
	// A sequence diagram of a longer range draws its first rows and says
	// how many messages it leaves out (draw.MaxSeqRows; a 20,000-message
	// diagram was a 40 MB SVG).
	limitSequenceRows = limit{fmt.Sprintf("messages and notes a sequence diagram draws (the first of its range), on at most %d lanes", draw.MaxSeqLanes), draw.MaxSeqRows}
	// A PNG is drawn in memory at 4 bytes a pixel; a PDF page's side is
	// at most 14,400 points (200 inches), the most PDF viewers show.
	limitPNGPixels = limit{"pixels in a PNG: width x height", 50_000_000}
	limitPDFSide   = limit{"pixels on a side of a PDF page (14,400 points)", 19_200}
	// trace: the messages (and with --events, the events) one view lists;
	// each is built from the trace's compact records when shown.
	limitTraceRows = limit{"messages or events in one trace view", 1_000_000}
	// The other listing views (offsets, log, consume, txn, metrics' rows
	// per rebalance, describe group): the rows one view makes, each built
	// from the world's compact records when it is written (listing.go).
	// A view of more than 10,000 rows is streamed: it holds its text, about
	// 100 bytes a row, and while it is written no more.
	limitViewRows = limit{"rows in one listing view", 1_000_000}
	// The text (or JSON) of one listing view, measured before it is
	// written: a row may be long (a rebalance's paused partitions, a
	// packet's summary).
	limitViewBytes = limit{"bytes of text in one listing view", 256 << 20}
)

// MaxLineBytes is the longest input line, in bytes (its line end not
// counted), that Exec runs and a script may hold: far more than a person
// types or a script needs, and small enough that a line's parsing and its
// errors cost nothing. kgrepl's script reader holds no more than this of a
// line; Exec refuses a longer one (from -c or a notebook) before parsing it.
const MaxLineBytes = 64 * 1024

// limitLine is MaxLineBytes as help and errors name it.
var limitLine = limit{"bytes in a line", MaxLineBytes}

// checkLine refuses a line longer than MaxLineBytes.
func checkLine(line string) error {
	if len(line) <= MaxLineBytes {
		return nil
	}
	return fmt.Errorf("a line of %s bytes is over the limit (%s; the line was not run)", group(len(line)), limitLine.helpLine())
}

// check refuses v past the limit, naming the bound and the value.
func (l limit) check(cmd string, v int) error {
	return l.checkf(cmd, v, "")
}

// checkf is check with the value spelled out as the user gave it (e.g.
// "20 input partitions x 1000000"); the error then shows both.
func (l limit) checkf(cmd string, v int, how string) error {
	if v >= 0 && v <= l.max {
		return nil
	}
	return l.refuse(cmd, how, big.NewInt(int64(v)))
}

// checkProduct checks a product of factors, computed exactly (no overflow),
// before anything of that size is built.
func (l limit) checkProduct(cmd, how string, factors ...int) error {
	p := big.NewInt(1)
	for _, f := range factors {
		p.Mul(p, big.NewInt(int64(f)))
	}
	if p.Sign() >= 0 && p.Cmp(big.NewInt(int64(l.max))) <= 0 {
		return nil
	}
	return l.refuse(cmd, how, p)
}

// checkSum is checkProduct for a sum.
func (l limit) checkSum(cmd, how string, terms ...int) error {
	p := big.NewInt(0)
	for _, t := range terms {
		p.Add(p, big.NewInt(int64(t)))
	}
	if p.Sign() >= 0 && p.Cmp(big.NewInt(int64(l.max))) <= 0 {
		return nil
	}
	return l.refuse(cmd, how, p)
}

func (l limit) refuse(cmd, how string, v *big.Int) error {
	val := groupDigits(v.String())
	if how == "" || how == v.String() {
		return fmt.Errorf("%s: %s is over the limit (at most %s %s)", cmd, val, group(l.max), l.name)
	}
	return fmt.Errorf("%s: %s = %s is over the limit (at most %s %s)", cmd, how, val, group(l.max), l.name)
}

// helpLine is the limit as help states it.
func (l limit) helpLine() string {
	if l.max == fromHeap {
		return "at most " + group(int(worldBudget())) + " " + l.name
	}
	return "at most " + group(l.max) + " " + l.name
}

// group writes 1000000 as 1,000,000.
func group(n int) string { return digits.Int(n) }

// groupDigits groups a decimal integer's digits (digits.Group).
func groupDigits(s string) string { return digits.Group(s) }

// mulCap multiplies without overflow: past max it returns max+1, which every
// check refuses.
func mulCap(a, b, max int) int {
	if a < 0 || b < 0 {
		return max + 1
	}
	if a == 0 || b == 0 {
		return 0
	}
	if a > (max+1)/b+1 {
		return max + 1
	}
	if p := a * b; p <= max {
		return p
	}
	return max + 1
}

// inputRecords counts the input records a world holds.
func inputRecords(w *sim.World) int {
	n := 0
	for _, tp := range w.Layout().Inputs() {
		n += w.Log(tp).HW()
	}
	return n
}

// checkSteps refuses a step or run of n ticks that is past a bound.
func checkSteps(cmd string, w *sim.World, n int) error {
	if err := limitStep.check(cmd, n); err != nil {
		return err
	}
	if err := limitClock.checkSum(cmd, fmt.Sprintf("tick %d + %d ticks", w.Tick, n), w.Tick, n); err != nil {
		return err
	}
	return checkStepRecords(cmd, w, n)
}

// ErrInterrupted is what a command stopped by Ctrl-C (Session.Interrupt)
// returns; like any error, it leaves the session as it was before the command.
var ErrInterrupted = errors.New("interrupted")

// interrupted is the error for a command stopped by Ctrl-C.
func interrupted(cmd string) error {
	return fmt.Errorf("%s: %w (the session is as it was before it)", cmd, ErrInterrupted)
}

// limitsHelp lists the limits for `help limits`-style texts.
func limitsHelp(ls ...*limit) string {
	var lines []string
	for _, l := range ls {
		lines = append(lines, "Limit: "+l.helpLine()+".")
	}
	return strings.Join(lines, "\n")
}

// commandLimits says which limits `help CMD` states (pointers: the heap
// guard's threshold is read from the machine when the program starts).
var commandLimits = map[string][]*limit{
	"new":      {&limitMembers, &limitPartitionRecords, &limitWorldBytes},
	"join":     {&limitMembers, &limitWorldBytes},
	"produce":  {&limitPartitionRecords, &limitWorldBytes},
	"set":      {&limitPartitionRecords, &limitWorldBytes, &limitOverrides},
	"step":     {&limitStep, &limitClock, &limitNarration, &limitNarrationLine, &limitHeap, &limitTextReach, &limitRunsReach},
	"run":      {&limitStep, &limitRunUntil, &limitClock, &limitNarration, &limitNarrationLine, &limitHeap, &limitTextReach, &limitRunsReach},
	"drop":     {&limitDropRules},
	"explore":  {&limitExploreWindow, &limitExploreBranches, &limitExploreWork, &limitExploreParallel, &limitExploreShards, &limitStep},
	"compare":  {&limitCompareCombos, &limitCompareWork},
	"plot":     {&limitPlotSamples, &limitPNGPixels, &limitPDFSide},
	"diagram":  {&limitDiagramCells, &limitAnimationCells, &limitPNGPixels, &limitPDFSide},
	"sequence": {&limitSequenceRows, &limitPNGPixels, &limitPDFSide},
	"trace":    {&limitTraceRows, &limitViewBytes},
	"offsets":  {&limitViewRows, &limitViewBytes},
	"log":      {&limitViewRows, &limitViewBytes},
	"consume":  {&limitViewRows, &limitViewBytes},
	"txn":      {&limitViewRows},
	"metrics":  {&limitViewRows, &limitViewBytes},
	"describe": {&limitViewRows},
}

func partsOf(topo sim.Topology) []int {
	var out []int
	for _, t := range topo.Inputs {
		out = append(out, t.Partitions)
	}
	return append(out, topo.Output.Partitions)
}
