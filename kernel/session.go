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
	"unicode"
	"unicode/utf8"

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
	// Pages, when set, is Text cut where a front end should pause and wait
	// for the reader (`demo N --step`: before each narration line).
	Pages []string
	// stops[i], when set, puts the session where the command was at the
	// end of Pages[i], for a reader who stops there (StopAtPage).
	stops []func(*Session)
}

// input is one world input of a branch's history, stamped with the tick
// it applied at: a command that changes the world (set, join, crash, ...),
// or a step, recorded as the ticks it really advanced.
type input struct {
	at   int
	line string // the command, words joined by one space; "" for a step
	// A step: the ticks it advanced, and the command as typed (`run until
	// stable`), which compare reruns where intent matters. A step never
	// spans a stop event (a step or run halts there), so replaying it as
	// `step N` halts where it did.
	step  bool
	ticks int
	typed string
	// file is what the command read from a file (set --from), kept with
	// it so that every replay (back, fork, compare, load) reads this, not
	// the file, which may have changed or gone.
	file *fileRead
}

// origin is what a branch's world started from: the topology of its `new`
// and the settings then, deep-copied, never changed afterwards and shared
// by every branch forked from it.
type origin struct {
	newLine string // "new" and its topology options, as save writes it
	topo    sim.Topology
	cfg     sim.Config
	// An imported group (new --from-describe): the file as new read it,
	// the members and partitions the world starts with, and the names
	// the file gives the members. nil for a world new made itself.
	file  *fileRead
	start []sim.StartMember
	names *importedNames
}

// world makes the origin's world at tick 0.
func (o *origin) world() (*sim.World, error) {
	if o.start != nil {
		return sim.NewStarted(o.topo, o.cfg, o.start)
	}
	return sim.New(o.topo, o.cfg)
}

// checkpoint is a frozen world on a branch's history: it is only ever
// cloned, never stepped or changed, so forks share it by pointer.
type checkpoint struct {
	tick  int
	next  int // inputs[:next] are in it ...
	done  int // ... and done ticks of inputs[next], a step it cut
	world *sim.World
	// window is, for a checkpoint of a world that keeps a window of its
	// past (history.ms), that window in ticks: the checkpoint keeps the
	// world's state without its history (checkpointOf), so a replay
	// starts from it only a window or more before the tick it makes. 0:
	// the checkpoint keeps the world's history as the world kept it.
	window int
}

// history is a branch's past: its origin, its inputs in order, and
// checkpoints to replay from. Forks share the arrays of its slices (their
// capacity is cut at the fork, so an append on one side copies and never
// writes into the other's), and nothing in them is ever changed in place.
type history struct {
	origin *origin
	inputs []input
	cps    []*checkpoint
}

// shared returns a copy that can grow without touching h's arrays.
func (h history) shared() history {
	return history{origin: h.origin, inputs: h.inputs[:len(h.inputs):len(h.inputs)], cps: h.cps[:len(h.cps):len(h.cps)]}
}

// branch is one line of history: the world now, and how to make it again.
type branch struct {
	name string
	hist history
	// world is the branch's world now. When frozen it is also a checkpoint
	// (after a fork), and the first command that changes it works on a clone.
	world  *sim.World
	frozen bool
	// cp counts toward the branch's next checkpoint. It is the branch's
	// own: a session-wide count let stepping another branch take this
	// one's checkpoint, so back here replayed from far further back.
	cp cpClock
}

// Session is one kgrepl session: its branches and the one in use.
type Session struct {
	branches map[string]*branch
	cur      *branch
	// interrupt is shared with the sessions a command runs inside this one
	// (a demo's, a load's), so Ctrl-C reaches them.
	interrupt *stopFlag
	done      bool
	// out collects the narration of the command running now: said lines
	// of it (a quiet summary's place counts as one), and past
	// limitNarration unsaid more, from tick cutAt on.
	out          output
	said, unsaid int
	cutAt        int
	// Color writes ANSI colour codes into the narration: protocol events,
	// errors, a demo's headings and narration (colour.go). The binary sets
	// it only on a terminal, never with NO_COLOR or into a pipe.
	Color bool
	// replaying is set while history is replayed: nothing is recorded or printed.
	replaying bool
	// holding: the next replay keeps its world's history from holdFrom on
	// (detailWorld); replayedFrom is the tick the last replay started at.
	holding      bool
	holdFrom     int
	replayedFrom int
	tickErr      error
	// Dir is the folder relative file names (save, load, --out) are taken from; "" = the process's.
	Dir string
	// PictureDir is where a picture command without --out writes; "" (scripts,
	// notebooks, tests) draws the picture without writing it. The REPL sets it
	// and names it at start.
	PictureDir string
	// AfterTick, when set, runs after every tick the session steps (tests
	// check invariants here); an error stops the command and is returned.
	AfterTick func(*sim.World) error
	// Quiet is the output level of this session's commands: with it, the
	// routine per-record lines are summarised (see quiet.go). Demos turn it
	// on unless run with --verbose; step and run take --quiet and --verbose.
	Quiet bool
	// textOnly: the commands running are read as text alone (Exec, not
	// ExecResults), so their views need not write HTML (htmlOf).
	textOnly bool
	// quietNow is the level of the command running now; quiet gathers its summaries.
	quietNow bool
	quiet    quietLog
	// pageStops are the last ExecPaged's stopping points, a page each.
	pageStops []func(*Session)

	// CheckpointEvery fixes the ticks between checkpoints (tests and
	// benchmarks); 0 chooses by measurement (see checkpointDue).
	CheckpointEvery int

	// copied is set once the step or run running now has copied the
	// world it steps (copyWorld); inPlace when it stepped its one tick in
	// the world itself instead.
	copied, inPlace bool

	// What the command running now adds to the history, kept apart until
	// it succeeds: the step it ran and the checkpoints taken during it.
	words      []string
	stepped    *input
	pendingCPs []*checkpoint
	// supply is what a replay gives the next command that reads a file
	// (readFile returns it instead of reading the disk); read is what the
	// command running now read, for the history.
	supply, read *fileRead
	// compareKeys are the settings a compare row varies: set --from
	// leaves them to it (runCombo).
	compareKeys map[string]bool
}

// NewSession starts a session on the default world.
func NewSession() *Session {
	budgetOnce.Do(setMemoryBudget)
	s := &Session{branches: map[string]*branch{}, interrupt: new(stopFlag)}
	o := &origin{newLine: "new", topo: sim.DefaultTopology(), cfg: sim.DefaultConfig()}
	w, _ := o.world()
	b := &branch{name: "main", hist: history{origin: o}, world: w}
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
	p := fmt.Sprintf("%s t=%d %s", w.Group.ID(), w.Tick, w.Group.State())
	if c := clockOf(w); c.real {
		p = fmt.Sprintf("%s t=%s %s", w.Group.ID(), c.at(w.Tick), w.Group.State())
	}
	if s.cur.name != "main" {
		p = s.cur.name + " " + p
	}
	return p + "> "
}

// Interrupt asks a running command to stop at the next tick.
func (s *Session) Interrupt() { s.interrupt.Store(true) }

// stopFlag is Ctrl-C's request to stop, shared by a session and the
// sessions its commands run inside it (a demo's, a load's, compare's).
type stopFlag struct {
	atomic.Bool
	// onPoll, when set (tests only), runs at every poll of the flag, before
	// it is read: a test presses Ctrl-C at any point of any command. It may
	// run on several goroutines at once (explore's and compare's workers).
	onPoll func()
	// onUndo, when set (tests only), runs as a failed command is undone
	// (rollback): a test presses Ctrl-C during the undo too.
	onUndo func()
	// growing is set while a command that makes the world bigger runs
	// (step, run, load): the heap guard stops those earlier
	// (growThreshold).
	growing atomic.Bool
}

// stopRequested reports a Ctrl-C (or the heap guard's stop). Every long
// loop polls it and returns an "interrupted" error (ErrInterrupted), which
// rolls the command back; the roll-back itself never polls it (rollback).
func (s *Session) stopRequested() bool {
	if f := s.interrupt.onPoll; f != nil {
		f()
	}
	return s.interrupt.Load()
}

// Done reports that `exit` was run.
func (s *Session) Done() bool { return s.done }

// Exec runs one line: commands separated by ';', '#' starting a comment. It
// returns the text of every command that ran; the error is the first
// failure, after which the rest of the line does not run.
//
// While the line runs, the heap guard (heapguard.go) stops it, as Ctrl-C
// would, if the heap passes limitHeap.
func (s *Session) Exec(line string) (string, error) {
	s.interrupt.Store(false)
	end := s.guardHeap()
	defer s.readAsText(true)()
	out, err := s.execLine(line)
	return out, end(err)
}

// ExecResults is Exec keeping each command's full result.
func (s *Session) ExecResults(line string) ([]*Result, error) {
	s.interrupt.Store(false)
	end := s.guardHeap()
	defer s.readAsText(false)()
	rs, err := s.execResults(line)
	return rs, end(err)
}

// readAsText says whether the commands run from now on have their
// results read as text alone (Session.textOnly), and returns what puts
// it back as it was.
func (s *Session) readAsText(on bool) func() {
	was := s.textOnly
	s.textOnly = on
	return func() { s.textOnly = was }
}

// ExecPaged is Exec with the output cut where the front end should wait for
// the reader before going on (`demo N --step` pauses at each narration
// line); a line with nothing to pause at gives one page. A reader who stops
// before page i calls StopAtPage(i-1).
func (s *Session) ExecPaged(line string) ([]string, error) {
	results, err := s.ExecResults(line)
	pages := []string{""}
	s.pageStops = []func(*Session){nil}
	add := func(text string) {
		if text == "" {
			return
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		pages[len(pages)-1] += text
	}
	for _, r := range results {
		if len(r.Pages) == 0 {
			add(r.Text)
			continue
		}
		for i, p := range r.Pages {
			if i > 0 && pages[len(pages)-1] != "" {
				pages = append(pages, "")
				s.pageStops = append(s.pageStops, nil)
			}
			add(p)
			if i < len(r.stops) {
				s.pageStops[len(s.pageStops)-1] = r.stops[i]
			}
		}
	}
	for i := range pages {
		pages[i] = strings.TrimRight(pages[i], "\n")
	}
	return pages, err
}

// StopAtPage is the reader stopping after page i of the last ExecPaged:
// `demo N --step` then leaves the session where the demo was at the end of
// that page, as if the demo had stopped there, rather than at its end.
func (s *Session) StopAtPage(i int) {
	if i >= 0 && i < len(s.pageStops) && s.pageStops[i] != nil {
		s.pageStops[i](s)
	}
	s.pageStops = nil
}

// execLine is Exec without clearing an interrupt already asked for: a
// demo's session runs its lines with it.
func (s *Session) execLine(line string) (string, error) {
	results, err := s.execResults(line)
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

func (s *Session) execResults(line string) ([]*Result, error) {
	if err := checkLine(line); err != nil {
		return nil, err
	}
	var out []*Result
	for _, cmd := range splitCommands(line) {
		r, err := s.run(cmd)
		if r != nil {
			out = append(out, r)
		}
		if err != nil {
			return out, escapeError(err)
		}
		if s.done {
			break
		}
	}
	return out, nil
}

// escapeError spells out the bytes of an error a terminal would act on
// (control characters, invalid UTF-8), which errors repeat from what was
// typed: a binary byte in an unknown command was echoed as it was. Tabs
// and line ends stay (some errors hold lines).
func escapeError(err error) error {
	msg := err.Error()
	clean := true
	for _, r := range msg {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			clean = false
			break
		}
	}
	if clean {
		return err
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(msg); i += w {
		r, size := utf8.DecodeRuneInString(msg[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", msg[i])
		case !unicode.IsPrint(r) && r != '\n' && r != '\t':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return &escapedError{msg: b.String(), err: err}
}

// escapedError is an error with its message spelled safely; errors.Is
// still finds what it wraps (ErrInterrupted).
type escapedError struct {
	msg string
	err error
}

func (e *escapedError) Error() string { return e.msg }
func (e *escapedError) Unwrap() error { return e.err }

// SplitLine cuts a line into its commands, each as Exec would run it
// (repl.LineSplitter: with --keep-going a script runs each on its own, so
// one failing does not drop the rest of its line). A line past
// MaxLineBytes is returned whole, for Exec to refuse.
func (s *Session) SplitLine(line string) []string {
	if checkLine(line) != nil {
		return []string{line}
	}
	var out []string
	for _, words := range splitCommands(line) {
		out = append(out, strings.Join(words, " "))
	}
	return out
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

// sessionState is what a command may change, kept to put back when it fails.
type sessionState struct {
	cur      *branch
	curVal   branch
	branches map[string]*branch
}

func (s *Session) saveState() sessionState {
	st := sessionState{cur: s.cur, curVal: *s.cur, branches: make(map[string]*branch, len(s.branches))}
	for k, v := range s.branches {
		st.branches[k] = v
	}
	return st
}

func (s *Session) run(words []string) (res *Result, err error) {
	c, err := resolve(words[0], words[1:], "")
	if err != nil {
		return nil, err
	}
	// A start of a name runs the command it names, and is recorded (in the
	// history, a session file, what compare reruns) as that command.
	words[0] = c.name
	// CMD --help is help CMD, for every command.
	for _, w := range words[1:] {
		if w == "--help" {
			return cmdHelp(s, []string{c.name})
		}
	}
	// A command that fails leaves the session exactly as it was: the
	// history only grows on success, and the world is the one before the
	// command (rollback), never one made again.
	before := s.saveState()
	panicked := false
	defer func() {
		// No input may crash the session: a panic is a bug, reported as an error.
		if p := recover(); p != nil {
			panicked = true
			res, err = nil, fmt.Errorf("%s: internal error: %v (please report this with the script that caused it)", words[0], p)
		}
		s.stepped, s.pendingCPs = nil, nil
		s.supply, s.read = nil, nil // a supply is for the one command it was given to
		if err != nil {
			if uerr := s.rollback(before, panicked && c.mutates || s.inPlace); uerr != nil {
				err = fmt.Errorf("%w; and the world could not be made again from its history: %v", err, uerr)
			}
		}
	}()
	s.out.Reset()
	s.said, s.unsaid = 0, 0
	s.tickErr = nil
	s.stepped, s.pendingCPs = nil, nil
	s.read = nil
	s.copied, s.inPlace = false, false
	if c.mutates && s.cur.frozen {
		// The world is a checkpoint too (after a fork): change a copy.
		s.cur.world, s.cur.frozen = s.cur.world.Clone(), false
	}
	at := s.cur.world.Tick
	if c.time || c.name == "load" {
		if !s.interrupt.growing.Swap(true) {
			defer s.interrupt.growing.Store(false)
		}
	}
	s.words = words
	s.quiet = quietLog{}
	s.quietNow = s.Quiet
	r, err := c.run(s, words[1:])
	s.quietFlush()
	if err == nil && s.tickErr != nil {
		err = fmt.Errorf("%s: %v", words[0], s.tickErr)
	}
	if err != nil {
		return nil, err
	}
	if !s.replaying {
		h := &s.cur.hist
		switch {
		case c.mutates:
			h.inputs = append(h.inputs, input{at: at, line: strings.Join(words, " "), file: s.read})
		case s.stepped != nil:
			h.inputs = append(h.inputs, *s.stepped)
			h.cps = append(h.cps, s.pendingCPs...)
		}
	}
	if r == nil {
		r = &Result{}
	}
	s.sayCut()
	if s.out.Len() > 0 {
		r.Text = s.out.String() + r.Text
	}
	return r, nil
}

// rollback puts the session back as it was before a failed command: its
// branches, the branch in use and that branch's world, history and
// checkpoint clock. It cannot fail, and costs nothing, because no failed
// command leaves a world it changed in place:
//   - a world input (set, join, crash, ...) checks everything before it
//     changes the world, and the engine's inputs change nothing when they
//     refuse (sim/commands.go), so a refused one never touched it;
//   - a step or run steps a copy of the world (copyWorld, at its first
//     tick), so the world before it is there to put back, whatever stopped
//     it (Ctrl-C, the heap guard, a run until not met); one of a single
//     tick needs none, since nothing stops it after its tick;
//   - commands that make a world (new, back, load, demo, fork) install it
//     only when they succeed.
//
// Only a world input that panics (a bug), or a one-tick step that fails
// after its tick (a failing check, AfterTick, or a bug; see step), may
// leave its world changed; with rebuild, that world is made again from
// the history, ignoring Ctrl-C (an undo that a second Ctrl-C could stop
// would leave the world and its history apart). Its error, if the history
// does not replay, is returned for the command's error to carry.
func (s *Session) rollback(st sessionState, rebuild bool) error {
	if s.interrupt.onUndo != nil {
		s.interrupt.onUndo()
	}
	s.branches = st.branches
	s.cur = st.cur
	*s.cur = st.curVal
	if !rebuild || st.curVal.frozen {
		return nil // a frozen world was copied before the command changed anything
	}
	w, h, err := s.replay(s.cur.hist, -1, false)
	if err != nil {
		return err
	}
	s.cur.world, s.cur.hist = w, h
	return nil
}

// copyWorld makes the branch's world a copy of itself before a step or run
// changes it, once per command: the world before the command is kept
// unchanged (saveState holds it), so a command stopped anywhere is undone
// by putting it back (rollback). A copy costs the world's live state, not
// its history (sim.World.Clone shares the history chunk by chunk): 20 to
// 30 µs for the default world, 5 to 9 ms for the largest shapes the
// limits allow, some ten idle ticks there (BenchmarkCopyBeforeStep), so a
// step of one tick (plain `step`) takes none (see step).
func (s *Session) copyWorld() *sim.World {
	if !s.copied && !s.replaying {
		s.cur.world, s.cur.frozen = s.cur.world.Clone(), false
		s.copied = true
	}
	return s.cur.world
}

func (s *Session) say(format string, args ...any) {
	if s.replaying || !s.sayLine() {
		return
	}
	s.out.add(fmt.Sprintf(format, args...) + "\n")
}

// sayLine counts a line of narration about to be written, and says
// whether it may be: past limitNarration the lines are counted, not kept
// (a step of a million ticks of a busy world narrated hundreds of
// megabytes, and the builder holding them doubled in one allocation past
// what the heap guard could catch).
func (s *Session) sayLine() bool {
	if s.said >= limitNarration.max {
		if s.unsaid == 0 {
			s.cutAt = s.cur.world.Tick
		}
		s.unsaid++
		return false
	}
	s.said++
	return true
}

// sayCut ends a command's narration with what was left out, if any.
func (s *Session) sayCut() {
	if s.unsaid > 0 {
		s.out.add(fmt.Sprintf("... %d more line(s) from tick %d on not printed (%s; trace --events --from %d lists the events)\n",
			s.unsaid, s.cutAt, limitNarration.helpLine(), s.cutAt))
	}
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
	return s.replayTicks(0, -1, visit)
}

// replayTicks is Replay for the ticks from to to (-1: to the end): it
// starts from the latest checkpoint that makes tick from as the branch
// had it (checkpoint.usable), calls visit there and after every tick,
// and stops after tick to.
func (s *Session) replayTicks(from, to int, visit func(w *sim.World)) error {
	h := s.cur.hist
	var w *sim.World
	next, done := 0, 0
	for i := len(h.cps) - 1; i >= 0; i-- {
		if cp := h.cps[i]; cp.usable(from, false, 0) {
			w, next, done = cp.world.Clone(), cp.next, cp.done
			break
		}
	}
	if w == nil {
		var err error
		if w, err = h.origin.world(); err != nil {
			return err
		}
	}
	scratch := &Session{replaying: true, cur: &branch{name: s.cur.name, world: w}, interrupt: s.interrupt}
	visit(w)
	for _, in := range h.inputs[next:] {
		if in.step {
			for i := done; i < in.ticks; i++ {
				if to >= 0 && w.Tick >= to {
					return nil
				}
				if s.stopRequested() {
					return ErrInterrupted
				}
				w.Step()
				visit(w)
			}
			done = 0
			continue
		}
		if err := scratch.apply(in); err != nil {
			return fmt.Errorf("replaying %q: %v", in.line, err)
		}
	}
	return nil
}
