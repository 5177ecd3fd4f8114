package kernel

// plot: the charts of a branch's history (pause, duplicates, lag, timeline,
// unavailable), replayed from its start, and what it checks before.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
	"github.com/kgrepl/kgrepl/sim"
)

func cmdPlot(s *Session, args []string) (*Result, error) {
	var pos []string
	var fl map[string]string
	args, err := joinQuoted("plot", args)
	if err != nil {
		return nil, err
	}
	pos, fl, err = flags("plot", args, append([]string{"--branches", "--partitions"}, pictureFlags...), nil)
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 {
		return nil, usageErr("plot", "which chart? (charts: %s)", strings.Join(chart.Kinds, " "))
	}
	if err := needArgs("plot", pos, 1, 1); err != nil {
		return nil, err
	}
	kind := pos[0]
	known := false
	for _, k := range chart.Kinds {
		known = known || k == kind
	}
	if !known {
		return nil, fmt.Errorf("plot %s: no chart %s (charts: %s)", kind, kind, strings.Join(chart.Kinds, " "))
	}
	po, err := pictureOptions("plot "+kind, fl)
	if err != nil {
		return nil, err
	}
	if _, err := pictureFormat("plot", po.out); err != nil {
		return nil, err
	}
	names := []string{s.cur.name}
	if v, ok := fl["--branches"]; ok {
		names = nil
		for _, n := range strings.Split(v, ",") {
			if n == "" && strings.Trim(v, ",") != "" {
				return nil, usageErr("plot", "--branches %q has an empty name (names are separated by single commas)", v)
			}
			if n == "" {
				continue
			}
			if _, ok := s.branches[n]; !ok {
				return nil, fmt.Errorf("plot --branches %s: no branch %s (branches: %s)", v, n, strings.Join(s.branchNames(), " "))
			}
			names = append(names, n)
		}
		if len(names) == 0 {
			return nil, usageErr("plot", "--branches %q names no branch (branches: %s)", v, strings.Join(s.branchNames(), " "))
		}
		if len(names) > 1 && (kind == "lag" || kind == "timeline" || kind == "unavailable") {
			return nil, fmt.Errorf("plot %s --branches %s: a %s chart shows one branch (overlays: pause duplicates)", kind, v, kind)
		}
		for i, n := range names {
			if slices.Contains(names[:i], n) {
				return nil, fmt.Errorf("plot --branches %s: branch %s is named twice", v, n)
			}
		}
	}
	var only []int
	if v, ok := fl["--partitions"]; ok {
		if kind != "lag" && kind != "timeline" {
			return nil, usageErr("plot", "--partitions picks the partitions of a lag or timeline chart; the %s chart counts every partition", kind)
		}
		if only, err = parsePlotPartitions(s.branches[names[0]].world, v); err != nil {
			return nil, err
		}
	}
	if po.ticks && po.to >= 0 && po.to <= po.from {
		return nil, fmt.Errorf("plot %s --ticks %s: a chart needs a range of ticks (A..B with B > A)", kind, fl["--ticks"])
	}
	how := plotRecording{only: only, ticks: po.ticks, from: po.from, to: po.to}
	if ins := len(s.branches[names[0]].world.Layout().Inputs()); kind == "timeline" && only == nil && ins > chart.MaxTimelineRows {
		how.firstRows = true
	}
	if how.twoPass, err = s.checkPlot(kind, names, how); err != nil {
		return nil, err
	}
	var runs []*chart.Run
	for _, n := range names {
		r, err := s.recordBranch(n, chart.NeedOf(kind), how)
		if err != nil {
			if errors.Is(err, ErrInterrupted) {
				return nil, interrupted("plot " + kind)
			}
			return nil, fmt.Errorf("plot: %v", err)
		}
		runs = append(runs, r)
	}
	// Overlaid branches share an x axis, so they share a clock.
	clk := clockOf(s.branches[names[0]].world).pictures()
	for _, n := range names[1:] {
		if other := clockOf(s.branches[n].world).pictures(); other != clk {
			return nil, fmt.Errorf("plot %s --branches %s: branch %s %s and branch %s %s: an overlay shares one time axis (set time and tick.ms alike on both)",
				kind, fl["--branches"], names[0], clockWords(clk), n, clockWords(other))
		}
	}
	opt := chart.Options{Width: po.width, Height: po.height, Title: po.title, From: po.from, To: po.to, Clock: clk}
	c, err := chart.Build(kind, opt, runs...)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %v", kind, err)
	}
	return s.pictureResult("plot "+kind, po.out, kind, chartRendering(c), "")
}

// clockWords says how a branch counts time, for an error.
func clockWords(c wallclock.Clock) string {
	if !c.Real() {
		return "counts ticks (time ticks)"
	}
	return fmt.Sprintf("runs in real time (tick.ms %d)", c.TickMS)
}

// plotRecording is how a chart records a branch: the input partitions a
// lag or timeline chart is of (only; nil: all), the window --ticks asks
// for, and whether a lag chart of many partitions is recorded in two
// replays (twoPass: checkPlot says when).
type plotRecording struct {
	only []int
	// firstRows: a timeline of more partitions than it draws, recorded
	// for the rows it draws (the first chart.MaxTimelineRows) alone.
	firstRows bool
	ticks     bool // from..to is a window (to < 0: to the end); else every tick
	from, to  int
	twoPass   bool
}

// window is the recording's ticks: from..to (to < 0: to the end).
func (how plotRecording) window() (from, to int) {
	if !how.ticks {
		return 0, -1
	}
	if how.to <= 0 {
		return how.from, -1 // as chart.Window reads to <= 0
	}
	return how.from, how.to
}

// recordBranch replays a branch and samples what a chart needs (chart.
// Recorder): from its start, or, with a window, from the checkpoint
// nearest before it (Session.replayTicks), keeping the window's frames
// alone. A two-pass lag chart replays first for each partition's peak
// (chart.Peaks), then records only the total and the partitions whose
// lag peaked highest: the chart the one-pass recording would draw, kept
// in a few numbers a tick where that kept one for every partition.
func (s *Session) recordBranch(name string, need chart.Need, how plotRecording) (*chart.Run, error) {
	b := s.branches[name]
	saved := s.cur
	s.cur = b
	defer func() { s.cur = saved }()
	from, to := how.window()
	replay := func(visit func(*sim.World)) error {
		if err := s.replayTicks(from, to, visit); err != nil {
			return fmt.Errorf("replaying branch %s: %w", name, err)
		}
		return nil
	}
	rec := chart.NewRecorder(name, need)
	only := how.only
	if how.twoPass {
		peaks := chart.NewPeaks(how.only, from, to)
		if err := replay(peaks.Visit); err != nil {
			return nil, err
		}
		rec.LagTotal(how.only)
		only = peaks.Top(b.world)
	}
	if how.firstRows {
		only = make([]int, chart.MaxTimelineRows)
		for i := range only {
			only[i] = i
		}
	}
	if only != nil {
		rec.OnlyPartitions(only)
	}
	if how.ticks {
		rec.Window(from, to)
	}
	if err := replay(rec.Visit); err != nil {
		return nil, err
	}
	run := rec.Finish(b.world)
	if how.firstRows {
		run.OfPartitions = len(b.world.Layout().Inputs())
	}
	return run, nil
}

// checkPlot refuses a chart whose samples (one per tick of each branch's
// life, or of the --ticks window in it, each with a value per series; an
// overlay records every branch it names) would pass limitPlotSamples,
// before any branch is replayed. A lag or timeline chart records each
// input partition, or those at only when it names some (--partitions),
// and a total. A lag chart of more partitions than it draws (chart.
// LagTop and their total) that would pass the limit is recorded in two
// replays (twoPass), counting the series it draws.
func (s *Session) checkPlot(kind string, branches []string, how plotRecording) (twoPass bool, err error) {
	var hows []string
	var samples []int
	from, to := how.window()
	for _, name := range branches {
		w := s.branches[name].world
		ticks := w.Tick + 1
		if how.ticks {
			last := w.Tick
			if to >= 0 {
				last = min(last, to)
			}
			ticks = max(0, last-from+1)
		}
		series := 4
		if kind == "lag" || kind == "timeline" {
			series = len(w.Layout().Inputs()) + 1
			if how.only != nil {
				series = len(how.only) + 1
			}
			if how.firstRows {
				series = chart.MaxTimelineRows + 1
			}
		}
		if kind == "lag" && len(branches) == 1 && series-1 > chart.LagTop+1 && limitPlotSamples.checkProduct("", "", ticks, series) != nil {
			twoPass = true
			hows = append(hows, fmt.Sprintf("%d ticks of branch %s x %d series (the total of %d partitions and the %d whose lag peaked highest, found by a first replay)",
				ticks, name, chart.LagTop+1, series-1, chart.LagTop))
			series = chart.LagTop + 1
		} else {
			hows = append(hows, fmt.Sprintf("%d ticks of branch %s x %d series", ticks, name, series))
		}
		if series > 0 && ticks > math.MaxInt/series {
			samples = append(samples, math.MaxInt) // over any limit; checkSum says so
		} else {
			samples = append(samples, ticks*series)
		}
	}
	return twoPass, limitPlotSamples.checkSum("plot "+kind, strings.Join(hows, " + "), samples...)
}

// parsePlotPartitions reads plot's --partitions: a comma-separated list of
// input partitions and ranges of one topic's (t-0..t-99), each named once;
// it returns their indexes among the world's input partitions, in the
// order given.
func parsePlotPartitions(w *sim.World, v string) ([]int, error) {
	return parsePartitionList(w, "plot", v, false)
}

// parsePartitionList reads a --partitions list (plot's, diagram's): a
// comma-separated list of partitions and ranges of one topic's
// (t-0..t-99), each named once. With outputs the output topic's partitions
// may be named too (diagram draws their logs); else only input partitions
// (a chart's series). It returns their numbers (sim's Layout.Number: the
// inputs' indexes, then the output's after them), in the order given.
func parsePartitionList(w *sim.World, cmd, v string, outputs bool) ([]int, error) {
	l := w.Layout()
	what, example := "input partitions", plotPartitionsExample(w)
	if outputs {
		what, example = "partitions", diagramPartitionsExample(w)
	}
	bad := func(format string, args ...any) error {
		return usageErr(cmd, "--partitions %q: %s (a comma-separated list of %s and ranges of one topic's, e.g. %s)",
			shortWord(v), fmt.Sprintf(format, args...), what, example)
	}
	index := func(name string) (int, sim.TopicPartition, error) {
		tp, err := l.ParsePartition(name)
		if err != nil {
			return 0, tp, bad("no %s %s", strings.TrimSuffix(what, "s"), shortWord(name))
		}
		i, _ := l.Number(tp)
		if _, input := l.Span(tp.Topic); !input && !outputs {
			return 0, tp, bad("%s is not an input partition (the chart draws input partitions)", shortWord(name))
		}
		return i, tp, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, item := range strings.Split(v, ",") {
		if item == "" {
			return nil, bad("an empty item (items are separated by single commas)")
		}
		from, to, isRange := strings.Cut(item, "..")
		a, tpa, err := index(from)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			var tpb sim.TopicPartition
			if b, tpb, err = index(to); err != nil {
				return nil, err
			}
			if tpb.Topic != tpa.Topic || b < a {
				return nil, bad("the range %s runs backwards or across topics (a range runs from a partition to a later one of the same topic)", shortWord(item))
			}
		}
		for i := a; i <= b; i++ {
			if seen[i] {
				tp, _, _ := l.Numbered(uint64(i))
				return nil, bad("%s is named twice", l.ShortName(tp))
			}
			seen[i] = true
			out = append(out, i)
		}
	}
	return out, nil
}

// plotPartitionsExample is an example of --partitions in this world.
func plotPartitionsExample(w *sim.World) string {
	in := w.Layout().Inputs()
	name := w.Layout().ShortName
	if len(in) >= 3 && in[2].Topic == in[0].Topic {
		return name(in[0]) + ".." + name(in[2])
	}
	return name(in[0])
}

// diagramPartitionsExample is an example of diagram's --partitions in this
// world: a range of input partitions (or one) and an output partition.
func diagramPartitionsExample(w *sim.World) string {
	outs := w.Layout().Outputs()
	if len(outs) == 0 {
		return plotPartitionsExample(w)
	}
	return plotPartitionsExample(w) + "," + w.Layout().ShortName(outs[0])
}
