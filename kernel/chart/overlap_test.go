package chart_test

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kgrepl/kgrepl/kernel/chart"
)

// textBox is where one string was drawn, in canvas points.
type textBox struct {
	text string
	r    vg.Rectangle
}

// boxCanvas is a canvas that draws nothing and records the box of every
// string, from gonum/plot's own font metrics (the advance widths with
// kerning, the ascent and descent), through the canvas's transforms.
type boxCanvas struct {
	w, h  vg.Length
	m     [6]float64 // affine: x' = a x + c y + e, y' = b x + d y + f
	stack [][6]float64
	boxes []textBox
}

func newBoxCanvas(w, h vg.Length) *boxCanvas {
	return &boxCanvas{w: w, h: h, m: [6]float64{1, 0, 0, 1, 0, 0}}
}

func (c *boxCanvas) Size() (vg.Length, vg.Length)        { return c.w, c.h }
func (c *boxCanvas) SetLineWidth(vg.Length)              {}
func (c *boxCanvas) SetLineDash([]vg.Length, vg.Length)  {}
func (c *boxCanvas) SetColor(color.Color)                {}
func (c *boxCanvas) Stroke(vg.Path)                      {}
func (c *boxCanvas) Fill(vg.Path)                        {}
func (c *boxCanvas) DrawImage(vg.Rectangle, image.Image) {}
func (c *boxCanvas) Push()                               { c.stack = append(c.stack, c.m) }
func (c *boxCanvas) Pop() {
	c.m, c.stack = c.stack[len(c.stack)-1], c.stack[:len(c.stack)-1]
}

// mul applies a transform in the current coordinates (as vg canvases do).
func (c *boxCanvas) mul(a, b, cc, d, e, f float64) {
	m := c.m
	c.m = [6]float64{
		m[0]*a + m[2]*b, m[1]*a + m[3]*b,
		m[0]*cc + m[2]*d, m[1]*cc + m[3]*d,
		m[0]*e + m[2]*f + m[4], m[1]*e + m[3]*f + m[5],
	}
}
func (c *boxCanvas) Translate(p vg.Point) { c.mul(1, 0, 0, 1, float64(p.X), float64(p.Y)) }
func (c *boxCanvas) Scale(x, y float64)   { c.mul(x, 0, 0, y, 0, 0) }
func (c *boxCanvas) Rotate(t float64) {
	s, co := math.Sin(t), math.Cos(t)
	c.mul(co, s, -s, co, 0, 0)
}

func (c *boxCanvas) FillString(f font.Face, pt vg.Point, s string) {
	if s == "" {
		return
	}
	e := f.Extents()
	x0, x1 := float64(pt.X), float64(pt.X+f.Width(s))
	y0, y1 := float64(pt.Y-e.Descent), float64(pt.Y+e.Ascent)
	r := vg.Rectangle{Min: vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}, Max: vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}}
	for _, p := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		x := vg.Length(c.m[0]*p[0] + c.m[2]*p[1] + c.m[4])
		y := vg.Length(c.m[1]*p[0] + c.m[3]*p[1] + c.m[5])
		r.Min.X, r.Min.Y = min(r.Min.X, x), min(r.Min.Y, y)
		r.Max.X, r.Max.Y = max(r.Max.X, x), max(r.Max.Y, y)
	}
	c.boxes = append(c.boxes, textBox{s, r})
}

func overlaps(a, b vg.Rectangle) bool {
	const eps = 0.01
	return a.Min.X < b.Max.X-eps && b.Min.X < a.Max.X-eps && a.Min.Y < b.Max.Y-eps && b.Min.Y < a.Max.Y-eps
}

// textBoxes draws a chart on a recording canvas of its size.
func textBoxes(c *chart.Chart) []textBox {
	bc := newBoxCanvas(c.Width, c.Height)
	c.Draw(draw.New(bc))
	return bc.boxes
}

// checkText fails when two strings of a chart overlap or one leaves the canvas.
func checkText(t *testing.T, what string, c *chart.Chart) {
	t.Helper()
	boxes := textBoxes(c)
	if len(boxes) == 0 {
		t.Fatalf("%s: no text drawn", what)
	}
	for i, a := range boxes {
		if a.r.Min.X < -0.01 || a.r.Min.Y < -0.01 || a.r.Max.X > c.Width+0.01 || a.r.Max.Y > c.Height+0.01 {
			t.Errorf("%s: %q (%v) is not wholly on the %vx%v canvas", what, a.text, a.r, c.Width, c.Height)
		}
		for _, b := range boxes[i+1:] {
			if overlaps(a.r, b.r) {
				t.Errorf("%s: %q %v and %q %v overlap", what, a.text, a.r, b.text, b.r)
			}
		}
	}
}

// TestNoTextOverlaps draws every kind of chart from several demos, alone,
// with two and three branches overlaid, and at other sizes, and checks that
// no two strings overlap and none is cut by the canvas's edge.
func TestNoTextOverlaps(t *testing.T) {
	runs := map[int]*chart.Run{}
	for _, n := range []int{2, 3, 5, 7, 11, 12} {
		s := demoSession(t, n)
		if n == 11 {
			if _, err := s.Exec("switch main"); err != nil {
				t.Fatal(err)
			}
		}
		runs[n] = record(t, s, chart.NeedAll)
	}
	sizes := []chart.Options{{}, {Width: chart.MinWidth, Height: chart.MinHeight}, {Width: 1600, Height: 900}, {From: 10, To: 40}}
	for n, r := range runs {
		for _, kind := range chart.Kinds {
			for _, opt := range sizes {
				c, err := chart.Build(kind, opt, r)
				if err != nil {
					t.Fatal(err)
				}
				checkText(t, fmt.Sprintf("demo %d %s %+v", n, kind, opt), c)
			}
		}
	}
	a, b, e := *runs[2], *runs[3], *runs[7]
	a.Name, b.Name, e.Name = "eager", "cooperative", "zombie"
	for _, kind := range []string{"pause", "duplicates"} {
		for _, opt := range sizes {
			for _, set := range [][]*chart.Run{{&a, &b}, {&b, &a}, {&a, &b, &e}} {
				c, err := chart.Build(kind, opt, set...)
				if err != nil {
					t.Fatal(err)
				}
				checkText(t, fmt.Sprintf("overlay %s of %d %+v", kind, len(set), opt), c)
			}
		}
	}
}

// TestLegendUnderThePlot: the legend is in rows under the x axis, so it
// takes no width from the data.
func TestLegendUnderThePlot(t *testing.T) {
	s := demoSession(t, 3)
	r := record(t, s, chart.NeedAll)
	for _, kind := range chart.Kinds {
		c, _ := chart.Build(kind, chart.Options{}, r)
		boxes := textBoxes(c)
		var axis vg.Rectangle
		found := false
		for _, b := range boxes {
			if b.text == "tick" {
				axis, found = b.r, true
			}
		}
		if !found {
			t.Fatalf("%s: no x axis label", kind)
		}
		for _, b := range boxes {
			for _, name := range c.Names {
				if b.text == name && b.r.Max.Y > axis.Min.Y {
					t.Errorf("%s: legend entry %q (%v) is not under the x axis label (%v)", kind, name, b.r, axis)
				}
			}
		}
	}
}
