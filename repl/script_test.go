package repl

import (
	"bytes"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func runScript(t *testing.T, script string, opts ScriptOptions) (eng *fakeEngine, stdout, stderr string, code int) {
	t.Helper()
	eng = newFakeEngine()
	var out, errw bytes.Buffer
	code = RunScript(strings.NewReader(script), eng, &out, &errw, opts)
	return eng, out.String(), errw.String(), code
}

func TestRunScriptOutputsInOrder(t *testing.T) {
	eng, out, errOut, code := runScript(t, "count\necho one; count\n\n# a comment\nnoeol\ncount\n", ScriptOptions{})
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q; want 0 and nothing", code, errOut)
	}
	// NOEOL has no newline from the engine: RunScript must add it, or
	// COUNT=3 would be glued to it.
	want := "COUNT=1\nECHO[one]\nCOUNT=2\nNOEOL\nCOUNT=3\n"
	if out != want {
		t.Errorf("stdout\n%q\nwant\n%q", out, want)
	}
	// Blank lines are not sent; the comment line is, and runs nothing.
	if got, want := eng.commands(), []string{"count", "echo one", "count", "noeol", "count"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
}

func TestRunScriptStopsAtFirstError(t *testing.T) {
	eng, out, errOut, code := runScript(t, "count\ncount; bad; echo after-bad\ncount\nbad\n", ScriptOptions{})
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if errOut != "line 2: bad command\n" {
		t.Errorf("stderr %q, want %q", errOut, "line 2: bad command\n")
	}
	// The output of the command before the failing one on line 2 is printed;
	// nothing after it runs, on that line or later ones.
	if out != "COUNT=1\nCOUNT=2\n" {
		t.Errorf("stdout %q, want %q", out, "COUNT=1\nCOUNT=2\n")
	}
	if got, want := eng.commands(), []string{"count", "count", "bad"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
}

func TestRunScriptLineNumbersCountBlankLines(t *testing.T) {
	_, _, errOut, code := runScript(t, "\n\n# comment\n   \nbad\n", ScriptOptions{})
	if code != 1 || errOut != "line 5: bad command\n" {
		t.Errorf("code %d, stderr %q; want 1 and %q", code, errOut, "line 5: bad command\n")
	}
}

func TestRunScriptKeepGoing(t *testing.T) {
	eng, out, errOut, code := runScript(t, "bad\ncount\nnosuch\ncount\n", ScriptOptions{KeepGoing: true})
	if code != 1 {
		t.Errorf("exit code %d, want 1 (something failed)", code)
	}
	wantErr := "line 1: bad command\nline 3: unknown command \"nosuch\"\n"
	if errOut != wantErr {
		t.Errorf("stderr %q, want %q", errOut, wantErr)
	}
	if out != "COUNT=1\nCOUNT=2\n" {
		t.Errorf("stdout %q, want every good line's output", out)
	}
	if got := len(eng.commands()); got != 4 {
		t.Errorf("ran %d commands, want all 4", got)
	}

	// KeepGoing with nothing failing is still success.
	if _, _, _, code := runScript(t, "count\ncount\n", ScriptOptions{KeepGoing: true}); code != 0 {
		t.Errorf("all lines fine with KeepGoing: code %d, want 0", code)
	}
}

// splitEngine is the fake engine with LineSplitter, as kernel.Session has it.
type splitEngine struct{ *fakeEngine }

func (splitEngine) SplitLine(line string) []string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	var out []string
	for _, c := range strings.Split(line, ";") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// With KeepGoing, the commands after a failing one on its line run too
// (when the engine can split a line); each failure names its line.
func TestRunScriptKeepGoingRunsTheRestOfALine(t *testing.T) {
	eng := splitEngine{newFakeEngine()}
	var out, errw bytes.Buffer
	code := RunScript(strings.NewReader("count; bad; echo after # c\nbad; count\n"), eng, &out, &errw, ScriptOptions{KeepGoing: true})
	if code != 1 || errw.String() != "line 1: bad command\nline 2: bad command\n" {
		t.Errorf("code %d, stderr %q", code, errw.String())
	}
	if out.String() != "COUNT=1\nECHO[after]\nCOUNT=2\n" {
		t.Errorf("stdout %q: the rest of each line must run", out.String())
	}
	// Without KeepGoing the line stops at its first failure, as before.
	eng = splitEngine{newFakeEngine()}
	out.Reset()
	errw.Reset()
	if code := RunScript(strings.NewReader("count; bad; echo after\n"), eng, &out, &errw, ScriptOptions{}); code != 1 || out.String() != "COUNT=1\n" {
		t.Errorf("without KeepGoing: code %d, stdout %q", code, out.String())
	}
}

// readline v1.5.1 panics on a TAB read from a pipe; RunScript must not.
func TestRunScriptTabInPipedLine(t *testing.T) {
	_, out, errOut, code := runScript(t, "echo a\tb\n\t\ncou\t\n", ScriptOptions{KeepGoing: true})
	if out != "ECHO[a\tb]\n" {
		t.Errorf("stdout %q, want the TAB passed through to the engine", out)
	}
	// "cou\t" is sent as typed (no completion in scripts): the engine sees
	// "cou" and rejects it. A line of only a TAB is blank.
	if code != 1 || errOut != "line 3: unknown command \"cou\"\n" {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

func TestRunScriptCRLFAndNoFinalNewline(t *testing.T) {
	eng, out, errOut, code := runScript(t, "\uFEFFecho one\r\necho two\r\ncount", ScriptOptions{})
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if out != "ECHO[one]\nECHO[two]\nCOUNT=1\n" {
		t.Errorf("stdout %q: CR must be stripped and the last line run", out)
	}
	if got, want := eng.commands(), []string{"echo one", "echo two", "count"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}

	// The error on an unterminated last line still names it.
	if _, _, errOut, code := runScript(t, "count\r\nbad", ScriptOptions{}); code != 1 || errOut != "line 2: bad command\n" {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

func TestRunScriptLongLine(t *testing.T) {
	// A line of exactly the limit runs (its CRLF not counted).
	max := strings.Repeat("x", DefaultMaxLine-len("echo "))
	_, out, errOut, code := runScript(t, "echo "+max+"\r\ncount\n", ScriptOptions{})
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut[:min(len(errOut), 200)])
	}
	if out != "ECHO["+max+"]\nCOUNT=1\n" {
		t.Errorf("a line at the limit not passed whole (got %d bytes of output)", len(out))
	}
	// One byte more is refused, and not run.
	eng, out, errOut, code := runScript(t, "echo "+max+"y\ncount\n", ScriptOptions{})
	want := "line 1: a line of more than 65,536 bytes is over the limit (at most 65,536 bytes in a line; the line was not run)\n"
	if code != 1 || errOut != want || out != "" || len(eng.commands()) != 0 {
		t.Errorf("code %d, stdout %q, stderr %q, ran %d; want 1, nothing, %q, none", code, out, errOut, len(eng.commands()), want)
	}
	// ScriptOptions.MaxLine sets the limit.
	if _, _, errOut, code := runScript(t, "count\necho 123456\n", ScriptOptions{MaxLine: 10}); code != 1 || !strings.HasPrefix(errOut, "line 2: a line of more than 10 bytes") {
		t.Errorf("MaxLine 10: code %d, stderr %q", code, errOut)
	}
}

// endless is an io.Reader of n bytes of 'x' (then a newline and "count"),
// made as it is read: a line far longer than any buffer a test would hold.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return copy(p, "\ncount\n"), io.EOF
	}
	k := min(int64(len(p)), e.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	e.n -= k
	return int(k), nil
}

// A line of 256 MiB is read to its end without being held: the memory
// allocated stays near the limit, and --keep-going runs the next line.
func TestRunScriptOverlongLineIsNotHeld(t *testing.T) {
	eng := newFakeEngine()
	var out, errw bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := RunScript(&endless{n: 256 << 20}, eng, &out, &errw, ScriptOptions{KeepGoing: true})
	runtime.ReadMemStats(&after)
	if code != 1 || !strings.HasPrefix(errw.String(), "line 1: a line of more than 65,536 bytes is over the limit") {
		t.Errorf("code %d, stderr %q", code, errw.String())
	}
	if out.String() != "COUNT=1\n" {
		t.Errorf("stdout %q: the line after the long one must run", out.String())
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("allocated %d bytes reading a 256 MiB line; the reader must keep at most the limit", got)
	}
}

// Input that trickles in a byte at a time (a slow pipe) reads the same.
func TestRunScriptOneByteReads(t *testing.T) {
	eng := newFakeEngine()
	var out, errw bytes.Buffer
	code := RunScript(iotest.OneByteReader(strings.NewReader("count\r\necho x\ncount")), eng, &out, &errw, ScriptOptions{})
	if code != 0 || out.String() != "COUNT=1\nECHO[x]\nCOUNT=2\n" {
		t.Errorf("code %d, stdout %q", code, out.String())
	}
}

func TestRunScriptExitStops(t *testing.T) {
	eng, out, _, code := runScript(t, "count\nexit\ncount\nbad\n", ScriptOptions{})
	if code != 0 {
		t.Errorf("code %d, want 0", code)
	}
	if out != "COUNT=1\n" {
		t.Errorf("stdout %q: nothing after exit may run", out)
	}
	if got, want := eng.commands(), []string{"count", "exit"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}

	// With KeepGoing, exit still stops, and an earlier failure still counts.
	_, out, _, code = runScript(t, "bad\nexit\ncount\n", ScriptOptions{KeepGoing: true})
	if code != 1 || out != "" {
		t.Errorf("KeepGoing: code %d, stdout %q; want 1 and nothing", code, out)
	}
}

func TestRunScriptReadError(t *testing.T) {
	eng := newFakeEngine()
	var out, errw bytes.Buffer
	r := iotest.TimeoutReader(strings.NewReader("count\n")) // second read fails
	code := RunScript(iotest.OneByteReader(r), eng, &out, &errw, ScriptOptions{})
	if code != 1 || !strings.Contains(errw.String(), "reading input") {
		t.Errorf("code %d, stderr %q; want 1 and a read error", code, errw.String())
	}
}
