package chart_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/kerneltest"
	"github.com/kgrepl/kgrepl/sim"
)

var rewrite = flag.Bool("rewrite", false, "write the golden charts in testdata/ anew")

func demoSession(t *testing.T, n int) *kernel.Session { return kerneltest.Demo(t, n) }

func record(t *testing.T, s *kernel.Session, need chart.Need) *chart.Run {
	t.Helper()
	rec := chart.NewRecorder(s.Branch(), need)
	if err := s.Replay(rec.Visit); err != nil {
		t.Fatal(err)
	}
	return rec.Finish(s.World())
}

func golden(t *testing.T, name string, got []byte) {
	kerneltest.Golden(t, "kernel/chart", name, got, *rewrite)
}

// svgTexts parses an SVG (it must be well-formed) and returns its text.
func svgTexts(t *testing.T, b []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var out []string
	inText := false
	sawSVG := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if tk.Name.Local == "svg" {
				sawSVG = true
			}
			inText = tk.Name.Local == "text"
		case xml.CharData:
			if inText {
				out = append(out, string(tk))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if !sawSVG {
		t.Fatal("no <svg> element")
	}
	return out
}

func contains(texts []string, s string) bool {
	for _, t := range texts {
		if t == s {
			return true
		}
	}
	return false
}

func TestChartsGolden(t *testing.T) {
	for _, n := range []int{2, 3, 11} {
		s := demoSession(t, n)
		if n == 11 {
			// Demo 11 ends on its restart branch; the story (the LSO, the timeout) is on main.
			if _, err := s.Exec("switch main"); err != nil {
				t.Fatal(err)
			}
		}
		run := record(t, s, chart.NeedAll)
		for _, kind := range chart.Kinds {
			c, err := chart.Build(kind, chart.Options{}, run)
			if err != nil {
				t.Fatal(err)
			}
			svg, err := c.SVG()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("%s-demo%02d.svg", kind, n), svg)
			texts := svgTexts(t, svg)
			for _, name := range c.Names {
				if !contains(texts, name) {
					t.Errorf("demo %d %s: legend entry %q is not in the SVG", n, kind, name)
				}
			}
			// The same run charted again gives the same bytes.
			c2, _ := chart.Build(kind, chart.Options{}, run)
			svg2, _ := c2.SVG()
			if !bytes.Equal(svg, svg2) {
				t.Errorf("demo %d %s: two renderings differ", n, kind)
			}
		}
	}
}

// TestReplayDeterministic records the same branch twice: the same frames.
func TestReplayDeterministic(t *testing.T) {
	s := demoSession(t, 7)
	a, b := record(t, s, chart.NeedAll), record(t, s, chart.NeedAll)
	for _, kind := range chart.Kinds {
		ca, _ := chart.Build(kind, chart.Options{}, a)
		cb, _ := chart.Build(kind, chart.Options{}, b)
		sa, _ := ca.SVG()
		sb, _ := cb.SVG()
		if !bytes.Equal(sa, sb) {
			t.Errorf("%s: two replays chart differently", kind)
		}
	}
}

func TestTimelineLegendNamesEveryClient(t *testing.T) {
	for _, n := range []int{2, 3, 6, 7, 11} {
		s := demoSession(t, n)
		run := record(t, s, chart.NeedOwners)
		c := chart.Timeline(chart.Options{}, run)
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, svg)
		for _, cl := range s.World().Clients() {
			if !contains(texts, cl) {
				t.Errorf("demo %d: the timeline's legend does not name %s", n, cl)
			}
		}
		for _, p := range []string{"o0", "o1", "o2", "p0", "p1", "p2"} {
			if !contains(texts, p) {
				t.Errorf("demo %d: the timeline has no row for %s", n, p)
			}
		}
	}
}

// TestPauseMatchesMeter: the chart's data are the pause meter's, and the
// rebalance labels name every generation the meter has an entry for.
func TestPauseMatchesMeter(t *testing.T) {
	for _, n := range []int{2, 3} {
		s := demoSession(t, n)
		w := s.World()
		run := record(t, s, chart.NeedPause)
		last := run.Frames[len(run.Frames)-1]
		if last.Tick != w.Tick || last.Pause != w.Meter.Total {
			t.Errorf("demo %d: last frame tick %d pause %d, world tick %d meter %d", n, last.Tick, last.Pause, w.Tick, w.Meter.Total)
		}
		for _, f := range run.Frames {
			if f.Tick < w.Meter.Series.Len() && w.Meter.Series.At(f.Tick) != f.Pause {
				t.Errorf("demo %d tick %d: frame says %d, the meter's series %d", n, f.Tick, f.Pause, w.Meter.Series.At(f.Tick))
				break
			}
		}
		c := chart.Pause(chart.Options{}, run)
		svg, _ := c.SVG()
		texts := svgTexts(t, svg)
		for _, e := range w.Meter.Entries {
			label := fmt.Sprintf("gen %d: %d paused", e.Generation, len(e.Partitions))
			if !contains(texts, label) {
				t.Errorf("demo %d: no rebalance label %q", n, label)
			}
		}
	}
}

// TestPauseOverlay is demo 2 against demo 3 in one picture.
func TestPauseOverlay(t *testing.T) {
	eager := demoSession(t, 2)
	coop := demoSession(t, 3)
	a, b := record(t, eager, chart.NeedPause), record(t, coop, chart.NeedPause)
	a.Name, b.Name = "eager", "coop"
	c := chart.Pause(chart.Options{}, a, b)
	svg, _ := c.SVG()
	texts := svgTexts(t, svg)
	for _, want := range []string{
		fmt.Sprintf("eager · range: %d in %d rebalance(s)", eager.World().Meter.Total, len(eager.World().Meter.Entries)),
		fmt.Sprintf("coop · cooperative-sticky: %d in %d rebalance(s)", coop.World().Meter.Total, len(coop.World().Meter.Entries)),
	} {
		if !contains(texts, want) {
			t.Errorf("no legend entry %q in %q", want, c.Names)
		}
	}
	if eager.World().Meter.Total <= coop.World().Meter.Total {
		t.Errorf("eager pause %d is not above cooperative %d", eager.World().Meter.Total, coop.World().Meter.Total)
	}
}

func TestTimelineOwnership(t *testing.T) {
	s := demoSession(t, 7)
	w := s.World()
	run := record(t, s, chart.NeedOwners)
	// At the end every partition is consumed by the member that owns it.
	last := run.Frames[len(run.Frames)-1]
	for i, tp := range w.Layout().Inputs() {
		var want string
		for _, c := range w.Clients() {
			for _, o := range w.Member(c).Owned {
				if o == tp && w.Member(c).Alive {
					want = c
				}
			}
		}
		if last.Owners[i].Owner != want {
			t.Errorf("%s: last owner %q, want %q", tp, last.Owners[i].Owner, want)
		}
	}
	// Somewhere C2 processes orders-2 as a zombie while C1 owns it.
	idx := -1
	for i, tp := range w.Layout().Inputs() {
		if tp == (sim.TopicPartition{Topic: "orders", Partition: 2}) {
			idx = i
		}
	}
	found := false
	for _, f := range run.Frames {
		if f.Owners[idx].Zombie == "C2" && f.Owners[idx].Owner == "C1" {
			found = true
		}
	}
	if !found {
		t.Error("demo 7: no tick where C2 processes orders-2 as a zombie while C1 owns it")
	}
}

func TestDuplicatesPerIsolation(t *testing.T) {
	s := demoSession(t, 11)
	if _, err := s.Exec("switch main"); err != nil {
		t.Fatal(err)
	}
	run := record(t, s, chart.NeedDelivery)
	if !run.Transactional {
		t.Fatal("demo 11 is transactional")
	}
	last := run.Frames[len(run.Frames)-1]
	rc, ru := s.World().Delivery("read_committed"), s.World().Delivery("read_uncommitted")
	if last.Duplicates["read_committed"] != rc.Duplicates || last.Duplicates["read_uncommitted"] != ru.Duplicates {
		t.Errorf("last frame duplicates %v, world rc %d ru %d", last.Duplicates, rc.Duplicates, ru.Duplicates)
	}
	held := false
	for _, f := range run.Frames {
		held = held || f.HeldBack > 0
	}
	if !held {
		t.Error("demo 11: the LSO never held a committed invoice back")
	}
	c := chart.Duplicates(chart.Options{}, run)
	for _, want := range []string{"duplicates (read_committed)", "duplicates (read_uncommitted)", "lost (read_committed)",
		"lost (read_uncommitted)", "held back by the LSO (read_committed)"} {
		if !contains(c.Names, want) {
			t.Errorf("no legend entry %q (have %q)", want, c.Names)
		}
	}
}

func TestPNGDecodes(t *testing.T) {
	s := demoSession(t, 4)
	run := record(t, s, chart.NeedAll)
	for _, kind := range chart.Kinds {
		c, err := chart.Build(kind, chart.Options{}, run)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.PNG()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		wantW := int(float64(c.Width) / 72 * chart.PNGDPI)
		if d := img.Bounds().Dx() - wantW; d < -1 || d > 1 {
			t.Errorf("%s: %d pixels wide, want %d", kind, img.Bounds().Dx(), wantW)
		}
		b2, _ := c.PNG()
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: two PNG renderings differ", kind)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	s := demoSession(t, 1)
	run := record(t, s, chart.NeedAll)
	if _, err := chart.Build("pie", chart.Options{}, run); err == nil || !strings.Contains(err.Error(), "pause duplicates lag timeline") {
		t.Errorf("Build(pie): %v", err)
	}
	if _, err := chart.Build("timeline", chart.Options{}, run, run); err == nil || !strings.Contains(err.Error(), "one branch") {
		t.Errorf("Build(timeline, two runs): %v", err)
	}
	if _, err := chart.Build("pause", chart.Options{}); err == nil {
		t.Error("Build with no run: no error")
	}
}

// TestZombieLegendOnlyWithZombies: the timeline explains zombie processing
// when there is some (demo 7), and not otherwise (demo 2).
func TestZombieLegendOnlyWithZombies(t *testing.T) {
	for n, want := range map[int]bool{2: false, 3: false, 7: true} {
		c := chart.Timeline(chart.Options{}, record(t, demoSession(t, n), chart.NeedOwners))
		if got := contains(c.Names, "zombie processing"); got != want {
			t.Errorf("demo %d: zombie processing in the legend %v, want %v (legend %q)", n, got, want, c.Names)
		}
	}
}

// TestOptions: the size, title and window of a chart follow the options,
// SVG and PNG have one size, and a size out of bounds is an error naming the bound.
func TestOptions(t *testing.T) {
	run := record(t, demoSession(t, 3), chart.NeedAll)
	c, err := chart.Build("pause", chart.Options{Width: 800, Height: 500, Title: "My pause", From: 10, To: 30}, run)
	if err != nil {
		t.Fatal(err)
	}
	svg, _ := c.SVG()
	if !bytes.Contains(svg, []byte(`width="800" height="500" viewBox="0 0 800 500"`)) {
		t.Errorf("SVG is not 800x500 px: %s", svg[:200])
	}
	if texts := svgTexts(t, svg); !contains(texts, "My pause") {
		t.Errorf("no title My pause in %q", texts)
	}
	b, _ := c.PNG()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 800 || img.Bounds().Dy() != 500 {
		t.Errorf("PNG is %v, want 800x500", img.Bounds())
	}
	if c.Plot.X.Min != 10 || c.Plot.X.Max != 31 {
		t.Errorf("x axis %v..%v, want 10..31", c.Plot.X.Min, c.Plot.X.Max)
	}
	for _, o := range []chart.Options{{Width: 100}, {Width: 5000}, {Height: 10}, {Height: 4001}} {
		if _, err := chart.Build("lag", o, run); err == nil || !strings.Contains(err.Error(), "4000") {
			t.Errorf("%+v: %v, want an error naming the bounds", o, err)
		}
	}
}

// TestSVGTextIsOutlined: an SVG chart draws its letters as paths (so no
// viewer substitutes a font) and keeps the text, transparent, for search.
func TestSVGTextIsOutlined(t *testing.T) {
	c, _ := chart.Build("timeline", chart.Options{}, record(t, demoSession(t, 2), chart.NeedAll))
	svg, _ := c.SVG()
	if n := bytes.Count(svg, []byte("<text")); n == 0 || n != bytes.Count(svg, []byte(`fill-opacity="0">`)) {
		t.Errorf("%d text elements, not all of them transparent", n)
	}
	if n := bytes.Count(svg, []byte("<use href=")); n < 100 {
		t.Errorf("%d glyphs placed: the letters are not drawn as outlines", n)
	}
}

// TestXAxisPlacesTicks: a chart says where its x axis lies, so a notebook's
// cursor can stand on a tick: inside the chart, the ends at the axis's
// values, and the same data area whatever the format drawn.
func TestXAxisPlacesTicks(t *testing.T) {
	s := demoSession(t, 2)
	run := record(t, s, chart.NeedPause)
	c, err := chart.Build("pause", chart.Options{From: 5, To: 30, Width: 640, Height: 300}, run)
	if err != nil {
		t.Fatal(err)
	}
	if (c.XAxis() != chart.XAxis{}) {
		t.Errorf("an undrawn chart's axis: %+v", c.XAxis())
	}
	if _, err := c.SVG(); err != nil {
		t.Fatal(err)
	}
	ax := c.XAxis()
	if ax.Left <= 0.03 || ax.Right >= 1 || ax.Right-ax.Left < 0.7 || ax.Min != 5 || ax.Max < 30 || ax.Max > 31 {
		t.Fatalf("the x axis of a 640 px pause chart of ticks 5..30: %+v", ax)
	}
	if ax.At(ax.Min) != ax.Left || ax.At(ax.Max) != ax.Right {
		t.Errorf("At(min) %v At(max) %v, want %v %v", ax.At(ax.Min), ax.At(ax.Max), ax.Left, ax.Right)
	}
	if mid := ax.At((ax.Min + ax.Max) / 2); mid < (ax.Left+ax.Right)/2-1e-9 || mid > (ax.Left+ax.Right)/2+1e-9 {
		t.Errorf("the middle tick at %v, want %v", mid, (ax.Left+ax.Right)/2)
	}
	if _, err := c.PNG(); err != nil {
		t.Fatal(err)
	}
	if c.XAxis() != ax {
		t.Errorf("drawn as PNG the axis moved: %+v, as SVG %+v", c.XAxis(), ax)
	}
}
