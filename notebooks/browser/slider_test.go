// Package browser tests the notebooks' tick slider (kernel/nb's Scrub) as
// a reader uses it: a notebook opened in headless Chromium from a live
// Jupyter server with the GoNB kernel, its cells run with Shift+Enter, the
// slider moved with the mouse and the keyboard, the play button pressed,
// and the picture checked to change; then the same in the notebook's HTML
// export, with no kernel at all, and in its output shown the way
// JupyterLab shows one. scripts/notebooks.sh starts the server and
// runs it; on its own, `go test ./...` skips it (it needs the server).
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromium starts Debian's Chromium as this machine needs it (headless, no
// sandbox as root, no background networking, a fresh profile).
func chromium(t *testing.T) context.Context {
	t.Helper()
	exe := os.Getenv("KGREPL_CHROMIUM")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(cancel3)
	return ctx
}

// TestSliderInALiveNotebook opens a notebook from the Jupyter server
// scripts/notebooks.sh started, runs its cells up to the first slider as a
// reader does (Shift+Enter), and moves the slider.
func TestSliderInALiveNotebook(t *testing.T) {
	url, token, name := os.Getenv("KGREPL_JUPYTER_URL"), os.Getenv("KGREPL_JUPYTER_TOKEN"), os.Getenv("KGREPL_NOTEBOOK")
	if url == "" || name == "" {
		t.Skip("needs a Jupyter server: run scripts/notebooks.sh (KGREPL_JUPYTER_URL, KGREPL_JUPYTER_TOKEN, KGREPL_NOTEBOOK)")
	}
	ctx := chromium(t)
	page := url + "/notebooks/" + name + "?token=" + token
	if err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		// Notebook 6: the kernel is up when its indicator says idle.
		chromedp.WaitVisible(chromedp.CSS(`#kernel_indicator_icon.kernel_idle_icon`)),
	); err != nil {
		t.Fatalf("opening %s: %v", page, err)
	}
	// The cells up to the first slider: click into the first code cell, then
	// Shift+Enter runs it and moves to the next, as a reader does.
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(function () {
		var cs = document.querySelectorAll(".cell");
		for (var i = 0; i < cs.length; i++) {
			if (cs[i].classList.contains("code_cell") && cs[i].textContent.indexOf("s.Scrub(") >= 0) return i + 1;
		}
		return 0;
	})()`))
	if err != nil || cells == 0 {
		t.Fatalf("%s has no cell calling s.Scrub (%v)", name, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.cell:first-child .input_prompt`))); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cells; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierShift))); err != nil {
			t.Fatal(err)
		}
		// Each cell is sent to the kernel in turn; Notebook queues them.
		time.Sleep(200 * time.Millisecond)
	}
	// The executed cell's output replaces the committed one: a new slider, set up by its script.
	root := `.code_cell .output_area .kgrepl-scrub[data-kgrepl-ready]`
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(root+` .kgrepl-scrub-slider`))); err != nil {
		t.Fatalf("the slider never came up after running %d cells: %v", cells, err)
	}
	scrubLikeAReader(t, ctx, root, "live")
}

// TestSliderInTheHTMLExport: the HTML export of an executed notebook holds
// every tick drawn, so its slider works with no kernel and no server.
func TestSliderInTheHTMLExport(t *testing.T) {
	page := os.Getenv("KGREPL_EXPORT_HTML")
	if page == "" {
		t.Skip("needs an executed notebook's HTML export: run scripts/notebooks.sh (KGREPL_EXPORT_HTML)")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx := chromium(t)
	root := `.kgrepl-scrub[data-kgrepl-ready]`
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitVisible(chromedp.CSS(root+` .kgrepl-scrub-slider`))); err != nil {
		t.Fatalf("%s: the slider never came up: %v", page, err)
	}
	scrubLikeAReader(t, ctx, root, "export")
}

// TestSliderWithoutScripts: where no script runs (a code host, a page
// with scripts off) the slider's controls stay hidden and its diagram is
// the animated SVG, which plays by itself: the tick drawn changes with time.
func TestSliderWithoutScripts(t *testing.T) {
	page := os.Getenv("KGREPL_EXPORT_HTML")
	if page == "" {
		t.Skip("needs an executed notebook's HTML export: run scripts/notebooks.sh (KGREPL_EXPORT_HTML)")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx := chromium(t)
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady(chromedp.CSS(`.kgrepl-scrub-diagram svg`))); err != nil {
		t.Fatalf("%s: no slider diagram: %v", page, err)
	}
	// The devtools protocol still evaluates with the page's scripts off.
	look := `(function () {
		var r = document.querySelector(".kgrepl-scrub");
		var titles = Array.prototype.filter.call(r.querySelectorAll(".kgrepl-scrub-diagram text"), function (e) {
			return /^group .* · tick \d+/.test(e.textContent) && getComputedStyle(e).visibility === "visible";
		}).map(function (e) { return e.textContent; });
		var svg = r.querySelector(".kgrepl-scrub-diagram svg").getBoundingClientRect();
		return {
			Ready: r.hasAttribute("data-kgrepl-ready"),
			Bar: getComputedStyle(r.querySelector(".kgrepl-scrub-bar")).display,
			Width: svg.width,
			Title: titles.join(" / ")
		};
	})()`
	type seen struct {
		Ready      bool
		Bar, Title string
		Width      float64
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[seen](look))
	if err != nil {
		t.Fatal(err)
	}
	if first.Ready || first.Bar != "none" || first.Width <= 0 || first.Title == "" || strings.Contains(first.Title, " / ") {
		t.Fatalf("with scripts off: %+v; want no controls, and one tick of the diagram drawn", first)
	}
	titles := map[string]bool{first.Title: true}
	for i := 0; i < 6 && len(titles) < 2; i++ {
		time.Sleep(500 * time.Millisecond)
		now, err := chromedp.Run(ctx, chromedp.Evaluate[seen](look))
		if err != nil {
			t.Fatal(err)
		}
		titles[now.Title] = true
	}
	if len(titles) < 2 {
		t.Errorf("with scripts off the diagram stays at %q: the animation does not play", first.Title)
	}
	t.Logf("no script: the animation plays (%d ticks seen)", len(titles))
}

// TestSliderAsJupyterLabRendersIt: JupyterLab is not among Debian's
// packages, so its way of showing an output is played here on the slider's
// output from an executed notebook, as @jupyterlab/rendermime 4's
// renderHTML does it: the HTML set as a host's innerHTML, each script
// replaced by a fresh copy in place (so it runs where it stands), and the
// host put into the page only afterwards, as an output area may be.
func TestSliderAsJupyterLabRendersIt(t *testing.T) {
	path := os.Getenv("KGREPL_EXECUTED_NOTEBOOK")
	if path == "" {
		t.Skip("needs an executed notebook: run scripts/notebooks.sh (KGREPL_EXECUTED_NOTEBOOK)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Outputs []struct {
				Data map[string]any `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	output := ""
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			h := joinLines(o.Data["text/html"])
			if output == "" && strings.Contains(h, `class="kgrepl-scrub"`) {
				output = h
			}
		}
	}
	if output == "" {
		t.Fatalf("%s has no slider in its outputs", path)
	}
	quoted, _ := json.Marshal(output)
	page := `<!DOCTYPE html><html><body><div id="notebook"></div><script>
var host = document.createElement("div");
host.className = "jp-RenderedHTMLCommon";
host.innerHTML = ` + string(quoted) + `;
Array.from(host.getElementsByTagName("script")).forEach(function (s) {
  var c = document.createElement("script");
  c.textContent = s.textContent;
  s.parentNode.replaceChild(c, s);
});
setTimeout(function () { document.getElementById("notebook").appendChild(host); }, 300);
</script></body></html>`
	file := filepath.Join(t.TempDir(), "lab.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := chromium(t)
	root := `.kgrepl-scrub[data-kgrepl-ready]`
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS(root+` .kgrepl-scrub-slider`))); err != nil {
		t.Fatalf("the slider never came up: %v", err)
	}
	scrubLikeAReader(t, ctx, root, "lab")
}

// joinLines reads a notebook's multi-line string (a list of lines, or one string).
func joinLines(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, l := range v {
			s, _ := l.(string)
			b.WriteString(s)
		}
		return b.String()
	}
	return ""
}

// state is what a reader sees of a slider: the tick it shows, the trace
// shown under it, where the cursor stands, and the world diagram's title
// as drawn at that tick.
type state struct {
	Tick, Label, Trace, Cursor, Title, Play string
}

func readState(t *testing.T, ctx context.Context, root string) state {
	t.Helper()
	js := fmt.Sprintf(`(function () {
		var r = document.querySelector(%q);
		var shown = Array.prototype.filter.call(r.querySelectorAll(".kgrepl-scrub-trace pre"), function (p) { return getComputedStyle(p).display !== "none"; });
		// The diagram's title as drawn now: the text of the frame that is visible.
		var pic = r.querySelector(".kgrepl-scrub-diagram .kgrepl-picture");
		var scope = pic.shadowRoot || pic;
		var titles = Array.prototype.filter.call(scope.querySelectorAll("text"), function (e) {
			return /^group .* · tick \d+/.test(e.textContent) && getComputedStyle(e).visibility === "visible";
		}).map(function (e) { return e.textContent; });
		return {
			Tick: r.getAttribute("data-tick"),
			Label: r.querySelector(".kgrepl-scrub-tick").textContent,
			Trace: shown.length === 1 ? shown[0].getAttribute("data-tick") + "|" + shown[0].textContent.split("\n")[0] : shown.length + " shown",
			Cursor: r.querySelector(".kgrepl-scrub-cursor").style.left,
			Title: titles.join(" / "),
			Play: r.querySelector(".kgrepl-scrub-play").textContent
		};
	})()`, root)
	st, err := chromedp.Run(ctx, chromedp.Evaluate[state](js))
	if err != nil {
		t.Fatalf("reading the slider: %v", err)
	}
	return st
}

// shot is a screenshot of the slider's diagram as the page draws it.
func shot(t *testing.T, ctx context.Context, root, name string) []byte {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(root+` .kgrepl-scrub-diagram`)))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if dir := os.Getenv("KGREPL_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "slider-"+name+".png"), png, 0o644)
	}
	return png
}

// check says what a reader at tick n must see: the label, the tick's
// trace alone, and the diagram drawn at that tick.
func check(t *testing.T, st state, n int, when string) {
	t.Helper()
	want := strconv.Itoa(n)
	if st.Tick != want || st.Label != "t="+want || !strings.HasPrefix(st.Trace, want+"|t="+want) {
		t.Errorf("%s: the slider shows tick %s, label %q, trace %q; want tick %d", when, st.Tick, st.Label, st.Trace, n)
	}
	if !strings.Contains(st.Title, "· tick "+want+" ·") || strings.Contains(st.Title, " / ") {
		t.Errorf("%s: the diagram drawn is %q, want the world at tick %d alone", when, st.Title, n)
	}
}

func scrubLikeAReader(t *testing.T, ctx context.Context, root, name string) {
	first := readState(t, ctx, root)
	from, err := strconv.Atoi(first.Tick)
	if err != nil {
		t.Fatalf("the slider shows no tick: %+v", first)
	}
	check(t, first, from, "at first")
	before := shot(t, ctx, root, name+"-first")

	// The mouse: a click three quarters along the slider's track.
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(function () {
		var s = document.querySelector(%q + " .kgrepl-scrub-slider");
		s.scrollIntoView({block: "center"});
		var b = s.getBoundingClientRect();
		return [b.left, b.top, b.width, b.height, +s.max];
	})()`, root)))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(box[0]+0.75*box[2], box[1]+box[3]/2)); err != nil {
		t.Fatal(err)
	}
	moved := readState(t, ctx, root)
	at, _ := strconv.Atoi(moved.Tick)
	if frames := int(box[4]); at-from < frames/2 || at-from > frames {
		t.Fatalf("a click three quarters along a slider of %d frames from tick %d went to tick %d", frames+1, from, at)
	}
	check(t, moved, at, "after the click")
	if moved.Cursor == first.Cursor {
		t.Errorf("the pause meter's cursor stayed at %s", moved.Cursor)
	}
	after := shot(t, ctx, root, name+"-moved")
	if bytes.Equal(before, after) {
		t.Errorf("the picture did not change from tick %d to tick %d", from, at)
	}

	// The keyboard: the slider has the focus after the click; ← goes back a tick.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowLeft)); err != nil {
		t.Fatal(err)
	}
	back := readState(t, ctx, root)
	check(t, back, at-1, "after ←")
	if bytes.Equal(after, shot(t, ctx, root, name+"-back")) {
		t.Errorf("the picture did not change from tick %d to tick %d", at, at-1)
	}

	// Play: the ticks go by on their own until the last, or until pause.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(root+` .kgrepl-scrub-play`))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1600 * time.Millisecond)
	playing := readState(t, ctx, root)
	n, _ := strconv.Atoi(playing.Tick)
	if n <= at-1 || !strings.Contains(playing.Play, "pause") {
		t.Errorf("after 1.6 s of play from tick %d: tick %d, button %q", at-1, n, playing.Play)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(root+` .kgrepl-scrub-play`))); err != nil {
		t.Fatal(err)
	}
	stopped := readState(t, ctx, root)
	time.Sleep(1200 * time.Millisecond)
	if still := readState(t, ctx, root); still.Tick != stopped.Tick || !strings.Contains(still.Play, "play") {
		t.Errorf("after pause the slider went on from tick %s to %s (button %q)", stopped.Tick, still.Tick, still.Play)
	}
	n, _ = strconv.Atoi(stopped.Tick)
	check(t, stopped, n, "paused")
	t.Logf("%s: ticks %d, %d (click), %d (←), %d (played, paused)", name, from, at, at-1, n)
}
