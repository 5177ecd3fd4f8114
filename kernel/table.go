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
	measure := func(row []string) {
		for i, c := range row {
			if i < len(widths) && utf8.RuneCountInString(c) > widths[i] {
				widths[i] = utf8.RuneCountInString(c)
			}
		}
	}
	measure(t.Header)
	for _, r := range t.Rows {
		measure(r)
	}
	var b strings.Builder
	line := func(row []string) {
		var parts []string
		for i := range t.Header {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			if i == len(t.Header)-1 {
				parts = append(parts, c)
			} else {
				parts = append(parts, c+strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(parts, " "), " "))
		b.WriteByte('\n')
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
	return b.String()
}

// HTML renders the table for a notebook.
func (t *Table) HTML() string {
	var b strings.Builder
	b.WriteString(`<table class="kgrepl"><thead><tr>`)
	for _, h := range t.Header {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range r {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}
