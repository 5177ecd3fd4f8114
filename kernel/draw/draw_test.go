package draw_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/kernel/kerneltest"
	"github.com/kgrepl/kgrepl/sim"
)

var rewrite = flag.Bool("rewrite", false, "write the golden pictures in testdata/ anew")

// demoWorld runs demo n in a fresh session and returns it.
func demoWorld(t *testing.T, n int) *kernel.Session { return kerneltest.Demo(t, n) }

// golden compares got with testdata/name, or writes it with -rewrite.
func golden(t *testing.T, name string, got []byte) {
	kerneltest.Golden(t, "kernel/draw", name, got, *rewrite)
}

// element is a parsed SVG element with its attributes and text.
type element struct {
	name   string
	attrs  map[string]string
	text   string
	path   []string            // the classes of the enclosing <g> elements, outermost first
	group  map[string]string   // the attributes of the innermost enclosing <g>
	groups []map[string]string // the attributes of every enclosing <g>, outermost first
	order  int                 // the element's place in the document
	anc    []int               // its ancestors' places
}

// parseSVG checks that s is well-formed XML with an <svg> root and returns
// its elements in document order.
func parseSVG(t *testing.T, s string) []element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	var out []element
	var stack []element
	root := ""
	order := 0
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
			e := element{name: tk.Name.Local, attrs: map[string]string{}, order: order}
			order++
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			if root == "" {
				root = e.name
			}
			for _, p := range stack {
				e.anc = append(e.anc, p.order)
				if p.name == "g" {
					e.path = append(e.path, p.attrs["class"])
					e.group = p.attrs
					e.groups = append(e.groups, p.attrs)
				}
			}
			stack = append(stack, e)
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		case xml.EndElement:
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			out = append(out, e)
		}
	}
	if root != "svg" {
		t.Fatalf("root element is %q, want svg", root)
	}
	return out
}

// parseSVGDeep is parseSVG: every element knows all its enclosing groups.
func parseSVGDeep(t *testing.T, s string) []element { return parseSVG(t, s) }

// firstPath is the first <path> inside the element g.
func firstPath(t *testing.T, els []element, g element) element {
	t.Helper()
	best := element{order: -1}
	for _, e := range els {
		if e.name == "path" && slices.Contains(e.anc, g.order) && (best.order < 0 || e.order < best.order) {
			best = e
		}
	}
	if best.order < 0 {
		t.Fatalf("no path in %v", g.attrs)
	}
	return best
}

// pathPoints reads the points of a path's d (M, L, C: every coordinate pair).
func pathPoints(t *testing.T, e element) [][2]float64 {
	t.Helper()
	f := strings.FieldsFunc(e.attrs["d"], func(r rune) bool { return r == ' ' || r == 'M' || r == 'L' || r == 'C' || r == 'Q' || r == 'Z' })
	var pts [][2]float64
	for i := 0; i+1 < len(f); i += 2 {
		x, err1 := strconv.ParseFloat(f[i], 64)
		y, err2 := strconv.ParseFloat(f[i+1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("path d %q", e.attrs["d"])
		}
		pts = append(pts, [2]float64{x, y})
	}
	return pts
}

// pathStart is where a path starts.
func pathStart(t *testing.T, e element) (float64, float64) {
	p := pathPoints(t, e)
	return p[0][0], p[0][1]
}

// lineEnds are the x of a path's first and last points.
func lineEnds(t *testing.T, e element) (float64, float64) {
	p := pathPoints(t, e)
	return p[0][0], p[len(p)-1][0]
}

// num1 writes a coordinate as the pictures do (one decimal at most).
func num1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func inGroup(e element, class string) bool {
	for _, c := range e.path {
		if c == class {
			return true
		}
	}
	return false
}

func TestWorldDiagramGolden(t *testing.T) {
	for _, n := range []int{2, 3, 11} {
		s := demoWorld(t, n)
		got := draw.World(s.World(), draw.WorldOptions{Branch: s.Branch()}).SVG(0, 0)
		golden(t, fmt.Sprintf("diagram-demo%02d.svg", n), []byte(got))
		if again := draw.World(s.World(), draw.WorldOptions{Branch: s.Branch()}).SVG(0, 0); again != got {
			t.Errorf("demo %d: the diagram differs between two drawings of the same world", n)
		}
	}
}

// TestWorldDiagramContent reads the diagram back: one cell per record of
// every log, the HW and committed offset of each, a box per member process,
// and the coordinator's state and generation.
func TestWorldDiagramContent(t *testing.T) {
	for _, n := range []int{2, 3, 11, 12} {
		s := demoWorld(t, n)
		w := s.World()
		els := parseSVG(t, draw.World(w, draw.WorldOptions{}).SVG(0, 0))
		cells := map[string][]int{}
		logs := map[string]map[string]string{}
		var texts []string
		members := map[string]bool{}
		for _, e := range els {
			if e.name == "text" {
				texts = append(texts, e.text)
			}
			if e.name == "g" && e.attrs["class"] == "log" {
				logs[e.attrs["data-partition"]] = e.attrs
			}
			if e.name == "g" && e.attrs["class"] == "member" {
				members[e.attrs["data-client"]+"/"+e.attrs["data-process"]] = true
			}
			if e.name == "g" && strings.HasPrefix(e.attrs["class"], "cell ") {
				off, err := strconv.Atoi(e.attrs["data-offset"])
				if err != nil {
					t.Fatalf("cell without data-offset: %v", e.attrs)
				}
				cells[e.attrs["data-partition"]] = append(cells[e.attrs["data-partition"]], off)
			}
		}
		all := append(append([]sim.TopicPartition{}, w.Layout().Inputs()...), w.Layout().Outputs()...)
		for _, tp := range all {
			l := w.Log(tp)
			got := cells[tp.String()]
			if len(got) != l.HW() {
				t.Errorf("demo %d: %s has %d cells in the diagram, the log has %d records", n, tp, len(got), l.HW())
			}
			for i, off := range got {
				if off != i {
					t.Errorf("demo %d: %s cell %d says offset %d", n, tp, i, off)
					break
				}
			}
			a := logs[tp.String()]
			if a == nil {
				t.Errorf("demo %d: no log for %s", n, tp)
				continue
			}
			if a["data-hw"] != strconv.Itoa(l.HW()) || a["data-lso"] != strconv.Itoa(l.LSO()) {
				t.Errorf("demo %d: %s drawn with HW %s LSO %s, want %d %d", n, tp, a["data-hw"], a["data-lso"], l.HW(), l.LSO())
			}
			if rec, ok := w.Group.Offsets.Committed(tp); ok && a["data-committed"] != strconv.Itoa(rec.Offset) {
				t.Errorf("demo %d: %s committed pointer %q, want %d", n, tp, a["data-committed"], rec.Offset)
			}
		}
		for _, c := range w.Clients() {
			m := w.Member(c)
			if !members[c+"/"+strconv.Itoa(m.Inc)] {
				t.Errorf("demo %d: no box for %s process %d", n, c, m.Inc)
			}
		}
		joined := strings.Join(texts, "\n")
		want := fmt.Sprintf("state %s · generation %d", w.Group.State(), w.Group.Describe().Generation)
		if !strings.Contains(joined, want) {
			t.Errorf("demo %d: the diagram does not say %q", n, want)
		}
		// Aborted invoices are marked ✗, markers C / A.
		for _, tp := range w.Layout().Outputs() {
			for _, c := range w.Log(tp).Cells.All() {
				if c.Txn == sim.TxnAborted && c.IsData() && !strings.Contains(joined, c.Source+"✗") {
					t.Errorf("demo %d: aborted %s not drawn with ✗", n, c.Value)
				}
			}
		}
	}
}

func TestWorldDiagramPackets(t *testing.T) {
	s := kernel.NewSession()
	if _, err := s.Exec("join C2; step 2"); err != nil {
		t.Fatal(err)
	}
	w := s.World()
	els := parseSVG(t, draw.World(w, draw.WorldOptions{}).SVG(0, 0))
	n := 0
	for _, e := range els {
		if e.name == "g" && e.attrs["class"] == "packet" {
			n++
		}
	}
	if n != len(w.InFlight()) || n == 0 {
		t.Errorf("%d packets drawn, %d in flight", n, len(w.InFlight()))
	}
}

func TestSequenceGolden(t *testing.T) {
	cases := []struct {
		demo     int
		from, to int
	}{{2, 0, 20}, {3, 0, 20}, {11, 30, 60}}
	for _, c := range cases {
		s := demoWorld(t, c.demo)
		opt := draw.SeqOptions{From: c.from, To: c.to, Branch: s.Branch()}
		svg := draw.Sequence(s.World(), opt).SVG(0, 0)
		golden(t, fmt.Sprintf("sequence-demo%02d.svg", c.demo), []byte(svg))
		mm := draw.Mermaid(s.World(), opt)
		golden(t, fmt.Sprintf("sequence-demo%02d.mmd", c.demo), []byte(mm))
		if draw.Sequence(s.World(), opt).SVG(0, 0) != svg || draw.Mermaid(s.World(), opt) != mm {
			t.Errorf("demo %d: the sequence diagram differs between two drawings", c.demo)
		}
	}
}

// TestSequenceContent checks a lane per participant and an arrow per
// message in range, from the right lane to the right lane.
func TestSequenceContent(t *testing.T) {
	s := demoWorld(t, 1)
	w := s.World()
	opts := []draw.SeqOptions{
		{To: -1},
		{From: 8, To: 12},
		{From: 0, To: 14, Types: []sim.API{sim.JoinGroup, sim.SyncGroup}},
		{To: -1, Member: "C2"},
	}
	for _, opt := range opts {
		els := parseSVG(t, draw.Sequence(w, opt).SVG(0, 0))
		laneX := map[string]string{}
		var arrows []element
		for _, e := range els {
			if e.name == "g" && e.attrs["class"] == "lane" {
				laneX[e.attrs["data-lane"]] = e.attrs["data-x"]
				// The lifeline is drawn where the lane says.
				if x, _ := pathStart(t, firstPath(t, els, e)); num1(x) != e.attrs["data-x"] {
					t.Errorf("lane %s: lifeline at x=%v, data-x %s", e.attrs["data-lane"], x, e.attrs["data-x"])
				}
			}
			if e.name == "g" && e.attrs["class"] == "message" {
				arrows = append(arrows, e)
			}
		}
		for _, p := range []string{"C1", "B1", "C2"} {
			if laneX[p] == "" {
				t.Errorf("%+v: no lane for %s", opt, p)
			}
		}
		if len(laneX) != 3 {
			t.Errorf("%+v: %d lanes, want 3 (C1 B1 C2)", opt, len(laneX))
		}
		want := 0
		for _, p := range w.Packets.All() {
			if p.Sent < opt.From || (opt.To >= 0 && p.Sent > opt.To) {
				continue
			}
			if len(opt.Types) > 0 && p.Type != opt.Types[0] && p.Type != opt.Types[1] {
				continue
			}
			if opt.Member != "" && p.From != opt.Member && p.To != opt.Member {
				continue
			}
			want++
		}
		msgs := draw.Messages(w, opt)
		if len(msgs) != want || len(arrows) != want {
			t.Errorf("%+v: %d messages, %d arrows, want %d", opt, len(msgs), len(arrows), want)
			continue
		}
		for i, a := range arrows {
			p := msgs[i]
			if a.attrs["data-type"] != string(p.Type) || a.attrs["data-from"] != p.From || a.attrs["data-to"] != p.To {
				t.Errorf("%+v: arrow %d is %v, want %s %s->%s", opt, i, a.attrs, p.Type, p.From, p.To)
			}
			if a.attrs["data-x1"] != laneX[p.From] {
				t.Errorf("%+v: arrow %d starts at x=%s, %s's lane is at %s", opt, i, a.attrs["data-x1"], p.From, laneX[p.From])
			}
			if !p.Lost && a.attrs["data-x2"] != laneX[p.To] {
				t.Errorf("%+v: arrow %d ends at x=%s, %s's lane is at %s", opt, i, a.attrs["data-x2"], p.To, laneX[p.To])
			}
			// The line drawn goes where the group says.
			if x1, x2 := lineEnds(t, firstPath(t, els, a)); num1(x1) != a.attrs["data-x1"] || num1(x2) != a.attrs["data-x2"] {
				t.Errorf("%+v: arrow %d drawn from %v to %v, its group says %s to %s", opt, i, x1, x2, a.attrs["data-x1"], a.attrs["data-x2"])
			}
			if (a.attrs["data-dash"] != "") != (p.Response || (p.Delivered < 0 && !p.Lost)) {
				t.Errorf("%+v: arrow %d (%s response=%v) dashed=%q", opt, i, p.Type, p.Response, a.attrs["data-dash"])
			}
		}
	}
}

func TestSequenceLaneOrder(t *testing.T) {
	s := demoWorld(t, 2)
	got := draw.Lanes(s.World(), nil)
	if strings.Join(got, " ") != "C1 B1 C2 C3 C4" {
		t.Errorf("lanes %v, want C1 B1 C2 C3 C4 (the seed draws C1, the coordinator, then C2)", got)
	}
}

func TestMermaid(t *testing.T) {
	s := demoWorld(t, 1)
	w := s.World()
	opt := draw.SeqOptions{From: 0, To: 14}
	mm := draw.Mermaid(w, opt)
	lines := strings.Split(strings.TrimRight(mm, "\n"), "\n")
	if lines[0] != "sequenceDiagram" {
		t.Fatalf("first line %q", lines[0])
	}
	arrows := 0
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "participant "), strings.HasPrefix(l, "Note over "), strings.HasPrefix(l, "%%"):
		case strings.Contains(l, "->>") || strings.Contains(l, "-->>") || strings.Contains(l, "-x") || strings.Contains(l, "-)"):
			arrows++
			if strings.ContainsAny(strings.SplitN(l, ":", 2)[1], ";#") && !strings.Contains(l, "#59;") && !strings.Contains(l, "#35;") {
				t.Errorf("unescaped ; or # in %q", l)
			}
		default:
			t.Errorf("line %q is neither a participant, a note nor a message", l)
		}
	}
	if want := len(draw.Messages(w, opt)); arrows != want {
		t.Errorf("%d Mermaid messages, want %d", arrows, want)
	}
	for _, p := range []string{"participant C1", "participant B1 as B1 (coordinator)", "participant C2"} {
		if !strings.Contains(mm, p) {
			t.Errorf("no %q", p)
		}
	}
	if !strings.Contains(mm, "C2->>B1: t=2 JoinGroup") {
		t.Errorf("C2's JoinGroup at tick 2 is missing:\n%s", mm)
	}
}

func TestClientColors(t *testing.T) {
	seen := map[string]string{}
	for i := 1; i <= 16; i++ {
		c := "C" + strconv.Itoa(i)
		h := draw.ClientHex(c)
		if h != draw.ClientHex(c) {
			t.Fatal("colour not stable")
		}
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s share colour %s", c, other, h)
		}
		seen[h] = c
	}
	if draw.ClientHex("C1") != "#0072b2" {
		t.Errorf("C1 is %s; C1 is blue in every picture", draw.ClientHex("C1"))
	}
}

// TestSequenceLabelsWrap checks that a message label too long for the space
// between its lanes wraps instead of being cut: C1's JoinGroup answer in
// demo 1 shows the whole member list, and each line fits between the lanes.
func TestSequenceLabelsWrap(t *testing.T) {
	s := demoWorld(t, 1)
	els := parseSVG(t, draw.Sequence(s.World(), draw.SeqOptions{To: -1}).SVG(0, 0))
	var lines []string
	for _, e := range els {
		if e.name == "text" && inGroup(e, "message") && e.group["data-type"] == "JoinGroup" &&
			e.group["data-response"] == "true" && e.group["data-to"] == "C1" {
			lines = append(lines, e.text)
		}
	}
	label := strings.Join(lines, " ")
	whole := false
	for _, l := range lines {
		// Lines break between clauses: the member list stays on one line.
		whole = whole || strings.Contains(l, "members [C1-1 C2-1]")
	}
	if len(lines) < 2 || !whole || strings.Contains(label, "…") {
		t.Errorf("C1's JoinGroup answer reads %q, want the member list whole on one line, the label on more than one", lines)
	}
	for _, l := range lines {
		// C1's lane and B1's are 270 px apart; each line of 10 px text must fit in it.
		if w := draw.TextWidth(l, 10); w > 270 {
			t.Errorf("line %q is %.0f px wide, more than the 270 px between the lanes", l, w)
		}
	}
}

// memberStates is each member box's state line, by client and process.
func memberStates(t *testing.T, w *sim.World) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range parseSVG(t, draw.World(w, draw.WorldOptions{}).SVG(0, 0)) {
		if e.name == "text" && e.group["class"] == "member-state" {
			out[e.group["data-client"]+"/"+e.group["data-process"]] = e.text
		}
	}
	return out
}

// TestMemberStateWords: a member whose JoinGroup is in flight is joining,
// a crashed one crashed, and ZOMBIE is kept for a process that runs on
// after it was replaced or left (demo 7's C2 past max.poll.interval.ms).
func TestMemberStateWords(t *testing.T) {
	s := kernel.NewSession()
	sawJoining := false
	if _, err := s.Exec("join C2"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := s.Exec("step"); err != nil {
			t.Fatal(err)
		}
		m := s.World().Member("C2")
		st := memberStates(t, s.World())["C2/1"]
		if strings.Contains(st, "ZOMBIE") {
			t.Errorf("tick %d: C2 in phase %s drawn as %q", s.World().Tick, m.Phase, st)
		}
		if m.Phase == sim.PhaseJoining {
			sawJoining = true
			if !strings.HasPrefix(st, "joining") {
				t.Errorf("tick %d: C2's JoinGroup is in flight, drawn as %q", s.World().Tick, st)
			}
		}
	}
	if !sawJoining {
		t.Fatal("C2 was never seen joining")
	}
	if _, err := s.Exec("crash C2 now; step"); err != nil {
		t.Fatal(err)
	}
	if st := memberStates(t, s.World())["C2/1"]; st != "crashed" {
		t.Errorf("crashed C2 drawn as %q", st)
	}
	if _, err := s.Exec("close C1; step 10"); err != nil {
		t.Fatal(err)
	}
	if st := memberStates(t, s.World())["C1/1"]; st != "closed" {
		t.Errorf("closed C1 drawn as %q", st)
	}

	z := demoWorld(t, 7)
	if _, err := z.Exec("back 20"); err != nil {
		t.Fatal(err)
	}
	st := memberStates(t, z.World())
	zombies := 0
	for k, v := range st {
		if strings.HasPrefix(v, "ZOMBIE") {
			zombies++
			if k[:2] != "C2" {
				t.Errorf("%s drawn as a zombie: %q", k, v)
			}
		}
	}
	if zombies != 1 {
		t.Errorf("demo 7 at tick %d: %d zombies drawn (%v), want C2", z.World().Tick, zombies, st)
	}
}

// TestPacketLabelsFit: no packet's label reaches B1's box, however long
// (JoinGroup answers list the members).
func TestPacketLabelsFit(t *testing.T) {
	s := kernel.NewSession()
	if _, err := s.Exec("join C2; join C3; join C4; set transactional.id tx"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := s.Exec("step"); err != nil {
			t.Fatal(err)
		}
		els := parseSVG(t, draw.World(s.World(), draw.WorldOptions{}).SVG(0, 0))
		b1 := -1.0
		for _, e := range els {
			if e.name == "path" && e.group["class"] == "broker" && b1 < 0 {
				b1 = math.Inf(1)
				for _, p := range pathPoints(t, e) {
					b1 = min(b1, p[0])
				}
			}
		}
		if b1 < 0 {
			t.Fatal("no B1 box")
		}
		for _, e := range els {
			if e.name != "text" || e.group["class"] != "packet-label" {
				continue
			}
			x, _ := strconv.ParseFloat(e.attrs["x"], 64)
			// Measured in the font the letters are drawn in.
			if right := x + draw.TextWidth(e.text, 9.5); right > b1 {
				t.Errorf("tick %d: %q ends at %.0f, B1's box starts at %.0f", s.World().Tick, e.text, right, b1)
			}
		}
	}
}

// TestDuplicateInvoicesMarked: demo 7 writes o2.3..o2.5 twice; the second
// invoices are marked (superscript 2, a red bar), the first ones are not.
func TestDuplicateInvoicesMarked(t *testing.T) {
	w := demoWorld(t, 7).World()
	els := parseSVG(t, draw.World(w, draw.WorldOptions{}).SVG(0, 0))
	var texts []string
	bars := 0
	for _, e := range els {
		if e.name == "text" {
			texts = append(texts, e.text)
		}
		if e.name == "g" && e.attrs["class"] == "duplicate" {
			bars++
		}
	}
	joined := "\n" + strings.Join(texts, "\n") + "\n"
	for _, r := range []string{"o2.3", "o2.4", "o2.5"} {
		if !strings.Contains(joined, "\n"+r+"²\n") || !strings.Contains(joined, "\n"+r+"\n") {
			t.Errorf("%s: want one plain invoice and one marked %s²", r, r)
		}
	}
	if d := w.Delivery("read_uncommitted").Duplicates; bars != d {
		t.Errorf("%d duplicate bars, the reader counts %d duplicates", bars, d)
	}
}

// TestAnimate: frames become one SVG that draws each part once, shows
// in frame k exactly the parts frame k draws (read back from the groups'
// frame sets), needs no script, and shows the last frame without animation.
func TestAnimate(t *testing.T) {
	s := kernel.NewSession()
	if _, err := s.Exec("join C2"); err != nil {
		t.Fatal(err)
	}
	var frames []*draw.Picture
	for i := 0; i < 5; i++ {
		if _, err := s.Exec("step"); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, draw.World(s.World(), draw.WorldOptions{Shared: &draw.Layout{Wire: 300}}))
	}
	a := draw.Animate(frames, "five ticks").SVG(0, 0)
	if strings.Contains(a, "<script") {
		t.Error("an animation with a script")
	}
	if a != draw.Animate(frames, "five ticks").SVG(0, 0) {
		t.Error("two animations of the same frames differ")
	}
	for k, f := range frames {
		want := visibleTexts(t, f.SVG(0, 0), -1, 0)
		if got := visibleTexts(t, a, k, len(frames)); got != want {
			t.Errorf("frame %d shows\n%s\nwant\n%s", k, got, want)
		}
	}
	// Without animation (the visibility attributes alone) the last frame shows.
	if got, want := visibleTexts(t, a, -1, 0), visibleTexts(t, frames[4].SVG(0, 0), -1, 0); got != want {
		t.Errorf("the still picture shows\n%s\nwant the last frame's\n%s", got, want)
	}
	// Each frame's keyframes are in the style.
	if !regexp.MustCompile(`@keyframes a[0-9a-f]{6}-0\{`).MatchString(a) || !strings.Contains(a, "animation-timing-function:step-end") {
		t.Errorf("no keyframes: %.600s", a)
	}
}

// visibleTexts lists the texts an SVG shows, in order: in frame k of an
// animation of n frames (by the frame sets of its groups), or with k < 0 as
// a viewer without animation shows it (by the visibility attributes).
func visibleTexts(t *testing.T, doc string, k, n int) string {
	t.Helper()
	var out []string
	for _, e := range parseSVGDeep(t, doc) {
		if e.name != "text" {
			continue
		}
		shown := true
		for _, g := range e.groups {
			if k < 0 && g["visibility"] == "hidden" {
				shown = false
			}
			if fs, ok := g["data-frames"]; ok && k >= 0 && !inFrames(t, fs, k) {
				shown = false
			}
		}
		if shown {
			out = append(out, e.text)
		}
	}
	sort.Strings(out) // the paint order may differ; what shows may not
	return strings.Join(out, "\n")
}

// inFrames reads a frame set such as "0-3 7".
func inFrames(t *testing.T, fs string, k int) bool {
	for _, part := range strings.Fields(fs) {
		a, b, ranged := strings.Cut(part, "-")
		lo, err := strconv.Atoi(a)
		if err != nil {
			t.Fatalf("frame set %q", fs)
		}
		hi := lo
		if ranged {
			if hi, err = strconv.Atoi(b); err != nil {
				t.Fatalf("frame set %q", fs)
			}
		}
		if k >= lo && k <= hi {
			return true
		}
	}
	return false
}

// TestAnimationSize: 120 frames of a busy group make an SVG of at most
// 2 MB (what stays the same is drawn once) and at most 1,400 px wide: demo 3's joins and cooperative
// rebalances, and demo 15's rolling upgrade, the largest of the demos'.
func TestAnimationSize(t *testing.T) {
	for _, c := range []struct{ demo, more int }{{3, 46}, {15, 120}} {
		s := demoWorld(t, c.demo)
		if _, err := s.Exec(fmt.Sprintf("step %d", c.more)); err != nil {
			t.Fatal(err)
		}
		r, err := s.ExecResults("diagram --ticks ..119")
		if err != nil {
			t.Fatal(err)
		}
		svg := r[len(r)-1].SVG
		if !strings.Contains(svg, `data-frames="120"`) {
			t.Fatalf("demo %d: not 120 frames: %.300s", c.demo, svg)
		}
		if len(svg) > 2_000_000 {
			t.Errorf("demo %d: 120 frames are %d bytes, more than 2 MB", c.demo, len(svg))
		}
		// The frames share one layout, still within a blog's column.
		m := regexp.MustCompile(`class="kgrepl-animation" data-frames="120" width="([0-9.]+)"`).FindStringSubmatch(svg)
		if m == nil {
			t.Fatalf("demo %d: no width in %.300s", c.demo, svg)
		}
		if w, _ := strconv.ParseFloat(m[1], 64); w > draw.MaxWorldWidth {
			t.Errorf("demo %d: the animation is %s px wide, more than %v", c.demo, m[1], draw.MaxWorldWidth)
		}
		t.Logf("demo %d: 120 frames, %d bytes", c.demo, len(svg))
	}
}

// TestSizes: a picture is shown at the size asked for, its drawing whole.
func TestSizes(t *testing.T) {
	p := draw.World(demoWorld(t, 2).World(), draw.WorldOptions{})
	w, h := p.Size(0, 0)
	for _, c := range []struct{ w, h, ww, wh int }{
		{0, 0, w, h}, {w / 2, 0, w / 2, int(math.Round(float64(h) * float64(w/2) / float64(w)))}, {600, 600, 600, 600},
	} {
		gw, gh := p.Size(c.w, c.h)
		if gw != c.ww || gh != c.wh {
			t.Errorf("Size(%d, %d) = %d x %d, want %d x %d", c.w, c.h, gw, gh, c.ww, c.wh)
		}
		svg := p.SVG(c.w, c.h)
		if !strings.Contains(svg, fmt.Sprintf(`width="%d" height="%d" viewBox="0 0 %s %s"`, gw, gh, num1(p.W), num1(p.H))) {
			t.Errorf("SVG(%d, %d): %.300s", c.w, c.h, svg)
		}
	}
}

// TestTextIsOutlined: the diagrams draw letters as glyph outlines defined
// once each, keep the text transparent, and every <use> finds its glyph;
// an animation defines each glyph once for all its frames.
func TestTextIsOutlined(t *testing.T) {
	s := demoWorld(t, 3)
	check := func(what, doc string) {
		ids := map[string]int{}
		uses := 0
		for _, e := range parseSVG(t, doc) {
			switch {
			case e.name == "path" && e.group["class"] == "" && e.attrs["id"] != "":
				ids[e.attrs["id"]]++
			case e.name == "use":
				uses++
				if _, ok := ids[strings.TrimPrefix(e.attrs["href"], "#")]; !ok && !strings.Contains(doc, `id="`+strings.TrimPrefix(e.attrs["href"], "#")+`"`) {
					t.Errorf("%s: <use> of an undefined glyph %s", what, e.attrs["href"])
				}
			case e.name == "text" && e.attrs["fill-opacity"] != "0":
				t.Errorf("%s: visible text %q", what, e.text)
			}
		}
		for id, n := range ids {
			if n > 1 {
				t.Errorf("%s: glyph %s defined %d times", what, id, n)
			}
		}
		if uses < 100 || len(ids) < 20 {
			t.Errorf("%s: %d glyphs placed, %d defined", what, uses, len(ids))
		}
	}
	w := draw.World(s.World(), draw.WorldOptions{})
	check("diagram", w.SVG(0, 0))
	check("sequence", draw.Sequence(s.World(), draw.SeqOptions{To: -1}).SVG(0, 0))
	check("animation", draw.Animate([]*draw.Picture{w, w, w}, "three").SVG(0, 0))
}

// TestWorldFitsABlogColumn: a world diagram of 12 members is at most
// MaxWorldWidth (1,400 px) wide at its own size, with the default topics
// and with 12 partitions a topic, mid-run and with packets in flight;
// B1's list of members goes in columns, and no text leaves the picture.
func TestWorldFitsABlogColumn(t *testing.T) {
	for _, setup := range []string{
		"new --members 12; run until stable; step 20",
		"new --members 1; join C2; join C3; join C4; join C5; join C6; join C7; join C8; join C9; join C10; join C11; join C12; step 9",
		"new --topics orders:12,payments:12 --members 12; run until stable; step 20",
		"new --topics orders:12,payments:12 --members 12; set producer transactional; run until stable; step 33",
	} {
		s := kernel.NewSession()
		if _, err := s.Exec(setup); err != nil {
			t.Fatalf("%s: %v", setup, err)
		}
		p := draw.World(s.World(), draw.WorldOptions{})
		if p.W > draw.MaxWorldWidth {
			t.Errorf("%s: %v px wide, more than %v", setup, p.W, draw.MaxWorldWidth)
		}
		for _, e := range parseSVG(t, p.SVG(0, 0)) {
			if e.name != "text" || e.attrs["x"] == "" {
				continue
			}
			x, _ := strconv.ParseFloat(e.attrs["x"], 64)
			size, _ := strconv.ParseFloat(e.attrs["font-size"], 64)
			tw := draw.TextWidth(e.text, size)
			if e.attrs["font-weight"] == "bold" || e.attrs["font-family"] != "" {
				tw *= 1.25 // bold and mono letters are wider; TextWidth measures the regular sans
			}
			if right := x + tw; right > p.W {
				t.Errorf("%s: %q ends at about %.0f, past the picture's %v px", setup, e.text, right, p.W)
			}
		}
	}
}

// TestGoldenPicturesAsPNGAndPDF: the golden diagrams drawn as PNG decode
// at the pixel size their SVG has, and as PDF are one page of 0.75 points
// a pixel (a smoke test: the SVG goldens pin the drawing itself).
func TestGoldenPicturesAsPNGAndPDF(t *testing.T) {
	for _, n := range []int{2, 11} {
		w := demoWorld(t, n).World()
		for _, p := range []*draw.Picture{draw.World(w, draw.WorldOptions{}), draw.Sequence(w, draw.SeqOptions{From: 0, To: 20})} {
			pw, ph := p.Size(0, 0)
			b, err := p.PNG(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("demo %d %s: PNG: %v", n, p.Title, err)
			}
			if img.Bounds().Dx() != pw || img.Bounds().Dy() != ph {
				t.Errorf("demo %d %s: PNG %v, the SVG is %dx%d", n, p.Title, img.Bounds(), pw, ph)
			}
			pdf, err := p.PDF(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			box := fmt.Sprintf("/MediaBox [0 0 %.2f %.2f]", float64(pw)*0.75, float64(ph)*0.75)
			if !bytes.HasPrefix(pdf, []byte("%PDF-")) || bytes.Count(pdf, []byte("/MediaBox")) != 1 || !bytes.Contains(pdf, []byte(box)) {
				t.Errorf("demo %d %s: want one page %s", n, p.Title, box)
			}
		}
	}
}

// TestInvoiceNumbersOfCutLogs: a diagram that draws an output log from a
// later cell numbers its invoices as InvoiceNumbers numbers them all (the
// second invoice of a record is ², wherever the first one is), for every
// cut of the output logs of demos, of a transactional world whose
// records have an aborted invoice and a committed one (a duplicate only
// a read_uncommitted reader sees) and of a world of several output
// partitions in real time (batches of several filtered runs); and names
// no cell before the cut.
func TestInvoiceNumbersOfCutLogs(t *testing.T) {
	marked := 0
	var worlds []*sim.World
	for _, n := range []int{4, 7, 9, 12} {
		worlds = append(worlds, demoWorld(t, n).World())
	}
	for _, script := range []string{
		"set producer transactional; set isolation.level read_committed; join C2; run until stable; run until polled o2.3; crash C2 after 3; " +
			"run until processed o2.5; run until tick 62; run until processed o2.5 by C1; step 8",
		"new --kafka-defaults --members 3 --topics orders:6 --output invoices:3; set processing.ms 0.2; produce --rate 100/s orders; step 4s; " +
			"crash C2 now; step 1s; restart C2; run until stable; step 1s",
	} {
		s := kernel.NewSession()
		for _, line := range strings.Split(script, "; ") {
			if _, err := s.Exec(line); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		}
		worlds = append(worlds, s.World())
	}
	for n, w := range worlds {
		whole := draw.InvoiceNumbers(w)
		for _, tp := range w.Layout().Outputs() {
			hw := w.Log(tp).HW()
			for _, from := range []int{0, 1, hw / 3, hw / 2, hw - 1} {
				if from < 0 || from > 0 && from == hw-1 && hw == 1 {
					continue
				}
				// one log drawn, from a cut (from 0: the others not drawn)
				got := draw.InvoiceNumbersFrom(w, map[sim.TopicPartition]int{tp: from})
				for off, k := range got[tp] {
					if off < from {
						t.Errorf("world %d %s from %d: offset %d numbered", n, tp, from, off)
					}
					if whole[tp][off] != k {
						t.Errorf("world %d %s from %d: offset %d is invoice %d, all say %d", n, tp, from, off, k, whole[tp][off])
					}
				}
				for off, k := range whole[tp] {
					if off >= from && got[tp][off] != k {
						t.Errorf("world %d %s from %d: offset %d is invoice %d, the cut says %d", n, tp, from, off, k, got[tp][off])
					}
					if off >= from {
						marked++
					}
				}
			}
		}
		// no output log drawn (a diagram of input partitions alone): none
		// numbered; every one from its start: all of them
		if got := draw.InvoiceNumbersFrom(w, map[sim.TopicPartition]int{}); len(got) != 0 {
			t.Errorf("world %d: no output log drawn, yet %v numbered", n, got)
		}
		all := map[sim.TopicPartition]int{}
		for _, tp := range w.Layout().Outputs() {
			all[tp] = 0
		}
		if got := draw.InvoiceNumbersFrom(w, all); !reflect.DeepEqual(got, whole) {
			t.Errorf("world %d: every output log drawn whole numbers %v, InvoiceNumbers %v", n, got, whole)
		}
	}
	if marked == 0 {
		t.Error("no world's cut log holds a duplicate: the test compares nothing")
	}
}

// TestInvoiceNumbersOfLogsThatLetGoOfTheirPast: a diagram of an output
// log that let go of its cells before a tick (history.ms) numbers the
// invoices it keeps as InvoiceNumbers numbers them in the world that
// kept every cell (the second invoice of a record is ², its first let go
// of or not), for a cut at a third, half and the end of every demo.
func TestInvoiceNumbersOfLogsThatLetGoOfTheirPast(t *testing.T) {
	marked, moved := 0, 0
	for _, n := range []int{4, 7, 9, 11, 12} {
		full := demoWorld(t, n).World()
		whole := draw.InvoiceNumbers(full)
		for _, tick := range []int{full.Tick / 3, full.Tick / 2, full.Tick} {
			w := full.Clone()
			w.ForgetOutputBeforeForTest(tick)
			from := map[sim.TopicPartition]int{}
			for _, tp := range w.Layout().Outputs() {
				from[tp] = w.Log(tp).Start()
				if from[tp] > 0 {
					moved++
				}
			}
			got := draw.InvoiceNumbersFrom(w, from)
			for _, tp := range w.Layout().Outputs() {
				for off, k := range whole[tp] {
					if off >= from[tp] && got[tp][off] != k {
						t.Errorf("demo %d %s let go of the cells before tick %d (offset %d): offset %d is invoice %d, the world keeping all says %d", n, tp, tick, from[tp], off, got[tp][off], k)
					}
					if off >= from[tp] && from[tp] > 0 {
						marked++
					}
				}
				for off := range got[tp] {
					if _, ok := whole[tp][off]; !ok {
						t.Errorf("demo %d %s after tick %d: offset %d numbered %d, the world keeping all does not number it", n, tp, tick, off, got[tp][off])
					}
				}
			}
		}
	}
	if marked == 0 || moved == 0 {
		t.Errorf("no demo's log let go of cells before a duplicate it keeps (%d logs moved their start): the test compares nothing", moved)
	}
}
