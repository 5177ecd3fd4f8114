package kernel

import (
	"strings"
	"testing"
)

// TestPlotPartitions: plot lag and plot timeline draw the input
// partitions --partitions names; anything else is refused naming the item
// and the rule, the session left as it was.
func TestPlotPartitions(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:200,u:5 --members 3\njoin C4\nrun until stable")
	for _, line := range []string{
		"plot timeline --partitions t-150..t-199,u-0",
		"plot lag --partitions u-4,t-0..t-2",
	} {
		if _, err := s.Exec(line); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	before := views(t, s)
	for _, c := range []struct{ line, want string }{
		{"plot pause --partitions t-1", "the pause chart counts every partition"},
		{"plot unavailable --partitions t-1", "the unavailable chart counts every partition"},
		{"plot lag --partitions t-5..t-1", "the range t-5..t-1 runs backwards or across topics"},
		{"plot lag --partitions t-199..u-0", "runs backwards or across topics"},
		{"plot lag --partitions t-5,t-3..t-6", "t-5 is named twice"},
		{"plot lag --partitions invoices-0", "invoices-0 is not an input partition"},
		{"plot lag --partitions t-200", "no input partition t-200"},
		{"plot lag --partitions t-1,,t-2", "an empty item"},
		{"plot lag --partitions ,", "an empty item"},
	} {
		_, err := s.Exec(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(c.want, "chart") && !strings.Contains(err.Error(), "e.g. t-0..t-2") {
			t.Errorf("%s: %v, want an error saying %q and the form", c.line, err, c.want)
		}
	}
	if after := views(t, s); after != before {
		t.Errorf("a refused plot changed the session: %s", firstLineDiff(after, before))
	}
}
