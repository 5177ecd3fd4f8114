// Package digits writes numbers as kgrepl's texts print them: digits in
// groups of three (1,000,000), as the limits, the pictures' notes and the
// REPL's script summaries state counts.
package digits

import (
	"strconv"
	"strings"
)

// Int writes n with its digits grouped: 1000000 as 1,000,000.
func Int(n int) string { return Group(strconv.Itoa(n)) }

// Group groups the digits of a decimal integer's text, keeping its sign:
// "-65536" as -65,536.
func Group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
