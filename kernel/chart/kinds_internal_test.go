package chart

import (
	"fmt"
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

// TestTimelineOfManyPartitions: a timeline of more than MaxTimelineRows
// partitions draws the first of them, its legend saying so and naming
// only the clients that consumed one of those drawn.
func TestTimelineOfManyPartitions(t *testing.T) {
	n := MaxTimelineRows + 50
	r := &Run{Name: "main", Assignor: "range", Clients: []string{"C1", "C2", "C3"}}
	for i := range n {
		r.Partitions = append(r.Partitions, "t-"+strconv.Itoa(i))
	}
	for k := range 2 {
		f := Frame{Tick: k, Owners: make([]Ownership, n)}
		for i := range n {
			// C1 the first 100, C2 the rest; C3 a zombie on t-120.
			f.Owners[i].Owner = "C1"
			if i >= MaxTimelineRows {
				f.Owners[i].Owner = "C2"
			}
		}
		f.Owners[120].Zombie = "C3"
		r.Frames = append(r.Frames, f)
	}
	c := Timeline(Options{}, r)
	want := []string{"C1", fmt.Sprintf("the first %d of %d partitions (--partitions picks others)", MaxTimelineRows, n)}
	if !slices.Equal(c.Names, want) {
		t.Errorf("legend %q, want %q", c.Names, want)
	}
	if c.yHi != float64(MaxTimelineRows)-0.4 {
		t.Errorf("%v rows, want %d", c.yHi+0.4, MaxTimelineRows)
	}
	// Only keeps the rows asked, in that order, and their clients.
	o := r.Only([]int{120, 3})
	if !slices.Equal(o.Partitions, []string{"t-120", "t-3"}) || !slices.Equal(o.Clients, []string{"C1", "C2", "C3"}) ||
		o.Frames[1].Owners[0] != (Ownership{Owner: "C2", Zombie: "C3"}) || o.Frames[1].Owners[1].Owner != "C1" {
		t.Errorf("Only(120, 3) = %v %v %+v", o.Partitions, o.Clients, o.Frames[1].Owners)
	}
	if o := r.Only([]int{5}); !slices.Equal(o.Clients, []string{"C1"}) {
		t.Errorf("Only(5)'s clients %v, want C1 alone", o.Clients)
	}
}
