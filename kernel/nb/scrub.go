package nb

import (
	_ "embed"
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel"
)

// Scrub shows ticks of the branch in use with a slider and a play button:
// the world diagram at the slider's tick, the pause meter with a cursor on
// that tick, and what happened in it (its events and the messages sent).
// Options: "--ticks A..B" (A.., ..B; the default is the whole branch, at
// most its last kernel.MaxScrubTicks ticks) and "--branch NAME" (the
// branch in use by default).
//
// Every tick is drawn ahead, from the branch's history, into the cell's
// output, and a small script moves between them: the slider works without
// the kernel (a notebook reopened, an HTML export), in Notebook 6 and in
// JupyterLab, and executing the notebook (nbconvert) needs no browser.
// GoNB's widgets would ask the kernel for each tick, but they live only
// while their cell runs (the cell must block, which stops Run All) and
// wait for the browser's answer, which never comes under nbconvert. Where
// no script runs (a code host, an untrusted notebook) the diagram is the
// animated SVG of `diagram --ticks A..B` and plays by itself.
func (s *Session) Scrub(options ...string) error {
	s.err = nil
	branch, from, to, err := scrubOptions(strings.Join(options, " "))
	if err == nil {
		var sc *kernel.Scrub
		if sc, err = s.k.Scrub(branch, from, to); err == nil {
			s.show(scrubHTML(sc), scrubText(sc))
			return nil
		}
	}
	s.err = err
	s.show(errorHTML(err), "error: "+err.Error()+"\n")
	return err
}

// scrubOptions reads Scrub's options: --ticks A..B (A.., ..B; -1 for an
// end left open) and --branch NAME.
func scrubOptions(opts string) (branch string, from, to int, err error) {
	f := strings.Fields(strings.ReplaceAll(opts, "=", " "))
	from, to = -1, -1
	bad := fmt.Errorf("scrub %s: want --ticks A..B (A.., ..B) in whole ticks, --branch NAME", opts)
	seen := map[string]bool{}
	for i := 0; i < len(f); i += 2 {
		if i+1 >= len(f) || seen[f[i]] {
			return "", 0, 0, bad
		}
		seen[f[i]] = true
		switch f[i] {
		case "--branch":
			branch = f[i+1]
		case "--ticks":
			a, b, ok := strings.Cut(f[i+1], "..")
			if !ok {
				return "", 0, 0, bad
			}
			if a != "" {
				if from, err = strconv.Atoi(a); err != nil || from < 0 {
					return "", 0, 0, bad
				}
			} else {
				from = 0
			}
			if b != "" {
				if to, err = strconv.Atoi(b); err != nil || to < 0 {
					return "", 0, 0, bad
				}
			}
		default:
			return "", 0, 0, bad
		}
	}
	return branch, from, to, nil
}

//go:embed scrub.js
var scrubJS string

// scrubHTML lays a scrub out: the controls (hidden until the script shows
// them), the animated diagram, the pause meter with its cursor beside the
// trace of the tick, and the script. Without the script the diagram plays
// and the last tick's trace shows.
func scrubHTML(sc *kernel.Scrub) string {
	n := sc.To - sc.From + 1
	xs := make([]string, len(sc.PauseX))
	for i, x := range sc.PauseX {
		xs[i] = strconv.FormatFloat(x, 'f', 4, 64)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="kgrepl-scrub" data-branch="%s" data-from="%d" data-frames="%d" data-pause-x="%s">`,
		html.EscapeString(sc.Branch), sc.From, n, strings.Join(xs, " "))
	fmt.Fprintf(&b, `<div class="kgrepl-scrub-bar" style="display:none;align-items:center;gap:10px;margin:4px 0 6px 0;font:14px sans-serif">`+
		`<button type="button" class="kgrepl-scrub-play" style="min-width:5em">▶ play</button>`+
		`<input type="range" class="kgrepl-scrub-slider" aria-label="tick" min="0" max="%d" step="1" value="0" style="width:min(640px,60vw)">`+
		`<span class="kgrepl-scrub-tick" style="font-family:monospace">t=%d</span>`+
		`<span style="color:#666">ticks %d..%d of branch %s: drag the slider, or use ← →</span></div>`,
		n-1, sc.From, sc.From, sc.To, html.EscapeString(sc.Branch))
	b.WriteString(`<div class="kgrepl-scrub-diagram">` + kernel.InlineSVG(sc.Diagram) + `</div>`)
	b.WriteString(`<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">`)
	// The cursor sits in a box the size of the chart, so a fraction of the
	// chart's width is a percentage of the box's.
	pause := kernel.InlineSVG(sc.Pause)
	open := strings.Index(pause, ">") + 1
	b.WriteString(pause[:open] + `<div class="kgrepl-scrub-axis" style="position:relative;display:inline-block;line-height:0">` +
		strings.TrimSuffix(pause[open:], "</div>") +
		`<div class="kgrepl-scrub-cursor" style="display:none;position:absolute;top:0;bottom:0;left:0;width:0;border-left:2px solid #c01c28"></div></div></div>`)
	b.WriteString(`<div class="kgrepl-scrub-trace" style="flex:1 1 320px;min-width:320px">`)
	for k, t := range sc.Trace {
		hide := ` style="display:none;margin:0"`
		if k == len(sc.Trace)-1 {
			hide = ` style="margin:0"`
		}
		fmt.Fprintf(&b, `<pre class="kgrepl-text" data-tick="%d"%s>%s</pre>`, sc.From+k, hide, html.EscapeString(t))
	}
	b.WriteString(`</div></div><script>` + scrubJS + `</script></div>`)
	return b.String()
}

// scrubText is what Scrub prints outside a notebook: the window and the
// trace of each tick.
func scrubText(sc *kernel.Scrub) string {
	return fmt.Sprintf("scrub: ticks %d..%d of branch %s, a frame per tick\n%s\n", sc.From, sc.To, sc.Branch, strings.Join(sc.Trace, "\n"))
}
