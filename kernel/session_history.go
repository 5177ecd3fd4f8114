package kernel

// The session's history: stepping with narration, replaying typed inputs
// from the nearest checkpoint (time travel and branches), and when to
// take a checkpoint.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/sim"
)

// step advances n ticks, narrating; it stops early at a stop event or an
// interrupt and reports how many ticks ran.
func (s *Session) step(n int, until func(*sim.World) bool) (int, string) {
	w := s.cur.world
	ran := 0
	why := ""
	at := w.Tick
	defer func() {
		typed := strings.Join(s.words, " ")
		if why == "interrupted" {
			typed = "step " + strconv.Itoa(ran)
		}
		s.recordStep(at, ran, typed)
	}()
	for ran < n {
		if until != nil && until(w) {
			break
		}
		if s.stopRequested() {
			why = "interrupted"
			break
		}
		if ran == n-1 && !s.copied && !s.cur.frozen && !s.replaying {
			// The command's only tick, with no look for Ctrl-C after it:
			// stepped in the world itself, with no copy. Only a failing
			// check (AfterTick) or a bug can still fail the command, and
			// then its world is made again from the history (rollback).
			s.inPlace = true
		} else {
			w = s.copyWorld() // before the first tick: the world before the command stays as it was
		}
		from := w.Events.Len()
		t0 := time.Now()
		stop := w.Step()
		ran++
		s.cur.cp.stepping += time.Since(t0)
		s.cur.cp.ticks++
		s.maybeCheckpoint(w, ran)
		s.narrate(w, from)
		if err := checkTextReach(w); err != nil {
			s.tickErr = err
			why = "text reach"
			break
		}
		if s.AfterTick != nil {
			if err := s.AfterTick(w); err != nil {
				s.tickErr = err
				why = "check failed"
				break
			}
		}
		if stop {
			for _, e := range w.Events.Slice(from, w.Events.Len()) {
				if e.Stop {
					why = "stop event: " + e.Text
				}
			}
			break
		}
	}
	return ran, why
}

// stepped records what a step or run command advanced, for run to add to
// the history when the command succeeds. typed is the command as typed;
// one that did not run its course (interrupted) is kept as the ticks it ran.
func (s *Session) recordStep(at, ran int, typed string) {
	s.stepped = &input{at: at, step: true, ticks: ran, typed: typed}
}

// narrate prints the events of a tick, one line each; at the quiet level
// the routine ones are gathered into summaries instead. It reads each
// event from the trace as it goes, no more of it than it takes: a
// produced event's kind alone (the log and consume views show writes;
// two events in five of steady traffic), and under --quiet a member's
// poll or processing whose text begins with its label as its header,
// records and label (EventLog.RoutineAt), all its summary takes. A busy
// tick's texts are mostly theirs, and formatting them was most of what a
// quiet run of steady traffic cost beside its steps; gathering the
// tick's events into arrays first, then reading them, cost a tenth of
// the narration more.
func (s *Session) narrate(w *sim.World, from int) { s.narrateEvents(w, from, w.Events.Len()) }

// narrateEvents is narrate of the events from index from to index to.
func (s *Session) narrateEvents(w *sim.World, from, to int) {
	if s.replaying {
		return
	}
	clk := clockOf(s.World())
	evs := w.Events
	stampTick, stamp := -1, "" // the last tick's stamp: a tick's events share it
	for i := max(from, evs.First()); i < to; i++ {
		k := evs.KindAt(i)
		if k == sim.EvProduced {
			continue
		}
		if !s.quietNow && s.said >= limitNarration.max {
			// Past the lines a command narrates, an event is a line
			// counted, not read or written (sayLine): a step of a big
			// world spent most of its time on lines nobody would see.
			s.sayLine()
			continue
		}
		if s.quietNow && (k == sim.EvPolled || k == sim.EvProcessed) {
			if e, label, ok := evs.RoutineAt(i); ok && e.Member != "" {
				s.quietAdd(e.Member, label, &e)
				continue
			}
		}
		e := evs.At(i)
		text := e.Text
		if s.quietNow {
			if key, ok := s.quietKey(e); ok {
				s.quietAdd(key, routineLabel(e), &e)
				continue
			}
			s.quietFlush(quietFlushes(e)...)
			if e.Kind == sim.EvAssigned && assignedLine.MatchString(text) {
				var n int
				text, n = mergeAssigned(evs, i)
				i += n - 1
			}
		}
		if !s.sayLine() {
			continue // past the lines a command narrates: counted only
		}
		if e.Tick != stampTick {
			stampTick, stamp = e.Tick, clk.stamp(e.Tick)
		}
		line := cutLine(stamp+" "+clk.annotate(text), limitNarrationLine.max, e.Tick)
		if s.Color {
			line = s.paint(eventTone(e), line) // the tone read only where it is shown
		}
		s.out.add(line + "\n")
	}
}

// cutLine cuts a line of narration longer than max bytes at its last
// space within them and says what it left out (limitNarrationLine): the
// event itself is kept whole, and trace --events lists it.
func cutLine(line string, max, tick int) string {
	if len(line) <= max {
		return line
	}
	cut := strings.LastIndexByte(line[:max], ' ')
	if cut <= 0 {
		// No space: cut before a rune that starts within the bound.
		for cut = max; cut > 0 && !utf8.RuneStart(line[cut]); cut-- {
		}
	}
	return fmt.Sprintf("%s … (%s more bytes not printed: at most %s %s; trace --events --from %d prints the event whole)",
		line[:cut], group(len(line)-cut), group(max), limitNarrationLine.name, tick)
}

// replay makes a history's world again, from its nearest checkpoint at or
// before tick limit (-1 = the end), up to the last state at tick limit:
// steps are cut there, later inputs dropped. It returns the world and the
// history cut to it; h itself is not changed (its arrays may be shared).
//
// With interruptible, a Ctrl-C stops it (ErrInterrupted); without, it runs
// to its end whatever is asked (an undo, which must not be stopped).
func (s *Session) replay(h history, limit int, interruptible bool) (*sim.World, history, error) {
	end := h.endTick()
	if limit < 0 || limit > end {
		limit = end
	}
	var w *sim.World
	next, done := 0, 0
	cpKeep := 0
	for i := len(h.cps) - 1; i >= 0; i-- {
		if h.cps[i].usable(limit, s.holding, s.holdFrom) {
			cp := h.cps[i]
			w, next, done, cpKeep = cp.world.Clone(), cp.next, cp.done, i+1
			break
		}
	}
	if w == nil {
		var err error
		if w, err = h.origin.world(); err != nil {
			return nil, h, err
		}
	}
	s.replayedFrom = w.Tick
	if s.holding {
		w.HoldHistoryFrom(s.holdFrom) // detailWorld: keep the ticks a view asked for
	}
	scratch := &Session{replaying: true, cur: &branch{name: "replay", world: w}, interrupt: new(stopFlag)}
	out := history{origin: h.origin, inputs: h.inputs[:next:next], cps: h.cps[:cpKeep:cpKeep]}
	for i := next; i < len(h.inputs); i++ {
		in := h.inputs[i]
		if !in.step {
			if in.at > limit {
				break
			}
			if err := scratch.apply(in); err != nil {
				return nil, h, fmt.Errorf("replaying %q at tick %d: %v", in.line, in.at, err)
			}
			out.inputs = append(out.inputs, in)
			continue
		}
		if in.at > limit {
			break
		}
		n := in.ticks - done
		if w.Tick+n > limit {
			n = limit - w.Tick
		}
		for k := 0; k < n; k++ {
			if interruptible && s.stopRequested() {
				return nil, h, ErrInterrupted
			}
			w.Step()
		}
		if done+n < in.ticks {
			// The step is cut at the limit (a checkpoint may have cut it
			// before: done of its ticks are in the world already).
			if done+n > 0 {
				out.inputs = append(out.inputs, input{at: in.at, step: true, ticks: done + n, typed: "step " + strconv.Itoa(done+n)})
			}
			break
		}
		out.inputs = append(out.inputs, in)
		done = 0
	}
	return w, out, nil
}

// apply runs one recorded input against the scratch session's world,
// giving it what it read from a file when it was typed.
func (s *Session) apply(in input) error {
	words := strings.Fields(in.line)
	c := lookup(words[0])
	if c == nil || !c.mutates {
		return fmt.Errorf("%s is not a world input", words[0])
	}
	s.supply = in.file
	_, err := c.run(s, words[1:])
	s.supply = nil
	return err
}

// endTick is the tick at the end of the history.
func (h history) endTick() int {
	t := 0
	for _, in := range h.inputs {
		if in.step {
			t = in.at + in.ticks
		}
	}
	return t
}

// cpClock measures what stepping and cloning cost, for checkpointDue.
type cpClock struct {
	stepping  time.Duration // spent stepping since the last checkpoint
	ticks     int           // ticks stepped since the last checkpoint
	lastClone time.Duration // what the last checkpoint's clone took
}

// minCheckpointTicks is the least spacing of checkpoints: back N replays at
// most this many ticks when cloning is cheap (measured: a tick of the busy
// default world costs about 10 µs, so 1,000 ticks replay in about 10 ms).
const minCheckpointTicks = 1000

// checkpointDue says whether to keep a checkpoint now. With CheckpointEvery
// unset, one is kept every minCheckpointTicks ticks, but never before the
// ticks stepped since the last one took as long as its clone did: while a
// clone costs more than stepping (a clone copies the world's whole trace
// until clones share it), checkpoints thin out so that keeping them at most
// doubles the time a run takes, and back replays at most about as long as
// the run took since the last one.
//
// A world that keeps a window of its past (history.ms) keeps one at most
// every window: back replays from a checkpoint more than a window before
// the tick it goes to however close they are (checkpoint.usable), so
// closer ones would only cost, each letting go of a window's detail in
// its copy (checkpointOf), which is the same work whatever the spacing.
// Half a window apart, T1's hour typed into the session spent about an
// eighth of its CPU on them; a window apart, back replays between one and
// two windows, where it replayed between one and one and a half.
func (s *Session) checkpointDue(w *sim.World) bool {
	c := &s.cur.cp
	if s.CheckpointEvery > 0 {
		return c.ticks >= s.CheckpointEvery
	}
	return c.ticks >= max(minCheckpointTicks, w.HistoryWindow()) && c.stepping >= c.lastClone
}

func (s *Session) maybeCheckpoint(w *sim.World, ran int) {
	if s.replaying || !s.checkpointDue(w) {
		return
	}
	t0 := time.Now()
	cp := checkpointOf(w, len(s.cur.hist.inputs), ran)
	s.cur.cp = cpClock{lastClone: time.Since(t0)}
	s.pendingCPs = append(s.pendingCPs, cp)
	s.thinCheckpoints(w)
}
