package chart

import (
	"bytes"
	"errors"
	"image/color"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// outlineCanvas draws text as the font's glyph outlines, so an SVG shows
// the same letters in every viewer without embedding the fonts (gonum's
// vgsvg.EmbedFonts would add about 550 KB of base64 per font). It also
// writes the text itself, transparent, so the picture stays searchable and
// selectable.
type outlineCanvas struct {
	vg.CanvasSizer
	col   color.Color
	stack []color.Color // the colours Push saved
	buf   sfnt.Buffer
}

func (c *outlineCanvas) Push() {
	c.stack = append(c.stack, c.col)
	c.CanvasSizer.Push()
}

func (c *outlineCanvas) Pop() {
	if n := len(c.stack); n > 0 {
		c.col, c.stack = c.stack[n-1], c.stack[:n-1]
	}
	c.CanvasSizer.Pop()
}

func outlines(c vg.CanvasSizer) *outlineCanvas {
	return &outlineCanvas{CanvasSizer: c, col: color.Black}
}

func (c *outlineCanvas) SetColor(col color.Color) {
	c.col = col
	c.CanvasSizer.SetColor(col)
}

// FillString draws str with its baseline starting at pt, glyph by glyph
// with the font's kerning, as gonum/plot measures it (font.Face.Width).
func (c *outlineCanvas) FillString(f font.Face, pt vg.Point, str string) {
	sf := f.Face
	upem := fixed.Int26_6(sf.UnitsPerEm())
	scale := float64(f.Font.Size) / float64(upem)
	var path vg.Path
	x := 0
	prev, hasPrev := sfnt.GlyphIndex(0), false
	at := func(p fixed.Point26_6) vg.Point {
		return vg.Point{X: pt.X + vg.Length(float64(x+int(p.X))*scale), Y: pt.Y - vg.Length(float64(p.Y)*scale)}
	}
	for _, r := range str {
		idx, err := sf.GlyphIndex(&c.buf, r)
		if err != nil {
			continue
		}
		if hasPrev {
			if k, err := sf.Kern(&c.buf, prev, idx, upem, 0); err == nil {
				x += int(k)
			} else if !errors.Is(err, sfnt.ErrNotFound) {
				continue
			}
		}
		segs, err := sf.LoadGlyph(&c.buf, idx, upem, nil)
		if err == nil {
			for _, s := range segs {
				switch s.Op {
				case sfnt.SegmentOpMoveTo:
					if len(path) > 0 {
						path.Close()
					}
					path.Move(at(s.Args[0]))
				case sfnt.SegmentOpLineTo:
					path.Line(at(s.Args[0]))
				case sfnt.SegmentOpQuadTo:
					path.QuadTo(at(s.Args[0]), at(s.Args[1]))
				case sfnt.SegmentOpCubeTo:
					path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
				}
			}
		}
		if adv, err := sf.GlyphAdvance(&c.buf, idx, upem, 0); err == nil {
			x += int(adv)
		}
		prev, hasPrev = idx, true
	}
	if len(path) > 0 {
		path.Close()
		c.CanvasSizer.Fill(path)
	}
	c.CanvasSizer.SetColor(hidden)
	c.CanvasSizer.FillString(f, pt, str)
	c.CanvasSizer.SetColor(c.col)
}

// hidden marks the searchable text under the outlines: gonum's SVG canvas
// writes no opacity for text, so unhide (after rendering) turns this
// colour, which the charts never use, into a fill with no opacity.
var hidden = color.RGBA{R: 0xfe, G: 0xfd, B: 0xfc, A: 0xff}

// unhide makes the text drawn in the hidden colour transparent.
func unhide(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte(`;fill:#FEFDFC"`), []byte(`;fill:#000000;fill-opacity:0"`))
}
