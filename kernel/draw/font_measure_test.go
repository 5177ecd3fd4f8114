package draw

import (
	"math/rand"
	"strings"
	"testing"
)

// TestMeasureRemembersWhatItMeasured: measure answers every text and style
// as the font measures it (the width faceOf's face gives), whether it
// measured the text before, measures it the first time, or forgot it
// when its memory filled: random texts of the pictures' characters
// (stand-ins among them) in every style, asked again and again, past
// maxMeasured texts.
func TestMeasureRemembersWhatItMeasured(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	alphabet := []rune("abcxyzC0123456789 .-·²✗↻⁰✓WMil")
	text := func() string {
		var b strings.Builder
		for range 1 + rng.Intn(12) {
			b.WriteRune(alphabet[rng.Intn(len(alphabet))])
		}
		return b.String()
	}
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = text()
	}
	styles := []textStyle{{}, {size: 11}, {size: 11, bold: true}, {size: 10, mono: true}, {size: 13, italic: true}, {size: 12, mono: true, bold: true, color: "#ff0000", anchor: "middle"}}
	direct := func(t string, st textStyle) float64 { f := faceOf(st); return float64(f.Width(standIn(t))) / 0.75 }
	forgot := 0
	for i := 0; i < 3*maxMeasured; i++ {
		s := texts[rng.Intn(len(texts))]
		if rng.Intn(2) == 0 {
			s = text() + strings.Repeat("x", i%7) // mostly new: fills the memory
		}
		st := styles[rng.Intn(len(styles))]
		before := len(measured.width)
		if got, want := measure(s, st), direct(s, st); got != want {
			t.Fatalf("measure(%q, %+v) = %v, the font says %v", s, st, got, want)
		}
		if len(measured.width) < before {
			forgot++
		}
	}
	if forgot == 0 {
		t.Error("the memory never filled: the test did not see measure forget")
	}
}
