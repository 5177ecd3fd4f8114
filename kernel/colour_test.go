package kernel

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ansiCode matches the codes paint writes.
var ansiCode = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColourOnlyWhenAsked: with Session.Color off a demo prints no escape
// code at all; with it on, the same text with whole lines painted: the
// protocol's events in their tones, headings and narration, and the rest
// (prompts, views, routine summaries) plain.
func TestColourOnlyWhenAsked(t *testing.T) {
	for n := 1; n <= len(demoTitles); n++ {
		plainOut, err := NewSession().Exec("demo " + strconv.Itoa(n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plainOut, "\x1b") {
			t.Fatalf("demo %d: escape codes with Color off", n)
		}
		s := NewSession()
		s.Color = true
		colour, err := s.Exec("demo " + strconv.Itoa(n))
		if err != nil {
			t.Fatal(err)
		}
		if got := ansiCode.ReplaceAllString(colour, ""); got != plainOut {
			t.Fatalf("demo %d: the coloured text without its codes differs from the plain text", n)
		}
		for _, l := range strings.Split(colour, "\n") {
			text := ansiCode.ReplaceAllString(l, "")
			painted := l != text
			if painted && (!strings.HasPrefix(l, "\x1b[") || !strings.HasSuffix(l, ansiReset)) {
				t.Errorf("demo %d: %q is painted in part, want whole lines", n, l)
			}
			event := tickLine.MatchString(text)
			var want string
			switch {
			case strings.HasPrefix(text, "=== demo "), strings.HasPrefix(text, "── "):
				want = toneCodes[heading]
			case strings.HasPrefix(text, "# "):
				want = toneCodes[narration]
			case !event:
				if painted {
					t.Errorf("demo %d: %q is painted, want it plain", n, text)
				}
				continue
			case strings.Contains(text, "-> PreparingRebalance"), strings.Contains(text, "Stable -> Reconciling"):
				want = toneCodes[rebalanceStart]
			case strings.Contains(text, "-> Stable ("):
				want = toneCodes[rebalanceEnd]
			case strings.Contains(text, " revokes {"):
				want = toneCodes[revocation]
			case strings.Contains(text, "CommitFailedException"), strings.Contains(text, " crashes"),
				strings.Contains(text, "PRODUCER_FENCED"):
				want = toneCodes[problem]
			case strings.Contains(text, "(a duplicate side effect)"):
				want = toneCodes[duplicate]
			default:
				continue
			}
			if !strings.HasPrefix(l, want) {
				t.Errorf("demo %d: %q painted %q, want %q", n, text, l[:strings.IndexByte(l, 'm')+1], want)
			}
		}
	}
}
