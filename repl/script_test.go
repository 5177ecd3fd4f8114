package repl

import (
	"bytes"
	"reflect"
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
	long := strings.Repeat("x", 1<<20) // far past bufio.Scanner's 64 KiB default
	_, out, errOut, code := runScript(t, "echo "+long+"\ncount\n", ScriptOptions{})
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut[:min(len(errOut), 200)])
	}
	if out != "ECHO["+long+"]\nCOUNT=1\n" {
		t.Errorf("long line not passed whole (got %d bytes of output)", len(out))
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
