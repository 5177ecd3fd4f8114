package kernel

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/draw"
)

var (
	svgSize  = regexp.MustCompile(`<svg [^>]*?width="([0-9.]+)" height="([0-9.]+)"`)
	mediaBox = regexp.MustCompile(`/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]`)
	pdfPage  = regexp.MustCompile(`/Type /Page\b[^s]`)
)

// TestPictureFormats: every picture command writes SVG, PNG and PDF by
// --out's extension, and the three have one size: the PNG decodes to the
// SVG's pixels, the PDF's pages are 0.75 points a pixel (an animation's
// PDF a page per frame, its PNG the last frame).
func TestPictureFormats(t *testing.T) {
	s := pictureSession(t)
	if _, err := s.Exec("join C2; run until stable"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd   string
		pages int
	}{
		{"plot pause", 1}, {"plot timeline --width 700 --height 400", 1}, {"diagram", 1}, {"diagram --width 900", 1},
		{"diagram --ticks 0..5", 6}, {"sequence --ticks 0..5", 1}, {"sequence --ticks 0..5 --height 800", 1},
	} {
		svg := one(t, s, c.cmd+" --out p.svg").SVG
		m := svgSize.FindStringSubmatch(svg)
		if m == nil {
			t.Fatalf("%s: no size in %.200s", c.cmd, svg)
		}
		w, _ := strconv.ParseFloat(m[1], 64)
		h, _ := strconv.ParseFloat(m[2], 64)

		r := one(t, s, c.cmd+" --out p.png")
		data, err := os.ReadFile(filepath.Join(s.Dir, "p.png"))
		if err != nil || !bytes.Equal(data, r.PNG) {
			t.Fatalf("%s: p.png is not the result's PNG (%v)", c.cmd, err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: the PNG does not decode: %v", c.cmd, err)
		}
		if img.Bounds().Dx() != int(w) || img.Bounds().Dy() != int(h) {
			t.Errorf("%s: PNG %v, the SVG is %vx%v", c.cmd, img.Bounds(), w, h)
		}

		r = one(t, s, c.cmd+" --out p.pdf")
		if !strings.Contains(r.Text, "wrote "+filepath.Join(s.Dir, "p.pdf")) || r.SVG == "" {
			t.Errorf("%s --out p.pdf: %q, and the notebook needs the picture as SVG", c.cmd, r.Text)
		}
		pdf, err := os.ReadFile(filepath.Join(s.Dir, "p.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-32:], []byte("%%EOF")) {
			t.Fatalf("%s: not a whole PDF", c.cmd)
		}
		boxes := mediaBox.FindAllSubmatch(pdf, -1)
		if n := len(pdfPage.FindAll(pdf, -1)); n != c.pages || len(boxes) == 0 {
			t.Errorf("%s: %d pages, %d media boxes, want %d pages", c.cmd, n, len(boxes), c.pages)
		}
		for _, b := range boxes {
			pw, _ := strconv.ParseFloat(string(b[1]), 64)
			ph, _ := strconv.ParseFloat(string(b[2]), 64)
			if fmt.Sprintf("%.2f %.2f", pw, ph) != fmt.Sprintf("%.2f %.2f", w*0.75, h*0.75) {
				t.Errorf("%s: a PDF page of %v x %v pt, the SVG is %v x %v px (%.2f x %.2f pt)", c.cmd, pw, ph, w, h, w*0.75, h*0.75)
			}
		}
		// The PDF's text is text: the title is in it (Windows-1252, as its fonts encode it).
		if !bytes.Contains(pdf, []byte("(")) {
			t.Errorf("%s: no text in the PDF", c.cmd)
		}
	}
	// An animation's PNG is its last frame, as the animation draws it.
	frames, err := s.worldFrames(0, 5, draw.WorldOptions{Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	last, err := frames[5].PNG(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if anim := one(t, s, "diagram --ticks 0..5 --out anim.png").PNG; !bytes.Equal(anim, last) {
		t.Error("the animation's PNG is not its last frame")
	}
	for _, bad := range []string{"plot pause --out p.jpg", "diagram --out p.gif", "sequence --out p.eps", "diagram --ticks 0..3 --out p.svgz"} {
		_, err := s.Exec(bad)
		if err == nil || !strings.Contains(err.Error(), "want a file ending in .svg, .png or .pdf") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestPNGBound: a PNG past limitPNGPixels is refused before it is drawn,
// naming the bound.
func TestPNGBound(t *testing.T) {
	s := pictureSession(t)
	defer func(l limit) { limitPNGPixels = l }(limitPNGPixels)
	limitPNGPixels = limit{limitPNGPixels.name, 1000}
	_, err := s.Exec("diagram --out big.png")
	if err == nil || !strings.Contains(err.Error(), "pixels in a PNG") {
		t.Fatalf("a PNG over the bound: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "big.png")); err == nil {
		t.Error("the refused PNG was written")
	}
}

// TestNumberedPictureNames: a picture without --out gets a name no file in
// the picture folder has (KIND.svg, KIND-2.svg, ...), and the result says
// where it went; nothing is overwritten.
func TestNumberedPictureNames(t *testing.T) {
	s := pictureSession(t)
	if err := os.MkdirAll(s.PictureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(s.PictureDir, "diagram.svg")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"pause.svg", "pause-2.svg", "pause-3.svg"} {
		r := one(t, s, "plot pause")
		path := filepath.Join(s.PictureDir, want)
		if r.Text != "plot pause: wrote "+path {
			t.Errorf("picture %d: %q, want it written to %s", i+1, r.Text, path)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != r.SVG {
			t.Errorf("%s does not hold the picture (%v)", want, err)
		}
	}
	r := one(t, s, "diagram")
	if !strings.HasPrefix(r.Text, "diagram: wrote "+filepath.Join(s.PictureDir, "diagram-2.svg")) {
		t.Errorf("diagram next to an existing diagram.svg: %q", r.Text)
	}
	if data, _ := os.ReadFile(mine); string(data) != "mine" {
		t.Error("diagram.svg was overwritten")
	}
}

// TestMembersInNaturalOrder: views, legends and pictures list members as
// people count (C2 before C10), while the coordinator keeps Kafka's string
// order of member ids.
func TestMembersInNaturalOrder(t *testing.T) {
	s := pictureSession(t)
	if _, err := s.Exec("new --members 12; run until stable"); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 1; i <= 12; i++ {
		want = append(want, "C"+strconv.Itoa(i))
	}
	wantText := strings.Join(want, " ")
	// in checks that the names appear in text in the wanted order.
	in := func(what, text string, names []string) {
		t.Helper()
		at := -1
		for _, n := range names {
			i := strings.Index(text[at+1:], n)
			if i < 0 {
				t.Errorf("%s: %s missing or out of order (want %s)", what, n, strings.Join(names, " "))
				return
			}
			at += 1 + i
		}
	}
	var ids []string
	for _, c := range want {
		ids = append(ids, c+"-1 ")
	}
	in("describe group --members", one(t, s, "describe group --members").Text, ids)
	var quoted []string
	for _, c := range want {
		quoted = append(quoted, `"`+c+`-1"`)
	}
	in("describe group --json", one(t, s, "describe group --json").JSON, quoted)
	var rows []string
	for _, c := range want {
		rows = append(rows, "\n"+c+" ")
	}
	in("members", one(t, s, "members").Text, rows)
	var states, names []string
	for _, c := range want {
		states = append(states, `data-client="`+c+`" data-process="1"`)
		names = append(names, ">"+c+"<")
	}
	in("diagram", one(t, s, "diagram").SVG, states)
	in("plot timeline's legend", one(t, s, "plot timeline").SVG, names)
	in("sequence's lanes", one(t, s, "sequence --ticks 0..3").SVG, names[:1])
	if got := strings.Join(s.World().Clients(), " "); got == wantText {
		t.Log("the engine lists clients in natural order too")
	}
	if ms := s.World().Group.Members(); ms[1].MemberID != "C10-1" {
		t.Errorf("the coordinator's member order is %s, %s, ...: Kafka sorts member ids as strings", ms[0].MemberID, ms[1].MemberID)
	}
	r := one(t, s, "compare partition.assignment.strategy range,roundrobin")
	at := strings.Index(r.Text, "each member at the end")
	if at < 0 {
		t.Fatalf("compare prints no member table:\n%s", r.Text)
	}
	in("compare's member table", r.Text[at:], rows)
	in("compare's member chart", r.SVG[strings.Index(r.SVG, "Partitions each member"):], names)
	var keys []string
	for _, c := range want {
		keys = append(keys, `"`+c+`":"{`)
	}
	j := one(t, s, "compare partition.assignment.strategy range --json").JSON
	in("compare --json's assignment", j[strings.Index(j, `"assignment"`):], keys)
}
