package kernel

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The demos are scripts in the command language, kept as files so they can
// be read, run by hand (kgrepl kernel/demos/04.kg) and golden-tested.
//
//go:embed demos/*.kg
var demoFiles embed.FS

// demoTitles are the first comment line of each demo script.
var demoTitles = loadDemoTitles()

func demoScript(n int) (string, error) {
	b, err := demoFiles.ReadFile(fmt.Sprintf("demos/%02d.kg", n))
	return string(b), err
}

func loadDemoTitles() []string {
	var out []string
	for n := 1; ; n++ {
		text, err := demoScript(n)
		if err != nil {
			return out
		}
		first, _, _ := strings.Cut(text, "\n")
		out = append(out, strings.TrimSpace(strings.TrimPrefix(first, "#")))
	}
}

// DemoScript returns demo n's script text.
func DemoScript(n int) (string, error) {
	if n < 1 || n > len(demoTitles) {
		return "", fmt.Errorf("demo %d: demos are 1 to %d", n, len(demoTitles))
	}
	return demoScript(n)
}

func cmdDemo(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("demo", args, nil, []string{"--verbose", "--step"})
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 && len(fl) == 0 {
		return &Result{Text: demoList()}, nil
	}
	if err := needArgs("demo", pos, 1, 1); err != nil {
		return nil, err
	}
	n, err := parseCount("demo", "N", pos[0], 1, len(demoTitles))
	if err != nil {
		return nil, err
	}
	text, err := DemoScript(n)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(s.paint(heading, fmt.Sprintf("=== demo %d: %s", n, demoTitles[n-1])) + "\n")
	// A demo runs in a fresh session (SPEC §6): every branch dropped, every
	// setting at its default, so it prints the same from anywhere, any
	// number of times. The user's session is replaced only when the demo
	// has run to its end; a failing demo leaves it as it was.
	d := s.fresh()
	// Demos print the quiet level unless asked for every line.
	d.Quiet = fl["--verbose"] != "true"
	step := fl["--step"] == "true"
	// pages are cut before each act's heading and each narration block,
	// where `demo N --step` pauses; stops[i] puts a session where the demo
	// was at the end of pages[i], for a reader who stops there.
	var pages []string
	var stops []func(*Session)
	narrated := false
	act := 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			if i == 0 {
				continue // the title, printed above
			}
			if !narrated && b.Len() > 0 {
				pages = append(pages, b.String())
				b.Reset()
				if step {
					stops = append(stops, d.stopHere())
				}
			}
			narrated = true
			if title, ok := strings.CutPrefix(trimmed, "## "); ok {
				act++
				b.WriteString(d.paint(heading, actHeading(act, title)) + "\n")
				continue
			}
			b.WriteString(d.paint(narration, trimmed) + "\n") // narration: what to look at
			continue
		}
		narrated = false
		b.WriteString(d.Prompt() + trimmed + "\n")
		out, err := d.execLine(trimmed)
		if out != "" {
			b.WriteString(out + "\n")
		}
		if err != nil {
			return nil, fmt.Errorf("demo %d, line %s: %w", n, strconv.Itoa(i+1), err)
		}
	}
	pages = append(pages, b.String())
	s.branches, s.cur = d.branches, d.cur
	r := &Result{Text: strings.Join(pages, "")}
	if step {
		r.Pages = pages
		r.stops = append(stops, nil) // at the end there is nothing to stop
	}
	return r, nil
}

// actWidth is how wide an act's heading rule is drawn.
const actWidth = 72

// actHeading is the line that opens act n of a demo: its number and title
// on a rule, visible without colour (in a pipe, a golden file, a notebook).
func actHeading(n int, title string) string {
	h := fmt.Sprintf("── %d. %s ", n, title)
	if pad := actWidth - utf8.RuneCountInString(h); pad > 0 {
		h += strings.Repeat("─", pad)
	}
	return h
}

// demoList is what `demo` alone prints: every demo, a line each.
func demoList() string {
	var b strings.Builder
	b.WriteString("demos (demo N runs one in a fresh session; --step pauses at each act, --verbose prints every line):\n")
	for i, title := range demoTitles {
		fmt.Fprintf(&b, "  demo %-2d %s\n", i+1, title)
	}
	return strings.TrimRight(b.String(), "\n")
}

// stopHere returns what puts a session where this one is now: a copy of
// each branch, its world cloned, so that the rest of the demo running in
// this session does not change it.
func (s *Session) stopHere() func(*Session) {
	branches := make(map[string]*branch, len(s.branches))
	var cur *branch
	for name, b := range s.branches {
		c := *b
		c.hist = b.hist.shared()
		c.world, c.frozen = b.world.Clone(), false
		branches[name] = &c
		if b == s.cur {
			cur = &c
		}
	}
	return func(into *Session) {
		into.branches, into.cur = branches, cur
	}
}

// fresh is a new session with this one's settings for files and checks.
func (s *Session) fresh() *Session {
	d := NewSession()
	d.Dir, d.AfterTick, d.CheckpointEvery, d.interrupt, d.Color = s.Dir, s.AfterTick, s.CheckpointEvery, s.interrupt, s.Color
	return d
}

// Greeting is what the REPL says when it starts: what kgrepl is, and three
// first steps: a demo, help, and where pictures go (pictureDir; none in a
// front end that writes no picture without --out).
func Greeting(pictureDir string) string {
	pics := "  diagram    draws the world now; pictures go to " + pictureDir
	if pictureDir == "" {
		pics = "  diagram    draws the world now (--out FILE.svg writes it)"
	}
	return fmt.Sprintf("kgrepl: Kafka consumer groups, simulated tick by tick. Group billing: C1 reads orders and\n"+
		"payments and writes invoices; make members join, crash, stall and commit. First steps:\n"+
		"  demo 1     a rebalance, narrated (demo lists all %d; demo 1 --step pauses at each act)\n"+
		"  help       every command (help CMD or CMD --help explains one; Tab completes)\n"+
		"%s\n", len(demoTitles), pics)
}
