package repl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The REPL is tested the way a person uses it: the test binary re-executes
// itself inside a real pseudo-terminal (so raw mode, the terminal's own
// Ctrl-C → SIGINT and readline's redrawing are all real), and the test types
// into the pty and reads what the "screen" receives.

const (
	childEnv = "KGREPL_REPL_TEST_CHILD"        // set in the re-executed child: "plain", "color" or "nohistory"
	histEnv  = "KGREPL_REPL_TEST_HISTORY_FILE" // the child's TerminalOptions.HistoryFile
	childBye = "CHILD-RETURNED-NIL"            // printed by the child when RunTerminal returned nil
	timeout  = 10 * time.Second                // for every wait: the test fails, it never hangs
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(childMain(mode))
	}
	os.Exit(m.Run())
}

// childMain runs the REPL on a fake engine on the process's own stdin/stdout
// (the pty). sleep announces itself on stdout so the test knows when the
// command is running, i.e. when a Ctrl-C must become an interrupt.
func childMain(mode string) int {
	eng := newFakeEngine()
	eng.started = os.Stdout
	opts := TerminalOptions{
		Color:       mode == "color",
		NoHistory:   mode == "nohistory",
		HistoryFile: os.Getenv(histEnv),
	}
	if mode == "greeting" {
		opts.Greeting = "hello\n  first steps\n"
	}
	if err := RunTerminal(eng, opts); err != nil {
		fmt.Fprintln(os.Stdout, "RunTerminal:", err)
		return 2
	}
	fmt.Fprintln(os.Stdout, childBye)
	return 0
}

// ptySession is one child REPL in a pty, seen from the keyboard side.
type ptySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File

	mu     sync.Mutex
	out    bytes.Buffer  // everything the child wrote
	seen   int           // out[:seen] was matched by earlier expects
	notify chan struct{} // a token whenever out grows or the child closes the pty
	closed bool

	exited chan struct{}
	err    error // of cmd.Wait, valid once exited is closed
}

func startREPL(t *testing.T, mode string, env ...string) *ptySession {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	for _, kv := range os.Environ() {
		// The child's history location is whatever the test says, and its
		// colour only what the mode says.
		if !strings.HasPrefix(kv, "XDG_STATE_HOME=") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, childEnv+"=") && !strings.HasPrefix(kv, histEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+mode, "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	// pty.Start makes the child a session leader with the pty as its
	// controlling terminal, so a ^C typed while it is in cooked mode is a
	// SIGINT to it, exactly as in a real terminal. A sized pty matters:
	// readline turns completion off when the width is 0.
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 100})
	if err != nil {
		t.Fatalf("starting the REPL in a pty: %v", err)
	}
	s := &ptySession{t: t, cmd: cmd, ptmx: ptmx, notify: make(chan struct{}, 1), exited: make(chan struct{})}
	go s.readLoop()
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			cmd.Process.Kill()
			<-s.exited
		}
		ptmx.Close()
		if t.Failed() {
			t.Logf("everything the REPL wrote:\n%q", s.all())
		}
	})
	return s
}

// readLoop copies the pty's output into s.out. The master reads EIO once
// the child and so every holder of the pty's slave side has gone.
func (s *ptySession) readLoop() {
	buf := make([]byte, 4096)
	for {
		n, err := s.ptmx.Read(buf)
		s.mu.Lock()
		s.out.Write(buf[:n])
		if err != nil {
			s.closed = true
		}
		s.mu.Unlock()
		select {
		case s.notify <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

func (s *ptySession) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// expect waits until want appears in output not matched before, and moves
// past it: a test can thus not be fooled by an earlier prompt or result.
func (s *ptySession) expect(want string) {
	s.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		rest := s.out.String()[s.seen:]
		closed := s.closed
		if i := strings.Index(rest, want); i >= 0 {
			s.seen += i + len(want)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if closed {
			s.t.Fatalf("the REPL closed the terminal before writing %q; after the last match it wrote %q", want, rest)
		}
		select {
		case <-s.notify:
		case <-deadline.C:
			s.t.Fatalf("no %q within %v; after the last match the REPL wrote %q", want, timeout, rest)
		}
	}
}

func (s *ptySession) send(keys string) {
	s.t.Helper()
	if _, err := s.ptmx.Write([]byte(keys)); err != nil {
		s.t.Fatalf("typing %q: %v", keys, err)
	}
}

// wait waits for the child to end and fails unless it exited with status 0.
func (s *ptySession) waitSuccess() {
	s.t.Helper()
	select {
	case <-s.exited:
	case <-time.After(timeout):
		s.t.Fatalf("the REPL did not exit within %v", timeout)
	}
	if s.err != nil {
		s.t.Fatalf("the REPL exited with %v, want status 0", s.err)
	}
}

const (
	keyTab   = "\t"
	keyEnter = "\r" // what a terminal sends for Return in raw mode
	keyCtrlC = "\x03"
	keyCtrlD = "\x04"
	keyUp    = "\x1b[A"

	// redraw is how readline v1.5.1 starts drawing its prompt line: clear
	// to the end of screen, clear the line, carriage return.
	redraw = "\x1b[J\x1b[2K\r"
)

func TestTerminalSession(t *testing.T) {
	state := t.TempDir()
	s := startREPL(t, "plain", "XDG_STATE_HOME="+state)

	s.expect("fake 0> ")

	// A command's output, then a prompt that was asked for again (the count
	// in it changed).
	s.send("count" + keyEnter)
	s.expect("COUNT=1\r\n")
	s.expect("fake 1> ")

	// TAB on a partial word that has one completion: the word and a space are
	// inserted. What was typed afterwards follows it.
	s.send("ec" + keyTab)
	s.expect("fake 1> echo ")
	s.send("hi" + keyEnter)
	s.expect("ECHO[hi]")
	s.expect("fake 1> ")

	// TAB in a later word whose candidates share more than was typed
	// (transactions, transform): the common part is inserted.
	s.send("echo tr" + keyTab)
	s.expect("echo trans")
	s.send("form" + keyEnter)
	s.expect("ECHO[transform]")
	s.expect("fake 1> ")

	// TAB with candidates that share nothing more (config, consumers): they
	// are listed under the line; narrowing the word and TAB again completes it.
	s.send("show con" + keyTab)
	s.expect("config     consumers")
	s.send("f" + keyTab)
	s.expect("show config ")
	s.send(keyEnter)
	s.expect("SHOW[config]")
	s.expect("fake 1> ")

	// Ctrl-C on a partial line: ^C, the line is dropped, a new prompt, and
	// the session goes on with its state.
	s.send("echo never")
	s.expect("echo never")
	s.send(keyCtrlC)
	s.expect("^C")
	s.expect("fake 1> ")
	s.send("count" + keyEnter)
	s.expect("COUNT=2")
	s.expect("fake 2> ")

	// Ctrl-C on an empty line does not end the session either.
	s.send(keyCtrlC)
	s.expect("^C")
	s.expect("fake 2> ")

	// A failing command prints error: and the session goes on.
	s.send("bad" + keyEnter)
	// Exactly: the echoed line, the error, the next prompt; nothing drawn in
	// between (readline's Stdout() writer used to draw the old prompt here).
	s.expect("bad\r\nerror: bad command\r\n" + redraw + "fake 2> ")

	// Ctrl-C while a command runs interrupts the command, not the REPL.
	// Twice, so that the signal handling is not a one-shot.
	for i := 0; i < 2; i++ {
		s.send("sleep" + keyEnter)
		s.expect("SLEEPING")
		s.send(keyCtrlC)
		s.expect("WOKE")
		s.expect(fmt.Sprintf("fake %d> ", 2+i))
		s.send("count" + keyEnter)
		s.expect(fmt.Sprintf("COUNT=%d", 3+i))
		s.expect(fmt.Sprintf("fake %d> ", 3+i))
	}

	// Ctrl-D on an empty line leaves, cleanly.
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()

	if out := s.all(); strings.Contains(out, "ECHO[never]") {
		t.Errorf("the line cancelled with Ctrl-C was run")
	}
	if strings.Contains(s.all(), "\x1b[31m") {
		t.Errorf("colour codes written with Color off")
	}

	// The history file holds what was run, in order, trimmed ("show config "
	// was typed, with completion's trailing space), and not the cancelled line.
	dir := filepath.Join(state, "kgrepl")
	data, err := os.ReadFile(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	want := "count\necho hi\necho transform\nshow config\ncount\nbad\nsleep\ncount\nsleep\ncount\n"
	if string(data) != want {
		t.Errorf("history file holds\n%q\nwant\n%q", data, want)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("history directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
}

// The history file is read back: a new session recalls an old command with
// the up arrow. It also checks the fallback location, ~/.local/state, when
// XDG_STATE_HOME is unset; and `exit` ends the session with status 0.
func TestTerminalHistoryRecallAndExit(t *testing.T) {
	home := t.TempDir()
	hist := filepath.Join(home, ".local", "state", "kgrepl", "history")
	if err := os.MkdirAll(filepath.Dir(hist), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, []byte("echo from-an-earlier-session\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startREPL(t, "plain", "HOME="+home) // XDG_STATE_HOME is not passed on

	s.expect("fake 0> ")
	s.send(keyUp)
	s.expect("echo from-an-earlier-session")
	s.send(keyEnter)
	s.expect("ECHO[from-an-earlier-session]")
	s.expect("fake 0> ")
	s.send("exit" + keyEnter)
	s.expect(childBye)
	s.waitSuccess()

	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	// readline does not store a recalled command again when it is run
	// unchanged, so the old line is there once.
	if want := "echo from-an-earlier-session\nexit\n"; string(data) != want {
		t.Errorf("history file holds %q, want %q", data, want)
	}
}

// NoHistory: up-arrow still recalls what was typed in this session, but
// nothing is written anywhere.
func TestTerminalNoHistory(t *testing.T) {
	state := t.TempDir()
	s := startREPL(t, "nohistory", "XDG_STATE_HOME="+state)
	s.expect("fake 0> ")
	s.send("echo once" + keyEnter)
	s.expect("ECHO[once]")
	s.expect("fake 0> ")
	s.send(keyUp + keyEnter)
	s.expect("ECHO[once]")
	s.expect("fake 0> ")
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
	if entries, err := os.ReadDir(state); err != nil || len(entries) != 0 {
		t.Errorf("NoHistory wrote %v (%v) into the state directory", entries, err)
	}
}

// TerminalOptions.HistoryFile replaces the default location (its directory is
// created); a history file that cannot be made is a warning, not the end of
// the session.
func TestTerminalHistoryFileOption(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "a", "b", "hist")
	s := startREPL(t, "plain", "XDG_STATE_HOME="+filepath.Join(dir, "unused"), histEnv+"="+hist)
	s.expect("fake 0> ")
	s.send("count" + keyEnter)
	s.expect("COUNT=1")
	s.expect("fake 1> ") // a person sees the prompt before pressing a key
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
	if data, err := os.ReadFile(hist); err != nil || string(data) != "count\n" {
		t.Errorf("history file %q: %q, %v; want \"count\\n\"", hist, data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "unused")); err == nil {
		t.Errorf("the default location was used despite HistoryFile")
	}

	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s = startREPL(t, "plain", histEnv+"="+filepath.Join(blocker, "hist")) // a directory that is a file
	s.expect("warning: history will not be saved")
	s.expect("fake 0> ")
	s.send("count" + keyEnter)
	s.expect("COUNT=1")
	s.expect("fake 1> ") // a person sees the prompt before pressing a key
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
}

// Ctrl-D pressed while a command runs reaches readline, after the command,
// not as the Ctrl-D key but as the terminal's end-of-file (a NUL byte in raw
// mode). The REPL must then leave cleanly like a shell does, not hang in
// readline's Close (it did: see the comment on stdin.Close in RunTerminal).
func TestTerminalCtrlDDuringCommand(t *testing.T) {
	s := startREPL(t, "plain", "XDG_STATE_HOME="+t.TempDir())
	s.expect("fake 0> ")
	s.send("sleep 500ms" + keyEnter)
	s.expect("SLEEPING")
	s.send(keyCtrlD)
	s.expect("SLEPT")
	s.expect(childBye)
	s.waitSuccess()
}

// With Color on, errors are red (and only errors: the prompt stays plain, so
// scripts that drive the REPL can still match it).
func TestTerminalColorErrors(t *testing.T) {
	s := startREPL(t, "color", "XDG_STATE_HOME="+t.TempDir())
	s.expect("fake 0> ")
	s.send("count; bad" + keyEnter)
	s.expect("COUNT=1\r\n\x1b[31merror: bad command\x1b[0m\r\n" + redraw + "fake 1> ")
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
}

func TestRunTerminalRefusesAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	err = RunTerminal(newFakeEngine(), TerminalOptions{Stdin: r, Stdout: w, NoHistory: true})
	if !errors.Is(err, ErrNotTerminal) {
		t.Errorf("RunTerminal on a pipe: %v, want ErrNotTerminal", err)
	}
}

func TestIsTerminalAndColorEnabled(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	if !IsTerminal(tty) || IsTerminal(w) || IsTerminal(nil) {
		t.Errorf("IsTerminal: pty %v, pipe %v, nil %v; want true, false, false", IsTerminal(tty), IsTerminal(w), IsTerminal(nil))
	}

	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	if !ColorEnabled(tty) {
		t.Errorf("ColorEnabled(terminal) = false with NO_COLOR empty")
	}
	if ColorEnabled(w) {
		t.Errorf("ColorEnabled(pipe) = true")
	}
	t.Setenv("NO_COLOR", "1")
	if ColorEnabled(tty) {
		t.Errorf("ColorEnabled(terminal) = true with NO_COLOR=1")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "dumb")
	if ColorEnabled(tty) {
		t.Errorf("ColorEnabled(terminal) = true with TERM=dumb")
	}
}

func TestDefaultHistoryFile(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if got, err := DefaultHistoryFile(); err != nil || got != "/var/state/kgrepl/history" {
		t.Errorf("with XDG_STATE_HOME: %q, %v", got, err)
	}
	for _, v := range []string{"", "relative/dir"} { // unset, or not absolute: ignored, as XDG says
		t.Setenv("XDG_STATE_HOME", v)
		if got, err := DefaultHistoryFile(); err != nil || got != "/home/someone/.local/state/kgrepl/history" {
			t.Errorf("XDG_STATE_HOME=%q: %q, %v", v, got, err)
		}
	}
}

// rawMode must restore the mode from before the first enter, however often
// readline enters and exits: otherwise the user's shell is left raw.
func TestRawModeRestoresCookedMode(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	rm := &rawMode{fd: int(tty.Fd())}
	if err := rm.enter(); err != nil {
		t.Fatal(err)
	}
	if err := rm.enter(); err != nil { // a second enter must not save the raw state
		t.Fatal(err)
	}
	rm.exit()
	rm.exit()
	// Cooked mode echoes what is typed: write to the master, and the echo
	// comes back on it.
	if _, err := ptmx.Write([]byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		// The echo may come in more than one read ("h", then "i\r\n").
		var echo []byte
		buf := make([]byte, 64)
		for len(echo) < len("hi") {
			n, err := ptmx.Read(buf)
			echo = append(echo, buf[:n]...)
			if err != nil {
				break
			}
		}
		got <- string(echo)
	}()
	select {
	case s := <-got:
		if !strings.HasPrefix(s, "hi") {
			t.Errorf("after exit the terminal echoed %q, want cooked mode's echo of \"hi\"", s)
		}
	case <-time.After(timeout):
		t.Fatalf("no echo: the terminal was left in raw mode")
	}
}

// TestTerminalGreets: the REPL prints its greeting once, before the first
// prompt.
func TestTerminalGreets(t *testing.T) {
	s := startREPL(t, "greeting", "XDG_STATE_HOME="+t.TempDir())
	s.expect("hello\r\n  first steps\r\n")
	s.expect("fake 0> ")
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
}

func TestDefaultPictureDir(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if got, err := DefaultPictureDir(); err != nil || got != "/var/state/kgrepl/pictures" {
		t.Errorf("with XDG_STATE_HOME: %q, %v", got, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if got, err := DefaultPictureDir(); err != nil || got != "/home/someone/.local/state/kgrepl/pictures" {
		t.Errorf("without XDG_STATE_HOME: %q, %v", got, err)
	}
}

// A history file that is a FIFO hung the REPL at start-up, before any
// prompt: opening it blocks until someone opens the other end, and readline
// reads it to an end that never comes. It is now a warning, said once, and
// the session goes on without a history file (the FIFO is left alone).
func TestTerminalHistoryFIFO(t *testing.T) {
	state := t.TempDir()
	hist := filepath.Join(state, "kgrepl", "history")
	if err := os.MkdirAll(filepath.Dir(hist), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(hist, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	s := startREPL(t, "plain", "XDG_STATE_HOME="+state)
	s.expect("warning: history will not be saved: " + hist + " is a FIFO (named pipe), not a regular file")
	s.expect("fake 0> ")
	s.send("count" + keyEnter)
	s.expect("COUNT=1")
	s.expect("fake 1> ")
	s.send(keyUp + keyEnter) // history still works within the session
	s.expect("COUNT=2")
	s.expect("fake 2> ")
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
	if n := strings.Count(s.all(), "warning:"); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
	if fi, err := os.Lstat(hist); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became %v (%v)", fi.Mode(), err)
	}
}

// A history file of a few enormous lines (a paste gone wrong) was loaded
// whole, and, holding fewer lines than the history limit, never trimmed.
// Now the REPL reads only the end of the file, skips lines no one typed,
// keeps the last historyLimit lines, and writes back only those, keeping the
// file's permissions.
func TestTerminalHistoryTrimmed(t *testing.T) {
	state := t.TempDir()
	hist := filepath.Join(state, "kgrepl", "history")
	if err := os.MkdirAll(filepath.Dir(hist), 0o700); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("x", 1<<20) + "\n"
	var b strings.Builder
	for i := range 3 {
		b.WriteString(huge)
		fmt.Fprintf(&b, "echo short-%d\n", i)
	}
	b.WriteString(huge)
	b.WriteString("echo the-last\n")
	if err := os.WriteFile(hist, []byte(b.String()), 0o640); err != nil {
		t.Fatal(err)
	}
	s := startREPL(t, "plain", "XDG_STATE_HOME="+state)
	s.expect("fake 0> ")
	s.send(keyUp)
	s.expect("echo the-last")
	s.send(keyEnter)
	s.expect("ECHO[the-last]")
	s.expect("fake 0> ")
	s.send("count" + keyEnter)
	s.expect("COUNT=1")
	s.expect("fake 1> ")
	s.send(keyCtrlD)
	s.expect(childBye)
	s.waitSuccess()
	if strings.Contains(s.all(), "warning") {
		t.Errorf("a warning for a history file that is only long")
	}
	// The last megabyte holds the end of the fourth huge line and the last
	// command: everything before is gone.
	data, err := os.ReadFile(hist)
	if want := "echo the-last\ncount\n"; err != nil || string(data) != want {
		t.Errorf("history file holds %d bytes (%.60q…), %v; want %q", len(data), data, err, want)
	}
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("history file mode %v, %v; want 0640 kept", fi.Mode(), err)
	}
}

// prepareHistory, the check and trim RunTerminal does before readline sees
// the file, case by case.
func TestPrepareHistory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(p, want string) {
		t.Helper()
		got, err := prepareHistory(p)
		if err != nil || got != p {
			t.Fatalf("prepareHistory(%s) = %q, %v", p, got, err)
		}
		if data, _ := os.ReadFile(p); string(data) != want {
			t.Errorf("%s holds %q, want %q", filepath.Base(p), data, want)
		}
	}

	// Short enough: left as it is, blank lines and all (readline skips them).
	check(write("ok", "a\n\nb\n"), "a\n\nb\n")
	// No newline at the end: readline ignored the last line and appended the
	// next command to it.
	check(write("unterminated", "a\nb"), "a\nb\n")
	// More lines than the limit: the last historyLimit are kept.
	var many strings.Builder
	for i := range historyLimit + 5 {
		fmt.Fprintf(&many, "c%d\n", i)
	}
	want := strings.Join(strings.Split(many.String(), "\n")[5:], "\n")
	check(write("many", many.String()), want)
	// A line too long to be typed is dropped.
	check(write("long", "a\n"+strings.Repeat("y", historyMaxLine+1)+"\nb\n"), "a\nb\n")
	// A symbolic link is followed, not replaced by a file.
	target := write("target", "a\n   \nb\n")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	check(link, "a\nb\n")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link became %v (%v)", fi.Mode(), err)
	}
	// A missing file is created, 0600.
	check(filepath.Join(dir, "new"), "")
	if fi, err := os.Stat(filepath.Join(dir, "new")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new history file: %v, %v; want 0600", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 7 {
		t.Errorf("left behind in the folder: %v", entries)
	}

	// Not regular files: refused, saying what they are, without blocking.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for p, what := range map[string]string{
		fifo:       "a FIFO (named pipe)",
		fifoLink:   "a FIFO (named pipe)",
		dir:        "a folder",
		os.DevNull: "a device",
	} {
		got, err := prepareHistory(p)
		if want := p + " is " + what + ", not a regular file"; err == nil || err.Error() != want || got != "" {
			t.Errorf("prepareHistory(%s) = %q, %v; want the error %q", p, got, err, want)
		}
	}
}
