package kernel

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/sim"
)

// addPictureCommands registers plot, diagram and sequence in the command
// table, before demo, so help lists them with the views.
func addPictureCommands() {
	pics := []*command{
		{name: "plot", usage: "plot pause|duplicates|lag|timeline [--out FILE.svg|FILE.png] [--branches A,B]",
			summary: "chart the pause meter, duplicates and lost, lag, or who consumes which partition, over ticks",
			help: "pause       the pause meter (paused partitions × ticks) as a step line, each rebalance a band\n" +
				"            labelled with the generation it formed; --branches main,coop overlays branches\n" +
				"duplicates  duplicates and lost records as the audit reader sees invoices (both isolation\n" +
				"            levels when transactions are on); --branches overlays branches\n" +
				"lag         each input partition's lag (log end minus committed offset)\n" +
				"timeline    partitions × ticks: the consuming client's colour, grey while paused, a red-edged\n" +
				"            bar while a zombie processes a record, rebalances as bands\n\n" +
				"Without --out the picture goes to KIND.svg in the session's folder. Charts are replayed from\n" +
				"the branch's start, so they show every tick of its history.",
			run: cmdPlot, words: wordsPlot},
		{name: "diagram", usage: "diagram [--out FILE.svg]",
			summary: "draw the world now: members, packets in flight, B1 and every partition log",
			help: "Members with their state and partitions; B1 with the coordinator's state, generation and\n" +
				"members and the transaction coordinator; each log as cells (invoices in their producer's\n" +
				"colour, open transactions white, aborted red ✗, COMMIT/ABORT markers), the committed offset,\n" +
				"HW and LSO. Without --out it goes to diagram.svg in the session's folder.",
			run: cmdDiagram, words: func(*Session, []string) []string { return []string{"--out"} }},
		{name: "sequence", usage: "sequence [--mermaid] [--out FILE] [--ticks A..B] [--type T1,T2] [--member Cn]",
			summary: "draw the trace as a sequence diagram: a lane per participant, an arrow per message",
			help: "--ticks A..B keeps the messages sent from tick A to tick B (A.. and ..B leave an end open);\n" +
				"--type and --member filter as trace does. Notes between the arrows are the protocol's events.\n" +
				"--mermaid writes Mermaid sequenceDiagram text instead of SVG. Without --out it goes to\n" +
				"sequence.svg (sequence.mmd with --mermaid) in the session's folder.",
			run: cmdSequence, words: wordsSequence},
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

func wordsPlot(s *Session, a []string) []string {
	if len(a) == 0 {
		return chart.Kinds
	}
	if a[len(a)-1] == "--branches" {
		return s.branchNames()
	}
	return []string{"--out", "--branches"}
}

func wordsSequence(s *Session, a []string) []string {
	if len(a) > 0 {
		switch a[len(a)-1] {
		case "--type":
			var out []string
			for _, t := range sim.APIs {
				out = append(out, string(t))
			}
			return out
		case "--member":
			return s.World().Clients()
		}
	}
	return []string{"--mermaid", "--out", "--ticks", "--type", "--member"}
}

// pictureResult writes a picture to its file and returns it for every
// front end: the path for the terminal, the bytes and HTML for notebooks.
func (s *Session) pictureResult(cmd, file string, svg string, png []byte, text string, note string) (*Result, error) {
	path := s.path(file)
	data := []byte(svg)
	if png != nil {
		data = png
	}
	if text != "" {
		data = []byte(text)
	}
	if err := writeAtomic(path, data); err != nil {
		return nil, fmt.Errorf("%s --out %s: %v", cmd, file, err)
	}
	msg := fmt.Sprintf("%s: wrote %s", cmd, path)
	if note != "" {
		msg += " (" + note + ")"
	}
	r := &Result{Text: msg}
	switch {
	case text != "":
		r.Text += "\n" + strings.TrimRight(text, "\n")
		r.HTML = `<pre class="kgrepl-mermaid">` + htmlEscape(text) + `</pre>`
	case png != nil:
		r.PNG = png
		r.HTML = `<div class="kgrepl-picture"><img style="max-width:100%" alt="` + htmlEscape(cmd) + `" src="data:image/png;base64,` +
			base64.StdEncoding.EncodeToString(png) + `"/></div>`
	default:
		r.SVG = svg
		r.HTML = InlineSVG(svg)
	}
	return r, nil
}

// InlineSVG makes an SVG document fit for an HTML page: no XML
// declaration, and scaled down to the width of the page.
func InlineSVG(svg string) string {
	if i := strings.Index(svg, "<svg"); i > 0 {
		svg = svg[i:]
	}
	svg = strings.Replace(svg, "<svg ", `<svg style="max-width:100%;height:auto" `, 1)
	return `<div class="kgrepl-picture">` + svg + `</div>`
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

func cmdPlot(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("plot", args, []string{"--out", "--branches"}, nil)
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 {
		return nil, usageErr("plot", "which chart? (charts: %s)", strings.Join(chart.Kinds, " "))
	}
	if err := needArgs("plot", pos, 1, 1); err != nil {
		return nil, err
	}
	kind := pos[0]
	known := false
	for _, k := range chart.Kinds {
		known = known || k == kind
	}
	if !known {
		return nil, fmt.Errorf("plot %s: no chart %s (charts: %s)", kind, kind, strings.Join(chart.Kinds, " "))
	}
	file, err := outFile("plot", fl["--out"], kind+".svg", ".svg", ".png")
	if err != nil {
		return nil, err
	}
	names := []string{s.cur.name}
	if v, ok := fl["--branches"]; ok {
		names = nil
		for _, n := range strings.Split(v, ",") {
			if n == "" {
				continue
			}
			if _, ok := s.branches[n]; !ok {
				return nil, fmt.Errorf("plot --branches %s: no branch %s (branches: %s)", v, n, strings.Join(s.branchNames(), " "))
			}
			names = append(names, n)
		}
		if len(names) == 0 {
			return nil, usageErr("plot", "--branches %q names no branch (branches: %s)", v, strings.Join(s.branchNames(), " "))
		}
		if len(names) > 1 && (kind == "lag" || kind == "timeline") {
			return nil, fmt.Errorf("plot %s --branches %s: a %s chart shows one branch (overlays: pause duplicates)", kind, v, kind)
		}
	}
	var runs []*chart.Run
	for _, n := range names {
		r, err := s.recordBranch(n, chart.NeedOf(kind))
		if err != nil {
			return nil, fmt.Errorf("plot: %v", err)
		}
		runs = append(runs, r)
	}
	c, err := chart.Build(kind, runs...)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %v", kind, err)
	}
	if strings.ToLower(filepath.Ext(file)) == ".png" {
		png, err := c.PNG()
		if err != nil {
			return nil, fmt.Errorf("plot %s: %v", kind, err)
		}
		return s.pictureResult("plot "+kind, file, "", png, "", "")
	}
	svg, err := c.SVG()
	if err != nil {
		return nil, fmt.Errorf("plot %s: %v", kind, err)
	}
	return s.pictureResult("plot "+kind, file, string(svg), nil, "", "")
}

// recordBranch replays a branch from its start and samples what a chart needs.
func (s *Session) recordBranch(name string, need chart.Need) (*chart.Run, error) {
	b := s.branches[name]
	saved := s.cur
	s.cur = b
	defer func() { s.cur = saved }()
	rec := chart.NewRecorder(name, need)
	if err := s.Replay(rec.Visit); err != nil {
		return nil, fmt.Errorf("replaying branch %s: %v", name, err)
	}
	return rec.Finish(b.world), nil
}

func cmdDiagram(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("diagram", args, []string{"--out"}, nil)
	if err != nil {
		return nil, err
	}
	if err := needArgs("diagram", pos, 0, 0); err != nil {
		return nil, err
	}
	file, err := outFile("diagram", fl["--out"], "diagram.svg", ".svg")
	if err != nil {
		return nil, err
	}
	svg := draw.World(s.World(), draw.WorldOptions{Branch: s.cur.name})
	return s.pictureResult("diagram", file, svg, nil, "", fmt.Sprintf("tick %d", s.World().Tick))
}

// parseTicks reads A..B, A.., ..B or N; to is -1 when open.
func parseTicks(v string) (from, to int, err error) {
	bad := fmt.Errorf("sequence --ticks %q: want A..B, A.. or ..B in whole ticks (e.g. 0..14), or one tick N", v)
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
			return 0, 0, fmt.Errorf("sequence --ticks %s: the range ends (%d) before it starts (%d)", v, to, from)
		}
	}
	return from, to, nil
}

func cmdSequence(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("sequence", args, []string{"--out", "--ticks", "--type", "--member"}, []string{"--mermaid"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("sequence", pos, 0, 0); err != nil {
		return nil, err
	}
	w := s.World()
	opt := draw.SeqOptions{To: -1, Branch: s.cur.name}
	if v, ok := fl["--ticks"]; ok {
		if opt.From, opt.To, err = parseTicks(v); err != nil {
			return nil, err
		}
	}
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
			return nil, fmt.Errorf("sequence --member: no member %s (members: %s)", v, strings.Join(w.Clients(), " "))
		}
		opt.Member = v
	}
	n := len(draw.Messages(w, opt))
	note := fmt.Sprintf("%d message(s)", n)
	if fl["--mermaid"] == "true" {
		file, err := outFile("sequence --mermaid", fl["--out"], "sequence.mmd", ".mmd", ".md", ".txt")
		if err != nil {
			return nil, err
		}
		return s.pictureResult("sequence", file, "", nil, draw.Mermaid(w, opt), note)
	}
	file, err := outFile("sequence", fl["--out"], "sequence.svg", ".svg")
	if err != nil {
		if strings.HasSuffix(strings.ToLower(fl["--out"]), ".mmd") {
			return nil, fmt.Errorf("%v (Mermaid text needs --mermaid)", err)
		}
		return nil, err
	}
	return s.pictureResult("sequence", file, draw.Sequence(w, opt), nil, "", note)
}
