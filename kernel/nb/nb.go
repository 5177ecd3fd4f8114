// Package nb runs kgrepl in a GoNB notebook. A GoNB cell is a program of
// its own: declarations carry over from cell to cell, values do not. So a
// Session keeps its history (the command lines it ran) in GoNB's
// per-kernel folder, and Resume plays it again at the start of each cell:
// the world is deterministic, so every cell sees the world the cell before
// left, and a new kernel starts from the default world.
//
//	var s = nb.Resume()             // in the cell that imports nb
//
//	%%
//	s.Run("join C2; run until stable") // the narration and views, inline
//	s.Diagram()                        // the world now, drawn as SVG
//	s.Plot("pause")                    // a chart over ticks
//
// Outside a notebook (go test, a terminal) every method prints text to Out
// instead of displaying HTML.
package nb

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/kgrepl/kgrepl/kernel"
)

// Session is a kgrepl session shown in a notebook.
type Session struct {
	k       *kernel.Session
	history []string // command lines that change the session, in order
	// Out is where text goes outside a notebook (os.Stdout by default).
	Out io.Writer
	// Delay is the pause between the frames of Step's animation in a
	// notebook (KGREPL_NB_DELAY, in milliseconds, sets the default; 0 for CI).
	Delay time.Duration
	// err is the first error of the last call, for callers that check.
	err error
}

// StateDir is where a session keeps its history between cells: GoNB's
// folder for the kernel, so a restarted kernel starts afresh. Empty (as
// outside a notebook) keeps nothing.
var StateDir = os.Getenv("GONB_TMP_DIR")

// displays says whether to send HTML to the notebook; tests outside a
// notebook print text instead.
var displays = gonbui.IsNotebook

func stateFile() string {
	if StateDir == "" {
		return ""
	}
	return filepath.Join(StateDir, "kgrepl-notebook.history")
}

func newSession() *Session {
	s := &Session{k: kernel.NewSession(), Out: os.Stdout, Delay: 250 * time.Millisecond}
	if v, err := strconv.Atoi(os.Getenv("KGREPL_NB_DELAY")); err == nil && v >= 0 {
		s.Delay = time.Duration(v) * time.Millisecond
	}
	dir := StateDir
	if dir == "" {
		dir = os.TempDir()
	}
	// A notebook prints what a demo prints: per-record lines summarised (--verbose shows them).
	s.k.Quiet = true
	// Pictures written with --out go here, not into the notebook's folder;
	// without --out a picture is shown in the page and not written (no
	// picture folder), so Step's frames leave no files behind.
	s.k.Dir = filepath.Join(dir, "kgrepl-pictures")
	_ = os.MkdirAll(s.k.Dir, 0o755)
	return s
}

// New starts a fresh session on the default world and makes it the one
// later cells resume.
func New() *Session {
	s := newSession()
	s.save()
	return s
}

// Resume is the session as the last cell left it, or a fresh one when no
// cell has run one yet in this kernel.
func Resume() *Session {
	s := newSession()
	f := stateFile()
	if f == "" {
		return s
	}
	file, err := os.Open(f)
	if err != nil {
		return s
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		// Errors happened the first time too, and were shown then.
		_, _ = s.k.ExecResults(line)
		s.history = append(s.history, line)
	}
	return s
}

// Kernel is the kgrepl session underneath, for Go code of your own.
func (s *Session) Kernel() *kernel.Session { return s.k }

// Err is the first error of the last call, nil when it went well.
func (s *Session) Err() error { return s.err }

// viewOnly lists commands that change nothing, so they need not be
// replayed in the next cell.
var viewOnly = map[string]bool{
	"describe": true, "offsets": true, "log": true, "txn": true, "consume": true, "trace": true,
	"metrics": true, "members": true, "show": true, "branches": true, "help": true, "plot": true,
	"diagram": true, "sequence": true, "save": true,
}

// record keeps a line in the history if any command in it changes the session.
func (s *Session) record(line string) {
	changes := false
	for _, part := range strings.Split(strings.SplitN(line, "#", 2)[0], ";") {
		f := strings.Fields(part)
		if len(f) > 0 && !viewOnly[f[0]] {
			changes = true
		}
	}
	if !changes {
		return
	}
	s.history = append(s.history, line)
	s.save()
}

func (s *Session) save() {
	f := stateFile()
	if f == "" {
		return
	}
	data := strings.Join(s.history, "\n")
	if data != "" {
		data += "\n"
	}
	_ = os.WriteFile(f, []byte(data), 0o644)
}

// exec runs one line of commands, records it, and returns each result.
func (s *Session) exec(line string) ([]*kernel.Result, error) {
	rs, err := s.k.ExecResults(line)
	s.record(line)
	return rs, err
}

// Reset goes back to the default world with one branch, main, as at start-up.
func (s *Session) Reset() {
	s.fresh()
	s.show(statusHTML(s.k), statusText(s.k)+"\n")
}

// fresh replaces the session with a new one, keeping where its output goes.
func (s *Session) fresh() {
	out, delay := s.Out, s.Delay
	*s = *New()
	s.Out, s.Delay = out, delay
}

// Run runs commands (';' separates them) and shows each one as the REPL
// would: the prompt and the command, then its narration and its result,
// tables as HTML tables and pictures inline.
func (s *Session) Run(cmds string) error {
	var b, t strings.Builder
	s.err = nil
	for _, line := range strings.Split(cmds, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		for _, cmd := range splitLine(line) {
			prompt := s.k.Prompt()
			rs, err := s.exec(cmd)
			b.WriteString(`<div class="kgrepl-cmd"><code>` + html.EscapeString(prompt+cmd) + "</code></div>")
			t.WriteString(prompt + cmd + "\n")
			if s.render(&b, &t, rs, err) != nil {
				s.show(b.String(), t.String())
				return err
			}
		}
	}
	s.show(b.String(), t.String())
	return nil
}

// Quiet runs commands and shows only where they left the group (or the error).
func (s *Session) Quiet(cmds string) error {
	s.err = nil
	for _, line := range strings.Split(cmds, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if _, err := s.exec(line); err != nil {
			s.err = err
			s.show(errorHTML(err), "error: "+err.Error()+"\n")
			return err
		}
	}
	s.show(statusHTML(s.k), statusText(s.k)+"\n")
	return nil
}

// Show runs a view (describe group, log o2, consume invoices, metrics ...)
// and shows its result alone: a table, a picture or text.
func (s *Session) Show(view string) error {
	s.err = nil
	rs, err := s.exec(view)
	var b, t strings.Builder
	s.render(&b, &t, rs, err)
	s.show(b.String(), t.String())
	return err
}

// render writes results as HTML and as text, then the error if there is
// one (remembered as the session's), and returns that error.
func (s *Session) render(b, t *strings.Builder, rs []*kernel.Result, err error) error {
	for _, r := range rs {
		b.WriteString(resultHTML(r))
		t.WriteString(resultText(r))
	}
	if err != nil {
		s.err = err
		b.WriteString(errorHTML(err))
		t.WriteString("error: " + err.Error() + "\n")
	}
	return err
}

// Text runs commands and returns their text, showing nothing (for Go code
// that reads the output, e.g. `metrics --json`).
func (s *Session) Text(cmds string) (string, error) {
	rs, err := s.exec(cmds)
	var t strings.Builder
	for _, r := range rs {
		t.WriteString(resultText(r))
	}
	return strings.TrimRight(t.String(), "\n"), err
}

// Diagram shows the world now (the `diagram` command).
func (s *Session) Diagram() error { return s.picture("diagram") }

// Plot shows a chart: "pause", "duplicates", "lag", "timeline" or
// "unavailable", with
// the plot command's options after it, e.g. Plot("pause", "--branches main,coop").
func (s *Session) Plot(kind string, options ...string) error {
	return s.picture(strings.TrimSpace("plot " + kind + " " + strings.Join(options, " ")))
}

// Sequence shows the trace as a sequence diagram, with the sequence
// command's options, e.g. Sequence("--ticks 0..14").
func (s *Session) Sequence(options ...string) error {
	return s.picture(strings.TrimSpace("sequence " + strings.Join(options, " ")))
}

func (s *Session) picture(cmd string) error {
	s.err = nil
	rs, err := s.exec(cmd)
	if err != nil {
		s.err = err
		s.show(errorHTML(err), "error: "+err.Error()+"\n")
		return err
	}
	var b, t strings.Builder
	for _, r := range rs {
		b.WriteString(resultHTML(r))
		t.WriteString(resultText(r))
	}
	s.show(b.String(), t.String())
	return nil
}

// Demo runs demo n (1 to 12) from a fresh session, showing its title and
// where it ended; the full transcript is folded away under the title.
func (s *Session) Demo(n int) error {
	s.fresh()
	s.err = nil
	rs, err := s.exec("demo " + strconv.Itoa(n))
	var transcript string
	for _, r := range rs {
		transcript += r.Text
	}
	if err != nil {
		s.err = err
		s.show(errorHTML(err), transcript+"error: "+err.Error()+"\n")
		return err
	}
	title, rest, _ := strings.Cut(transcript, "\n")
	h := `<details class="kgrepl-demo"><summary><b>` + html.EscapeString(title) + "</b> — " + html.EscapeString(statusText(s.k)) +
		" (click for the transcript)</summary><pre>" + html.EscapeString(rest) + "</pre></details>"
	s.show(h, transcript)
	return nil
}

// Step advances n ticks one at a time, redrawing one diagram in place after
// each tick (an animation in the notebook), and leaves the last frame shown.
// It stops early at a stop event, as `step` does.
func (s *Session) Step(n int) error {
	s.err = nil
	id := "kgrepl-step-" + gonbui.UniqueId()
	var frame string
	var text strings.Builder
	for i := 0; i < n; i++ {
		rs, err := s.exec("step")
		var narr string
		for _, r := range rs {
			narr += r.Text
		}
		text.WriteString(narr)
		if err != nil {
			s.err = err
			s.show(errorHTML(err), text.String()+"error: "+err.Error()+"\n")
			return err
		}
		frame, err = s.frame(narr)
		if err != nil {
			s.err = err
			return err
		}
		if displays {
			gonbui.UpdateHTML(id, frame)
			if s.Delay > 0 && i+1 < n {
				time.Sleep(s.Delay)
			}
		}
		if strings.Contains(narr, "stopped after") {
			break
		}
	}
	if displays {
		// The transient frame goes, and the last one stays in the notebook.
		gonbui.UpdateHTML(id, "")
		gonbui.DisplayHTML(frame)
		gonbui.Sync()
		return nil
	}
	fmt.Fprint(s.Out, text.String())
	return nil
}

// frame is one picture of Step's animation: the diagram and what the tick did.
func (s *Session) frame(narration string) (string, error) {
	rs, err := s.k.ExecResults("diagram")
	if err != nil || len(rs) == 0 {
		return "", err
	}
	return rs[0].HTML + `<pre class="kgrepl-narration">` + html.EscapeString(strings.TrimRight(narration, "\n")) + "</pre>", nil
}

// show displays HTML in a notebook (and waits until it reached it), or
// prints the text elsewhere.
func (s *Session) show(h, text string) {
	if displays {
		gonbui.DisplayHTML(h)
		gonbui.Sync()
		return
	}
	fmt.Fprint(s.Out, text)
}

func splitLine(line string) []string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	var out []string
	for _, p := range strings.Split(line, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// logLines is how many lines of a long text a cell shows before the rest
// is folded under "N more lines": no fixed-height box that cuts a log off.
const logLines = 40

// preHTML shows text as it is printed, the lines past logLines folded away
// behind a visible count.
func preHTML(t string) string {
	t = strings.Trim(t, "\n")
	if t == "" {
		return ""
	}
	lines := strings.Split(t, "\n")
	if len(lines) <= logLines+5 {
		return `<pre class="kgrepl-text">` + html.EscapeString(t) + "</pre>"
	}
	head := strings.Join(lines[:logLines], "\n")
	rest := strings.Join(lines[logLines:], "\n")
	return `<pre class="kgrepl-text">` + html.EscapeString(head) + "</pre>" +
		`<details class="kgrepl-more"><summary>` + strconv.Itoa(len(lines)-logLines) + ` more lines</summary><pre class="kgrepl-text">` +
		html.EscapeString(rest) + "</pre></details>"
}

// tableHTML shows a table view, the rows past logLines folded away behind
// a visible count, as preHTML folds a long text.
func tableHTML(r *kernel.Result) string {
	t := r.Table
	if len(t.Rows) <= logLines+5 || r.HTML != t.HTML() {
		return r.HTML
	}
	head := &kernel.Table{Header: t.Header, Rows: t.Rows[:logLines]}
	rest := &kernel.Table{Header: t.Header, Rows: t.Rows[logLines:]}
	return head.HTML() + `<details class="kgrepl-more"><summary>` + strconv.Itoa(len(rest.Rows)) + ` more rows</summary>` + rest.HTML() + "</details>"
}

func resultHTML(r *kernel.Result) string {
	switch {
	case r.HTML != "" && r.Table != nil:
		// A table view: the lines around the table as text, the table as HTML.
		if i := strings.Index(r.Text, r.Table.Text()); i >= 0 {
			return preHTML(r.Text[:i]) + tableHTML(r) + preHTML(r.Text[i+len(r.Table.Text()):])
		}
		return preHTML(r.Text) // the text says more than the table
	case r.HTML != "":
		return r.HTML
	}
	return preHTML(r.Text)
}

func resultText(r *kernel.Result) string {
	if r.Text == "" {
		return ""
	}
	return strings.TrimRight(r.Text, "\n") + "\n"
}

// errorHTML marks an error; scripts/notebooks.sh fails a notebook that shows one.
func errorHTML(err error) string {
	return `<pre class="kgrepl-error" style="color:#c01c28">error: ` + html.EscapeString(err.Error()) + "</pre>"
}

func statusText(k *kernel.Session) string {
	w := k.World()
	t := fmt.Sprintf("tick %d: group %s, %s", w.Tick, w.Group.State(), kernel.EpochText(w.Group))
	if k.Branch() != "main" {
		t = "branch " + k.Branch() + ", " + t
	}
	return t
}

func statusHTML(k *kernel.Session) string {
	return `<div class="kgrepl-status"><code>` + html.EscapeString(statusText(k)) + "</code></div>"
}
