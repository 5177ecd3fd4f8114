package kernel

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

// pictureFlags are the options every picture command takes (SPEC §6),
// declared once here; pictureHelp says what they do.
var pictureFlags = []string{"--out", "--width", "--height", "--title", "--ticks"}

const pictureHelp = "\n\nEvery picture command takes --out FILE (.svg, .png or .pdf), --width W and --height H (pixels, " +
	"480..4000 wide, 300..4000 high), --title TEXT and --ticks A..B (A.., ..B, or one tick N).\n" +
	"Without --out a picture goes, as SVG under a new name (pause.svg, pause-2.svg, ...), to the picture\n" +
	"folder the REPL names when it starts; a script or a notebook without a picture folder draws it\n" +
	"without writing a file (notebooks show it)."

// addPictureCommands registers plot, diagram and sequence in the command
// table, before demo, so help lists them with the views.
func addPictureCommands() {
	pics := []*command{
		{name: "plot", usage: "plot pause|duplicates|lag|timeline|unavailable [--branches A,B] [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B]",
			summary: "chart the pause meter, duplicates and lost, lag, who consumes which partition, or unavailability by cause, over ticks",
			help: "pause       the pause meter (paused partitions × ticks) as a step line, each rebalance a band\n" +
				"            labelled with the generation it formed; --branches main,coop overlays branches,\n" +
				"            each with its own rows of rebalance labels in its colour\n" +
				"duplicates  duplicates and lost records as the audit reader sees invoices (both isolation\n" +
				"            levels when transactions are on); --branches overlays branches\n" +
				"lag         each input partition's lag (log end minus committed offset)\n" +
				"timeline    partitions × ticks: the consuming client's colour, a grey while nobody could consume\n" +
				"            the partition (one grey per cause: rebalance, owner down, unassigned, owner stopped;\n" +
				"            the greys are what metrics counts as unavailable), a red-edged bar while a zombie\n" +
				"            processes a record, rebalances as bands\n" +
				"unavailable the partitions nobody could consume in each tick, stacked by cause in the\n" +
				"            timeline's greys, each cause's partition × ticks in the legend\n\n" +
				"Charts are replayed from the branch's start, so they show every tick of its history;\n" +
				"--ticks A..B shows a window of it, replayed from the checkpoint nearest before A and\n" +
				"recording those ticks alone, so a window of a long run is quick and fits the samples' limit.\n" +
				"--partitions picks the input partitions a lag or timeline chart draws: a list of partitions\n" +
				"and ranges of one topic (t-0..t-99,u-3). A timeline draws at most 100 partitions (the first\n" +
				"100 without --partitions, and records only those); a lag chart of more than 10 draws their\n" +
				"total and the 9 whose lag peaked highest. A chart records only the partitions --partitions\n" +
				"names (and a total), so a big group's chart of a few partitions fits the samples' limit\n" +
				"where all of them do not; a lag chart of more than 10 whose every partition would not fit\n" +
				"replays twice, first for each partition's peak, then recording the total and the 9 it\n" +
				"draws (the same chart)." + pictureHelp,
			run: cmdPlot},
		{name: "diagram", usage: "diagram [--partitions P,P1..P2] [--out FILE.svg|.png|.pdf] [--width W] [--height H] [--title T] [--ticks A..B]",
			summary: "draw the world now (or at tick N, or ticks A..B as an animation): members, packets, B1, the logs",
			help: "Members with their state and partitions; B1 with the coordinator's state, generation and\n" +
				"members and the transaction coordinator; each log as cells (invoices in their producer's\n" +
				"colour, open transactions white, aborted red ✗, a second invoice of one input record\n" +
				"marked o2.3², COMMIT/ABORT markers), the committed offset, HW and LSO.\n" +
				"--ticks N draws the world as it was at tick N; --ticks A..B draws one animated SVG, a frame\n" +
				fmt.Sprintf("per tick (at most %d), that plays by itself in a browser (no script); as a PNG it is the\n", maxFrames) +
				"last frame, as a PDF a page per frame.\n" +
				"At a real group's size it draws part of the world and says what it leaves out: at most\n" +
				fmt.Sprintf("%d logs (the first input partitions and the output's; --partitions picks them: partitions\n", draw.MaxLogs) +
				"and ranges of one topic, inputs or the output, t-0..t-9,invoices-0), the logs sharing\n" +
				fmt.Sprintf("%d rows of cells (an animation's fewer), a long log its last cells with a mark of how many\n", draw.LogRowsBudget) +
				fmt.Sprintf("earlier ones it leaves out; at most %d member processes (members lists them all).", draw.MaxMemberRows) + pictureHelp,
			run: cmdDiagram},
		{name: "sequence", usage: "sequence [--mermaid] [--type T1,T2] [--member Cn] [--out FILE] [--width W] [--height H] [--title T] [--ticks A..B]",
			summary: "draw the trace as a sequence diagram: a lane per participant, an arrow per message",
			help: "--ticks A..B keeps the messages sent from tick A to tick B (A.. and ..B leave an end open);\n" +
				"--type and --member filter as trace does. Notes between the arrows are the protocol's events.\n" +
				"--mermaid prints Mermaid sequenceDiagram text instead of drawing (with --out FILE.mmd it\n" +
				"writes the text to that file instead).\n" +
				fmt.Sprintf("A longer range draws its first %d rows (messages and notes; fewer when they would pass a\n", draw.MaxSeqRows) +
				fmt.Sprintf("PNG's pixels), a group of more than %d clients the lanes of B1 and the first %d the range\n", draw.MaxSeqLanes-1, draw.MaxSeqLanes-1) +
				"names; a line where it stops says what it leaves out and the --ticks that draws on." + pictureHelp,
			run: cmdSequence},
	}
	at := len(commands)
	for i, c := range commands {
		if c.name == "demo" {
			at = i
			break
		}
	}
	commands = append(commands[:at], append(pics, commands[at:]...)...)
}

// joinQuoted puts a quoted value back together: the command line is cut
// at spaces, so --title "Two runs" arrives as two words. A word opening
// with " or ' runs to the word that closes it (spaces inside become one).
func joinQuoted(cmd string, args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		q := ""
		if v, ok := strings.CutPrefix(a, "--title="); ok {
			a = v
			out = append(out, "--title")
		}
		if len(a) > 0 && (a[0] == '"' || a[0] == '\'') {
			q = a[:1]
		}
		if q == "" {
			if len(out) > 0 && out[len(out)-1] == "--title" && a != args[i] {
				out[len(out)-1] += "=" + a // --title=--x: a value, even one that looks like an option
				continue
			}
			out = append(out, a)
			continue
		}
		words := []string{a[1:]}
		for !strings.HasSuffix(words[len(words)-1], q) || (len(words) == 1 && len(a) == 1) {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s: %s opens a quote that does not close", cmd, a)
			}
			i++
			words = append(words, args[i])
		}
		joined := strings.Join(words, " ")
		if len(out) > 0 && out[len(out)-1] == "--title" {
			out[len(out)-1] += "=" + joined[:len(joined)-1] // quoted: a value, even "--x"
			continue
		}
		out = append(out, joined[:len(joined)-1])
	}
	return out, nil
}

// picOpts are the picture options every picture command took.
type picOpts struct {
	out           string
	width, height int
	title         string
	ticks         bool // --ticks was given
	from, to      int  // to < 0: open
}

// pictureOptions reads and checks the shared picture options.
func pictureOptions(cmd string, fl map[string]string) (picOpts, error) {
	o := picOpts{out: fl["--out"], title: fl["--title"], to: -1}
	size := func(name string, lo, hi int) (int, error) {
		v, ok := fl[name]
		if !ok {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s %s %q: want a whole number of pixels (%d..%d)", cmd, name, v, lo, hi)
		}
		if n < lo || n > hi {
			return 0, fmt.Errorf("%s %s %d: out of bounds, a picture is %d..%d pixels %s", cmd, name, n, lo, hi,
				map[string]string{"--width": "wide", "--height": "high"}[name])
		}
		return n, nil
	}
	var err error
	if o.width, err = size("--width", chart.MinWidth, chart.MaxWidth); err != nil {
		return o, err
	}
	if o.height, err = size("--height", chart.MinHeight, chart.MaxHeight); err != nil {
		return o, err
	}
	if v, ok := fl["--ticks"]; ok {
		o.ticks = true
		if o.from, o.to, err = parseTicks(cmd, v); err != nil {
			return o, err
		}
	}
	return o, nil
}

// pictureFormats are the files a picture command writes, by --out's extension.
var pictureFormats = []string{".svg", ".png", ".pdf"}

// rendering is a picture drawn, ready to encode in each format at the
// size the command asked for: size is its size in pixels, so that a PNG's
// and a PDF's bounds are checked before either is drawn.
type rendering struct {
	svg  func() (string, error)
	png  func() ([]byte, error)
	pdf  func() ([]byte, error)
	size func() (w, h int)
}

// pictureFormat is the format --out asks for (".svg" without --out),
// or an error naming the extensions a picture command writes.
func pictureFormat(cmd, out string) (string, error) {
	if out == "" {
		return ".svg", nil
	}
	ext := strings.ToLower(filepath.Ext(out))
	if slices.Contains(pictureFormats, ext) {
		return ext, nil
	}
	return "", fmt.Errorf("%s --out %s: want a file ending in .svg, .png or .pdf", cmd, out)
}

// pictureResult writes a picture where the user said (--out, relative
// to the session's folder, in the format its extension names) or, without
// --out, as an SVG under a new name in the picture folder (none: the
// picture is not written), and returns it for every front end: the path
// for the terminal, the picture for notebooks (a PDF is shown as its SVG).
func (s *Session) pictureResult(cmd, out, kind string, r rendering, note string) (*Result, error) {
	format, err := pictureFormat(cmd, out)
	if err != nil {
		return nil, err
	}
	w, h := r.size()
	switch format {
	case ".png":
		if err := limitPNGPixels.checkProduct(cmd+" --out "+out, fmt.Sprintf("%d x %d pixels", w, h), w, h); err != nil {
			return nil, err
		}
	case ".pdf":
		if err := limitPDFSide.check(cmd+" --out "+out, max(w, h)); err != nil {
			return nil, err
		}
	}
	res := &Result{}
	var data []byte
	switch format {
	case ".png":
		if res.PNG, err = r.png(); err != nil {
			return nil, fmt.Errorf("%s: %v", cmd, err)
		}
		data = res.PNG
		res.HTML = `<div class="kgrepl-picture"><img style="max-width:100%" alt="` + htmlEscape(cmd) + `" src="data:image/png;base64,` +
			base64.StdEncoding.EncodeToString(res.PNG) + `"/></div>`
	case ".pdf":
		if data, err = r.pdf(); err != nil {
			return nil, fmt.Errorf("%s: %v", cmd, err)
		}
		fallthrough
	default:
		if res.SVG, err = r.svg(); err != nil {
			return nil, fmt.Errorf("%s: %v", cmd, err)
		}
		if data == nil {
			data = []byte(res.SVG)
		}
		res.HTML = InlineSVG(res.SVG)
	}
	switch {
	case out != "":
		path := s.path(out)
		if err := writeAtomic(path, data); err != nil {
			return nil, fmt.Errorf("%s --out %s: %v", cmd, out, err)
		}
		res.Text = fmt.Sprintf("%s: wrote %s", cmd, path)
	case s.PictureDir != "":
		path, err := s.newPicturePath(kind + format)
		if err != nil {
			return nil, fmt.Errorf("%s: the picture folder: %v", cmd, err)
		}
		if err := writeAtomic(path, data); err != nil {
			return nil, fmt.Errorf("%s: writing %s: %v", cmd, path, err)
		}
		res.Text = fmt.Sprintf("%s: wrote %s", cmd, path)
	default:
		res.Text = fmt.Sprintf("%s: drawn, not written (no picture folder here: --out FILE writes it)", cmd)
	}
	if note != "" {
		res.Text += " (" + note + ")"
	}
	return res, nil
}

// maxPictureNames bounds the numbered names tried in the picture folder.
const maxPictureNames = 100_000

// newPicturePath is a name in the picture folder that no file has yet:
// NAME.EXT, then NAME-2.EXT, NAME-3.EXT, ... The file is created (empty)
// to hold the name, so two sessions sharing the folder never pick the same.
func (s *Session) newPicturePath(name string) (string, error) {
	if err := os.MkdirAll(s.PictureDir, 0o755); err != nil {
		return "", err
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i <= maxPictureNames; i++ {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		path := filepath.Join(s.PictureDir, n)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		f.Close()
		return path, nil
	}
	return "", fmt.Errorf("%s holds %s and %d numbered names after it; move some pictures away", s.PictureDir, name, maxPictureNames)
}

// chartRendering renders a chart (its size is the chart's own).
func chartRendering(c *chart.Chart) rendering {
	return rendering{
		svg: func() (string, error) {
			b, err := c.SVG()
			return string(b), err
		},
		png: c.PNG,
		pdf: c.PDF,
		size: func() (int, int) {
			return int(math.Round(float64(c.Width / 0.75))), int(math.Round(float64(c.Height / 0.75)))
		},
	}
}

// diagramRendering renders a diagram shown at w × h pixels (0 as
// draw.Picture.Size says).
func diagramRendering(p *draw.Picture, w, h int) rendering {
	return rendering{
		svg:  func() (string, error) { return p.SVG(w, h), nil },
		png:  func() ([]byte, error) { return p.PNG(w, h) },
		pdf:  func() ([]byte, error) { return p.PDF(w, h) },
		size: func() (int, int) { return p.Size(w, h) },
	}
}

// animationRendering renders an animation: an animated SVG, its last
// frame as a PNG, a PDF page per frame.
func animationRendering(a *draw.Animation, w, h int) rendering {
	return rendering{
		svg:  func() (string, error) { return a.SVG(w, h), nil },
		png:  func() ([]byte, error) { return a.PNG(w, h) },
		pdf:  func() ([]byte, error) { return a.PDF(w, h) },
		size: func() (int, int) { return a.Size(w, h) },
	}
}

// InlineSVG makes an SVG document fit for an HTML page: no XML
// declaration, and drawn at its own size, so its text reads as it does in
// the file; a picture wider than the page scrolls sideways in its cell
// rather than shrinking (a 1,458 px world diagram scaled to a notebook's
// width had 7 px text). Notebook styles cap an svg at 100% of the cell, so
// the size is set explicitly.
func InlineSVG(svg string) string {
	if i := strings.Index(svg, "<svg"); i > 0 {
		svg = svg[i:]
	}
	svg = strings.Replace(svg, "<svg ", `<svg style="max-width:none;height:auto;flex:none" `, 1)
	return `<div class="kgrepl-picture" style="overflow-x:auto;max-width:100%">` + svg + `</div>`
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// outFile checks --out against the extensions a command writes.
func outFile(cmd, out, def string, exts ...string) (string, error) {
	if out == "" {
		return def, nil
	}
	ext := strings.ToLower(filepath.Ext(out))
	for _, e := range exts {
		if ext == e {
			return out, nil
		}
	}
	return "", fmt.Errorf("%s --out %s: want a file ending in %s", cmd, out, strings.Join(exts, " or "))
}

// maxFrames bounds an animated diagram: a frame per tick.
const maxFrames = 120

func cmdDiagram(s *Session, args []string) (*Result, error) {
	var pos []string
	var fl map[string]string
	args, err := joinQuoted("diagram", args)
	if err != nil {
		return nil, err
	}
	pos, fl, err = flags("diagram", args, append([]string{"--partitions"}, pictureFlags...), nil)
	if err != nil {
		return nil, err
	}
	if err := needArgs("diagram", pos, 0, 0); err != nil {
		return nil, err
	}
	po, err := pictureOptions("diagram", fl)
	if err != nil {
		return nil, err
	}
	if _, err := pictureFormat("diagram", po.out); err != nil {
		return nil, err
	}
	w := s.World()
	logs, note, err := diagramLogs(w, fl)
	if err != nil {
		return nil, err
	}
	wo := draw.WorldOptions{Branch: s.cur.name, Title: po.title, Logs: logs, LogsNote: note, LogRows: draw.LogRowsBudget}
	from, to := w.Tick, w.Tick
	if po.ticks {
		from, to = po.from, po.to
		if to < 0 {
			to = w.Tick
		}
		if to > w.Tick {
			return nil, fmt.Errorf("diagram --ticks %s: the branch is at tick %d (step or run to reach tick %d)", fl["--ticks"], w.Tick, to)
		}
		if n := to - from + 1; n > maxFrames {
			return nil, fmt.Errorf("diagram --ticks %s: %d ticks, and an animation holds at most %d (a frame per tick)", fl["--ticks"], n, maxFrames)
		}
	}
	// An animation's frames share limitAnimationCells: its logs share
	// fewer rows (at least one each), so that a long log draws its last
	// cells in each frame rather than refusing the animation.
	frameN := to - from + 1
	if frameN > 1 {
		wo.LogRows = max(1, min(wo.LogRows, limitAnimationCells.max/(frameN*draw.MaxCellsPerRow)))
	}
	// Each log draws its last cells (draw.DrawnCells counts them at most,
	// now and at any earlier tick, so in every frame): a world of any size
	// draws a bounded picture, and the limits guard the bound.
	cells := draw.DrawnCells(w, logs, wo.LogRows)
	if err := limitDiagramCells.checkf("diagram", cells, fmt.Sprintf("%d cells drawn of %d logs", cells, len(logs))); err != nil {
		return nil, err
	}
	if !po.ticks {
		p := draw.World(w, wo)
		return s.pictureResult("diagram", po.out, "diagram", diagramRendering(p, po.width, po.height), withCut(fmt.Sprintf("tick %d", w.Tick), p.Cut))
	}
	if frameN > 1 {
		if err := limitAnimationCells.checkProduct("diagram --ticks "+fl["--ticks"],
			fmt.Sprintf("%d frames x %d cells drawn of %d logs, a row each (fewer ticks, or --partitions picks fewer logs)", frameN, cells, len(logs)), frameN, cells); err != nil {
			return nil, err
		}
	}
	frames, err := s.worldFrames(from, to, wo)
	if err != nil {
		return nil, fmt.Errorf("diagram: %w", err)
	}
	if from == to {
		return s.pictureResult("diagram", po.out, "diagram", diagramRendering(frames[0], po.width, po.height), withCut(fmt.Sprintf("tick %d", from), frames[0].Cut))
	}
	title := po.title
	if title == "" {
		title = fmt.Sprintf("group %s · ticks %d to %d", w.Group.ID(), from, to)
		if s.cur.name != "main" {
			title = "branch " + s.cur.name + " · " + title
		}
	}
	picNote := fmt.Sprintf("ticks %d..%d, %d frames", from, to, len(frames))
	switch strings.ToLower(filepath.Ext(po.out)) {
	case ".png":
		picNote += "; the PNG is the last frame"
	case ".pdf":
		picNote += ", a page each"
	}
	return s.pictureResult("diagram", po.out, "diagram", animationRendering(draw.Animate(frames, title), po.width, po.height), withCut(picNote, frames[len(frames)-1].Cut))
}

// diagramLogs is the logs a diagram draws, in order, and the line that
// says which when they are not all: --partitions' list (at most
// draw.MaxLogs), else every log of a world of at most draw.MaxLogs
// partitions, else draw.DiagramLogs' pick (the first input partitions and
// the first output ones).
func diagramLogs(w *sim.World, fl map[string]string) ([]sim.TopicPartition, string, error) {
	l := w.Layout()
	all := len(l.Inputs()) + len(l.Outputs())
	v, picked := fl["--partitions"]
	if !picked {
		logs := draw.DiagramLogs(w)
		return logs, draw.LogsNote(len(logs), all, partRuns(w, logs)), nil
	}
	nums, err := parsePartitionList(w, "diagram", v, true)
	if err != nil {
		return nil, "", err
	}
	if len(nums) > draw.MaxLogs {
		return nil, "", usageErr("diagram", "--partitions %q names %s partitions, and a diagram draws at most %d logs (name fewer, e.g. %s)",
			shortWord(v), group(len(nums)), draw.MaxLogs, diagramPartitionsExample(w))
	}
	logs := make([]sim.TopicPartition, len(nums))
	for i, n := range nums {
		logs[i], _, _ = l.Numbered(uint64(n))
	}
	return logs, draw.LogsNote(len(logs), all, partRuns(w, logs)), nil
}

// worldFrames replays the branch and draws the world at each tick from
// from to to (the last drawing of a tick wins: commands between ticks change
// what the tick ends with).
func (s *Session) worldFrames(from, to int, opt draw.WorldOptions) ([]*draw.Picture, error) {
	frames := make([]*draw.Picture, to-from+1)
	visit := func(w *sim.World) {
		if w.Tick >= from && w.Tick <= to {
			frames[w.Tick-from] = draw.World(w, opt)
		}
	}
	// From the checkpoint nearest before the first frame, not from the
	// start: twice (below) over a long run was minutes for a big world.
	if err := s.replayTicks(from, to, visit); err != nil {
		return nil, err
	}
	visit(s.World())
	for i, f := range frames {
		if f == nil && i > 0 {
			frames[i] = frames[i-1] // not stepped through (a branch made by new at a later tick)
		}
	}
	if frames[0] == nil {
		return nil, fmt.Errorf("the branch has no tick %d", from)
	}
	// Draw them again, each part with the room it takes in any frame, so
	// that what does not change stays in place (and is drawn once).
	if len(frames) > 1 && opt.Shared == nil {
		shared := &draw.Layout{}
		for _, f := range frames {
			shared.Add(f.Layout())
		}
		opt.Shared = shared
		return s.worldFrames(from, to, opt)
	}
	return frames, nil
}

// withCut adds to a picture's note the line that says what it leaves out.
func withCut(note, cut string) string {
	if cut == "" {
		return note
	}
	return note + "; " + cut
}

// parseTicks reads A..B, A.., ..B or N; to is -1 when open.
func parseTicks(cmd, v string) (from, to int, err error) {
	bad := fmt.Errorf("%s --ticks %q: want A..B, A.. or ..B in whole ticks (e.g. 0..14), or one tick N", cmd, v)
	a, b, ranged := strings.Cut(v, "..")
	if !ranged {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, bad
		}
		return n, n, nil
	}
	from, to = 0, -1
	if a != "" {
		if from, err = strconv.Atoi(a); err != nil || from < 0 {
			return 0, 0, bad
		}
	}
	if b != "" {
		if to, err = strconv.Atoi(b); err != nil || to < 0 {
			return 0, 0, bad
		}
		if to < from {
			return 0, 0, fmt.Errorf("%s --ticks %s: the range ends (%d) before it starts (%d)", cmd, v, to, from)
		}
	}
	return from, to, nil
}

func cmdSequence(s *Session, args []string) (*Result, error) {
	var pos []string
	var fl map[string]string
	args, err := joinQuoted("sequence", args)
	if err != nil {
		return nil, err
	}
	pos, fl, err = flags("sequence", args, append([]string{"--type", "--member"}, pictureFlags...), []string{"--mermaid"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("sequence", pos, 0, 0); err != nil {
		return nil, err
	}
	po, err := pictureOptions("sequence", fl)
	if err != nil {
		return nil, err
	}
	w := s.World()
	opt := draw.SeqOptions{From: po.from, To: po.to, Branch: s.cur.name, Title: po.title}
	// A world that keeps a window of its past (history.ms) draws the
	// window, or with --ticks from before it, the stretch made again by
	// replaying (detailWorld).
	detail := ""
	if po.ticks {
		if w, detail, err = s.detailWorld("sequence --ticks", po.from); err != nil {
			return nil, err
		}
	}
	opt.From = max(opt.From, w.DetailFrom())
	if v, ok := fl["--type"]; ok {
		var names []string
		for _, a := range sim.APIs {
			names = append(names, string(a))
		}
		for _, t := range strings.Split(v, ",") {
			found := false
			for _, a := range sim.APIs {
				if strings.EqualFold(string(a), t) {
					opt.Types, found = append(opt.Types, a), true
				}
			}
			if !found {
				return nil, fmt.Errorf("sequence --type: no message type %q (types: %s)", t, strings.Join(names, " "))
			}
		}
	}
	if v, ok := fl["--member"]; ok {
		if w.Member(v) == nil {
			return nil, fmt.Errorf("sequence --member: no member %s (members: %s)", v, strings.Join(natural.Sorted(w.Clients()), " "))
		}
		opt.Member = v
	}
	// A range of any size draws its first rows (draw.MaxSeqRows) on at
	// most draw.MaxSeqLanes lanes; the picture says what it leaves out.
	n := draw.CountMessages(w, opt)
	note := fmt.Sprintf("%s message(s)", group(n))
	if detail != "" {
		note += " " + detail
	}
	if fl["--mermaid"] == "true" {
		// Mermaid is text: printed, and written only where --out says.
		if _, ok := fl["--width"]; ok {
			return nil, fmt.Errorf("sequence --mermaid --width: Mermaid text has no size (the viewer lays it out)")
		}
		if _, ok := fl["--height"]; ok {
			return nil, fmt.Errorf("sequence --mermaid --height: Mermaid text has no size (the viewer lays it out)")
		}
		text := draw.Mermaid(w, opt)
		r := &Result{Text: strings.TrimRight(text, "\n"), HTML: `<pre class="kgrepl-mermaid">` + htmlEscape(text) + `</pre>`}
		if po.out != "" {
			file, err := outFile("sequence --mermaid", po.out, "", ".mmd", ".md", ".txt")
			if err != nil {
				return nil, err
			}
			path := s.path(file)
			if err := writeAtomic(path, []byte(text)); err != nil {
				return nil, fmt.Errorf("sequence: %v", err)
			}
			r.Text += fmt.Sprintf("\nsequence: wrote %s (%s)", path, note)
		}
		return r, nil
	}
	if _, err := pictureFormat("sequence", po.out); err != nil {
		if strings.HasSuffix(strings.ToLower(po.out), ".mmd") {
			return nil, fmt.Errorf("%v (Mermaid text needs --mermaid)", err)
		}
		return nil, err
	}
	p := draw.Sequence(w, opt)
	if p.Cut != "" {
		note = p.Cut // it counts the messages too
	}
	return s.pictureResult("sequence", po.out, "sequence", diagramRendering(p, po.width, po.height), note)
}
