package kernel

import (
	"html"
	"strings"
	"unicode/utf8"
)

// Table is a view as rows and columns: printed aligned in the terminal, as
// an HTML table in a notebook.
type Table struct {
	Header []string
	Rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Text renders the table with columns padded to their widest cell, as
// Kafka's command-line tools print theirs.
func (t *Table) Text() string {
	widths := make([]int, len(t.Header))
	measureRow(widths, t.Header)
	for _, r := range t.Rows {
		measureRow(widths, r)
	}
	var b strings.Builder
	var line []byte
	line = writeRow(&b, line, t.Header, widths)
	for _, r := range t.Rows {
		line = writeRow(&b, line, r, widths)
	}
	return b.String()
}

// measureRow widens widths to the row's cells (in letters).
func measureRow(widths []int, row []string) {
	for i, c := range row {
		if i < len(widths) {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
}

// writeRow writes one line of a table whose columns are widths wide: each
// cell but the last padded to its column, one space between, no space at
// the end. line is a buffer to reuse; the one it returns is for the next.
func writeRow(b *strings.Builder, line []byte, row []string, widths []int) []byte {
	line = line[:0]
	for i := range widths {
		c := ""
		if i < len(row) {
			c = row[i]
		}
		if i > 0 {
			line = append(line, ' ')
		}
		line = append(line, c...)
		if i < len(widths)-1 {
			for n := utf8.RuneCountInString(c); n < widths[i]; n++ {
				line = append(line, ' ')
			}
		}
	}
	for len(line) > 0 && line[len(line)-1] == ' ' {
		line = line[:len(line)-1]
	}
	b.Write(line)
	b.WriteByte('\n')
	return line
}

// textSize adds up what writeRow will write for rows whose columns'
// widths are not known yet (a streamed view measures its columns and its
// size in one pass over its rows): a line ends at its last letter that is
// not a space, so its length is the width of the columns before that
// letter's column, plus what does not depend on the widths.
type textSize struct {
	ends  []int // ends[k]: rows whose last letter is in column k
	fixed int   // bytes that do not depend on the widths
}

func newTextSize(cols int) *textSize { return &textSize{ends: make([]int, cols)} }

// add counts a row.
func (ts *textSize) add(row []string) {
	k, before, extra, last := -1, 0, 0, 0
	for i := range ts.ends {
		c := ""
		if i < len(row) {
			c = row[i]
		}
		if t := strings.TrimRight(c, " "); t != "" {
			k, before, last = i, extra, len(t)
		}
		// A column's width counts letters; the line holds their bytes.
		extra += len(c) - utf8.RuneCountInString(c)
	}
	ts.fixed++ // the line end
	if k >= 0 {
		ts.ends[k]++
		ts.fixed += before + last
	}
}

// total is the bytes writeRow writes for the rows counted, in widths.
func (ts *textSize) total(widths []int) int {
	n, start := ts.fixed, 0
	for k, rows := range ts.ends {
		n += rows * start
		start += widths[k] + 1
	}
	return n
}

// textWidth is the width a view's text should fit: a terminal or a blog
// post's code block.
const textWidth = 100

// Fit renders the table as Text does when its lines fit in width columns,
// and otherwise one record per row, a field per line (as psql's \x does):
// a wide table wrapped by the terminal is unreadable.
func (t *Table) Fit(width int) string {
	text := t.Text()
	widest := 0
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > widest {
			widest = n
		}
	}
	if widest <= width {
		return text
	}
	keyW := 0
	for _, h := range t.Header {
		if n := utf8.RuneCountInString(h); n > keyW {
			keyW = n
		}
	}
	var b strings.Builder
	for i, r := range t.Rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, h := range t.Header {
			c := ""
			if j < len(r) {
				c = r[j]
			}
			b.WriteString(h + strings.Repeat(" ", keyW-utf8.RuneCountInString(h)) + " " + c + "\n")
		}
	}
	return b.String()
}

// HTML renders the table for a notebook. Columns of numbers are aligned
// right and every other column left (notebook styles right-align every
// cell, which makes a column of partition lists unreadable).
func (t *Table) HTML() string {
	right := make([]bool, len(t.Header))
	for i := range t.Header {
		right[i] = len(t.Rows) > 0
		for _, r := range t.Rows {
			if i < len(r) && !numeric(r[i]) {
				right[i] = false
			}
		}
	}
	align := func(i int) string {
		if i < len(right) && right[i] {
			return ` style="text-align:right"`
		}
		return ` style="text-align:left"`
	}
	var b strings.Builder
	b.WriteString(`<table class="kgrepl"><thead><tr>`)
	for i, h := range t.Header {
		b.WriteString("<th" + align(i) + ">" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i, c := range r {
			b.WriteString("<td" + align(i) + ">" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// numeric reports whether a cell is a number (or "-", Kafka's tools' empty value).
func numeric(c string) bool {
	if c == "-" || c == "" {
		return true
	}
	for _, r := range c {
		if (r < '0' || r > '9') && r != '.' && r != '-' {
			return false
		}
	}
	return true
}

// Wrap renders the table as Text does when its lines fit in width
// columns; otherwise in blocks of columns, one under the other (each
// starting with its header line), each
// repeating the first keep columns (the row's names) and taking as many
// of the others as fit: every row stays one line, and no line passes the
// width unless the names and one column alone do. A table whose names
// leave no room for a column is shown as Fit shows it.
func (t *Table) Wrap(width, keep int) string {
	text := t.Text()
	if widest(text) <= width || keep >= len(t.Header) {
		return text
	}
	colW := make([]int, len(t.Header))
	for i, h := range t.Header {
		colW[i] = utf8.RuneCountInString(h)
		for _, r := range t.Rows {
			if i < len(r) && utf8.RuneCountInString(r[i]) > colW[i] {
				colW[i] = utf8.RuneCountInString(r[i])
			}
		}
	}
	keyW := 0
	for i := 0; i < keep; i++ {
		keyW += colW[i] + 1
	}
	if keyW+colW[keep] > width {
		return t.Fit(width)
	}
	// As few blocks as the greedy split makes, then the columns spread
	// evenly over them: no block of one narrow column at the end.
	blocks := splitColumns(colW[keep:], width-keyW, 0)
	total := 0
	for _, w := range colW[keep:] {
		total += w + 1
	}
	for target := (total + len(blocks) - 1) / len(blocks); len(blocks) > 1; target += 4 {
		// a column too wide for the even share: a little more to each
		if even := splitColumns(colW[keep:], width-keyW, target); len(even) == len(blocks) {
			blocks = even
			break
		}
	}
	for _, b := range blocks {
		for i := range b {
			b[i] += keep
		}
	}
	var b strings.Builder
	for _, cols := range blocks {
		pick := func(row []string) []string {
			var out []string
			for i := 0; i < keep; i++ {
				out = append(out, cell(row, i))
			}
			for _, i := range cols {
				out = append(out, cell(row, i))
			}
			return out
		}
		part := &Table{Header: pick(t.Header)}
		for _, r := range t.Rows {
			part.Add(pick(r)...)
		}
		b.WriteString(part.Text())
	}
	return b.String()
}

// splitColumns splits columns of the given widths into blocks of at most
// room columns (each column takes its width and a space), closing a block
// once it reaches target when target > 0; the columns' indexes by block.
func splitColumns(widths []int, room, target int) [][]int {
	var blocks [][]int
	var cur []int
	used := 0
	for i, w := range widths {
		if len(cur) > 0 && (used+w > room || target > 0 && used >= target) {
			blocks, cur, used = append(blocks, cur), nil, 0
		}
		cur = append(cur, i)
		used += w + 1
	}
	return append(blocks, cur)
}

func cell(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// widest is the width of a text's longest line.
func widest(text string) int {
	w := 0
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			w = n
		}
	}
	return w
}
