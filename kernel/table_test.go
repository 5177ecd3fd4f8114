package kernel

import (
	"math/rand"
	"strings"
	"testing"
)

// TestTextSizeIsWhatWriteRowWrites: a streamed listing measures its text
// (textSize) in the pass that measures its columns, before it writes it;
// the size is what writeRow then writes, on random rows with empty cells,
// spaces at the ends of cells and letters of several bytes.
func TestTextSizeIsWhatWriteRowWrites(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"", " ", "a", "ab ", " x", "é", "✗ done", "C1-1", "  ", "o2.3"}
	for k := 0; k < 5000; k++ {
		cols := 1 + r.Intn(6)
		widths := make([]int, cols)
		var rows [][]string
		for j := 0; j < 1+r.Intn(4); j++ {
			row := make([]string, r.Intn(cols+1))
			for i := range row {
				row[i] = words[r.Intn(len(words))] + words[r.Intn(len(words))]
			}
			measureRow(widths, row)
			rows = append(rows, row)
		}
		ts := newTextSize(cols)
		for _, row := range rows {
			ts.add(row)
		}
		var b strings.Builder
		var line []byte
		for _, row := range rows {
			line = writeRow(&b, line, row, widths)
		}
		if got, want := ts.total(widths), b.Len(); got != want {
			t.Fatalf("rows %q in widths %v: textSize %d, writeRow wrote %d:\n%s", rows, widths, got, want, b.String())
		}
	}
}
