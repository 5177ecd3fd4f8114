package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/digits"
)

// ScriptOptions tunes RunScript.
type ScriptOptions struct {
	// KeepGoing runs every line even after one fails (the exit code is still 1).
	// Without it the script stops at the first error, which is what CI and
	// `kgrepl < demo.kg` want: later lines usually depend on earlier ones, and
	// running them on a half-built world only buries the real error.
	KeepGoing bool
	// MaxLine is the longest line accepted, in bytes, its line end not
	// counted; 0 means DefaultMaxLine. A longer line is read to its end
	// without being kept, and fails.
	MaxLine int
}

// DefaultMaxLine is the longest script line RunScript accepts when
// ScriptOptions.MaxLine is 0 (kgrepl passes kernel.MaxLineBytes, the same).
const DefaultMaxLine = 64 * 1024

// LineSplitter is an Engine that can cut a line into its commands (at ';',
// without the '#' comment). With it, --keep-going runs the rest of a line
// after one of its commands fails, as it runs the lines after a failing one.
type LineSplitter interface {
	SplitLine(line string) []string
}

// RunScript runs the commands read from r, one line at a time, printing each
// result to stdout and each failure to stderr as "line N: MESSAGE" (N counts
// the lines of r from 1, blank lines included, so the number points into the
// file the user wrote). It returns the process exit code: 0 when every line
// succeeded, 1 otherwise. It stops at the first failing line unless
// opts.KeepGoing (which also runs the rest of a line after a command on it
// fails, when eng is a LineSplitter), and after any line that makes
// eng.Done() true (`exit`).
//
// Input is read with bufio, never readline: readline v1.5.1 panics on a TAB
// read from a pipe. Lines may be up to opts.MaxLine bytes long (never more is
// held in memory: a longer line is read to its end, dropped, and fails with
// an error naming the limit), may end in CRLF (scripts written on Windows),
// and the last one need not end in a newline. A UTF-8 byte-order mark at the
// very start is dropped for the same reason. Lines holding only white space
// are not sent to the engine.
func RunScript(r io.Reader, eng Engine, stdout, stderr io.Writer, opts ScriptOptions) int {
	maxLine := opts.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	// The buffer holds the longest line accepted and its CRLF: ReadSlice
	// never grows it, so a longer line costs no more memory than that.
	br := bufio.NewReaderSize(r, maxLine+2)
	code := 0
	for n := 1; ; n++ {
		raw, readErr := br.ReadSlice('\n')
		tooLong := errors.Is(readErr, bufio.ErrBufferFull)
		for errors.Is(readErr, bufio.ErrBufferFull) { // drop the rest of the line
			_, readErr = br.ReadSlice('\n')
		}
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			fmt.Fprintf(stderr, "line %d: reading input: %v\n", n, readErr)
			return 1
		}
		if len(raw) == 0 && readErr != nil {
			return code // clean end of input
		}
		line := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if tooLong || len(line) > maxLine {
			fmt.Fprintf(stderr, "line %d: a line of more than %s bytes is over the limit (at most %s bytes in a line; the line was not run)\n",
				n, digits.Int(maxLine), digits.Int(maxLine))
			code = 1
			if !opts.KeepGoing {
				return code
			}
		} else if strings.TrimSpace(line) != "" {
			for _, cmd := range commandsOf(eng, line, opts.KeepGoing) {
				out, err := eng.Exec(cmd)
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
		}
		if readErr != nil { // io.EOF after a final line without newline
			return code
		}
	}
}

// commandsOf is what RunScript passes to Exec for one line: the whole line,
// or, with keepGoing and an engine that can split it, each of its commands,
// so that one failing does not drop the rest of the line.
func commandsOf(eng Engine, line string, keepGoing bool) []string {
	if ls, ok := eng.(LineSplitter); ok && keepGoing {
		return ls.SplitLine(line)
	}
	return []string{line}
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
