package kernel

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/chart"
)

// TestPlotRecordsTheWindowAsTheWholeCut: a chart with --ticks A..B is
// recorded from the checkpoint nearest before A, keeping A..B's frames
// alone (chart.Recorder.Window); the run it draws is the one recording
// the branch from its start and cutting it to the window (chart.Window)
// gave, for every kind, in random sessions (commands between ticks,
// back, fork, new, load, worlds keeping a window of their past) whose
// checkpoints lie at every few ticks.
func TestPlotRecordsTheWindowAsTheWholeCut(t *testing.T) {
	seeds, cmds := 8, 40
	if testing.Short() {
		seeds = 3
	}
	compared := 0
	for seed := 0; seed < seeds; seed++ {
		s, rng := randomSession(t, int64(100+seed), 3+seed%5)
		var typed []string
		for i := 0; i < cmds; i++ {
			cmd := randomCommand(rng, s)
			if strings.HasPrefix(cmd, "demo") {
				continue // a demo's long runs only slow the test
			}
			typed = append(typed, cmd)
			if _, err := s.Exec(cmd); err != nil {
				continue
			}
			if i%8 != 7 {
				continue
			}
			end := s.World().Tick
			for k := 0; k < 3; k++ {
				from := rng.Intn(end + 2)
				to := -1
				if rng.Intn(3) > 0 {
					to = from + 1 + rng.Intn(end+3-from)
				}
				for _, kind := range chart.Kinds {
					where := fmt.Sprintf("seed %d, %s --ticks %d..%d after %s", seed, kind, from, to, strings.Join(typed, "; "))
					whole, err := s.recordBranch(s.cur.name, chart.NeedOf(kind), plotRecording{})
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					win, err := s.recordBranch(s.cur.name, chart.NeedOf(kind), plotRecording{ticks: true, from: from, to: to})
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					if got, want := chart.Window(win, from, to), chart.Window(whole, from, to); !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: the window recorded differs from the whole run cut to it\ngot  %+v\nwant %+v", where, got.Frames, want.Frames)
					}
					if to >= 0 && len(win.Frames) > to-from+1 {
						t.Fatalf("%s: %d frames kept for a window of %d ticks", where, len(win.Frames), to-from+1)
					}
					compared++
				}
			}
		}
	}
	t.Logf("compared %d", compared)
	if compared == 0 {
		t.Fatal("no window compared")
	}
}

// TestPlotLagInTwoPassesDrawsTheSameChart: a lag chart of more partitions
// than it draws, recorded as each partition's peak (a first replay) and
// then the total and the partitions whose lag peaked highest (chart.Peaks,
// Recorder.LagTotal), is the chart the recording of every partition
// draws, byte for byte: whole branch or window, every partition or those
// --partitions names; and the session takes that road when one pass
// would pass the samples' limit, refusing only when the two-pass
// chart's own samples would.
func TestPlotLagInTwoPassesDrawsTheSameChart(t *testing.T) {
	s := NewSession()
	s.CheckpointEvery = 17
	runLines(t, s, "new --topics t:30,u:12 --members 4\nset records.per.partition 25\nrun until stable\ncrash C2 now\nstep 20\njoin C5\nstep 15\nslow C3\nstep 30\nset C1.max.poll.records 1\nstep 25")
	w := s.World()
	svg := func(how plotRecording, where string) string {
		t.Helper()
		b, _ := recordedChart(t, s, "lag", how, where)
		return b
	}
	var onlys [][]int
	for _, v := range []string{"", "t-0..t-29", "u-11,t-3..t-12,u-0..u-5"} {
		if v == "" {
			onlys = append(onlys, nil)
			continue
		}
		only, err := parsePlotPartitions(w, v)
		if err != nil {
			t.Fatal(err)
		}
		onlys = append(onlys, only)
	}
	rng := rand.New(rand.NewSource(7))
	for _, only := range onlys {
		windows := [][2]int{{0, -1}, {0, w.Tick / 2}, {w.Tick / 3, -1}}
		for k := 0; k < 4; k++ {
			from := rng.Intn(w.Tick)
			windows = append(windows, [2]int{from, from + 1 + rng.Intn(w.Tick-from+2)})
		}
		for _, win := range windows {
			how := plotRecording{only: only, ticks: win != [2]int{0, -1}, from: win[0], to: win[1]}
			where := fmt.Sprintf("--partitions %v --ticks %d..%d", only, win[0], win[1])
			one := svg(how, where)
			how.twoPass = true
			if two := svg(how, where+" in two passes"); two != one {
				t.Fatalf("%s: the two-pass chart differs from the one-pass chart", where)
			}
			if !strings.Contains(one, "+") || !strings.Contains(one, "other partitions") {
				t.Fatalf("%s: the chart draws no total (more partitions than colours)", where)
			}
		}
	}

	defer func(l limit) { limitPlotSamples = l }(limitPlotSamples)
	want, err := s.Exec("plot lag")
	if err != nil {
		t.Fatal(err)
	}
	limitPlotSamples.max = (w.Tick + 1) * 10 // the total and 9 partitions fit; 43 series do not
	if twoPass, err := s.checkPlot("lag", []string{s.cur.name}, plotRecording{}); err != nil || !twoPass {
		t.Fatalf("checkPlot of 42 partitions over the limit: two passes %v, %v", twoPass, err)
	}
	if got, err := s.Exec("plot lag"); err != nil || got != want {
		t.Fatalf("plot lag in two passes: %v (same output: %v)", err, got == want)
	}
	limitPlotSamples.max = (w.Tick+1)*10 - 1
	if _, err := s.Exec("plot lag"); err == nil || !strings.Contains(err.Error(), "found by a first replay") {
		t.Errorf("plot lag whose two passes are over the limit: %v", err)
	}
	if _, err := s.Exec("plot timeline"); err == nil || !strings.Contains(err.Error(), "43 series") {
		t.Errorf("plot timeline of every partition over the limit: %v", err)
	}
}

// TestPeaksKeepATicksLastLags: a tick visited twice (commands after the
// last tick change what it ends with; Recorder.Finish visits the world
// again) counts at its last visit alone, as a recorder keeps a tick's
// last frame: a partition whose lag rose only in the visit replaced is
// not a peak.
func TestPeaksKeepATicksLastLags(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:14 --members 2\nset records.per.partition 5\nrun until stable\nstep 40")
	before := s.World().Clone()
	runLines(t, s, "produce t-12 900")
	after := s.World()
	if before.Tick != after.Tick || after.Lag(after.Layout().Inputs()[12]) <= before.Lag(before.Layout().Inputs()[12]) {
		t.Fatal("produce between ticks did not raise t-12's lag in the same tick")
	}
	p := chart.NewPeaks(nil, 0, -1)
	p.Visit(after)
	if top := p.Top(before); slices.Contains(top, 12) {
		t.Fatalf("t-12 is among the peaks %v by a visit its tick's last replaced", top)
	}
	p = chart.NewPeaks(nil, 0, -1)
	p.Visit(before)
	if top := p.Top(after); !slices.Contains(top, 12) {
		t.Fatalf("t-12 is not among the peaks %v with its tick's last lag the highest", top)
	}
}

// TestPlotTimelineRecordsTheRowsItDraws: a timeline of a world of more
// partitions than it draws (chart.MaxTimelineRows) records those rows
// alone (plotRecording.firstRows, Run.OfPartitions), and draws the chart
// the recording of every partition draws, byte for byte, its legend
// saying how many partitions the world has; the samples' limit counts the
// rows drawn.
func TestPlotTimelineRecordsTheRowsItDraws(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:90,u:40 --members 5\nset records.per.partition 6\nrun until stable\ncrash C3 now\nstep 25\njoin C6\nstep 30")
	w := s.World()
	svg := func(how plotRecording) (string, *chart.Run) {
		t.Helper()
		return recordedChart(t, s, "timeline", how, "timeline")
	}
	for _, win := range [][2]int{{0, -1}, {10, 40}} {
		how := plotRecording{ticks: win[1] >= 0, from: win[0], to: win[1]}
		whole, _ := svg(how)
		how.firstRows = true
		rows, r := svg(how)
		if rows != whole {
			t.Fatalf("--ticks %v: the timeline recorded for its rows differs from the one recorded whole", win)
		}
		if len(r.Frames[0].Owners) != chart.MaxTimelineRows || r.OfPartitions != 130 {
			t.Fatalf("--ticks %v: recorded %d partitions a frame of %d", win, len(r.Frames[0].Owners), r.OfPartitions)
		}
		if !strings.Contains(rows, "130 partitions") {
			t.Fatalf("--ticks %v: the legend does not say the world has 130 partitions", win)
		}
	}
	defer func(l limit) { limitPlotSamples = l }(limitPlotSamples)
	limitPlotSamples.max = (w.Tick + 1) * (chart.MaxTimelineRows + 1) // the rows drawn fit; 131 series do not
	if _, err := s.Exec("plot timeline"); err != nil {
		t.Errorf("plot timeline of its first 100 rows within the limit: %v", err)
	}
	limitPlotSamples.max--
	if _, err := s.Exec("plot timeline"); err == nil || !strings.Contains(err.Error(), "101 series") {
		t.Errorf("plot timeline of 101 series over the limit: %v", err)
	}
}

// recordedChart records the current branch as how says and draws the kind
// of chart over how's ticks: its SVG, and the run recorded.
func recordedChart(t *testing.T, s *Session, kind string, how plotRecording, where string) (string, *chart.Run) {
	t.Helper()
	r, err := s.recordBranch(s.cur.name, chart.NeedOf(kind), how)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	c, err := chart.Build(kind, chart.Options{From: how.from, To: how.to}, r)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	b, err := c.SVG()
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return string(b), r
}
