package kernel

import (
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/draw"
)

// svgAttr finds an attribute's values in an SVG, in document order.
func svgAttr(doc, elemClass, attr string) []string {
	re := regexp.MustCompile(`<g class="` + regexp.QuoteMeta(elemClass) + `"[^>]*? ` + attr + `="([^"]*)"`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// diagramCells is, by partition, the offsets of the log cells a diagram
// draws, and the rows (distinct y) they stand in.
func diagramCells(t *testing.T, doc string) (offs map[string][]int, rows map[string]int) {
	t.Helper()
	re := regexp.MustCompile(`<g class="cell [^"]*" data-partition="([^"]+)" data-offset="(\d+)">\s*<title>[^<]*</title>\s*<path d="M[\d.]+ ([\d.]+)`)
	offs, ys := map[string][]int{}, map[string]map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		off, _ := strconv.Atoi(m[2])
		offs[m[1]] = append(offs[m[1]], off)
		if ys[m[1]] == nil {
			ys[m[1]] = map[string]bool{}
		}
		ys[m[1]][m[3]] = true
	}
	rows = map[string]int{}
	for tp, y := range ys {
		rows[tp] = len(y)
	}
	return offs, rows
}

// TestDiagramOfABigWorld: past draw.MaxLogs partitions a diagram draws the
// first input partitions and the output's, says so in a line of the
// picture and in its answer; a long log draws its last cells, whole rows
// of the rows its logs share, with a mark of how many it leaves out; past
// draw.MaxMemberRows processes the first are drawn and the others counted;
// the picture stays within a PNG's pixels and a PDF page's side.
func TestDiagramOfABigWorld(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:150 --members 120\nproduce t-1 2000\nproduce t-98 500\nstep 30")
	r := one(t, s, "diagram")
	doc := html.UnescapeString(r.SVG)
	wellFormed(t, "diagram", doc)
	const note = "100 of 151 partitions' logs drawn: {invoices-0 t-0..t-98}; --partitions picks others"
	if !strings.Contains(doc, note) || !strings.Contains(r.Text, note) {
		t.Errorf("the picture and its answer should say %q; answer %q", note, r.Text)
	}
	logs := svgAttr(doc, "log", "data-partition")
	want := []string{}
	for i := 0; i < 99; i++ {
		want = append(want, fmt.Sprintf("t-%d", i))
	}
	want = append(want, "invoices-0")
	if strings.Join(logs, " ") != strings.Join(want, " ") {
		t.Errorf("logs drawn %v, want t-0..t-98 and invoices-0", logs)
	}
	offs, rows := diagramCells(t, doc)
	w := s.World()
	perLog := 3 // 300 rows shared by 100 logs
	cut := map[string]string{}
	firsts := svgAttr(doc, "log-cut", "data-first")
	for i, tp := range svgAttr(doc, "log-cut", "data-partition") {
		cut[tp] = firsts[i]
	}
	for _, tp := range []string{"t-0", "t-1", "t-98"} {
		p, _ := w.Layout().ParsePartition(tp)
		hw := w.Log(p).HW()
		o := offs[tp]
		sort.Ints(o)
		if len(o) == 0 || o[len(o)-1] != hw-1 || o[len(o)-1]-o[0]+1 != len(o) {
			t.Fatalf("%s: cells %d..%d (%d), want the last ones up to %d", tp, o[0], o[len(o)-1], len(o), hw-1)
		}
		switch {
		case hw <= perLog*10: // t-0: 10 cells, whole
			if o[0] != 0 || cut[tp] != "" {
				t.Errorf("%s of %d cells: drawn from %d, cut %q; want whole", tp, hw, o[0], cut[tp])
			}
		default:
			if rows[tp] != perLog || len(o)%perLog != 0 || len(o) > perLog*draw.MaxCellsPerRow {
				t.Errorf("%s: %d cells in %d rows, want %d full rows", tp, len(o), rows[tp], perLog)
			}
			if cut[tp] != strconv.Itoa(o[0]) {
				t.Errorf("%s: the cut mark says from %q, the cells start at %d", tp, cut[tp], o[0])
			}
			if mark := fmt.Sprintf("%s earlier", group(o[0])); !strings.Contains(doc, mark) {
				t.Errorf("%s: no mark %q", tp, mark)
			}
		}
	}
	// The committed offset of t-1 (below the cells drawn) stands at the edge.
	if !strings.Contains(doc, "← committed") {
		t.Error("t-1's committed offset, before the cells drawn, is not marked at the edge")
	}
	if n := len(svgAttr(doc, "member", "data-client")); n != draw.MaxMemberRows {
		t.Errorf("%d member boxes, want %d", n, draw.MaxMemberRows)
	}
	if !strings.Contains(doc, "20 more member processes") {
		t.Error("no line counting the member processes not drawn")
	}
	m := regexp.MustCompile(`<svg[^>]* width="(\d+)" height="(\d+)"`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no size on the svg")
	}
	wpx, _ := strconv.Atoi(m[1])
	hpx, _ := strconv.Atoi(m[2])
	if hpx > limitPDFSide.max || wpx*hpx > limitPNGPixels.max {
		t.Errorf("a %d x %d px diagram is past a PDF's side or a PNG's pixels", wpx, hpx)
	}
}

// TestDiagramPartitions: --partitions draws the logs it names, in its
// order, inputs and the output alike, each sharing the rows (one log draws
// long); bad lists are refused naming the item and the rule, the session
// left as it was.
func TestDiagramPartitions(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:150 --members 3\nproduce t-1 5000\nstep 3")
	r := one(t, s, "diagram --partitions invoices-0,t-1,t-3..t-4")
	r.SVG = html.UnescapeString(r.SVG)
	if got := strings.Join(svgAttr(r.SVG, "log", "data-partition"), " "); got != "invoices-0 t-1 t-3 t-4" {
		t.Errorf("logs drawn %q", got)
	}
	const note = "4 of 151 partitions' logs drawn: {invoices-0 t-1 t-3 t-4}; --partitions picks others"
	if !strings.Contains(r.SVG, note) {
		t.Errorf("no line %q", note)
	}
	offs, rows := diagramCells(t, r.SVG)
	if n := len(offs["t-1"]); rows["t-1"] != 75 || n >= 5010 {
		t.Errorf("t-1 alone with three short logs: %d cells in %d rows, want its last 75 rows (300 rows shared by 4)", n, rows["t-1"])
	}
	one1 := one(t, s, "diagram --partitions t-1")
	if o, _ := diagramCells(t, one1.SVG); len(o["t-1"]) != 5010 {
		t.Errorf("t-1 alone: %d cells drawn, want its 5,010 (300 rows)", len(o["t-1"]))
	}
	before := views(t, s)
	for _, c := range []struct{ line, want string }{
		{"diagram --partitions t-5..t-1", "the range t-5..t-1 runs backwards or across topics"},
		{"diagram --partitions t-149..invoices-0", "runs backwards or across topics"},
		{"diagram --partitions t-5,t-3..t-6", "t-5 is named twice"},
		{"diagram --partitions t-150", "no partition t-150"},
		{"diagram --partitions invoices-1", "no partition invoices-1"},
		{"diagram --partitions t-1,,t-2", "an empty item"},
		{"diagram --partitions ,", "an empty item"},
		{"diagram --partitions t-0..t-149", "names 150 partitions, and a diagram draws at most 100 logs"},
	} {
		_, err := s.Exec(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "e.g. t-0..t-2,invoices-0") {
			t.Errorf("%s: %v, want an error saying %q and the form", c.line, err, c.want)
		}
	}
	if after := views(t, s); after != before {
		t.Errorf("a refused diagram changed the session: %s", firstLineDiff(after, before))
	}
}

// TestDiagramOfThePageDrawsWhole: the page's world names no cut, and its
// diagram draws every log whole.
func TestDiagramOfThePageDrawsWhole(t *testing.T) {
	s := NewSession()
	runLines(t, s, "run until stable\nstep 20")
	r := one(t, s, "diagram")
	if strings.Contains(r.SVG, "log-cut") || strings.Contains(r.SVG, "logs drawn") || strings.Contains(r.Text, ";") {
		t.Errorf("the page's diagram says it leaves something out: %s", r.Text)
	}
	offs, _ := diagramCells(t, r.SVG)
	w := s.World()
	for _, tp := range append(w.Layout().Inputs(), w.Layout().Outputs()...) {
		if n := len(offs[tp.String()]); n != w.Log(tp).HW() {
			t.Errorf("%s: %d cells drawn of %d", tp, n, w.Log(tp).HW())
		}
	}
}

// TestAnimatedDiagramOfLongLogs: an animation's logs share fewer rows, so
// long logs draw their last cells in each frame; an animation of more logs
// than that has rows for, a row each, is refused saying what to do.
func TestAnimatedDiagramOfLongLogs(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:150 --members 3\nproduce t-1 5000\nproduce --rate 1/tick t\nstep 121")
	// 10 frames: 200,000 cells / (10 frames x 30 a row) = 666 rows, capped
	// at 300 shared by 2 logs: t-1 draws its last 150 rows.
	r := one(t, s, "diagram --ticks 1..10 --partitions t-1,invoices-0") // t-1 is long from tick 1
	if !strings.Contains(r.Text, "10 frames") || !strings.Contains(r.Text, "1 of the logs drawn from a later cell") {
		t.Errorf("animation: %s", r.Text)
	}
	offs, rows := diagramCells(t, r.SVG)
	if n := len(offs["t-1"]); rows["t-1"] < 150 || n == 0 {
		t.Errorf("t-1 in 10 frames: %d cells in %d rows, want 150 rows in the last frame", n, rows["t-1"])
	}
	// Every frame draws t-1 from one first cell, so its cells stay in place
	// (each drawn once): one cut mark, the same in all frames.
	firsts := map[string]bool{}
	for _, m := range regexp.MustCompile(`<g class="log-cut" data-partition="t-1" data-first="(\d+)"`).FindAllStringSubmatch(r.SVG, -1) {
		firsts[m[1]] = true
	}
	if sort.Ints(offs["t-1"]); len(firsts) != 1 || !firsts[strconv.Itoa(offs["t-1"][0])] {
		t.Errorf("t-1's frames are cut at %v, want one first cell, %d", firsts, offs["t-1"][0])
	}
	// 120 frames: 200,000 / (120 x 30) = 55 rows for 100 logs, a row each:
	// 99 inputs of 30 cells and the output's 20 a frame are too many.
	_, err := s.Exec("diagram --ticks 0..119")
	want := "diagram --ticks 0..119: 120 frames x 2990 cells drawn of 100 logs, a row each (fewer ticks, or --partitions picks fewer logs) = 358,800 is over the limit (at most 200,000 log cells drawn in an animated diagram: frames x cells)"
	if err == nil || err.Error() != want {
		t.Errorf("an animation of 120 frames of 100 logs:\n got %v\nwant %s", err, want)
	}
	if _, err := s.Exec("diagram --ticks 100..119 --partitions t-0..t-1"); err != nil {
		t.Errorf("20 frames of 2 logs: %v", err)
	}
}

// TestSequenceOfABigWorld: a sequence diagram of more than MaxSeqRows
// rows draws the first of them on at most MaxSeqLanes lanes and says what
// it leaves out and where the rest starts; that range draws on from there.
func TestSequenceOfABigWorld(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:60 --members 30\nstep 30")
	w := s.World()
	all := draw.CountMessages(w, draw.SeqOptions{To: -1})
	if all <= draw.MaxSeqRows {
		t.Fatalf("only %d messages: the test needs more than %d", all, draw.MaxSeqRows)
	}
	r := one(t, s, "sequence")
	lanes := svgAttr(r.SVG, "lane", "data-lane")
	if len(lanes) != draw.MaxSeqLanes || lanes[1] != "B1" {
		t.Errorf("lanes %v: want %d, B1 second", lanes, draw.MaxSeqLanes)
	}
	// 21 lanes are 5,744 px wide: the rows fit 48,000,000 pixels.
	sent := svgAttr(r.SVG, "message", "data-sent")
	notes := len(svgAttr(r.SVG, "note", "data-kind"))
	if n := len(sent) + notes; n < 300 || n >= draw.MaxSeqRows {
		t.Errorf("%d messages and %d notes drawn, want the rows that fit 48,000,000 pixels", len(sent), notes)
	}
	cutOf := func(sent []string) string {
		last, _ := strconv.Atoi(sent[len(sent)-1])
		return fmt.Sprintf("%s of %s messages drawn, to tick %d (--ticks %d.. draws on); lanes of 20 of 30 members (the first the range names); --ticks, --type or --member narrows",
			group(len(sent)), group(all), last, last+1)
	}
	cut := cutOf(sent)
	if !strings.Contains(html.UnescapeString(r.SVG), cut) || !strings.Contains(r.Text, cut) {
		t.Errorf("the picture and its answer should say %q; answer %q", cut, r.Text)
	}
	if m := regexp.MustCompile(`<svg[^>]* width="(\d+)" height="(\d+)"`).FindStringSubmatch(r.SVG); m == nil {
		t.Error("no size on the svg")
	} else if w, _ := strconv.Atoi(m[1]); w*atoi(m[2]) > limitPNGPixels.max || atoi(m[2]) > limitPDFSide.max {
		t.Errorf("a %s x %s px sequence diagram is past a PNG's pixels or a PDF page's side", m[1], m[2])
	}
	// Mermaid has no pixels: the first MaxSeqRows rows.
	mm := one(t, s, "sequence --mermaid")
	arrow := regexp.MustCompile(`^    \S+?(-->>|->>|--x|-x|--\)|-\))\S+: (t=(\d+) )?`)
	note := regexp.MustCompile(`^    Note over \S+: (t=(\d+) )?`)
	var msent []string
	rowsN, tick := 0, ""
	for _, line := range strings.Split(mm.Text, "\n") {
		m, isNote := arrow.FindStringSubmatch(line), false
		if m == nil {
			if m = note.FindStringSubmatch(line); m == nil {
				continue
			}
			isNote = true
			m = append([]string{m[0], ""}, m[1:]...)
		}
		rowsN++
		if m[3] != "" {
			tick = m[3]
		}
		if !isNote {
			msent = append(msent, tick)
		}
	}
	if rowsN != draw.MaxSeqRows || !strings.HasSuffix(mm.Text, "%% "+cutOf(msent)) {
		t.Errorf("Mermaid: %d rows, want %d, ending with the cut as a comment %q; ends %q", rowsN, draw.MaxSeqRows, cutOf(msent), mm.Text[max(0, len(mm.Text)-200):])
	}
	last, _ := strconv.Atoi(sent[len(sent)-1])
	on := one(t, s, fmt.Sprintf("sequence --ticks %d..", last+1))
	if first := svgAttr(on.SVG, "message", "data-sent"); len(first) == 0 || first[0] != strconv.Itoa(last+1) {
		t.Errorf("--ticks %d.. starts at %v", last+1, first[:min(1, len(first))])
	}
	// One member's messages fit: its lane and B1's, nothing left out.
	c3 := one(t, s, "sequence --member C3 --ticks 0..10")
	if strings.Contains(c3.Text, "messages drawn") || len(svgAttr(c3.SVG, "lane", "data-lane")) != 2 {
		t.Errorf("C3's messages of ticks 0..10: %s, lanes %v", c3.Text, svgAttr(c3.SVG, "lane", "data-lane"))
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
