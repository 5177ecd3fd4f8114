// Package draw makes kgrepl's diagrams: the world diagram (the seed page's
// picture of members, B1 and the partition logs) and the sequence diagram
// of the trace, drawn on gonum/plot's vg canvas as SVG, PNG or PDF, and the
// sequence diagram as Mermaid text. Every function is pure: the same world
// gives the same bytes.
package draw

import (
	"fmt"
	"image/color"
	"strconv"
)

// clientPalette gives C1, C2, ... their colours: the Okabe–Ito palette
// (readable for colour-blind readers), minus its yellow, which is
// unreadable on white, plus two darker tones.
var clientPalette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // C1 blue
	{0xE6, 0x9F, 0x00, 0xff}, // C2 orange
	{0x00, 0x9E, 0x73, 0xff}, // C3 bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // C4 reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // C5 sky blue
	{0xD5, 0x5E, 0x00, 0xff}, // C6 vermillion
	{0x6A, 0x3D, 0x9A, 0xff}, // C7 purple
	{0x8C, 0x6D, 0x1F, 0xff}, // C8 brown
}

// Fixed colours of things that are not clients.
var (
	Broker    = color.RGBA{0x44, 0x44, 0x44, 0xff} // B1
	Paused    = color.RGBA{0xBB, 0xBB, 0xBB, 0xff}
	Zombie    = color.RGBA{0xC0, 0x1C, 0x28, 0xff} // zombie processing, errors, aborted
	Committed = color.RGBA{0x2E, 0x7D, 0x32, 0xff} // COMMIT markers, committed offsets
	Ink       = color.RGBA{0x22, 0x22, 0x22, 0xff}
	Faint     = color.RGBA{0x88, 0x88, 0x88, 0xff}
)

// ClientColor is the colour of a client in every picture: C1 is always
// the same blue. Client ids that are not Cn get a colour from their name.
func ClientColor(client string) color.RGBA {
	n, ok := clientNumber(client)
	if !ok {
		h := 0
		for _, r := range client {
			h = h*31 + int(r)
		}
		if h < 0 {
			h = -h
		}
		return clientPalette[h%len(clientPalette)]
	}
	c := clientPalette[(n-1)%len(clientPalette)]
	if round := (n - 1) / len(clientPalette); round > 0 {
		// C9 and on reuse the palette, darker each round, so neighbours still differ.
		f := 1 - 0.25*float64(round%3)
		c = color.RGBA{uint8(float64(c.R) * f), uint8(float64(c.G) * f), uint8(float64(c.B) * f), 0xff}
	}
	return c
}

func clientNumber(client string) (int, bool) {
	if len(client) < 2 || client[0] != 'C' {
		return 0, false
	}
	n, err := strconv.Atoi(client[1:])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// Hex is a colour as #rrggbb.
// A colour with alpha is written as its colour alone (its alpha goes in
// an opacity attribute).
func Hex(c color.Color) string {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return fmt.Sprintf("#%02x%02x%02x", n.R, n.G, n.B)
}

// Tint mixes a colour with white: f=0 is the colour, f=1 white.
func Tint(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*f + 0.5) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// ClientHex is ClientColor as #rrggbb.
func ClientHex(client string) string { return Hex(ClientColor(client)) }
