package chart

import (
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestLagColours: every partition has a colour of its own (o0 and p0
// used to share one, told apart by the dash only).
func TestLagColours(t *testing.T) {
	r := &Run{Name: "main", Partitions: []string{"o0", "o1", "o2", "p0", "p1", "p2"},
		Frames: []Frame{{Tick: 0, Lag: []int{1, 2, 3, 4, 5, 6}}, {Tick: 3, Lag: []int{0, 1, 2, 3, 4, 5}}}}
	c := Lag(Options{}, r)
	seen := map[string]string{}
	for _, e := range c.legend {
		l, ok := e.thumbs[0].(*plotter.Line)
		if !ok {
			continue
		}
		r, g, b, _ := l.LineStyle.Color.RGBA()
		key := string(rune(r>>8)) + string(rune(g>>8)) + string(rune(b>>8))
		if other, dup := seen[key]; dup {
			t.Errorf("%s and %s have one colour", other, e.name)
		}
		seen[key] = e.name
	}
	if len(seen) != 6 {
		t.Errorf("%d partitions with a line, want 6", len(seen))
	}
}
