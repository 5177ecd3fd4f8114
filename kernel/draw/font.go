package draw

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"codeberg.org/go-fonts/liberation/liberationmonobold"
	"codeberg.org/go-fonts/liberation/liberationmonoregular"
	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansitalic"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The diagrams draw their text as Liberation glyph outlines (each glyph
// defined once in <defs>, placed with <use>), so every viewer shows the
// same letters at the widths the layout measured, without embedding the
// fonts (about 550 KB of base64 each). The text itself is kept in a
// transparent <text> element for search, selection and screen readers.

// face is one font of the diagrams.
type face struct {
	key  string // prefix of its glyphs' ids
	font *sfnt.Font
	upem float64
}

var (
	facesOnce sync.Once
	faces     map[string]*face // by key: s sb si m mb
	glyphMu   sync.Mutex
	glyphPath = map[string]string{} // id → path data in font units
)

func loadFaces() {
	faces = map[string]*face{}
	for key, ttf := range map[string][]byte{
		"s": liberationsansregular.TTF, "sb": liberationsansbold.TTF, "si": liberationsansitalic.TTF,
		"m": liberationmonoregular.TTF, "mb": liberationmonobold.TTF,
	} {
		f, err := sfnt.Parse(ttf)
		if err != nil {
			panic("draw: the embedded Liberation font does not parse: " + err.Error())
		}
		faces[key] = &face{key: key, font: f, upem: float64(f.UnitsPerEm())}
	}
}

func faceOf(st textStyle) *face {
	facesOnce.Do(loadFaces)
	switch {
	case st.mono && st.bold:
		return faces["mb"]
	case st.mono:
		return faces["m"]
	case st.bold:
		return faces["sb"]
	case st.italic:
		return faces["si"]
	}
	return faces["s"]
}

// stand are the glyphs drawn for the few characters the pictures use that
// Liberation has no glyph for (the hidden text keeps the character itself).
var stand = map[rune]rune{
	'✗': '×', '↻': '↔', '⁰': '°', '⁹': '9', '✓': '√',
}

// placed is one glyph of a line of text: its id and its x in font units.
type placed struct {
	id string
	x  int
}

// layout places the glyphs of t, with the font's kerning, and returns them
// and the advance of the whole line in font units.
func (f *face) layout(t string) ([]placed, int) {
	var buf sfnt.Buffer
	ppem := fixed.Int26_6(f.font.UnitsPerEm()) // coordinates come back in font units
	var out []placed
	x := 0
	prev, hasPrev := sfnt.GlyphIndex(0), false
	for _, r := range t {
		idx, err := f.font.GlyphIndex(&buf, r)
		if err == nil && idx == 0 {
			if sub, ok := stand[r]; ok {
				idx, err = f.font.GlyphIndex(&buf, sub)
			}
		}
		if err != nil {
			continue
		}
		if hasPrev {
			if k, err := f.font.Kern(&buf, prev, idx, ppem, 0); err == nil {
				x += int(k)
			} else if !errors.Is(err, sfnt.ErrNotFound) {
				continue
			}
		}
		// Ids are the same in every document (a notebook page holds many
		// diagrams: one id is one glyph's outline wherever it is defined).
		id := "kg-" + f.key + strconv.Itoa(int(idx))
		if f.glyph(&buf, idx, id) {
			out = append(out, placed{id: id, x: x})
		}
		if adv, err := f.font.GlyphAdvance(&buf, idx, ppem, 0); err == nil {
			x += int(adv)
		}
		prev, hasPrev = idx, true
	}
	return out, x
}

// glyph makes sure the outline of glyph idx is known under id; it reports
// false for a glyph with no outline (a space).
func (f *face) glyph(buf *sfnt.Buffer, idx sfnt.GlyphIndex, id string) bool {
	glyphMu.Lock()
	d, ok := glyphPath[id]
	glyphMu.Unlock()
	if ok {
		return d != ""
	}
	segs, err := f.font.LoadGlyph(buf, idx, fixed.Int26_6(f.font.UnitsPerEm()), nil)
	var b strings.Builder
	if err == nil {
		// sfnt's y grows downwards, as SVG's does.
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
	return b.Len() > 0
}

// measure is the width of t at a size in the style's font.
func measure(t string, size float64, st textStyle) float64 {
	f := faceOf(st)
	_, w := f.layout(t)
	return float64(w) * size / f.upem
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

// TextWidth is the width of t in the diagrams' regular sans font at a size
// (for tests that check what fits where).
func TextWidth(t string, size float64) float64 { return measure(t, size, textStyle{}) }
