package draw

import (
	"image"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// SVGCanvas is a vg.Canvas that writes SVG, for every picture kgrepl
// draws (the charts, the world and sequence diagrams). gonum's vgsvg names
// the font of a <text> (each viewer then draws it in a font of its own,
// at other widths) or embeds whole fonts (about 550 KB of base64 each);
// this canvas draws each letter as the Liberation glyph outline gonum's
// font metrics measured, defined once per document in <defs> and placed
// with <use>, and keeps the text itself, transparent, in a <text> under
// it for search, selection and screen readers. Coordinates are CSS
// pixels with the origin at the top left, one decimal: the same bytes on
// every machine.
//
// Group and End (beyond vg.Canvas) put what is drawn between them in a
// <g> with attributes: the diagrams name their parts (a member, a log
// cell, a packet) so tests and animations can find them.
type SVGCanvas struct {
	w, h  vg.Length // the drawing's size, in points
	stack []svgState
	b     strings.Builder
	// pending is a filled path not yet written: a Stroke of the same path
	// that follows it is written into the same element (a shape with a
	// fill and an outline is one <path>, not two).
	pending, pendingD string
	depth             int      // open groups
	items             []string // what was drawn at depth 0, one entry per element or group
	glyphs            map[string]bool
	buf               sfnt.Buffer
	// Class and Title go on the root element; DisplayW and DisplayH (CSS
	// pixels, 0 = the drawing's size) set the size it is shown at, the
	// viewBox keeping the drawing whole.
	Class, Title       string
	DisplayW, DisplayH float64
}

type svgState struct {
	col    color.Color
	width  vg.Length
	dashes []vg.Length
	offs   vg.Length
	m      affine
}

// affine maps points: x' = a x + c y + e, y' = b x + d y + f.
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// then is m followed, in the current coordinates, by n (as vg's
// Translate, Scale and Rotate compose).
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

// scale is how much m stretches a length (the mean of its axes).
func (m affine) scale() float64 { return math.Sqrt(math.Abs(m.a*m.d - m.b*m.c)) }

// pxPerPt: an SVG's user unit is a CSS pixel, 0.75 points.
const pxPerPt = 4.0 / 3

// NewSVG is an SVG canvas of w × h points (vg's unit; a CSS pixel is 0.75 of a point).
func NewSVG(w, h vg.Length) *SVGCanvas {
	c := &SVGCanvas{w: w, h: h, glyphs: map[string]bool{}}
	// vg's origin is the bottom left, in points; SVG's the top left, in pixels.
	c.stack = []svgState{{col: color.Black, width: 1, m: affine{a: pxPerPt, d: -pxPerPt, f: float64(h) * pxPerPt}}}
	return c
}

func (c *SVGCanvas) top() *svgState { return &c.stack[len(c.stack)-1] }

// Size is the canvas's size in points.
func (c *SVGCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

func (c *SVGCanvas) SetLineWidth(w vg.Length) { c.top().width = w }

func (c *SVGCanvas) SetLineDash(d []vg.Length, offs vg.Length) {
	c.top().dashes, c.top().offs = append([]vg.Length(nil), d...), offs
}

func (c *SVGCanvas) SetColor(col color.Color) {
	if col == nil {
		col = color.Black // vg's canvases read no colour as black
	}
	c.top().col = col
}

func (c *SVGCanvas) Rotate(t float64) {
	s, co := math.Sincos(t)
	c.top().m = c.top().m.then(affine{a: co, b: s, c: -s, d: co})
}

func (c *SVGCanvas) Translate(p vg.Point) {
	c.top().m = c.top().m.then(affine{a: 1, d: 1, e: float64(p.X), f: float64(p.Y)})
}

func (c *SVGCanvas) Scale(x, y float64) { c.top().m = c.top().m.then(affine{a: x, d: y}) }

func (c *SVGCanvas) Push() {
	s := *c.top()
	c.stack = append(c.stack, s)
}

func (c *SVGCanvas) Pop() {
	if len(c.stack) > 1 {
		c.stack = c.stack[:len(c.stack)-1]
	}
}

// Group opens a <g> with attributes (name, value pairs; empty values are
// left out); End closes it.
// A "title" attribute becomes the group's <title>, the tooltip a viewer shows.
func (c *SVGCanvas) Group(kv ...string) {
	c.settle()
	c.b.WriteString("<g")
	title := ""
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "title" {
			title = kv[i+1]
			continue
		}
		attrs(&c.b, kv[i], kv[i+1])
	}
	c.b.WriteString(">\n")
	if title != "" {
		c.b.WriteString("<title>" + esc(title) + "</title>\n")
	}
	c.depth++
}

func (c *SVGCanvas) End() {
	c.settle()
	c.b.WriteString("</g>\n")
	c.depth--
	c.flush()
}

// flush ends an item when nothing is left open.
func (c *SVGCanvas) flush() {
	if c.depth == 0 && c.b.Len() > 0 {
		c.items = append(c.items, c.b.String())
		c.b.Reset()
	}
}

func attrs(b *strings.Builder, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		b.WriteString(" " + kv[i] + `="` + esc(kv[i+1]) + `"`)
	}
}

func (c *SVGCanvas) Stroke(p vg.Path) {
	st := c.top()
	if st.width <= 0 || len(p) == 0 || transparent(st.col) {
		return
	}
	d := c.pathData(p)
	if c.pending != "" && c.pendingD == d {
		c.b.WriteString(c.pending)
		c.pending = ""
	} else {
		c.settle()
		c.b.WriteString(`<path d="` + d + `" fill="none"`)
	}
	c.b.WriteString(` stroke="` + Hex(st.col) + `"`)
	if o := opacity(st.col); o != "" {
		c.b.WriteString(` stroke-opacity="` + o + `"`)
	}
	sc := st.m.scale()
	c.b.WriteString(` stroke-width="` + num2(float64(st.width)*sc) + `"`)
	if len(st.dashes) > 0 {
		var ds []string
		for _, d := range st.dashes {
			ds = append(ds, num2(float64(d)*sc))
		}
		c.b.WriteString(` stroke-dasharray="` + strings.Join(ds, " ") + `"`)
		if st.offs != 0 {
			c.b.WriteString(` stroke-dashoffset="` + num2(float64(st.offs)*sc) + `"`)
		}
	}
	c.b.WriteString("/>\n")
	c.flush()
}

func (c *SVGCanvas) Fill(p vg.Path) {
	st := c.top()
	if len(p) == 0 || transparent(st.col) {
		return
	}
	c.settle()
	d := c.pathData(p)
	c.pendingD = d
	c.pending = `<path d="` + d + `" fill="` + Hex(st.col) + `"`
	if o := opacity(st.col); o != "" {
		c.pending += ` fill-opacity="` + o + `"`
	}
}

// settle writes a pending filled path.
func (c *SVGCanvas) settle() {
	if c.pending == "" {
		return
	}
	c.b.WriteString(c.pending + "/>\n")
	c.pending = ""
	c.flush()
}

func transparent(col color.Color) bool {
	if col == nil {
		return false
	}
	_, _, _, a := col.RGBA()
	return a == 0
}

// opacity is a colour's alpha as an attribute value, "" when opaque.
func opacity(col color.Color) string {
	if col == nil {
		return ""
	}
	_, _, _, a := col.RGBA()
	if a == 0xffff {
		return ""
	}
	return strconv.FormatFloat(math.Round(float64(a)/0xffff*1000)/1000, 'f', -1, 64)
}

// pathData writes a path in pixels; arcs become cubic curves (see arc),
// so any transform the canvas holds maps them exactly.
func (c *SVGCanvas) pathData(p vg.Path) string {
	m := c.top().m
	var b strings.Builder
	pt := func(p vg.Point) string {
		x, y := m.apply(float64(p.X), float64(p.Y))
		return num(x) + " " + num(y)
	}
	var write func(p vg.Path)
	write = func(p vg.Path) {
		for _, comp := range p {
			switch comp.Type {
			case vg.MoveComp:
				b.WriteString("M" + pt(comp.Pos))
			case vg.LineComp:
				b.WriteString("L" + pt(comp.Pos))
			case vg.CurveComp:
				switch len(comp.Control) {
				case 1:
					b.WriteString("Q" + pt(comp.Control[0]) + " " + pt(comp.Pos))
				case 2:
					b.WriteString("C" + pt(comp.Control[0]) + " " + pt(comp.Control[1]) + " " + pt(comp.Pos))
				}
			case vg.ArcComp:
				// A line (or a move, when the path starts with it) to the
				// arc's start, then the arc.
				start := vg.Point{X: comp.Pos.X + comp.Radius*vg.Length(math.Cos(comp.Start)), Y: comp.Pos.Y + comp.Radius*vg.Length(math.Sin(comp.Start))}
				if b.Len() == 0 {
					b.WriteString("M" + pt(start))
				} else {
					b.WriteString("L" + pt(start))
				}
				var curves vg.Path
				arc(&curves, comp.Pos, comp.Radius, comp.Start, comp.Angle)
				write(curves)
			case vg.CloseComp:
				b.WriteString("Z")
			}
		}
	}
	write(p)
	return b.String()
}

// FillString draws str with its baseline starting at pt: the glyph
// outlines in the current colour, and the text itself, transparent.
func (c *SVGCanvas) FillString(f font.Face, pt vg.Point, str string) {
	c.settle()
	st := c.top()
	ff := faceKey(f.Font)
	upem := float64(f.Face.UnitsPerEm())
	size := float64(f.Font.Size) // points
	glyphs := layoutGlyphs(&c.buf, f, ff, standIn(str))
	// The glyphs' frame: at pt, font units, y down (as sfnt gives them).
	m := st.m.then(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
	px, py := m.apply(0, 0)
	axis := m.b == 0 && m.c == 0 && m.a > 0 && m.d < 0 && math.Abs(m.a+m.d) < 1e-9
	fill := Hex(st.col)
	// The text, for search and selection, at the size the letters have.
	c.b.WriteString(`<text`)
	if axis {
		attrs(&c.b, "x", num(px), "y", num(py), "font-size", num2(size*m.a))
	} else {
		attrs(&c.b, "transform", matrix(m.then(affine{a: 1, d: -1})), "font-size", num2(size))
	}
	if fam := fontFamily(f.Font); fam != "" {
		attrs(&c.b, "font-family", fam)
	}
	if ff == "sb" || ff == "mb" {
		attrs(&c.b, "font-weight", "bold")
	}
	if ff == "si" {
		attrs(&c.b, "font-style", "italic")
	}
	c.b.WriteString(` fill-opacity="0">` + esc(str) + "</text>\n")
	if len(glyphs.placed) > 0 {
		k := size / upem
		var tr string
		if axis {
			tr = "translate(" + num(px) + " " + num(py) + ") scale(" + strconv.FormatFloat(k*m.a, 'g', 6, 64) + ")"
		} else {
			tr = matrix(m.then(affine{a: k, d: -k}))
		}
		c.b.WriteString(`<g aria-hidden="true" fill="` + fill + `"`)
		if o := opacity(st.col); o != "" {
			c.b.WriteString(` fill-opacity="` + o + `"`)
		}
		c.b.WriteString(` transform="` + tr + `">`)
		for _, g := range glyphs.placed {
			c.glyphs[g.id] = true
			c.b.WriteString(`<use href="#` + g.id + `"`)
			if g.x != 0 {
				c.b.WriteString(` x="` + strconv.Itoa(g.x) + `"`)
			}
			c.b.WriteString("/>")
		}
		c.b.WriteString("</g>\n")
	}
	c.flush()
}

func matrix(m affine) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	return "matrix(" + f(m.a) + " " + f(m.b) + " " + f(m.c) + " " + f(m.d) + " " + num(m.e) + " " + num(m.f) + ")"
}

// DrawImage is not used by kgrepl's pictures; an image is left out.
func (c *SVGCanvas) DrawImage(vg.Rectangle, image.Image) {}

// Items are what was drawn at the top level, in order, each one element or
// one group (an animation shows each in the frames that drew it).
func (c *SVGCanvas) Items() []string {
	c.settle()
	return c.items
}

// GlyphDefs are the <defs> of the glyphs the document placed.
func (c *SVGCanvas) GlyphDefs() string { return glyphDefs(c.glyphs) }

// open writes the root element and the title.
func (c *SVGCanvas) open(b *strings.Builder) {
	w, h := float64(c.w)*pxPerPt, float64(c.h)*pxPerPt
	dw, dh := displaySize(w, h, c.DisplayW, c.DisplayH)
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg"`)
	attrs(b, "class", c.Class, "width", num(dw), "height", num(dh), "viewBox", "0 0 "+num(w)+" "+num(h),
		"font-family", sansFont, "font-size", "12")
	b.WriteString(">\n")
	if c.Title != "" {
		b.WriteString("<title>" + esc(c.Title) + "</title>\n")
	}
}

// displaySize is the size a w × h drawing is shown at for a requested
// width and height (0 keeps the drawing's proportions; both 0, its size).
func displaySize(w, h, dw, dh float64) (float64, float64) {
	switch {
	case dw <= 0 && dh <= 0:
		return w, h
	case dw <= 0:
		return math.Round(w * dh / h), dh
	case dh <= 0:
		return dw, math.Round(h * dw / w)
	}
	return dw, dh
}

// WriteTo writes the SVG document.
func (c *SVGCanvas) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	c.settle()
	c.open(&b)
	for _, it := range c.items {
		b.WriteString(it)
	}
	b.WriteString(c.b.String())
	b.WriteString(c.GlyphDefs())
	b.WriteString("</svg>\n")
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// glyphRun is a line of text laid out: its glyphs and its advance, in font units.
type glyphRun struct {
	placed  []placed
	advance int
}

// placed is one glyph of a line of text: its id, its index in the font
// and its x in font units.
type placed struct {
	id  string
	idx sfnt.GlyphIndex
	x   int
}

var (
	glyphMu   sync.Mutex
	glyphPath = map[string]string{} // id → path data in font units
)

// glyphOutline is the outline of glyph idx in font units, y down ("" for a
// glyph with no outline, a space).
func glyphOutline(buf *sfnt.Buffer, sf *sfnt.Font, idx sfnt.GlyphIndex, id string) string {
	glyphMu.Lock()
	d, ok := glyphPath[id]
	glyphMu.Unlock()
	if ok {
		return d
	}
	segs, err := sf.LoadGlyph(buf, idx, fixed.Int26_6(sf.UnitsPerEm()), nil)
	var b strings.Builder
	if err == nil {
		pt := func(p fixed.Point26_6) string { return strconv.Itoa(int(p.X)) + " " + strconv.Itoa(int(p.Y)) }
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if b.Len() > 0 {
					b.WriteString("Z")
				}
				b.WriteString("M" + pt(s.Args[0]))
			case sfnt.SegmentOpLineTo:
				b.WriteString("L" + pt(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				b.WriteString("Q" + pt(s.Args[0]) + " " + pt(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				b.WriteString("C" + pt(s.Args[0]) + " " + pt(s.Args[1]) + " " + pt(s.Args[2]))
			}
		}
		if b.Len() > 0 {
			b.WriteString("Z")
		}
	}
	glyphMu.Lock()
	glyphPath[id] = b.String()
	glyphMu.Unlock()
	return b.String()
}

// glyphDefs writes the <defs> of the glyphs a document uses, sorted by id.
func glyphDefs(used map[string]bool) string {
	if len(used) == 0 {
		return ""
	}
	ids := make([]string, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString(`<defs class="glyphs">` + "\n")
	glyphMu.Lock()
	for _, id := range ids {
		b.WriteString(`<path id="` + id + `" d="` + glyphPath[id] + `"/>` + "\n")
	}
	glyphMu.Unlock()
	b.WriteString("</defs>\n")
	return b.String()
}
