package repl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/chzyer/readline"
)

// TerminalOptions tunes RunTerminal. The zero value is the real REPL: os.Stdin
// and os.Stdout, history in DefaultHistoryFile, no colour.
type TerminalOptions struct {
	// HistoryFile overrides DefaultHistoryFile (its directory is created).
	HistoryFile string
	// NoHistory keeps no history file at all (history still works within the session).
	NoHistory bool
	// Stdin and Stdout replace os.Stdin and os.Stdout. They are files, not
	// io.Reader/io.Writer, because line editing needs the terminal itself: raw
	// mode is set on Stdin's descriptor and the width read from Stdout's.
	Stdin, Stdout *os.File
	// Color prints errors in red. Decide it with ColorEnabled(os.Stdout).
	Color bool
	// Greeting is printed when the REPL starts: what the program is and
	// the first steps (kernel.Greeting, which names the picture folder).
	Greeting string
}

// ErrNotTerminal is returned by RunTerminal when its stdin is not a terminal:
// readline v1.5.1 panics on a TAB read from a pipe, so such input must go to
// RunScript instead.
var ErrNotTerminal = errors.New("repl: stdin is not a terminal (use RunScript)")

// IsTerminal reports whether f is a terminal. The binary uses it to choose
// between RunTerminal and RunScript.
func IsTerminal(f *os.File) bool {
	return f != nil && readline.IsTerminal(int(f.Fd()))
}

// ColorEnabled reports whether colour codes should be written to stdout: only
// when it is a terminal (never into a file or a pipe someone will grep), and
// not when the user opted out with NO_COLOR (https://no-color.org: set and
// non-empty) or runs a terminal that cannot show it (TERM=dumb).
func ColorEnabled(stdout *os.File) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(stdout)
}

// DefaultPictureDir is the folder the REPL's pictures go to when a picture
// command has no --out: $XDG_STATE_HOME/kgrepl/pictures (or
// ~/.local/state/kgrepl/pictures), next to the history, and never the
// folder kgrepl runs in (a repository, say).
func DefaultPictureDir() (string, error) {
	h, err := DefaultHistoryFile()
	if err != nil {
		return "", fmt.Errorf("no place for pictures: %w", err)
	}
	return filepath.Join(filepath.Dir(h), "pictures"), nil
}

// DefaultHistoryFile is where the REPL keeps its history, following the XDG
// base directory spec (history is "state": worth keeping across runs, not
// worth backing up like configuration): $XDG_STATE_HOME/kgrepl/history, or
// ~/.local/state/kgrepl/history when XDG_STATE_HOME is unset (or, as the
// spec says to treat it, not an absolute path).
func DefaultHistoryFile() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no place for the history file: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "kgrepl", "history"), nil
}

// RunTerminal is the interactive REPL. It returns nil when the user leaves
// with Ctrl-D on an empty line or with `exit` (eng.Done()), and an error only
// when the terminal cannot be used.
//
// Keys: TAB completes from eng.Complete; Ctrl-C on the line being typed
// drops that line (readline prints ^C) and the session goes on; Ctrl-C while
// a command runs asks the engine to stop it (eng.Interrupt) and the session
// goes on with the state the command reached; up/down and Ctrl-R walk the
// history, which persists in the history file. As in a shell, Ctrl-D pressed
// while a command runs ends the session once the command is done.
//
// A Ctrl-C that lands just as a command finishes can reach eng.Interrupt
// after Exec has returned, so the engine should clear its stop request when
// an Exec starts rather than keep it for the next one.
func RunTerminal(eng Engine, opts TerminalOptions) error {
	in, out := opts.Stdin, opts.Stdout
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	if !IsTerminal(in) {
		return ErrNotTerminal
	}

	var histPath string
	var histErr error
	if !opts.NoHistory {
		histPath, histErr = prepareHistory(opts.HistoryFile)
	}

	raw := &rawMode{fd: int(in.Fd())}
	stdin := readline.NewCancelableStdin(in)
	// Everything readline touches is spelled out here rather than left to its
	// package globals (os.Stdin, fd 0), so that a test can hand it any pty.
	cfg := &readline.Config{
		Prompt:            eng.Prompt(),
		HistoryFile:       histPath,
		HistoryLimit:      historyLimit,
		HistorySearchFold: true,
		// History is saved by the loop below rather than by readline's own
		// goroutine: trimmed (completion leaves a trailing space), and on
		// disk before the command runs, so a command that brings the
		// process down is still there to report.
		DisableAutoSaveHistory: true,
		AutoComplete:           completer{eng},
		Stdin:                  stdin,
		Stdout:                 out,
		Stderr:                 out,
		FuncIsTerminal:         func() bool { return true }, // checked above
		FuncMakeRaw:            raw.enter,
		FuncExitRaw:            raw.exit,
		FuncGetWidth:           func() int { return termWidth(out, in) },
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return fmt.Errorf("repl: starting readline: %w", err)
	}
	defer raw.exit() // whatever happens, do not leave the user's terminal raw
	defer rl.Close()
	// Runs before rl.Close (defers run last-first), and must: rl.Close waits
	// for readline's reader goroutine but closes only its own wrapper around
	// stdin, not this reader, so a goroutine blocked reading the terminal
	// would never see the stop and the REPL would hang on the way out. That
	// happens when Ctrl-D is pressed while a command runs: the terminal, in
	// cooked mode then, keeps the Ctrl-D as an end-of-file mark that reaches
	// readline as a NUL byte once it is raw again; readline takes the NUL for
	// end of input and returns io.EOF, while its goroutine goes on reading.
	defer stdin.Close()

	// SIGINT is caught for the whole session, not only while a command
	// runs: between readline handing back a line and the command starting
	// (and back again) the terminal is briefly in cooked mode, and a Ctrl-C
	// landing in that gap would otherwise kill the REPL and lose the session.
	// While readline reads a line the terminal is raw, so Ctrl-C arrives as a
	// key (readline's ErrInterrupt), not as a signal. signal.Stop restores the
	// default when the REPL ends, so a Ctrl-C after it kills the program as usual.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)

	// Output goes straight to the terminal, not through rl.Stdout(): it is
	// only ever written between two Readline calls, when readline draws
	// nothing, and readline's writer decides whether to redraw the line
	// around what it writes from a flag that stays set for a moment after
	// Enter. Output from a fast command then got the old prompt drawn after
	// it (seen in the pty test).
	var w io.Writer = out
	if opts.Greeting != "" {
		io.WriteString(w, strings.TrimRight(opts.Greeting, "\n")+"\n")
	}
	if histErr != nil {
		fmt.Fprintf(w, "warning: history will not be saved: %v\n", histErr)
	}
	for {
		rl.SetPrompt(eng.Prompt()) // the prompt shows time and group state, so it changes after every command
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue // Ctrl-C while typing: readline printed ^C, the line is dropped
		case errors.Is(err, io.EOF):
			return nil // Ctrl-D on an empty line
		case err != nil:
			return fmt.Errorf("repl: reading a line: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// With no history file this keeps it in memory only. An error means
		// only that the file could not be written.
		rl.SaveHistory(line)
		pages, execErr := execInterruptible(eng, line, sigs, w)
		for i, page := range pages {
			if i > 0 && !waitForReader(rl, i, len(pages)) {
				// q: the command stops where the reader did.
				eng.(PagedEngine).StopAtPage(i - 1)
				break
			}
			writeResult(w, page)
		}
		if execErr != nil {
			printError(w, execErr, opts.Color)
		}
		if eng.Done() {
			return nil
		}
	}
}

// morePrompt is the prompt between two pages of a paged command.
const morePrompt = "-- %d/%d · Enter: go on · q: stop here -- "

// waitForReader shows where a paged command's output is and waits for the
// reader: Enter goes on, q (or Ctrl-C, Ctrl-D) stops showing the rest.
func waitForReader(rl *readline.Instance, page, pages int) bool {
	rl.SetPrompt(fmt.Sprintf(morePrompt, page, pages-1))
	line, err := rl.Readline()
	if err != nil {
		return false
	}
	return strings.TrimSpace(line) != "q"
}

type execResult struct {
	out []string
	err error
}

// execInterruptible runs eng.Exec in its own goroutine so that this one can
// watch for Ctrl-C (SIGINT: the terminal is in cooked mode while a command
// runs, readline having restored it) and pass it on as eng.Interrupt. Each
// Ctrl-C asks again; the command's own output, up to where it stopped, is
// what gets printed.
func execInterruptible(eng Engine, line string, sigs <-chan os.Signal, w io.Writer) ([]string, error) {
	drainSignals(sigs) // a Ctrl-C from before this command is not meant for it
	done := make(chan execResult, 1)
	go func() {
		var r execResult
		defer func() {
			// An engine bug must not end the session and lose the user's
			// world: report it as this command's error and carry on.
			if p := recover(); p != nil {
				fmt.Fprintf(os.Stderr, "panic in command %q: %v\n%s", line, p, debug.Stack())
				r = execResult{err: fmt.Errorf("internal error: %v", p)}
			}
			done <- r
		}()
		if pe, ok := eng.(PagedEngine); ok {
			r.out, r.err = pe.ExecPaged(line)
			return
		}
		var out string
		out, r.err = eng.Exec(line)
		r.out = []string{out}
	}()
	for {
		select {
		case r := <-done:
			return r.out, r.err
		case <-sigs:
			// If the command has just finished, the Ctrl-C came too late to
			// matter; do not leave a stale interrupt for the next one.
			select {
			case r := <-done:
				return r.out, r.err
			default:
			}
			eng.Interrupt()
			io.WriteString(w, "\n") // the terminal echoed ^C; start the output on a fresh line
		}
	}
}

func drainSignals(sigs <-chan os.Signal) {
	for {
		select {
		case <-sigs:
		default:
			return
		}
	}
}

const (
	ansiRed   = "\x1b[31m"
	ansiReset = "\x1b[0m"
)

// printError shows a failed command's message. In the REPL it goes to stdout,
// in order with the command's output, rather than to stderr as in scripts.
func printError(w io.Writer, err error, color bool) {
	msg := "error: " + strings.TrimRight(err.Error(), "\n")
	if color {
		msg = ansiRed + msg + ansiReset
	}
	io.WriteString(w, msg+"\n")
}

// What of the history file is kept. readline (v1.5.1) reads the whole file
// into memory at start-up, as runes (four bytes a character), and only
// rewrites it when it holds more than HistoryLimit lines; it appends
// otherwise. So a file of a few hundred enormous lines was loaded whole, and
// never trimmed. prepareHistory trims it first, to what readline would keep
// and a little more cheaply: the last historyLimit lines, read from at most
// the last historyMaxBytes of the file, without lines over historyMaxLine
// (nobody types one; a paste gone wrong does).
const (
	historyLimit    = 1000
	historyMaxBytes = 1 << 20
	historyMaxLine  = 8 << 10
)

// prepareHistory makes sure the history file can be used: readline opens
// it itself but silently keeps no history if that fails, so the directory is
// created here (0700, as XDG asks for state) and the file opened once to
// surface the error. Creating the file here also gives it mode 0600, like a
// shell's history, instead of readline's 0666.
//
// Anything but a regular file is refused before readline sees it: readline
// opens the file and reads it to the end, which never comes on a FIFO (the
// REPL hung at start-up with no prompt) or a device. The file is also
// trimmed (see historyLimit).
func prepareHistory(override string) (string, error) {
	path := override
	if path == "" {
		p, err := DefaultHistoryFile()
		if err != nil {
			return "", err
		}
		path = p
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	// Stat, not open, first: opening a FIFO blocks until someone opens its
	// other end. O_NONBLOCK covers a FIFO put there between the two.
	if fi, err := os.Stat(path); err == nil {
		if err := regularHistoryFile(path, fi); err != nil {
			return "", err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if err := regularHistoryFile(path, fi); err != nil {
		return "", err
	}
	if err := trimHistory(path, f, fi); err != nil {
		return "", fmt.Errorf("trimming %s: %w", path, err)
	}
	return path, nil
}

// regularHistoryFile refuses a history file that is not a regular file,
// saying what it is.
func regularHistoryFile(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a folder"
	case m&os.ModeNamedPipe != 0:
		what = "a FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("%s is %s, not a regular file", path, what)
}

// trimHistory rewrites the history file f (at path, described by fi) with
// only what readline should load: see historyLimit. A file that needs no
// trimming is left alone. The new file replaces the old one by a rename, so
// an error halfway leaves the old one whole; a symbolic link is followed, and
// the file keeps its permissions.
func trimHistory(path string, f *os.File, fi os.FileInfo) error {
	size := fi.Size()
	start := max(size-historyMaxBytes, 0)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	changed := start > 0
	if start > 0 {
		// The first line read is most likely only the end of one.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		// readline would ignore the last line and glue the next command
		// to it.
		changed = true
	}
	var keep [][]byte
	for line := range bytes.SplitSeq(buf, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 || len(line) > historyMaxLine {
			changed = changed || len(line) > 0
			continue
		}
		keep = append(keep, line)
	}
	if len(keep) > historyLimit {
		keep = keep[len(keep)-historyLimit:]
		changed = true
	}
	if !changed {
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), ".history-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	var out bytes.Buffer
	for _, line := range keep {
		out.Write(line)
		out.WriteByte('\n')
	}
	if _, err := tmp.Write(out.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), real)
}

// termWidth is the width readline lays the line out in. readline disables
// completion outright when the width is 0, and a negative one (no size
// known, e.g. a pty nobody sized) makes its candidate listing panic, so a
// terminal that reports no size is taken to be 80 columns wide.
func termWidth(files ...*os.File) int {
	for _, f := range files {
		if w, _, err := readline.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// rawMode puts the terminal in raw mode while readline reads a line and back
// in the user's mode otherwise (so that Ctrl-C is a signal while a command
// runs). Unlike readline's own RawMode it works on any descriptor and is
// idempotent: entering twice must not save the raw state as the one to
// restore, or the user's shell would be left raw after we exit.
type rawMode struct {
	fd    int
	mu    sync.Mutex
	state *readline.State
}

func (r *rawMode) enter() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != nil {
		return nil
	}
	st, err := readline.MakeRaw(r.fd)
	if err != nil {
		return err
	}
	r.state = st
	return nil
}

func (r *rawMode) exit() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil {
		return nil
	}
	err := readline.Restore(r.fd, r.state)
	r.state = nil
	return err
}
