package chart

import (
	"slices"
	"strconv"
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

// TestLagOfManyPartitions: past the palette's colours the chart draws the
// total and the partitions whose lag peaked highest, and its legend says
// how many others the total holds (2,000 partitions drew 2,000 lines and
// a legend taller than the plot).
func TestLagOfManyPartitions(t *testing.T) {
	n := 30
	r := &Run{Name: "main"}
	for i := range n {
		r.Partitions = append(r.Partitions, "t-"+strconv.Itoa(i))
	}
	// Partition i peaks at i, except 3, which peaks highest of all; the
	// total is the sum.
	for k := range 3 {
		f := Frame{Tick: k, Lag: make([]int, n)}
		for i := range n {
			f.Lag[i] = i * k
		}
		if k == 1 {
			f.Lag[3] = 1000
		}
		r.Frames = append(r.Frames, f)
	}
	c := Lag(Options{}, r)
	var names []string
	for _, e := range c.legend {
		names = append(names, e.name)
	}
	want := []string{"total (30 partitions)", "t-3", "t-22", "t-23", "t-24", "t-25", "t-26", "t-27", "t-28", "t-29",
		"+21 other partitions, in the total"}
	if !slices.Equal(names, want) {
		t.Errorf("legend %q, want %q", names, want)
	}
	if want := float64(1000 - 3 + (n-1)*n/2); c.yHi != max(want, float64(2*(n-1)*n/2)) {
		t.Errorf("the y axis tops at %v, want the total's peak", c.yHi)
	}
}
