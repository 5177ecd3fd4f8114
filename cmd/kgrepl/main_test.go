package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// The binary, driven as users drive it: a script file, a pipe, -c, errors
// with line numbers, --version and --help.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kgrepl-bin")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "kgrepl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func kgrepl(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestScriptFromPipe(t *testing.T) {
	out, errs, code := kgrepl(t, "join C2\nrun until stable\ndescribe group --json\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var g struct {
		Generation int `json:"generation"`
		Members    []struct {
			ClientID string `json:"client_id"`
		} `json:"members"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &g); err != nil {
		t.Fatalf("last line is not the JSON view: %v\n%s", err, out)
	}
	if g.Generation != 2 || len(g.Members) != 2 {
		t.Errorf("after C2 joined: generation %d, %d members; want 2 and 2", g.Generation, len(g.Members))
	}
}

func TestScriptFileStopsAtFirstError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.kg")
	os.WriteFile(path, []byte("step 1\n# a comment\nfrobnicate now\nstep 1\n"), 0o644)
	out, errs, code := kgrepl(t, "", path)
	if code != 1 || !strings.Contains(errs, "line 3: frobnicate: unknown command") {
		t.Fatalf("exit %d, stderr %q: want 1 and line 3 named", code, errs)
	}
	if strings.Contains(out, "tick 2") {
		t.Error("the line after the error ran")
	}
	_, errs, code = kgrepl(t, "", "--keep-going", path)
	if code != 1 || !strings.Contains(errs, "line 3:") {
		t.Fatalf("--keep-going: exit %d, %q", code, errs)
	}
}

func TestDashC(t *testing.T) {
	out, _, code := kgrepl(t, "", "-c", "step 2; metrics --json")
	if code != 0 || !strings.Contains(out, `"tick":2`) {
		t.Fatalf("exit %d, output %q", code, out)
	}
	_, errs, code := kgrepl(t, "", "-c", "step 1; crash C9")
	if code != 1 || !strings.Contains(errs, "crash C9: no member C9 (members: C1)") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestDemoThroughTheBinaryIsDeterministic(t *testing.T) {
	a, _, code := kgrepl(t, "demo 4\n")
	b, _, _ := kgrepl(t, "demo 4\n")
	if code != 0 || a != b {
		t.Fatal("demo 4 printed different bytes on two runs (or failed)")
	}
	// The audit reader's verdict, in demo 4's metrics.
	if !regexp.MustCompile(`duplicates \(read_uncommitted\) +2 \(p2\.3 p2\.4\)`).MatchString(a) {
		t.Error("demo 4 does not show inv(p2.3) and inv(p2.4) twice")
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := kgrepl(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "kgrepl ") {
		t.Errorf("--version: %d %q", code, out)
	}
	_, errs, code := kgrepl(t, "", "--help")
	if code != 0 || !strings.Contains(errs, "kgrepl -c 'CMDS'") {
		t.Errorf("--help: %d %q", code, errs)
	}
	_, errs, code = kgrepl(t, "", "--bogus")
	if code != 2 || !strings.Contains(errs, "bogus") {
		t.Errorf("--bogus: %d %q", code, errs)
	}
	_, errs, code = kgrepl(t, "", "a.kg", "b.kg")
	if code != 2 || !strings.Contains(errs, "one script file at a time") {
		t.Errorf("two files: %d %q", code, errs)
	}
}

func TestDemoFilesRunAsScripts(t *testing.T) {
	files, _ := filepath.Glob("../../kernel/demos/*.kg")
	if len(files) != 16 {
		t.Fatalf("%d demo scripts, want 16", len(files))
	}
	for _, f := range files {
		if _, errs, code := kgrepl(t, "", f); code != 0 {
			t.Errorf("%s: exit %d: %s", f, code, errs)
		}
	}
}

// TestREPLInAPseudoTerminal drives the real binary on the real kernel in a
// pty: the prompt shows the tick and state, a command runs, Tab completes a
// command and a member name, the history file is written, Ctrl-D leaves.
func TestREPLInAPseudoTerminal(t *testing.T) {
	state := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1", "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := readPTY(ptmx)
	// Each expectation is looked for after the one before: "C2-1" is on
	// the screen from the join on, and matching it there sent the next
	// keys while describe still ran (the test failed on a loaded machine).
	at := 0
	expect := func(what string) {
		t.Helper()
		at = out.waitFor(t, what, at, 10*time.Second)
	}
	// The greeting: what kgrepl is and three first steps.
	expect("Kafka consumer groups")
	expect("  demo 1 ")
	expect("  help ")
	expect("pictures go to " + filepath.Join(state, "kgrepl", "pictures"))
	expect("billing t=0 Stable> ")
	ptmx.Write([]byte("join C2\r"))
	ptmx.Write([]byte("run until sta\t\r"))
	expect("tick 14: group Stable, generation 2")
	expect("billing t=14 Stable> ")
	ptmx.Write([]byte("descr\tgroup --members\r"))
	expect("C2-1")
	ptmx.Write([]byte("crash C\t"))
	expect("C1")
	ptmx.Write([]byte{21}) // Ctrl-U: clear the line
	// Tab offers what can come next: after run until processed, records.
	ptmx.Write([]byte("run until processed p1.\t\t"))
	expect("p1.9")
	ptmx.Write([]byte{21})
	ptmx.Write([]byte{4}) // Ctrl-D
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kgrepl exited with %v after Ctrl-D", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("kgrepl did not exit on Ctrl-D")
	}
	hist, err := os.ReadFile(filepath.Join(state, "kgrepl", "history"))
	if err != nil || !strings.Contains(string(hist), "join C2") || !strings.Contains(string(hist), "describe group --members") {
		t.Errorf("history file: %q, %v", hist, err)
	}
}

type transcript struct {
	mu  sync.Mutex
	buf []byte
}

func (t *transcript) add(b []byte) { t.mu.Lock(); t.buf = append(t.buf, b...); t.mu.Unlock() }
func (t *transcript) get() string  { t.mu.Lock(); defer t.mu.Unlock(); return string(t.buf) }

// readPTY keeps reading the terminal into a transcript until it closes.
// startREPL starts kgrepl with args in a pseudo-terminal of 40 rows and
// 200 columns, in dir, without colour, and returns the terminal and what it
// prints; the process is killed and the terminal closed when the test ends.
func startREPL(t *testing.T, dir string, args ...string) (*exec.Cmd, *os.File, *transcript) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		ptmx.Close()
	})
	return cmd, ptmx, readPTY(ptmx)
}

// waitSignals waits until the terminal of ptmx turns Ctrl-C into SIGINT
// (ISIG) when on is true, or until it does not. readline reads a line in
// raw mode, where Ctrl-C is a key that drops the line being typed, and the
// REPL leaves raw mode to run the command, where Ctrl-C is SIGINT and
// stops it (repl.RunTerminal). A Ctrl-C written before the switch lands
// on the next prompt instead, so a test that means it for a running
// command waits for on. (TCGETS on a pty's master reads its slave's
// modes.)
func waitSignals(t *testing.T, ptmx *os.File, on bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for signalsOn(t, ptmx) != on {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the terminal still has ISIG %v", !on)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// signalsOn reports whether the terminal of ptmx turns Ctrl-C into SIGINT
// (ISIG): off while readline reads a line.
func signalsOn(t *testing.T, ptmx *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(ptmx.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("reading the terminal's modes: %v", err)
	}
	return tio.Lflag&unix.ISIG != 0
}

func readPTY(ptmx *os.File) *transcript {
	out := &transcript{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			out.add(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	return out
}

// waitFor waits up to d for what to appear on the screen past byte offset
// after, and returns the offset just past it; the test fails on timeout.
func (tr *transcript) waitFor(t *testing.T, what string, after int, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := tr.get()
		if i := strings.Index(s[after:], what); i >= 0 {
			return after + i + len(what)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %q; the screen so far:\n%s", d, what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDemoStepPausesAtNarration drives `demo 4 --step` in a pty: the output
// stops before each act and narration block until Enter, and q stops the
// demo where it is: the prompt then shows the tick the demo had reached.
func TestDemoStepPausesAtNarration(t *testing.T) {
	// The lines each pause comes before: the first comment of each block
	// of comments after the title (a heading or narration).
	script, err := os.ReadFile("../../kernel/demos/04.kg")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	inBlock := false
	for i, l := range strings.Split(string(script), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case i == 0 || l == "":
		case strings.HasPrefix(l, "#"):
			if !inBlock && i > 1 {
				blocks = append(blocks, strings.TrimPrefix(strings.TrimPrefix(l, "## "), "# "))
			}
			inBlock = true
		default:
			inBlock = false
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("demo 4 has %d pauses, the test needs 3", len(blocks))
	}
	cmd := exec.Command(bin, "--no-history")
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := readPTY(ptmx)
	expect := func(what string) {
		t.Helper()
		out.waitFor(t, what, 0, 10*time.Second)
	}
	first, second := blocks[0], blocks[1]
	expect("billing t=0 Stable> ")
	ptmx.Write([]byte("demo 4 --step\r"))
	expect("=== demo 4")
	expect("-- 1/")
	// Waiting: the first narration line is not shown until Enter.
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(out.get(), first) {
		t.Fatalf("the demo went past its first pause without Enter:\n%s", out.get())
	}
	ptmx.Write([]byte("\r"))
	expect(first)
	expect("-- 2/")
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(out.get(), second) {
		t.Fatalf("the demo went past its second pause without Enter:\n%s", out.get())
	}
	ptmx.Write([]byte("\r"))
	expect(second)
	expect("-- 3/")
	shown := out.get()
	ticks := regexp.MustCompile(`(?m)^tick (\d+): `).FindAllStringSubmatch(shown, -1)
	if len(ticks) == 0 {
		t.Fatalf("no tick reached before the third pause:\n%s", shown)
	}
	reached := ticks[len(ticks)-1][1]
	ptmx.Write([]byte("q\r"))
	// Stopped where it was: the prompt shows the tick the demo reached,
	// and the session is there (the world did not run to the demo's end).
	out.waitFor(t, "billing t="+reached+" ", len(shown), 10*time.Second)
	ptmx.Write([]byte("metrics --json\r"))
	expect(`{"tick":` + reached + `,`)
	if strings.Contains(out.get(), blocks[2]) {
		t.Errorf("q did not stop the demo's output")
	}
	ptmx.Write([]byte("exit\r"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kgrepl exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("kgrepl did not exit")
	}
}

// A script file argument is a file or a pipe: a directory or a device is
// refused by name before anything is read (/dev/zero would be read forever).
func TestScriptFileMustBeAFileOrAPipe(t *testing.T) {
	dir := t.TempDir()
	for arg, want := range map[string]string{
		dir:         "kgrepl: " + dir + " is a directory, not a script file",
		"/dev/zero": "kgrepl: /dev/zero is a device, not a script file",
	} {
		_, errs, code := kgrepl(t, "", arg)
		if code != 2 || !strings.HasPrefix(errs, want) || strings.Contains(errs, "line 1") {
			t.Errorf("kgrepl %s: exit %d, stderr %q; want 2 and %q", arg, code, errs, want)
		}
	}
	// A FIFO (as `kgrepl <(gen)` gives) still runs.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString("step\n")
			f.Close()
		}
	}()
	out, errs, code := kgrepl(t, "", fifo)
	if code != 0 || !strings.Contains(out, "tick 1:") {
		t.Errorf("kgrepl FIFO: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A line past the limit is refused naming the limit, at no great cost.
func TestScriptLineLimit(t *testing.T) {
	start := time.Now()
	_, errs, code := kgrepl(t, strings.Repeat("x", 8<<20)+"\n")
	if code != 1 || errs != "line 1: a line of more than 65,536 bytes is over the limit (at most 65,536 bytes in a line; the line was not run)\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("an 8 MiB line took %v to refuse", took)
	}
}

// --keep-going runs the rest of a ';' line after a failing command, as it
// runs the lines after a failing one.
func TestKeepGoingRunsTheRestOfALine(t *testing.T) {
	out, errs, code := kgrepl(t, "", "--keep-going", "-c", "join C3 --bogus; help exit; step")
	if code != 1 || !strings.HasPrefix(errs, "line 1: join: unknown option --bogus") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "leave kgrepl") || !strings.Contains(out, "tick 1:") {
		t.Errorf("stdout %q: help exit and step must run after the failing join", out)
	}
}

// TestDemoColourOnATerminalOnly: a demo's protocol events are coloured on a
// terminal, and never with NO_COLOR or into a pipe.
func TestDemoColourOnATerminalOnly(t *testing.T) {
	const rebalance = "\x1b[33mt=3    group billing: Stable -> PreparingRebalance"
	for _, noColor := range []bool{false, true} {
		cmd := exec.Command(bin, "--no-history")
		cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=")
		if noColor {
			cmd.Env = append(cmd.Env, "NO_COLOR=1")
		}
		ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
		if err != nil {
			t.Fatal(err)
		}
		out := readPTY(ptmx)
		out.waitFor(t, "Stable> ", 0, 10*time.Second)
		ptmx.Write([]byte("demo 1\r"))
		end := out.waitFor(t, "Range's answer", 0, 10*time.Second)
		if got := strings.Contains(out.get()[:end], rebalance); got == noColor {
			t.Errorf("NO_COLOR set %v: the rebalance line coloured %v:\n%q", noColor, got, out.get()[:end])
		}
		if noColor && regexp.MustCompile("\x1b\\[(1;)?(3[1-6]|4)m").MatchString(out.get()) {
			t.Errorf("colour codes with NO_COLOR=1:\n%q", out.get())
		}
		ptmx.Write([]byte("exit\r"))
		cmd.Wait()
		ptmx.Close()
	}
	piped, _, code := kgrepl(t, "demo 1\n")
	if code != 0 || strings.Contains(piped, "\x1b") || !strings.Contains(piped, "-> PreparingRebalance") {
		t.Errorf("demo 1 into a pipe: exit %d, escape codes %v", code, strings.Contains(piped, "\x1b"))
	}
}
