package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ScriptOptions tunes RunScript.
type ScriptOptions struct {
	// KeepGoing runs every line even after one fails (the exit code is still 1).
	// Without it the script stops at the first error, which is what CI and
	// `kgrepl < demo.kg` want: later lines usually depend on earlier ones, and
	// running them on a half-built world only buries the real error.
	KeepGoing bool
}

// RunScript runs the commands read from r, one line at a time, printing each
// result to stdout and each failure to stderr as "line N: MESSAGE" (N counts
// the lines of r from 1, blank lines included, so the number points into the
// file the user wrote). It returns the process exit code: 0 when every line
// succeeded, 1 otherwise. It stops at the first failing line unless
// opts.KeepGoing, and after any line that makes eng.Done() true (`exit`).
//
// Input is read with bufio, never readline: readline v1.5.1 panics on a TAB
// read from a pipe. Lines may be of any length, may end in CRLF (scripts
// written on Windows), and the last one need not end in a newline. A UTF-8
// byte-order mark at the very start is dropped for the same reason. Lines
// holding only white space are not sent to the engine.
func RunScript(r io.Reader, eng Engine, stdout, stderr io.Writer, opts ScriptOptions) int {
	// ReadString grows its result as needed, so the buffer size only sets
	// how much is read per system call, not the longest line accepted (a
	// bufio.Scanner would reject lines over its limit).
	br := bufio.NewReaderSize(r, 64*1024)
	code := 0
	for n := 1; ; n++ {
		raw, readErr := br.ReadString('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			fmt.Fprintf(stderr, "line %d: reading input: %v\n", n, readErr)
			return 1
		}
		if raw == "" && readErr != nil {
			return code // clean end of input
		}
		line := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if strings.TrimSpace(line) != "" {
			out, err := eng.Exec(line)
			writeResult(stdout, out)
			if err != nil {
				fmt.Fprintf(stderr, "line %d: %s\n", n, err.Error())
				code = 1
				if !opts.KeepGoing {
					return code
				}
			}
			if eng.Done() {
				return code
			}
		}
		if readErr != nil { // io.EOF after a final line without newline
			return code
		}
	}
}

// writeResult prints a command's output, adding the newline the engine may
// have left off so the next output (or the shell prompt) starts on its own line.
func writeResult(w io.Writer, out string) {
	if out == "" {
		return
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	io.WriteString(w, out)
}
