package draw

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
)

// FrameSeconds is how long an animated diagram shows each tick.
const FrameSeconds = 0.8

// MaxFrames is the most frames an Animation holds (a frame set is two
// 64-bit words).
const MaxFrames = 128

// An Animation is world diagrams, one a tick, played as one picture.
type Animation struct {
	frames []*Picture
	Title  string
}

// Animate plays pictures (world diagrams, one a tick, drawn with one
// WorldOptions.Wire so B1 stays in place) as one animation.
func Animate(frames []*Picture, title string) *Animation {
	return &Animation{frames: frames, Title: title}
}

// Frames is how many frames the animation plays.
func (a *Animation) Frames() int { return len(a.frames) }

// Size is the size of the largest frame shown at a requested width and
// height (0 keeps the proportions; both 0, its own size).
func (a *Animation) Size(w, h int) (int, int) {
	mw, mh := a.extent()
	dw, dh := displaySize(mw, mh, float64(w), float64(h))
	return int(math.Round(dw)), int(math.Round(dh))
}

func (a *Animation) extent() (w, h float64) {
	for _, f := range a.frames {
		w, h = math.Max(w, f.W), math.Max(h, f.H)
	}
	return w, h
}

// frameSet is a set of frames (bit k: frame k).
type frameSet [MaxFrames / 64]uint64

func (s *frameSet) add(k int)     { s[k/64] |= 1 << (k % 64) }
func (s frameSet) has(k int) bool { return s[k/64]&(1<<(k%64)) != 0 }

// all reports whether the set holds every one of n frames.
func (s frameSet) all(n int) bool {
	for k := 0; k < n; k++ {
		if !s.has(k) {
			return false
		}
	}
	return true
}

// runs are the set's stretches of consecutive frames, [from, to).
func (s frameSet) runs(n int) [][2]int {
	var out [][2]int
	for k := 0; k < n; k++ {
		if !s.has(k) {
			continue
		}
		if l := len(out); l > 0 && out[l-1][1] == k {
			out[l-1][1] = k + 1
			continue
		}
		out = append(out, [2]int{k, k + 1})
	}
	return out
}

// String writes the set as runs of ticks from the first frame: "0-3 7".
func (s frameSet) String(n int) string {
	var parts []string
	for _, r := range s.runs(n) {
		if r[1]-r[0] == 1 {
			parts = append(parts, strconv.Itoa(r[0]))
		} else {
			parts = append(parts, strconv.Itoa(r[0])+"-"+strconv.Itoa(r[1]-1))
		}
	}
	return strings.Join(parts, " ")
}

// pct writes a keyframe's place in the cycle, to a hundredth of a percent
// (a 120-frame cycle of 96 s: 10 ms).
func pct(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + "%" }

// itemNode is one part of the animation, in paint order.
type itemNode struct {
	svg    string
	frames frameSet
	next   *itemNode
}

// SVG is the animation as one SVG document shown at w × h pixels (0 as
// Size says), played by CSS keyframes, with no script. Each part of a
// frame (a member's state line, a log cell, a packet, a label) is drawn
// once, with the frames it shows in: what does not change is drawn once
// for every frame. A part's visibility steps with the frames; a packet's
// dot runs along its arrow during its frame. A viewer without CSS
// animation shows the last frame: every part that the last frame does not
// show is hidden by its visibility attribute, which the animation
// overrides. The output depends only on the frames, so it is repeatable.
func (a *Animation) SVG(w, h int) string {
	n := len(a.frames)
	if n > MaxFrames {
		n = MaxFrames
	}
	mw, mh := a.extent()
	glyphs := map[string]bool{}
	// Merge the frames' parts into one paint order: a part new in a frame
	// goes right after the part the frame drew before it.
	head := &itemNode{}
	index := map[string]*itemNode{}
	for k, f := range a.frames[:n] {
		c := f.svgCanvas()
		for id := range c.glyphs {
			glyphs[id] = true
		}
		prev := head
		for _, it := range c.Items() {
			node, ok := index[it]
			if !ok {
				node = &itemNode{svg: it, next: prev.next}
				prev.next = node
				index[it] = node
			}
			node.frames.add(k)
			prev = node
		}
	}
	// Parts showing in the same frames share one group and one animation.
	type set struct{ frames frameSet }
	var sets []*set
	setOf := map[frameSet]int{}
	var body strings.Builder
	var open *set
	closeGroup := func() {
		if open != nil {
			body.WriteString("</g>\n")
			open = nil
		}
	}
	for node := head.next; node != nil; node = node.next {
		fs := node.frames
		// A part in every frame needs no animation, unless it holds a
		// packet's dot, which moves only inside an animated group.
		dots := strings.Contains(node.svg, `class="pkt-dot `)
		if fs.all(n) && !dots {
			closeGroup()
			body.WriteString(node.svg)
			continue
		}
		i, ok := setOf[fs]
		if !ok {
			i = len(sets)
			setOf[fs] = i
			sets = append(sets, &set{frames: fs})
		}
		if open != sets[i] {
			closeGroup()
			open = sets[i]
			body.WriteString(`<g class="@ @` + strconv.Itoa(i) + `" data-frames="` + fs.String(n) + `"`)
			if !fs.has(n - 1) {
				body.WriteString(` visibility="hidden"`)
			}
			body.WriteString(">\n")
		}
		body.WriteString(node.svg)
	}
	closeGroup()

	// The class and keyframe names are the animation's own (the groups were
	// written with a placeholder): a notebook page holding two animations
	// applies both documents' styles to both. A hash of the animation names
	// them, so they stay repeatable.
	hash := fnv.New32a()
	hash.Write([]byte(a.Title))
	hash.Write([]byte(body.String()))
	name := fmt.Sprintf("a%06x-", hash.Sum32()&0xffffff)

	dw, dh := displaySize(mw, mh, float64(w), float64(h))
	cycle := num2(FrameSeconds * float64(n))
	pc := func(k int) string { return pct(100 * float64(k) / float64(n)) }
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="kgrepl-animation" data-frames="` + strconv.Itoa(n) + `" width="` + num(dw) + `" height="` + num(dh) +
		`" viewBox="0 0 ` + num(mw) + " " + num(mh) + `" font-family="` + esc(sansFont) + `" font-size="12">` + "\n")
	b.WriteString("<title>" + esc(a.Title) + "</title>\n<style>\n")
	fmt.Fprintf(&b, ".%s{animation-duration:%ss;animation-timing-function:step-end;animation-iteration-count:infinite}\n", name, cycle)
	// A packet's dot runs its arrow's length during each frame: one
	// animation a frame long, repeated, started with the frames' (the
	// frames share one layout, so every arrow has the first frame's run).
	for _, dir := range []struct {
		class string
		sign  float64
	}{{"r", 1}, {"l", -1}} {
		fmt.Fprintf(&b, ".%[1]s .pkt-dot.%[2]s{animation:%[1]sm%[2]s %[3]ss linear infinite}@keyframes %[1]sm%[2]s{from{transform:translateX(0px)}to{transform:translateX(%[4]spx)}}\n",
			name, dir.class, num2(FrameSeconds), num(dir.sign*a.frames[0].run))
	}
	for i, s := range sets {
		// Visible in the set's frames, hidden in the others.
		var kf strings.Builder
		vis := func(v bool) string {
			if v {
				return "{visibility:visible}"
			}
			return "{visibility:hidden}"
		}
		kf.WriteString("0%" + vis(s.frames.has(0)))
		for k := 1; k < n; k++ {
			if s.frames.has(k) != s.frames.has(k-1) {
				kf.WriteString(pc(k) + vis(s.frames.has(k)))
			}
		}
		fmt.Fprintf(&b, ".%[1]s%[2]d{animation-name:%[1]s%[2]d}@keyframes %[1]s%[2]d{%[3]s}\n", name, i, kf.String())
	}
	b.WriteString("</style>\n")
	b.WriteString(strings.ReplaceAll(body.String(), `<g class="@ @`, `<g class="`+name+" "+name))
	b.WriteString(glyphDefs(glyphs))
	b.WriteString("</svg>\n")
	return b.String()
}

// PNG is the animation's last frame, the still picture a viewer without
// animation shows, as a PNG of w × h pixels (0 as Size says).
func (a *Animation) PNG(w, h int) ([]byte, error) {
	if len(a.frames) == 0 {
		return nil, fmt.Errorf("no frame to draw")
	}
	return a.frames[len(a.frames)-1].PNG(w, h)
}

// PDF is the animation as a PDF of a page per frame, in order, each page
// the size of the largest frame (w × h pixels; 0 as Size says) with the
// frame at its top left, so that paging through it plays the ticks.
func (a *Animation) PDF(w, h int) ([]byte, error) {
	mw, mh := a.extent()
	return pdfPages(a.frames, mw, mh, w, h)
}
