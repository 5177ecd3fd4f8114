package kernel

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func pictureSession(t *testing.T) *Session {
	t.Helper()
	s := NewSession()
	s.Dir = t.TempDir()
	s.PictureDir = filepath.Join(s.Dir, "pictures")
	return s
}

func one(t *testing.T, s *Session, line string) *Result {
	t.Helper()
	rs, err := s.ExecResults(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return rs[len(rs)-1]
}

func wellFormed(t *testing.T, what, doc string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", what, err)
		}
	}
}

// TestPictureCommands: each picture command writes its default file in the
// session's picture folder (or where --out says, from the session's
// folder), says where, and carries the picture for notebooks.
func TestPictureCommands(t *testing.T) {
	s := pictureSession(t)
	if _, err := s.Exec("join C2; run until stable"); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ line, file string }{
		{"plot pause", "pause.svg"},
		{"plot duplicates", "duplicates.svg"},
		{"plot lag", "lag.svg"},
		{"plot timeline", "timeline.svg"},
		{"plot unavailable", "unavailable.svg"},
		{"diagram", "diagram.svg"},
		{"sequence", "sequence.svg"},
		{"sequence --ticks 0..5 --out first.svg", "first.svg"},
	}
	for _, c := range cases {
		r := one(t, s, c.line)
		path := filepath.Join(s.PictureDir, c.file)
		if strings.Contains(c.line, "--out") {
			path = filepath.Join(s.Dir, c.file)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if !strings.Contains(r.Text, path) {
			t.Errorf("%s: the text %q does not give the path %s", c.line, r.Text, path)
		}
		if r.SVG == "" || string(data) != r.SVG {
			t.Errorf("%s: the result's SVG is not what the file holds", c.line)
		}
		wellFormed(t, c.line, r.SVG)
		// Drawn at its own size (readable text), scrolling sideways when wider than the cell.
		if !strings.HasPrefix(r.HTML, `<div class="kgrepl-picture" style="overflow-x:auto;max-width:100%"><svg style="max-width:none;height:auto;flex:none" `) {
			t.Errorf("%s: HTML starts %q", c.line, r.HTML[:min(80, len(r.HTML))])
		}
		wellFormed(t, c.line+" (HTML)", r.HTML)
	}
	// The same command twice writes the same bytes.
	a := one(t, s, "plot timeline").SVG
	b := one(t, s, "plot timeline").SVG
	if a != b {
		t.Error("plot timeline twice: different SVG")
	}
	if one(t, s, "diagram").SVG != one(t, s, "diagram").SVG {
		t.Error("diagram twice: different SVG")
	}
}

func TestPlotPNG(t *testing.T) {
	s := pictureSession(t)
	r := one(t, s, "join C2; run until stable; plot pause --out p.png")
	if r.PNG == nil || r.SVG != "" {
		t.Fatal("plot --out p.png: no PNG in the result")
	}
	if _, err := png.Decode(bytes.NewReader(r.PNG)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, "p.png"))
	if err != nil || !bytes.Equal(data, r.PNG) {
		t.Fatalf("p.png is not the result's PNG (%v)", err)
	}
	if !strings.Contains(r.HTML, "data:image/png;base64,") {
		t.Error("no inline PNG in the HTML")
	}
}

// TestNoPictureFolder: without a picture folder (scripts, tests) a picture
// without --out is drawn and returned, and no file is written anywhere.
func TestNoPictureFolder(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	wd, _ := os.Getwd()
	before, _ := os.ReadDir(wd)
	for _, line := range []string{"plot pause", "diagram", "sequence", "sequence --mermaid"} {
		r := one(t, s, line)
		if r.SVG == "" && !strings.HasPrefix(r.Text, "sequenceDiagram") {
			t.Errorf("%s: no picture in the result", line)
		}
		if strings.Contains(r.Text, "wrote") {
			t.Errorf("%s: %q", line, r.Text)
		}
	}
	if got, _ := os.ReadDir(s.Dir); len(got) != 0 {
		t.Errorf("files written into the session's folder: %v", got)
	}
	if after, _ := os.ReadDir(wd); len(after) != len(before) {
		t.Errorf("files written into the working folder: %d entries, were %d", len(after), len(before))
	}
}

// TestSequenceMermaidCommand: Mermaid text is printed, not written, unless
// --out names a file.
func TestSequenceMermaidCommand(t *testing.T) {
	s := pictureSession(t)
	r := one(t, s, "join C2; run until stable; sequence --mermaid --ticks 0..3 --type JoinGroup")
	if _, err := os.Stat(filepath.Join(s.PictureDir, "sequence.mmd")); err == nil {
		t.Error("sequence --mermaid wrote sequence.mmd")
	}
	if strings.Contains(r.Text, "wrote") {
		t.Errorf("sequence --mermaid: %q", r.Text)
	}
	r = one(t, s, "sequence --mermaid --ticks 0..3 --type JoinGroup --out seq.mmd")
	data, err := os.ReadFile(filepath.Join(s.Dir, "seq.mmd"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "sequenceDiagram\n") || !strings.Contains(r.Text, "C2->>B1: t=2 JoinGroup") {
		t.Errorf("mermaid output:\n%s\nfile:\n%s", r.Text, data)
	}
	if strings.Contains(string(data), "SyncGroup") {
		t.Error("--type JoinGroup kept a SyncGroup")
	}
}

// TestPlotBranches is demo 2 against demo 3 in one chart.
func TestPlotBranches(t *testing.T) {
	s := pictureSession(t)
	// A demo starts a fresh session: demo 3 is kept in a file and loaded
	// into a branch beside demo 2.
	if _, err := s.Exec("demo 3; save coop.kg; demo 2; fork coop; load coop.kg"); err != nil {
		t.Fatal(err)
	}
	r := one(t, s, "plot pause --branches main,coop")
	for _, want := range []string{"main · range: ", "coop · cooperative-sticky: "} {
		if !strings.Contains(r.SVG, want) {
			t.Errorf("the overlay does not name %q", want)
		}
	}
	if s.Branch() != "coop" {
		t.Errorf("plot --branches left the session on %s", s.Branch())
	}
	// Charting another branch does not change it.
	before := s.branches["main"].world.Tick
	one(t, s, "plot duplicates --branches coop,main")
	if s.branches["main"].world.Tick != before {
		t.Error("plotting main changed it")
	}
}

func TestPictureErrors(t *testing.T) {
	s := pictureSession(t)
	cases := []struct{ line, want string }{
		{"plot", "plot: which chart? (charts: pause duplicates lag timeline unavailable) (usage: plot pause|duplicates|lag|timeline|unavailable [--branches A,B] [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B])"},
		{"plot pie", "plot pie: no chart pie (charts: pause duplicates lag timeline unavailable)"},
		{"plot pause extra", `plot: unexpected "extra" (usage: plot pause|duplicates|lag|timeline|unavailable [--branches A,B] [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B])`},
		{"plot pause --out x.gif", "plot --out x.gif: want a file ending in .svg, .png or .pdf"},
		{"plot pause --branches main,nope", "plot --branches main,nope: no branch nope (branches: main)"},
		{"plot pause --branches ,", `plot: --branches "," names no branch (branches: main) (usage: plot pause|duplicates|lag|timeline|unavailable [--branches A,B] [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B])`},
		{"plot lag --branches main,main", "plot lag --branches main,main: a lag chart shows one branch (overlays: pause duplicates)"},
		{"plot pause --colour red", "plot: unknown option --colour (options: --branches --partitions --out --width --height --title --ticks) (usage: plot pause|duplicates|lag|timeline|unavailable [--branches A,B] [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B])"},
		{"plot pause --out", "plot: --out needs a value (usage: plot pause|duplicates|lag|timeline|unavailable [--branches A,B] [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B])"},
		{"diagram now", `diagram: unexpected "now" (usage: diagram [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B])`},
		{"diagram --out d.jpg", "diagram --out d.jpg: want a file ending in .svg, .png or .pdf"},
		{"sequence --ticks x", `sequence --ticks "x": want A..B, A.. or ..B in whole ticks (e.g. 0..14), or one tick N`},
		{"sequence --ticks 9..3", "sequence --ticks 9..3: the range ends (3) before it starts (9)"},
		{"sequence --ticks -1..3", `sequence --ticks "-1..3": want A..B, A.. or ..B in whole ticks (e.g. 0..14), or one tick N`},
		{"sequence --type Join", `sequence --type: no message type "Join" (types: FindCoordinator JoinGroup SyncGroup RebalanceNotification LeaveGroup OffsetCommit OffsetFetch Fetch Produce InitProducerId AddPartitionsToTxn AddOffsetsToTxn TxnOffsetCommit EndTxn WriteTxnMarkers ConsumerGroupHeartbeat)`},
		{"sequence --member C9", "sequence --member: no member C9 (members: C1)"},
		{"sequence --out s.mmd", "sequence --out s.mmd: want a file ending in .svg, .png or .pdf (Mermaid text needs --mermaid)"},
		{"sequence --mermaid --out s.svg", "sequence --mermaid --out s.svg: want a file ending in .mmd or .md or .txt"},
		{"plot pause --width 100", "plot pause --width 100: out of bounds, a picture is 480..4000 pixels wide"},
		{"diagram --height 9000", "diagram --height 9000: out of bounds, a picture is 300..4000 pixels high"},
		{"sequence --width wide", `sequence --width "wide": want a whole number of pixels (480..4000)`},
		{"plot lag --ticks 5..5", "plot lag --ticks 5..5: a chart needs a range of ticks (A..B with B > A)"},
		{"diagram --ticks 0..500", "diagram --ticks 0..500: the branch is at tick 0 (step or run to reach tick 500)"},
		{"plot pause --title \"open", `plot: "open opens a quote that does not close`},
		{"sequence --mermaid --width 600", "sequence --mermaid --width: Mermaid text has no size (the viewer lays it out)"},
	}
	for _, c := range cases {
		_, err := s.Exec(c.line)
		if err == nil {
			t.Errorf("%s: no error", c.line)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, err, c.want)
		}
	}
	// A folder that is not there is an error naming the command and the file.
	s.Dir = filepath.Join(t.TempDir(), "missing")
	if _, err := s.Exec("diagram --out d.svg"); err == nil || !strings.HasPrefix(err.Error(), "diagram --out d.svg: ") {
		t.Errorf("diagram into a missing folder: %v", err)
	}
}

func TestPictureCompletion(t *testing.T) {
	s := pictureSession(t)
	if got := strings.Join(s.Complete("plot "), " "); got != "duplicates lag pause timeline unavailable" {
		t.Errorf("plot completions: %s", got)
	}
	if got := strings.Join(s.Complete("plot pause --branches "), " "); got != "main" {
		t.Errorf("--branches completions: %s", got)
	}
	if got := strings.Join(s.Complete("sequence --type Jo"), " "); got != "JoinGroup" {
		t.Errorf("--type completions: %s", got)
	}
	if got := strings.Join(s.Complete("dia"), " "); got != "diagram" {
		t.Errorf("command completion: %s", got)
	}
	for _, name := range []string{"plot", "diagram", "sequence"} {
		c := lookup(name)
		if c == nil || c.usage == "" || c.summary == "" || c.help == "" || c.mutates {
			t.Errorf("%s: not in the command table with usage, summary, help and completion", name)
		}
	}
}

// TestAnimatedDiagram: diagram --ticks A..B is one SVG with a frame per
// tick, byte for byte the same each time, and bounded in length.
func TestAnimatedDiagram(t *testing.T) {
	s := pictureSession(t)
	if _, err := s.Exec("join C2; run until stable"); err != nil {
		t.Fatal(err)
	}
	end := s.World().Tick
	r := one(t, s, "diagram --ticks 0.. --out a.svg --width 1200")
	wellFormed(t, "animation", r.SVG)
	if !strings.Contains(r.SVG, fmt.Sprintf(`data-frames="%d"`, end+1)) {
		t.Errorf("not %d frames for ticks 0..%d: %.200s", end+1, end, r.SVG)
	}
	if strings.Contains(r.SVG, "<script") {
		t.Error("the animation has a script")
	}
	if !strings.Contains(r.SVG, fmt.Sprintf(`class="kgrepl-animation" data-frames="%d" width="1200"`, end+1)) {
		t.Errorf("--width 1200 not applied: %.200s", r.SVG)
	}
	if again := one(t, s, "diagram --ticks 0.. --out a.svg --width 1200"); again.SVG != r.SVG {
		t.Error("two animations of the same ticks differ")
	}
	// Frame k is the world at tick k: the last frame is the diagram now.
	if !strings.Contains(r.SVG, fmt.Sprintf("tick %d · Stable", end)) || !strings.Contains(r.SVG, "tick 1 · ") {
		t.Error("the frames do not say their ticks")
	}
	// One tick is a still picture of that tick.
	still := one(t, s, "diagram --ticks 1")
	if strings.Contains(still.SVG, "kgrepl-animation") || !strings.Contains(still.SVG, "tick 1 · ") {
		t.Error("diagram --ticks 1 is not the still picture of tick 1")
	}
	if _, err := s.Exec("step 200"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec("diagram --ticks 0.."); err == nil || !strings.Contains(err.Error(), "at most 120") {
		t.Errorf("an animation of %d ticks: %v", s.World().Tick+1, err)
	}
}

// TestConsumeMarksDuplicates: demo 7 writes o2.3..o2.5 twice; consume marks
// the second invoice of each (text and --json), beside the aborted mark.
func TestConsumeMarksDuplicates(t *testing.T) {
	s := NewSession()
	if _, err := s.Exec("demo 7"); err != nil {
		t.Fatal(err)
	}
	r := one(t, s, "consume invoices")
	n := 0
	for _, row := range r.Table.Rows {
		note := row[len(row)-1]
		if strings.Contains(note, "duplicate") {
			n++
			if want := "duplicate ×2 (invoice 2 of o2."; !strings.HasPrefix(note, want) {
				t.Errorf("note %q, want it to start %q", note, want)
			}
		}
	}
	if d := s.World().Delivery("read_uncommitted").Duplicates; n != d || n == 0 {
		t.Errorf("%d rows marked duplicate, the reader counts %d", n, d)
	}
	j := one(t, s, "consume invoices --json").JSON
	if strings.Count(j, `"invoice":2`) != n {
		t.Errorf("--json marks %d second invoices, want %d", strings.Count(j, `"invoice":2`), n)
	}
}

// TestAnimationKeepsB1InPlace: every frame of an animation puts B1's box
// at the same x, whatever the packets of its tick.
func TestAnimationKeepsB1InPlace(t *testing.T) {
	s := pictureSession(t)
	if _, err := s.Exec("demo 3"); err != nil {
		t.Fatal(err)
	}
	svg := one(t, s, "diagram --ticks 0..30").SVG
	xs := map[string]bool{}
	for _, part := range strings.Split(svg, `<g class="broker" data-node="B1">`+"\n")[1:] {
		// The box's path starts at its top edge, a corner's radius in.
		d, _, _ := strings.Cut(strings.TrimPrefix(part, `<path d="M`), " ")
		xs[d] = true
	}
	if len(xs) != 1 {
		t.Errorf("B1's box at x = %v across the frames, want one x", xs)
	}
}

// TestPictureWorkBounds: what a picture draws is counted before it is
// made, over everything it draws: an overlay counts the samples of every
// branch it names, an animation the cells of every frame.
func TestPictureWorkBounds(t *testing.T) {
	// The chart limit, made small so a short session reaches it.
	defer func(l limit) { limitPlotSamples = l }(limitPlotSamples)
	limitPlotSamples.max = 1_000
	s := NewSession()
	runLines(t, s, "step 200\nfork b")
	before := views(t, s)
	for line, want := range map[string]string{
		"plot pause --branches main,b":      "plot pause: 201 ticks of branch main x 4 series + 201 ticks of branch b x 4 series = 1,608 is over the limit (at most 1,000 chart samples: ticks x series)",
		"plot pause --branches main,b,main": "plot --branches main,b,main: branch main is named twice",
	} {
		if _, err := s.Exec(line); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
	}
	if _, err := s.Exec("plot pause --branches main,,b"); err == nil || !strings.HasPrefix(err.Error(), `plot: --branches "main,,b" has an empty name`) {
		t.Errorf("plot pause --branches main,,b: %v", err)
	}
	if views(t, s) != before {
		t.Error("a refused plot changed the session")
	}
	if _, err := s.Exec("plot pause --branches b"); err != nil {
		t.Errorf("one branch of 201 ticks x 4 series is within the limit: %v", err)
	}

	a := NewSession()
	runLines(t, a, "set records.per.partition 8000\nnew --keep-settings\nstep 5")
	// Logs of 8,000 cells: each frame draws their last cells (an
	// animation's logs share fewer rows) rather than refusing it; an
	// animation past the limit even so is TestAnimatedDiagramOfLongLogs'.
	if r, err := a.Exec("diagram --ticks 0..4"); err != nil || !strings.Contains(r, "of the logs drawn from a later cell") {
		t.Errorf("an animation of 5 frames of logs of 8,000 cells: %v, want it drawn, saying the logs are cut", err)
	}
}

// A title is a value even when it looks like an option, if it is quoted or
// given with '='; a bare option after --title is a missing title.
func TestTitleThatLooksLikeAnOption(t *testing.T) {
	s := NewSession()
	for line, want := range map[string]string{`plot pause --title "--x y"`: "--x y", "plot pause --title=--z": "--z"} {
		rs, err := s.ExecResults(line)
		if err != nil || len(rs) != 1 || !strings.Contains(rs[0].SVG, want) {
			t.Errorf("%s: %v; want a chart titled %q", line, err, want)
		}
	}
	if _, err := s.Exec("plot pause --title --width 600"); err == nil || !strings.Contains(err.Error(), "--title needs a value") {
		t.Errorf("--title --width: %v", err)
	}
}

// TestCompletionOffersAWordOnce: a word already on the line is not offered
// again (every option and argument is given once).
func TestCompletionOffersAWordOnce(t *testing.T) {
	s := NewSession()
	runLines(t, s, "fork other\nswitch main")
	for line, want := range map[string]string{
		"switch ":                    "main other",
		"switch main ":               "", // one branch name: nothing more
		"close C1 --":                "--now",
		"close C1 --now --":          "",
		"trace --json --":            "--events --from --member --type",
		"describe group --j":         "--json",
		"trace --member ":            "C1",
		"trace --type Fe":            "Fetch",
		"explore --members ":         "C1",
		"explore --faults cr":        "crash-after crash-now",
		"explore --isolation read_c": "read_committed",
	} {
		if got := strings.Join(s.Complete(line), " "); got != want {
			t.Errorf("Complete(%q) = %q, want %q", line, got, want)
		}
	}
}
