package kernel

import (
	"bytes"
	"encoding/xml"
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
// session's folder, says where, and carries the picture for notebooks.
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
		{"diagram", "diagram.svg"},
		{"sequence", "sequence.svg"},
		{"sequence --ticks 0..5 --out first.svg", "first.svg"},
	}
	for _, c := range cases {
		r := one(t, s, c.line)
		path := filepath.Join(s.Dir, c.file)
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
		if !strings.HasPrefix(r.HTML, `<div class="kgrepl-picture"><svg style="max-width:100%;height:auto" `) {
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

func TestSequenceMermaidCommand(t *testing.T) {
	s := pictureSession(t)
	r := one(t, s, "join C2; run until stable; sequence --mermaid --ticks 0..3 --type JoinGroup")
	data, err := os.ReadFile(filepath.Join(s.Dir, "sequence.mmd"))
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
		{"plot", "plot: which chart? (charts: pause duplicates lag timeline) (usage: plot pause|duplicates|lag|timeline [--out FILE.svg|FILE.png] [--branches A,B])"},
		{"plot pie", "plot pie: no chart pie (charts: pause duplicates lag timeline)"},
		{"plot pause extra", `plot: unexpected "extra" (usage: plot pause|duplicates|lag|timeline [--out FILE.svg|FILE.png] [--branches A,B])`},
		{"plot pause --out x.gif", "plot --out x.gif: want a file ending in .svg or .png"},
		{"plot pause --branches main,nope", "plot --branches main,nope: no branch nope (branches: main)"},
		{"plot pause --branches ,", `plot: --branches "," names no branch (branches: main) (usage: plot pause|duplicates|lag|timeline [--out FILE.svg|FILE.png] [--branches A,B])`},
		{"plot lag --branches main,main", "plot lag --branches main,main: a lag chart shows one branch (overlays: pause duplicates)"},
		{"plot pause --colour red", "plot: unknown option --colour (options: --out --branches) (usage: plot pause|duplicates|lag|timeline [--out FILE.svg|FILE.png] [--branches A,B])"},
		{"plot pause --out", "plot: --out needs a value (usage: plot pause|duplicates|lag|timeline [--out FILE.svg|FILE.png] [--branches A,B])"},
		{"diagram now", `diagram: unexpected "now" (usage: diagram [--out FILE.svg])`},
		{"diagram --out d.png", "diagram --out d.png: want a file ending in .svg"},
		{"sequence --ticks x", `sequence --ticks "x": want A..B, A.. or ..B in whole ticks (e.g. 0..14), or one tick N`},
		{"sequence --ticks 9..3", "sequence --ticks 9..3: the range ends (3) before it starts (9)"},
		{"sequence --ticks -1..3", `sequence --ticks "-1..3": want A..B, A.. or ..B in whole ticks (e.g. 0..14), or one tick N`},
		{"sequence --type Join", `sequence --type: no message type "Join" (types: FindCoordinator JoinGroup SyncGroup RebalanceNotification LeaveGroup OffsetCommit OffsetFetch Fetch Produce InitProducerId AddPartitionsToTxn AddOffsetsToTxn TxnOffsetCommit EndTxn WriteTxnMarkers)`},
		{"sequence --member C9", "sequence --member: no member C9 (members: C1)"},
		{"sequence --out s.mmd", "sequence --out s.mmd: want a file ending in .svg (Mermaid text needs --mermaid)"},
		{"sequence --mermaid --out s.svg", "sequence --mermaid --out s.svg: want a file ending in .mmd or .md or .txt"},
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
	if _, err := s.Exec("diagram"); err == nil || !strings.HasPrefix(err.Error(), "diagram --out diagram.svg: ") {
		t.Errorf("diagram into a missing folder: %v", err)
	}
}

func TestPictureCompletion(t *testing.T) {
	s := pictureSession(t)
	if got := strings.Join(s.Complete("plot "), " "); got != "duplicates lag pause timeline" {
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
		if c == nil || c.usage == "" || c.summary == "" || c.help == "" || c.words == nil || c.mutates {
			t.Errorf("%s: not in the command table with usage, summary, help and completion", name)
		}
	}
}
