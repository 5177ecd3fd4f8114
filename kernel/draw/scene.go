package draw

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// A Picture is a diagram laid out and ready to render: a list of shapes
// and texts in CSS pixels (origin at the top left), drawn on gonum/plot's
// vg canvas in every format, so fonts and sizes are the same in SVG, PNG
// and PDF. Laying out reads the world once; rendering reads only the
// picture.
type Picture struct {
	W, H  float64 // CSS pixels
	Title string
	// Cut is the line a partial picture shows saying what it leaves out
	// ("" when it draws everything); the kernel repeats it in its answer.
	Cut   string
	class string
	ops   []op
	// run is how far a packet's dot travels in an animation, and wire the
	// room between the members and B1 (world diagrams).
	run, wire float64
	layout    *Layout
}

// opKind is what one op draws.
type opKind uint8

const (
	opRect opKind = iota
	opLine
	opPoly   // a filled polygon
	opPolyln // a stroked open polyline
	opCircle
	opText
	opGroup
	opEnd
)

// op is one drawing operation of a picture, in CSS pixels.
type op struct {
	kind       opKind
	x, y, w, h float64 // rect; line: x,y → w,h; circle: x,y centre, w radius; text: x,y baseline
	pts        []float64
	fill       color.Color // nil: not filled
	stroke     color.Color // nil: not stroked
	width      float64
	dash       []float64
	rx         float64
	text       string
	st         textStyle
	attrs      []string // group
}

// pen lays a picture out: each method adds an op.
type pen struct{ p *Picture }

// newPicture starts a picture of at least w × h pixels (whole pixels, so
// that a PNG is the size the SVG is shown at), its background white.
func newPicture(w, h float64, class, title string) (*Picture, *pen) {
	w, h = math.Ceil(w), math.Ceil(h)
	p := &Picture{W: w, H: h, class: class, Title: title}
	pn := &pen{p}
	pn.rect(0, 0, w, h, ink{fill: "#ffffff"})
	return p, pn
}

// ink is how a shape is painted: colours as #rrggbb ("" for none), a
// stroke width, a dash pattern ("3 2"), corner radius.
type ink struct {
	fill, stroke string
	width        float64
	dash         string
	rx           float64
}

func (pn *pen) add(o op) { pn.p.ops = append(pn.p.ops, o) }

func paints(k ink) (fill, stroke color.Color, dash []float64) {
	if k.fill != "" && k.fill != "none" {
		fill = parseHex(k.fill)
	}
	if k.stroke != "" && k.stroke != "none" {
		stroke = parseHex(k.stroke)
	}
	for _, f := range strings.Fields(k.dash) {
		v, _ := strconv.ParseFloat(f, 64)
		dash = append(dash, v)
	}
	return fill, stroke, dash
}

func (pn *pen) rect(x, y, w, h float64, k ink) {
	fill, stroke, dash := paints(k)
	width := k.width
	if stroke != nil && width == 0 {
		width = 1
	}
	pn.add(op{kind: opRect, x: x, y: y, w: w, h: h, fill: fill, stroke: stroke, width: width, dash: dash, rx: k.rx})
}

func (pn *pen) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	_, s, d := paints(ink{stroke: stroke, dash: dash})
	pn.add(op{kind: opLine, x: x1, y: y1, w: x2, h: y2, stroke: s, width: width, dash: d})
}

func (pn *pen) polygon(fill string, pts ...float64) {
	pn.add(op{kind: opPoly, pts: pts, fill: parseHex(fill)})
}

func (pn *pen) polyline(stroke string, width float64, dash string, pts ...float64) {
	_, s, d := paints(ink{stroke: stroke, dash: dash})
	pn.add(op{kind: opPolyln, pts: pts, stroke: s, width: width, dash: d})
}

func (pn *pen) circle(cx, cy, r float64, k ink) {
	fill, stroke, _ := paints(k)
	pn.add(op{kind: opCircle, x: cx, y: cy, w: r, fill: fill, stroke: stroke, width: k.width})
}

// text draws t with its baseline at y, anchored at x as the style says.
func (pn *pen) text(x, y float64, t string, st textStyle) {
	if st.size == 0 {
		st.size = 12
	}
	pn.add(op{kind: opText, x: x, y: y, text: t, st: st})
}

// group puts what follows, up to end, in a named part (an SVG <g> with
// these attributes; other formats draw it the same).
func (pn *pen) group(kv ...string) { pn.add(op{kind: opGroup, attrs: kv}) }

func (pn *pen) end() { pn.add(op{kind: opEnd}) }

// arrowHead draws a filled triangle pointing from (x0,y0) to (x,y).
func (pn *pen) arrowHead(x0, y0, x, y float64, fill string) {
	dx, dy := x-x0, y-y0
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	ux, uy := dx/l, dy/l
	const size = 7
	bx, by := x-ux*size, y-uy*size
	pn.polygon(fill, x, y, bx-uy*size*0.45, by+ux*size*0.45, bx+uy*size*0.45, by-ux*size*0.45)
}

// parseHex reads #rrggbb.
func parseHex(s string) color.Color {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil || len(s) != 7 {
		return color.Black
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
}

// grouper is a canvas that names parts of a picture (SVGCanvas).
type grouper interface {
	Group(kv ...string)
	End()
}

// drawOn draws the picture on a canvas hpx pixels high at scale s (pixels
// of the output per pixel of the picture), its top left at (ox, oy)
// output pixels.
func (p *Picture) drawOn(c vg.Canvas, hpx, s, ox, oy float64) {
	pt := func(x, y float64) vg.Point {
		return vg.Point{X: vg.Length((ox + x*s) * 0.75), Y: vg.Length((hpx - oy - y*s) * 0.75)}
	}
	g, _ := c.(grouper)
	svg := g != nil
	stroke := func(col color.Color, width float64, dash []float64, path vg.Path) {
		c.SetColor(col)
		c.SetLineWidth(vg.Length(width * s * 0.75))
		var ds []vg.Length
		for _, d := range dash {
			ds = append(ds, vg.Length(d*s*0.75))
		}
		c.SetLineDash(ds, 0)
		c.Stroke(path)
	}
	for _, o := range p.ops {
		switch o.kind {
		case opGroup:
			if g != nil {
				g.Group(o.attrs...)
			}
		case opEnd:
			if g != nil {
				g.End()
			}
		case opRect:
			path := rectPath(pt, o.x, o.y, o.w, o.h, o.rx*s)
			if o.fill != nil {
				c.SetColor(o.fill)
				c.Fill(path)
			}
			if o.stroke != nil {
				stroke(o.stroke, o.width, o.dash, path)
			}
		case opLine:
			var path vg.Path
			path.Move(pt(o.x, o.y))
			path.Line(pt(o.w, o.h))
			stroke(o.stroke, o.width, o.dash, path)
		case opPoly, opPolyln:
			var path vg.Path
			for i := 0; i+1 < len(o.pts); i += 2 {
				if i == 0 {
					path.Move(pt(o.pts[0], o.pts[1]))
				} else {
					path.Line(pt(o.pts[i], o.pts[i+1]))
				}
			}
			if o.kind == opPoly {
				path.Close()
				c.SetColor(o.fill)
				c.Fill(path)
			} else {
				stroke(o.stroke, o.width, o.dash, path)
			}
		case opCircle:
			var path vg.Path
			centre := pt(o.x, o.y)
			path.Move(vg.Point{X: centre.X + vg.Length(o.w*s*0.75), Y: centre.Y})
			arc(&path, centre, vg.Length(o.w*s*0.75), 0, 2*math.Pi)
			path.Close()
			if o.fill != nil {
				c.SetColor(o.fill)
				c.Fill(path)
			}
			if o.stroke != nil {
				stroke(o.stroke, o.width, nil, path)
			}
		case opText:
			st := o.st
			st.size *= s
			f := faceOf(st)
			x := o.x
			switch st.anchor {
			case "middle":
				x -= measure(o.text, o.st) / 2
			case "end":
				x -= measure(o.text, o.st)
			}
			col := color.Color(color.RGBA{0x00, 0x00, 0x00, 0xff})
			if st.color != "" {
				col = parseHex(st.color)
			}
			c.SetColor(col)
			t := o.text
			if !svg {
				t = standIn(t) // an SVG keeps the character in its text, and draws the stand-in's outline
			}
			c.FillString(f, pt(x, o.y), t)
		}
	}
}

// rectPath is a rectangle, with round corners of radius r (output pixels).
func rectPath(pt func(x, y float64) vg.Point, x, y, w, h, r float64) vg.Path {
	var path vg.Path
	a, b := pt(x, y), pt(x+w, y+h) // a top left, b bottom right (vg's y grows upwards)
	rr := vg.Length(math.Min(r*0.75, math.Min(float64(b.X-a.X), float64(a.Y-b.Y))/2))
	if rr <= 0 {
		path.Move(vg.Point{X: a.X, Y: a.Y})
		path.Line(vg.Point{X: b.X, Y: a.Y})
		path.Line(vg.Point{X: b.X, Y: b.Y})
		path.Line(vg.Point{X: a.X, Y: b.Y})
		path.Close()
		return path
	}
	path.Move(vg.Point{X: a.X + rr, Y: a.Y})
	path.Line(vg.Point{X: b.X - rr, Y: a.Y})
	arc(&path, vg.Point{X: b.X - rr, Y: a.Y - rr}, rr, math.Pi/2, -math.Pi/2)
	path.Line(vg.Point{X: b.X, Y: b.Y + rr})
	arc(&path, vg.Point{X: b.X - rr, Y: b.Y + rr}, rr, 0, -math.Pi/2)
	path.Line(vg.Point{X: a.X + rr, Y: b.Y})
	arc(&path, vg.Point{X: a.X + rr, Y: b.Y + rr}, rr, -math.Pi/2, -math.Pi/2)
	path.Line(vg.Point{X: a.X, Y: a.Y - rr})
	arc(&path, vg.Point{X: a.X + rr, Y: a.Y - rr}, rr, math.Pi, -math.Pi/2)
	path.Close()
	return path
}

// arc adds an arc from the current point (on the circle at angle start)
// as cubic curves of at most a quarter turn: vgpdf draws vg's own arcs as
// separate shapes, which breaks a filled outline.
func arc(path *vg.Path, c vg.Point, r vg.Length, start, angle float64) {
	n := int(math.Ceil(math.Abs(angle) / (math.Pi / 2)))
	if n == 0 {
		return
	}
	step := angle / float64(n)
	k := 4.0 / 3 * math.Tan(step/4) * float64(r)
	at := func(t float64) (float64, float64) {
		return float64(c.X) + float64(r)*math.Cos(t), float64(c.Y) + float64(r)*math.Sin(t)
	}
	for i := 0; i < n; i++ {
		t0 := start + float64(i)*step
		t1 := t0 + step
		ax, ay := at(t0)
		bx, by := at(t1)
		path.CubeTo(vg.Point{X: vg.Length(ax - k*math.Sin(t0)), Y: vg.Length(ay + k*math.Cos(t0))},
			vg.Point{X: vg.Length(bx + k*math.Sin(t1)), Y: vg.Length(by - k*math.Cos(t1))},
			vg.Point{X: vg.Length(bx), Y: vg.Length(by)})
	}
}

// fit is the scale and offset that draw a w × h picture in an output of
// ow × oh pixels, whole and centred (as an SVG viewBox shows it).
func fit(w, h, ow, oh float64) (s, ox, oy float64) {
	s = math.Min(ow/w, oh/h)
	return s, (ow - w*s) / 2, (oh - h*s) / 2
}

// Size is the size the picture is shown at for a requested width and
// height in pixels (0 keeps the proportions; both 0, its own size).
func (p *Picture) Size(w, h int) (int, int) {
	dw, dh := displaySize(p.W, p.H, float64(w), float64(h))
	return int(math.Round(dw)), int(math.Round(dh))
}

// svgCanvas draws the picture on an SVG canvas of its own size.
func (p *Picture) svgCanvas() *SVGCanvas {
	c := NewSVG(vg.Length(p.W*0.75), vg.Length(p.H*0.75))
	c.Class, c.Title = p.class, p.Title
	p.drawOn(c, p.H, 1, 0, 0)
	return c
}

// SVG is the picture as an SVG document shown at w × h pixels (0 as Size says).
func (p *Picture) SVG(w, h int) string {
	c := p.svgCanvas()
	c.DisplayW, c.DisplayH = float64(w), float64(h)
	var b strings.Builder
	c.WriteTo(&b)
	return b.String()
}

// PNGDPI is the resolution of PNG renderings: one pixel per CSS pixel, so
// a PNG has the size its SVG has in a browser.
const PNGDPI = 96

// PNG is the picture as a PNG of w × h pixels (0 as Size says).
func (p *Picture) PNG(w, h int) ([]byte, error) {
	ow, oh := p.Size(w, h)
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(vg.Length(float64(ow)*0.75), vg.Length(float64(oh)*0.75)), vgimg.UseDPI(PNGDPI))}
	s, ox, oy := fit(p.W, p.H, float64(ow), float64(oh))
	p.drawOn(c, float64(oh), s, ox, oy)
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// PDF is the picture as a one-page PDF of w × h pixels (0 as Size says;
// a page of 0.75 w × 0.75 h points), its text real text in the embedded
// Liberation fonts.
func (p *Picture) PDF(w, h int) ([]byte, error) {
	return pdfPages([]*Picture{p}, p.W, p.H, w, h)
}

// pdfPages draws pictures one a page, on pages of w × h pixels for a
// drawing of pw × ph (0 as Size says), each picture at the top left at the
// scale that fits pw × ph.
func pdfPages(ps []*Picture, pw, ph float64, w, h int) (out []byte, err error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("no picture to write")
	}
	defer func() {
		// vgpdf panics when it cannot make a font; say so as an error.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("writing the PDF: %v", r)
		}
	}()
	dw, dh := displaySize(pw, ph, float64(w), float64(h))
	ow, oh := math.Round(dw), math.Round(dh)
	pc := vgpdf.New(vg.Length(ow*0.75), vg.Length(oh*0.75))
	c := PDFCanvas(pc)
	s, ox, oy := fit(pw, ph, ow, oh)
	for i, p := range ps {
		if i > 0 {
			pc.NextPage()
		}
		p.drawOn(c, oh, s, ox, oy)
	}
	var b bytes.Buffer
	if _, err := pc.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pdfText is a PDF canvas whose letters are the same on every viewer:
// vgpdf writes a string's bytes in its fonts' Windows-1252 encoding (UTF-8
// text such as · → ² comes out as other letters) with widths that do not
// match gonum's metrics, so each string is drawn as its glyph outlines,
// as an SVG draws it, with the text itself written transparent under them
// for search and selection (the characters Windows-1252 lacks as "?").
// The fonts of that hidden text are named, not embedded.
type pdfText struct {
	*vgpdf.Canvas
	col color.Color
}

// PDFCanvas wraps a vgpdf canvas as pdfText (the charts draw on it too).
func PDFCanvas(c *vgpdf.Canvas) vg.CanvasSizer {
	c.EmbedFonts(false)
	return &pdfText{Canvas: c, col: color.Black}
}

func (c *pdfText) SetColor(col color.Color) {
	c.col = col
	c.Canvas.SetColor(col)
}

func (c *pdfText) FillString(f font.Face, pt vg.Point, str string) {
	str = standIn(str)
	c.fillOutline(f, pt, str)
	// vgpdf registers each font under its name with no style, then asks
	// for it with its style ("B", "I"), and fpdf finds no bold or italic
	// font: so the style goes into the name.
	if f.Font.Weight != xfont.WeightNormal || f.Font.Style != xfont.StyleNormal {
		name := strings.ReplaceAll(f.Font.Name(), "-", "")
		f.Font.Variant = font.Variant(strings.TrimPrefix(name, string(f.Font.Typeface)))
		f.Font.Weight, f.Font.Style = xfont.WeightNormal, xfont.StyleNormal
	}
	enc := make([]byte, 0, len(str))
	for _, r := range str {
		b, ok := cp1252(r)
		if !ok {
			b = '?'
		}
		enc = append(enc, b)
	}
	c.Canvas.SetColor(color.NRGBA{})
	c.Canvas.FillString(f, pt, string(enc))
	c.Canvas.SetColor(c.col)
}

// fillOutline draws text as its glyph outlines, placed as layoutGlyphs
// places them in an SVG.
func (c *pdfText) fillOutline(f font.Face, pt vg.Point, s string) {
	var buf sfnt.Buffer
	upem := fixed.Int26_6(f.Face.UnitsPerEm())
	scale := float64(f.Font.Size) / float64(upem)
	var path vg.Path
	for _, g := range layoutGlyphs(&buf, f, faceKey(f.Font), s).placed {
		segs, err := f.Face.LoadGlyph(&buf, g.idx, upem, nil)
		if err != nil {
			continue
		}
		// sfnt's y grows downwards, vg's upwards. Points are rounded to a
		// hundredth of a point: fpdf writes five decimals, and round
		// numbers compress (an animation's PDF is a page a frame).
		at := func(p fixed.Point26_6) vg.Point {
			return vg.Point{X: hundredth(pt.X + vg.Length(float64(g.x+int(p.X))*scale)), Y: hundredth(pt.Y - vg.Length(float64(p.Y)*scale))}
		}
		for i, sg := range segs {
			switch sg.Op {
			case sfnt.SegmentOpMoveTo:
				if i > 0 {
					path.Close()
				}
				path.Move(at(sg.Args[0]))
			case sfnt.SegmentOpLineTo:
				path.Line(at(sg.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(sg.Args[0]), at(sg.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(sg.Args[0]), at(sg.Args[1]), at(sg.Args[2]))
			}
		}
		if len(segs) > 0 {
			path.Close()
		}
	}
	if len(path) > 0 {
		c.Canvas.Fill(path)
	}
}

// hundredth rounds a length to a hundredth of a point.
func hundredth(l vg.Length) vg.Length { return vg.Length(math.Round(float64(l)*100) / 100) }

// cp1252 is r's byte in Windows-1252, the encoding vgpdf's fonts use.
func cp1252(r rune) (byte, bool) {
	switch {
	case r < 0x80 || (r >= 0xA0 && r <= 0xFF):
		return byte(r), true
	}
	for i, c := range cp1252High {
		if c == r && c != utf8.RuneError {
			return byte(0x80 + i), true
		}
	}
	return 0, false
}

// cp1252High are Windows-1252's characters 0x80..0x9F (RuneError: unused).
var cp1252High = [32]rune{
	'€', utf8.RuneError, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', utf8.RuneError, 'Ž', utf8.RuneError,
	utf8.RuneError, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', utf8.RuneError, 'ž', 'Ÿ',
}

func esc(s string) string { return html.EscapeString(s) }

// num writes a coordinate with at most one decimal, the same on every machine.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10+0, 'f', -1, 64)
}

// num2 writes a size with at most two decimals.
func num2(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100+0, 'f', -1, 64)
}

// truncate shortens s to at most n runes, with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
