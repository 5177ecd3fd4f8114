package kernel

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/chart"
)

// TestPlotRecordsOnlyThePartitionsAsked: a lag or timeline chart with
// --partitions records those partitions alone (chart.Recorder.
// OnlyPartitions), and its run is the one recording every partition and
// then cut to them (Run.Only) gave, frame for frame, clients and all;
// so the limit on a chart's samples counts those partitions and a total,
// and a big group's chart of a few partitions is drawn where the chart of
// all of them is refused.
func TestPlotRecordsOnlyThePartitionsAsked(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:40 --members 3\nset records.per.partition 20\nrun until stable\ncrash C2 now\nstep 30\njoin C4\nstep 40")
	w := s.World()
	only, err := parsePlotPartitions(w, "t-3,t-10..t-14,t-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"lag", "timeline"} {
		all, err := s.recordBranch(s.cur.name, chart.NeedOf(kind), plotRecording{})
		if err != nil {
			t.Fatal(err)
		}
		some, err := s.recordBranch(s.cur.name, chart.NeedOf(kind), plotRecording{only: only})
		if err != nil {
			t.Fatal(err)
		}
		if want := all.Only(only); !reflect.DeepEqual(some, want) {
			t.Fatalf("%s: the run recorded for %v differs from the whole run cut to them", kind, only)
		}
		if len(some.Frames) == 0 || len(some.Frames[0].Lag)+len(some.Frames[0].Owners) != len(only) {
			t.Fatalf("%s: a frame recorded for %d partitions holds %d lags and %d owners", kind, len(only), len(some.Frames[0].Lag), len(some.Frames[0].Owners))
		}
	}
	defer func(l limit) { limitPlotSamples = l }(limitPlotSamples)
	limitPlotSamples.max = (w.Tick + 1) * 10 // 9 partitions and a total fit; 41 series do not
	if _, err := s.Exec("plot timeline"); err == nil || !strings.Contains(err.Error(), "41 series") {
		t.Errorf("plot timeline of every partition over the limit: %v", err)
	}
	for _, kind := range []string{"lag", "timeline"} {
		if _, err := s.Exec("plot " + kind + " --partitions t-3,t-10..t-14,t-1"); err != nil {
			t.Errorf("plot %s of 7 partitions within the limit: %v", kind, err)
		}
	}
}
