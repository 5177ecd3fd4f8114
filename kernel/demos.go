package kernel

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
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
	fmt.Fprintf(&b, "=== demo %d: %s\n", n, demoTitles[n-1])
	// A demo runs in a fresh session (SPEC §6): every branch dropped, every
	// setting at its default, so it prints the same from anywhere, any
	// number of times. The user's session is replaced only when the demo
	// has run to its end; a failing demo leaves it as it was.
	d := s.fresh()
	// Demos print the quiet level unless asked for every line.
	d.Quiet = fl["--verbose"] != "true"
	// pages are cut before each narration line, where `demo N --step` pauses.
	var pages []string
	narrated := false
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			if i > 0 {
				if !narrated && b.Len() > 0 {
					pages = append(pages, b.String())
					b.Reset()
				}
				narrated = true
				b.WriteString(trimmed + "\n") // narration: what to look at
			}
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
	if fl["--step"] == "true" {
		r.Pages = pages
	}
	return r, nil
}

// fresh is a new session with this one's settings for files and checks.
func (s *Session) fresh() *Session {
	d := NewSession()
	d.Dir, d.AfterTick, d.CheckpointEvery, d.interrupt = s.Dir, s.AfterTick, s.CheckpointEvery, s.interrupt
	return d
}
