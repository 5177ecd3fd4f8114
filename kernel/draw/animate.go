package draw

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FrameSeconds is how long an animated diagram shows each tick.
const FrameSeconds = 0.8

var (
	svgOpen = regexp.MustCompile(`<svg\b[^>]*>`)
	attrW   = regexp.MustCompile(`\swidth="([0-9.]+)"`)
	attrH   = regexp.MustCompile(`\sheight="([0-9.]+)"`)
	attrRun = regexp.MustCompile(`\sdata-packet-run="([0-9.]+)"`)
	defsRe  = regexp.MustCompile(`(?s)<defs class="glyphs">\n(.*?)</defs>\n`)
)

// size reads the width and height of an SVG document's root element.
func size(doc string) (w, h float64, open string, ok bool) {
	loc := svgOpen.FindStringIndex(doc)
	if loc == nil {
		return 0, 0, "", false
	}
	open = doc[loc[0]:loc[1]]
	mw, mh := attrW.FindStringSubmatch(open), attrH.FindStringSubmatch(open)
	if mw == nil || mh == nil {
		return 0, 0, open, false
	}
	w, _ = strconv.ParseFloat(mw[1], 64)
	h, _ = strconv.ParseFloat(mh[1], 64)
	return w, h, open, w > 0 && h > 0
}

// Resize sets the size an SVG document is shown at (its viewBox keeps the
// drawing whole): w and h in pixels; with one of them 0 the other keeps
// the drawing's proportions, with both 0 the document is returned as is.
func Resize(doc string, w, h int) string {
	if w <= 0 && h <= 0 {
		return doc
	}
	ow, oh, open, ok := size(doc)
	if !ok {
		return doc
	}
	nw, nh := float64(w), float64(h)
	switch {
	case w <= 0:
		nw = math.Round(ow * nh / oh)
	case h <= 0:
		nh = math.Round(oh * nw / ow)
	}
	if !strings.Contains(open, "viewBox=") {
		open = strings.Replace(open, "<svg ", `<svg viewBox="0 0 `+num(ow)+" "+num(oh)+`" `, 1)
	}
	n := attrW.ReplaceAllString(open, ` width="`+num(nw)+`"`)
	n = attrH.ReplaceAllString(n, ` height="`+num(nh)+`"`)
	return strings.Replace(doc, strings.TrimSpace(open), n, 1)
}

// pct writes a keyframe position.
func pct(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) + "%" }

// Animate plays world diagrams, one per tick, as one SVG document that
// needs no script: CSS keyframes show frame k during the k-th slice of the
// cycle and move each packet's dot along its arrow during it. A viewer
// without CSS animation shows the last frame. The output depends only on
// the frames, so it is byte-repeatable.
func Animate(frames []string, title string) string {
	n := len(frames)
	maxW, maxH := 0.0, 0.0
	type frame struct {
		open, body string
		w, h, run  float64
	}
	var fs []frame
	// The frames share one set of glyph outlines (ids must be unique).
	glyphs := map[string]bool{}
	var glyphOrder []string
	for _, f := range frames {
		for _, m := range defsRe.FindAllStringSubmatch(f, -1) {
			for _, l := range strings.SplitAfter(m[1], "\n") {
				if l != "" && !glyphs[l] {
					glyphs[l] = true
					glyphOrder = append(glyphOrder, l)
				}
			}
		}
		f = defsRe.ReplaceAllString(f, "")
		w, h, open, ok := size(f)
		if !ok {
			continue
		}
		start := strings.Index(f, open) + len(open)
		end := strings.LastIndex(f, "</svg>")
		if end < start {
			continue
		}
		run := 0.0
		if m := attrRun.FindStringSubmatch(open); m != nil {
			run, _ = strconv.ParseFloat(m[1], 64)
		}
		fs = append(fs, frame{open: open, body: f[start:end], w: w, h: h, run: run})
		maxW, maxH = math.Max(maxW, w), math.Max(maxH, h)
	}
	n = len(fs)
	cycle := FrameSeconds * float64(n)
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="kgrepl-animation" width="` + num(maxW) + `" height="` + num(maxH) +
		`" viewBox="0 0 ` + num(maxW) + " " + num(maxH) + `" font-family="` + esc(sansFont) + `" font-size="12">` + "\n")
	b.WriteString("<title>" + esc(title) + "</title>\n<style>\n")
	fmt.Fprintf(&b, ".kf{visibility:hidden;animation-duration:%ss;animation-timing-function:step-end;animation-iteration-count:infinite}\n", num(cycle))
	fmt.Fprintf(&b, ".kf .pkt-dot{animation-duration:%ss;animation-timing-function:linear;animation-iteration-count:infinite}\n", num(cycle))
	fmt.Fprintf(&b, "#kf%d{visibility:visible}\n", n-1)
	for k := 0; k < n; k++ {
		run := fs[k].run
		a, z := 100*float64(k)/float64(n), 100*float64(k+1)/float64(n)
		// Frame k is visible from a% to z% of the cycle.
		switch {
		case n == 1:
			fmt.Fprintf(&b, "@keyframes kf%d{0%%{visibility:visible}}\n", k)
		case k == 0:
			fmt.Fprintf(&b, "@keyframes kf%d{0%%{visibility:visible}%s{visibility:hidden}}\n", k, pct(z))
		case k == n-1:
			fmt.Fprintf(&b, "@keyframes kf%d{0%%{visibility:hidden}%s{visibility:visible}}\n", k, pct(a))
		default:
			fmt.Fprintf(&b, "@keyframes kf%d{0%%{visibility:hidden}%s{visibility:visible}%s{visibility:hidden}}\n", k, pct(a), pct(z))
		}
		// A packet's dot runs its arrow's length while its frame shows.
		for _, dir := range []struct {
			class string
			sign  float64
		}{{"r", 1}, {"l", -1}} {
			fmt.Fprintf(&b, "@keyframes km%d%s{0%%,%s{transform:translateX(0px)}%s,100%%{transform:translateX(%spx)}}\n",
				k, dir.class, pct(a), pct(z), num(dir.sign*run))
		}
		fmt.Fprintf(&b, "#kf%d{animation-name:kf%d}#kf%d .pkt-dot.r{animation-name:km%dr}#kf%d .pkt-dot.l{animation-name:km%dl}\n", k, k, k, k, k, k)
	}
	b.WriteString("</style>\n")
	sort.Strings(glyphOrder)
	if len(glyphOrder) > 0 {
		b.WriteString(`<defs class="glyphs">` + "\n" + strings.Join(glyphOrder, "") + "</defs>\n")
	}
	b.WriteString(`<rect x="0" y="0" width="` + num(maxW) + `" height="` + num(maxH) + `" fill="#ffffff"/>` + "\n")
	for k, f := range fs {
		fmt.Fprintf(&b, "<g id=\"kf%d\" class=\"kf\" data-frame=\"%d\">\n", k, k)
		open := strings.Replace(f.open, "<svg ", `<svg x="0" y="0" `, 1)
		open = strings.Replace(open, ` xmlns="http://www.w3.org/2000/svg"`, "", 1)
		b.WriteString(open)
		b.WriteString(f.body)
		b.WriteString("</svg>\n</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}
