package draw

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/vg"
)

// The pictures' fonts are the Liberation fonts gonum/plot embeds, measured
// with gonum's font metrics (font.Face.Width) in every format: an SVG draws
// their glyph outlines (see SVGCanvas), a PNG rasterises them, a PDF embeds
// them.
var fonts = font.NewCache(liberation.Collection())

// The font families the hidden text of an SVG names.
const (
	sansFont = "Liberation Sans, Arial, Helvetica, sans-serif"
	monoFont = "Liberation Mono, monospace"
)

// textStyle is how one piece of text looks.
type textStyle struct {
	size   float64 // CSS pixels
	color  string
	anchor string // start, middle, end
	bold   bool
	mono   bool
	italic bool
}

// fontOf is the Liberation font of a style.
func fontOf(st textStyle) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if st.mono {
		f.Variant = "Mono"
	}
	if st.bold {
		f.Weight = xfont.WeightBold
	}
	if st.italic {
		f.Style = xfont.StyleItalic
	}
	return f
}

// faceOf is a style's font at its size (CSS pixels; vg sizes are points).
func faceOf(st textStyle) font.Face {
	size := st.size
	if size == 0 {
		size = 12
	}
	return fonts.Lookup(fontOf(st), vg.Length(size*0.75))
}

// faceKey names a font in glyph ids: s sb si sbi m mb mi mbi (Liberation
// Sans and Mono), or the font's name for another.
func faceKey(f font.Font) string {
	k := ""
	switch f.Variant {
	case "Sans":
		k = "s"
	case "Mono":
		k = "m"
	default:
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, string(f.Typeface)+string(f.Variant)) + strconv.Itoa(int(f.Weight)) + strconv.Itoa(int(f.Style)) + "-"
	}
	if f.Weight >= xfont.WeightBold {
		k += "b"
	}
	if f.Style == xfont.StyleItalic {
		k += "i"
	}
	return k
}

// fontFamily is what an SVG's hidden text names ("" is the document's sans).
func fontFamily(f font.Font) string {
	switch f.Variant {
	case "Sans":
		return ""
	case "Mono":
		return monoFont
	}
	return "Liberation " + string(f.Variant)
}

// stand are the glyphs drawn for the few characters the pictures use that
// Liberation has no glyph for (an SVG's hidden text keeps the character
// itself).
var stand = map[rune]rune{
	'✗': '×', '↻': '↔', '⁰': '°', '⁹': '9', '✓': '√',
}

// standIn replaces the characters Liberation cannot draw by their stand-ins.
func standIn(t string) string {
	if !strings.ContainsFunc(t, func(r rune) bool { _, ok := stand[r]; return ok }) {
		return t
	}
	return strings.Map(func(r rune) rune {
		if s, ok := stand[r]; ok {
			return s
		}
		return r
	}, t)
}

// measure is the width of t in CSS pixels in a style's font, as every
// format draws it.
func measure(t string, st textStyle) float64 {
	k := measureKey{t: t, size: st.size, bold: st.bold, mono: st.mono, italic: st.italic}
	measured.Lock()
	w, ok := measured.width[k]
	measured.Unlock()
	if ok {
		return w
	}
	f := faceOf(st)
	w = float64(f.Width(standIn(t))) / 0.75
	measured.Lock()
	if measured.width == nil || len(measured.width) >= maxMeasured || measured.bytes > maxMeasuredBytes {
		measured.width, measured.bytes = map[measureKey]float64{}, 0
	}
	measured.width[k] = w
	measured.bytes += len(t)
	measured.Unlock()
	return w
}

// measured remembers the widths measure found: a width is the font's
// glyph advances and kerning summed, the same every time, and pictures
// measure the same texts again and again (a big group's thousand member
// names in every frame of a diagram's animation, a sequence's repeated
// message names), each measure a glyph lookup and a kerning lookup per
// character. It forgets everything past maxMeasured texts or
// maxMeasuredBytes of them, and is shared by every picture (guarded: the
// explorer and notebooks may draw at once).
var measured struct {
	sync.Mutex
	width map[measureKey]float64
	bytes int
}

const (
	maxMeasured      = 1 << 16
	maxMeasuredBytes = 16 << 20
)

// measureKey is what a width depends on: the text and the font its style
// picks, at its size.
type measureKey struct {
	t                  string
	size               float64
	bold, mono, italic bool
}

// textWidth is the width of s at a font size (CSS pixels), regular or mono.
func textWidth(s string, size float64, mono bool) float64 {
	return measure(s, textStyle{size: size, mono: mono})
}

// TextWidth is the width of t in the diagrams' regular sans font at a size
// (for tests that check what fits where).
func TextWidth(t string, size float64) float64 { return textWidth(t, size, false) }

// layoutGlyphs places the glyphs of t in f, with the font's kerning, as
// font.Face.Width measures it, and makes sure each glyph's outline is
// known under an id that is the same in every document (a notebook page
// holds many pictures: one id is one glyph's outline wherever it is
// defined), k, the font's key and the glyph's index: ks72, kmb19.
// Glyphs without an outline (a space) are not placed.
func layoutGlyphs(buf *sfnt.Buffer, f font.Face, key, t string) glyphRun {
	sf := f.Face
	ppem := fixed.Int26_6(sf.UnitsPerEm()) // coordinates come back in font units
	var out glyphRun
	x := 0
	prev, hasPrev := sfnt.GlyphIndex(0), false
	for _, r := range t {
		idx, err := sf.GlyphIndex(buf, r)
		if err != nil {
			continue
		}
		if hasPrev {
			if k, err := sf.Kern(buf, prev, idx, ppem, xfont.HintingNone); err == nil {
				x += int(k)
			} else if !errors.Is(err, sfnt.ErrNotFound) {
				continue
			}
		}
		id := "k" + key + strconv.Itoa(int(idx))
		if glyphOutline(buf, sf, idx, id) != "" {
			out.placed = append(out.placed, placed{id: id, idx: idx, x: x})
		}
		if adv, err := sf.GlyphAdvance(buf, idx, ppem, xfont.HintingNone); err == nil {
			x += int(adv)
		}
		prev, hasPrev = idx, true
	}
	out.advance = x
	return out
}
