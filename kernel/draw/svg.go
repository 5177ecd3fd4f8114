package draw

import (
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The font families the hidden text names (the visible letters are
// Liberation outlines, see font.go).
const (
	sansFont = "Liberation Sans, Arial, Helvetica, sans-serif"
	monoFont = "Liberation Mono, DejaVu Sans Mono, Menlo, Consolas, monospace"
)

// textWidth is the width of s at a font size, regular or mono, measured
// with the font the diagram draws.
func textWidth(s string, size float64, mono bool) float64 {
	return measure(s, size, textStyle{mono: mono})
}

// svg builds an SVG document by hand. Numbers are written with at most
// one decimal, so the output is the same on every machine.
type svg struct {
	b      strings.Builder
	glyphs map[string]bool // the glyph outlines used, for <defs>
}

func num(v float64) string {
	return strconv.FormatFloat(float64(int64(v*10+copysign(0.5, v)))/10, 'f', -1, 64)
}

func copysign(a, v float64) float64 {
	if v < 0 {
		return -a
	}
	return a
}

func esc(s string) string { return html.EscapeString(s) }

// attrs writes name="value" pairs; values are escaped.
func (s *svg) attrs(kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		s.b.WriteString(" " + kv[i] + `="` + esc(kv[i+1]) + `"`)
	}
}

func (s *svg) open(w, h float64, class, title string) {
	s.b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg"`)
	s.attrs("class", class, "width", num(w), "height", num(h), "viewBox", "0 0 "+num(w)+" "+num(h),
		"font-family", sansFont, "font-size", "12")
	s.b.WriteString(">\n")
	if title != "" {
		s.b.WriteString("<title>" + esc(title) + "</title>\n")
	}
	s.rect(0, 0, w, h, "#ffffff", "", 0, "background")
}

func (s *svg) close() string {
	s.b.WriteString(glyphDefs(s.glyphs))
	s.b.WriteString("</svg>\n")
	return s.b.String()
}

// group opens a <g> with attributes; end closes it.
func (s *svg) group(kv ...string) {
	s.b.WriteString("<g")
	s.attrs(kv...)
	s.b.WriteString(">\n")
}

func (s *svg) end() { s.b.WriteString("</g>\n") }

func (s *svg) rect(x, y, w, h float64, fill, stroke string, strokeW float64, class string, kv ...string) {
	s.b.WriteString("<rect")
	s.attrs("class", class, "x", num(x), "y", num(y), "width", num(w), "height", num(h))
	if fill == "" {
		fill = "none"
	}
	s.attrs("fill", fill)
	if stroke != "" {
		s.attrs("stroke", stroke, "stroke-width", num(strokeW))
	}
	s.attrs(kv...)
	s.b.WriteString("/>\n")
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string, class string) {
	s.b.WriteString("<line")
	s.attrs("class", class, "x1", num(x1), "y1", num(y1), "x2", num(x2), "y2", num(y2), "stroke", stroke,
		"stroke-width", num(width), "stroke-dasharray", dash)
	s.b.WriteString("/>\n")
}

func (s *svg) polygon(fill string, pts ...float64) {
	var p []string
	for i := 0; i+1 < len(pts); i += 2 {
		p = append(p, num(pts[i])+","+num(pts[i+1]))
	}
	s.b.WriteString("<polygon")
	s.attrs("points", strings.Join(p, " "), "fill", fill)
	s.b.WriteString("/>\n")
}

func (s *svg) path(d, stroke string, width float64, dash, fill, class string) {
	if fill == "" {
		fill = "none"
	}
	s.b.WriteString("<path")
	s.attrs("class", class, "d", d, "stroke", stroke, "stroke-width", num(width), "stroke-dasharray", dash, "fill", fill)
	s.b.WriteString("/>\n")
}

// textStyle is how one piece of text looks.
type textStyle struct {
	size   float64
	color  string
	anchor string // start, middle, end
	bold   bool
	mono   bool
	italic bool
	class  string
}

// text draws t with its baseline at y: the glyph outlines in the style's
// colour, and the text itself, transparent, under them.
func (s *svg) text(x, y float64, t string, st textStyle) {
	if st.size == 0 {
		st.size = 12
	}
	f := faceOf(st)
	glyphs, adv := f.layout(t)
	w := float64(adv) * st.size / f.upem
	x0 := x
	switch st.anchor {
	case "middle":
		x0 = x - w/2
	case "end":
		x0 = x - w
	}
	s.b.WriteString("<text")
	s.attrs("class", st.class, "x", num(x), "y", num(y), "font-size", num(st.size), "fill", st.color, "fill-opacity", "0")
	if st.anchor != "" && st.anchor != "start" {
		s.attrs("text-anchor", st.anchor)
	}
	if st.bold {
		s.attrs("font-weight", "bold")
	}
	if st.italic {
		s.attrs("font-style", "italic")
	}
	if st.mono {
		s.attrs("font-family", monoFont)
	}
	s.b.WriteString(">" + esc(t) + "</text>\n")
	if len(glyphs) == 0 {
		return
	}
	if s.glyphs == nil {
		s.glyphs = map[string]bool{}
	}
	fill := st.color
	if fill == "" {
		fill = "#000000"
	}
	s.b.WriteString(`<g class="t" aria-hidden="true" fill="` + esc(fill) + `" transform="translate(` + num(x0) + " " + num(y) +
		") scale(" + strconv.FormatFloat(st.size/f.upem, 'g', 6, 64) + `)">`)
	for _, g := range glyphs {
		s.glyphs[g.id] = true
		s.b.WriteString(`<use href="#` + g.id + `"`)
		if g.x != 0 {
			s.b.WriteString(` x="` + strconv.Itoa(g.x) + `"`)
		}
		s.b.WriteString("/>")
	}
	s.b.WriteString("</g>\n")
}

// arrowHead draws a filled triangle pointing from (x0,y0) to (x,y).
func (s *svg) arrowHead(x0, y0, x, y float64, fill string) {
	dx, dy := x-x0, y-y0
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	ux, uy := dx/l, dy/l
	const size = 7
	bx, by := x-ux*size, y-uy*size
	s.polygon(fill, x, y, bx-uy*size*0.45, by+ux*size*0.45, bx+uy*size*0.45, by-ux*size*0.45)
}

// truncate shortens s to at most n runes, with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
