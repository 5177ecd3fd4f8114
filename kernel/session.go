// Package kernel is the session layer both front ends use: it parses the
// command language, runs commands against a sim.World, keeps the history
// that time travel and branches replay, and returns results as text, JSON,
// HTML or SVG.
package kernel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim"
)

// Result is what a command returns. Text is always set; the other fields
// carry the same content for front ends that can show more.
type Result struct {
	Text  string
	JSON  string // one line, for --json
	Table *Table
	SVG   string
	PNG   []byte
	// HTML is a rich rendering for notebooks (a table or a picture).
	HTML string
}

// entry is one input of a branch's history: a mutating command line, or a
// number of ticks stepped.
type entry struct {
	line  string
	ticks int
}

// branch is one line of history: the world, and how to make it again.
type branch struct {
	name    string
	newLine string     // the `new` command that made the world ("" = default world)
	cfg     sim.Config // the settings at that `new`
	log     []entry
	// typed is the branch's history as the user typed it (step and run
	// included, views left out): what compare reruns under other settings,
	// where `run until stable` must mean the same intent, not the same ticks.
	// back cuts history in the middle of a command, so it rewrites typed
	// from the tick log.
	typed []string
	world *sim.World
}

// Session is one kgrepl session: its branches and the one in use.
type Session struct {
	branches  map[string]*branch
	cur       *branch
	interrupt atomic.Bool
	done      bool
	// out collects the narration of the command running now.
	out strings.Builder
	// replaying is set while history is replayed: nothing is recorded or printed.
	replaying bool
	tickErr   error
	// Dir is the folder relative file names (save, load, --out) are taken from; "" = the process's.
	Dir string
	// PictureDir is where a picture command without --out writes; "" (scripts,
	// notebooks, tests) draws the picture without writing it. The REPL sets it
	// and names it at start.
	PictureDir string
	// AfterTick, when set, runs after every tick the session steps (tests
	// check invariants here); an error stops the command and is returned.
	AfterTick func(*sim.World) error
}

// NewSession starts a session on the default world.
func NewSession() *Session {
	s := &Session{branches: map[string]*branch{}}
	cfg := sim.DefaultConfig()
	w, _ := sim.New(sim.DefaultTopology(), cfg)
	b := &branch{name: "main", cfg: cfg, world: w}
	s.branches["main"] = b
	s.cur = b
	return s
}

// World is the current branch's world (read it; change it only through Exec).
func (s *Session) World() *sim.World { return s.cur.world }

// Branch names the branch in use.
func (s *Session) Branch() string { return s.cur.name }

// Prompt shows the group, the tick and the coordinator state.
func (s *Session) Prompt() string {
	w := s.cur.world
	p := fmt.Sprintf("%s t=%d %s", w.Group.ID, w.Tick, w.Group.State)
	if s.cur.name != "main" {
		p = s.cur.name + " " + p
	}
	return p + "> "
}

// Interrupt asks a running command to stop at the next tick.
func (s *Session) Interrupt() { s.interrupt.Store(true) }

// Done reports that `exit` was run.
func (s *Session) Done() bool { return s.done }

// Exec runs one line: commands separated by ';', '#' starting a comment. It
// returns the text of every command that ran; the error is the first
// failure, after which the rest of the line does not run.
func (s *Session) Exec(line string) (string, error) {
	results, err := s.ExecResults(line)
	var b strings.Builder
	for _, r := range results {
		if r.Text != "" {
			b.WriteString(r.Text)
			if !strings.HasSuffix(r.Text, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return strings.TrimRight(b.String(), "\n"), err
}

// ExecResults is Exec keeping each command's full result.
func (s *Session) ExecResults(line string) ([]*Result, error) {
	s.interrupt.Store(false)
	var out []*Result
	for _, cmd := range splitCommands(line) {
		r, err := s.run(cmd)
		if r != nil {
			out = append(out, r)
		}
		if err != nil {
			return out, err
		}
		if s.done {
			break
		}
	}
	return out, nil
}

// splitCommands cuts a line at ';' and drops a '#' comment.
func splitCommands(line string) [][]string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	var out [][]string
	for _, part := range strings.Split(line, ";") {
		if f := strings.Fields(part); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func (s *Session) run(words []string) (res *Result, err error) {
	defer func() {
		// No input may crash the session: a panic is a bug, reported as an error.
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%s: internal error: %v (please report this with the script that caused it)", words[0], p)
		}
	}()
	c := lookup(words[0])
	if c == nil {
		return nil, fmt.Errorf("%s: unknown command (commands: %s; help CMD explains one)", words[0], strings.Join(commandNames(), " "))
	}
	s.out.Reset()
	s.tickErr = nil
	r, err := c.run(s, words[1:])
	if err == nil && s.tickErr != nil {
		err = fmt.Errorf("%s: %v", words[0], s.tickErr)
	}
	if err != nil {
		return nil, err
	}
	if c.mutates && !s.replaying {
		s.cur.log = append(s.cur.log, entry{line: strings.Join(words, " ")})
	}
	if (c.mutates || c.name == "step" || c.name == "run") && !s.replaying {
		s.cur.typed = append(s.cur.typed, strings.Join(words, " "))
	}
	if r == nil {
		r = &Result{}
	}
	if s.out.Len() > 0 {
		r.Text = s.out.String() + r.Text
	}
	return r, nil
}

func (s *Session) say(format string, args ...any) {
	if !s.replaying {
		fmt.Fprintf(&s.out, format+"\n", args...)
	}
}

// step advances n ticks, narrating; it stops early at a stop event or an
// interrupt and reports how many ticks ran.
func (s *Session) step(n int, until func(*sim.World) bool) (int, string) {
	w := s.cur.world
	ran := 0
	why := ""
	for ran < n {
		if until != nil && until(w) {
			break
		}
		if s.interrupt.Load() {
			why = "interrupted"
			break
		}
		from := len(w.Events)
		stop := w.Step()
		ran++
		s.recordTicks(1)
		s.narrate(w.Events[from:])
		if s.AfterTick != nil {
			if err := s.AfterTick(w); err != nil {
				s.tickErr = err
				why = "check failed"
				break
			}
		}
		if stop {
			for _, e := range w.Events[from:] {
				if e.Stop {
					why = "stop event: " + e.Text
				}
			}
			break
		}
	}
	return ran, why
}

func (s *Session) recordTicks(n int) {
	if s.replaying {
		return
	}
	l := &s.cur.log
	if k := len(*l); k > 0 && (*l)[k-1].ticks > 0 {
		(*l)[k-1].ticks += n
		return
	}
	*l = append(*l, entry{ticks: n})
}

// narrate prints the events of a tick, one line each.
func (s *Session) narrate(evs []sim.Event) {
	for _, e := range evs {
		if e.Kind == sim.EvProduced {
			continue // the log and consume views show writes
		}
		s.say("t=%-4d %s", e.Tick, e.Text)
	}
}

// rebuild makes the branch's world again from its history, up to tick
// limit (-1 = all of it), and cuts the history there. Determinism makes the
// replayed world the same, byte for byte, as the one first run.
func (s *Session) rebuild(b *branch, limit int) error {
	w, err := makeWorld(b.newLine, b.cfg)
	if err != nil {
		return err
	}
	saved := s.cur
	tmp := &branch{name: b.name, newLine: b.newLine, cfg: b.cfg, world: w}
	s.cur = tmp
	s.replaying = true
	defer func() { s.cur = saved; s.replaying = false }()
	var kept []entry
	for _, e := range b.log {
		if e.ticks > 0 {
			n := e.ticks
			if limit >= 0 && w.Tick+n > limit {
				n = limit - w.Tick
			}
			for i := 0; i < n; i++ {
				w.Step()
			}
			if n > 0 {
				kept = append(kept, entry{ticks: n})
			}
			if n < e.ticks {
				break
			}
			continue
		}
		if _, err := s.run(strings.Fields(e.line)); err != nil {
			return fmt.Errorf("replaying %q: %v", e.line, err)
		}
		kept = append(kept, e)
	}
	b.world, b.log = tmp.world, kept
	b.typed = nil
	for _, e := range kept {
		if e.ticks > 0 {
			b.typed = append(b.typed, "step "+strconv.Itoa(e.ticks))
		} else {
			b.typed = append(b.typed, e.line)
		}
	}
	return nil
}

// makeWorld runs a `new` line (or the default world for "").
func makeWorld(newLine string, cfg sim.Config) (*sim.World, error) {
	topo := sim.DefaultTopology()
	if newLine != "" {
		t, _, err := parseNew(strings.Fields(newLine)[1:])
		if err != nil {
			return nil, err
		}
		topo = t
	}
	return sim.New(topo, cfg)
}

func (s *Session) branchNames() []string {
	var names []string
	for n := range s.branches {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Replay makes the current branch's world again from its start, calling
// visit at tick 0 and after every tick, for views over time (charts). The
// branch itself is not touched; determinism makes the replayed worlds the
// ones the branch went through.
func (s *Session) Replay(visit func(w *sim.World)) error {
	b := s.cur
	w, err := makeWorld(b.newLine, b.cfg)
	if err != nil {
		return err
	}
	scratch := &Session{branches: map[string]*branch{}, replaying: true}
	scratch.cur = &branch{name: b.name, newLine: b.newLine, cfg: b.cfg, world: w}
	visit(w)
	for _, e := range b.log {
		if e.ticks > 0 {
			for i := 0; i < e.ticks; i++ {
				w.Step()
				visit(w)
			}
			continue
		}
		if _, err := scratch.run(strings.Fields(e.line)); err != nil {
			return fmt.Errorf("replaying %q: %v", e.line, err)
		}
	}
	return nil
}
