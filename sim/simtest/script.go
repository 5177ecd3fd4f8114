package simtest

// Engine scenarios as scripts, in cockroachdb/datadriven's format: a
// command line, a line "----", and what the command printed. The commands
// drive a sim.World directly, through the same World API the kernel's
// commands call (kernel/commands.go), so a script states what the engine
// does without the session layer; the kernel's own golden scripts state
// what a user sees. `go test ./sim -run Scripts -rewrite` writes the
// expected outputs anew (read the diff).
//
// Every tick a script runs is checked against the engine's invariants
// (sim.Checker); a failed check, like a command the harness cannot read,
// fails the test at the script's file:line. A command the world refuses
// prints "error: ..." as its output, so scripts pin refusals too.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kgrepl/kgrepl/sim"
)

// Script is the state of one script: the world, its invariant checker,
// the event kinds the narration hides, and how far `trace` has read.
type Script struct {
	w      *sim.World
	check  *sim.Checker
	hidden map[sim.EventKind]bool
	traced int // packets shown by `trace` so far
}

// handler runs one command. An error is the world refusing the command
// (printed as "error: ..."); a script the harness cannot read fails at
// its line (d.Fatalf).
type handler func(s *Script, t testing.TB, d *datadriven.TestData) (string, error)

// handlers is the command vocabulary, one handler each.
var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"new":      (*Script).handleNew,
		"set":      (*Script).handleSet,
		"join":     (*Script).handleJoin,
		"close":    (*Script).handleClose,
		"crash":    (*Script).handleCrash,
		"restart":  (*Script).handleRestart,
		"slow":     (*Script).handleSlow,
		"produce":  (*Script).handleProduce,
		"drop":     (*Script).handleDrop,
		"step":     (*Script).handleStep,
		"run":      (*Script).handleRun,
		"hide":     (*Script).handleHide,
		"trace":    (*Script).handleTrace,
		"group":    (*Script).handleGroup,
		"members":  (*Script).handleMembers,
		"offsets":  (*Script).handleOffsets,
		"log":      (*Script).handleLog,
		"txn":      (*Script).handleTxn,
		"delivery": (*Script).handleDelivery,
	}
}

// RunScript runs the script at path: a world starts with `new` (the
// default world until then), and each command's output is compared with
// the script's.
func RunScript(t *testing.T, path string) {
	s := &Script{}
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		h, ok := handlers[d.Cmd]
		if !ok {
			d.Fatalf(t, "no command %q (commands: %s)", d.Cmd, strings.Join(commandNames(), " "))
		}
		if s.w == nil && d.Cmd != "new" {
			d.Fatalf(t, "%s before new: a script starts with new", d.Cmd)
		}
		out, err := h(s, t, d)
		if err != nil {
			if out != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			out += "error: " + err.Error()
		}
		if out == "" {
			out = "ok"
		}
		return out
	})
}

func commandNames() []string {
	var names []string
	for n := range handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// The arguments of a command line: words (datadriven keys without a
// value) and key=value or key=(v1, v2) options.

// words lists the arguments given without a value, in order.
func words(d *datadriven.TestData) []string {
	var out []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			out = append(out, a.Key)
		}
	}
	return out
}

// wantWords fails the script unless the command has between min and max
// words, naming the form it takes.
func wantWords(t testing.TB, d *datadriven.TestData, min, max int, form string) []string {
	ws := words(d)
	if len(ws) < min || len(ws) > max {
		d.Fatalf(t, "%s: want %s", d.Cmd, form)
	}
	return ws
}

// options gives the key=value arguments, failing the script on a key the
// command does not take.
func options(t testing.TB, d *datadriven.TestData, allowed ...string) map[string][]string {
	out := map[string][]string{}
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			continue
		}
		ok := false
		for _, k := range allowed {
			ok = ok || k == a.Key
		}
		if !ok {
			d.Fatalf(t, "%s: no option %s (options: %s)", d.Cmd, a.Key, strings.Join(allowed, " "))
		}
		out[a.Key] = a.Vals
	}
	return out
}

// number reads a whole number >= min, failing the script otherwise.
func number(t testing.TB, d *datadriven.TestData, what, s string, min int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < min {
		d.Fatalf(t, "%s: %s %q is not a whole number >= %d", d.Cmd, what, s, min)
	}
	return n
}

// narrate prints events one a line as the kernel does (t=TICK text),
// leaving out the output records written (the log view shows them, as in
// the kernel) and the kinds hidden with `hide`.
func (s *Script) narrate(b *strings.Builder, evs []sim.Event) {
	for _, e := range evs {
		if e.Kind == sim.EvProduced || s.hidden[e.Kind] {
			continue
		}
		fmt.Fprintf(b, "t=%-4d %s\n", e.Tick, e.Text)
	}
}

// input applies a command to the world and prints the events it made.
func (s *Script) input(do func() error) (string, error) {
	from := s.w.Events.Len()
	if err := do(); err != nil {
		return "", err
	}
	var b strings.Builder
	s.narrate(&b, s.w.Events.Slice(from, s.w.Events.Len()))
	return b.String(), nil
}
