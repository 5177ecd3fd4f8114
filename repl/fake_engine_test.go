package repl

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// fakeEngine is a tiny command language for testing the front end:
//
//	count        COUNT=n (n counts calls; the prompt shows it: "fake n> ")
//	echo TEXT    ECHO[TEXT]
//	show TEXT    SHOW[TEXT]
//	noeol        NOEOL, with no trailing newline
//	bad          fails with "bad command"
//	sleep [D]    writes SLEEPING to started (if set), blocks until Interrupt (WOKE)
//	             or for at most the duration D (SLEPT)
//	exit         makes Done() true
//
// Outputs are upper case so a test never mistakes the terminal's echo of a
// typed command for its result. Like the real kernel, ';' separates commands
// and '#' starts a comment; the first failing command ends the line.
type fakeEngine struct {
	mu      sync.Mutex
	count   int
	done    bool
	ran     []string // every command run, in order
	started io.Writer

	interrupt chan struct{}
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{interrupt: make(chan struct{}, 1)}
}

var fakeWords = []string{"bad", "config", "consumers", "count", "demo", "describe", "echo", "exit", "noeol", "show", "sleep", "transactions", "transform"}

func (f *fakeEngine) Exec(line string) (string, error) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	var out strings.Builder
	for _, cmd := range strings.Split(line, ";") {
		// Only blanks are trimmed: a CR left by the front end must show.
		cmd = strings.Trim(cmd, " \t")
		if cmd == "" {
			continue
		}
		name, arg, _ := strings.Cut(cmd, " ")
		arg = strings.Trim(arg, " \t")
		f.mu.Lock()
		f.ran = append(f.ran, cmd)
		f.mu.Unlock()
		switch name {
		case "count":
			f.mu.Lock()
			f.count++
			n := f.count
			f.mu.Unlock()
			fmt.Fprintf(&out, "COUNT=%d\n", n)
		case "echo":
			fmt.Fprintf(&out, "ECHO[%s]\n", arg)
		case "show":
			fmt.Fprintf(&out, "SHOW[%s]\n", arg)
		case "noeol":
			out.WriteString("NOEOL")
		case "bad":
			return out.String(), errors.New("bad command")
		case "sleep":
			// "sleep" waits for Interrupt; "sleep DURATION" at most that long.
			var timeout <-chan time.Time
			if arg != "" {
				d, err := time.ParseDuration(arg)
				if err != nil {
					return out.String(), err
				}
				timeout = time.After(d)
			}
			if f.started != nil {
				io.WriteString(f.started, "SLEEPING\n")
			}
			select {
			case <-f.interrupt:
				out.WriteString("WOKE\n")
			case <-timeout:
				out.WriteString("SLEPT\n")
			}
		case "exit":
			f.mu.Lock()
			f.done = true
			f.mu.Unlock()
			return out.String(), nil
		default:
			return out.String(), fmt.Errorf("unknown command %q", name)
		}
	}
	return out.String(), nil
}

func (f *fakeEngine) Prompt() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("fake %d> ", f.count)
}

// Complete completes the last space-separated word from fakeWords.
func (f *fakeEngine) Complete(line string) []string {
	word := ""
	if i := strings.LastIndexAny(line, " \t"); i >= 0 {
		word = line[i+1:]
	} else {
		word = line
	}
	var c []string
	for _, w := range fakeWords {
		if strings.HasPrefix(w, word) {
			c = append(c, w)
		}
	}
	sort.Strings(c)
	return c
}

func (f *fakeEngine) Interrupt() {
	select {
	case f.interrupt <- struct{}{}:
	default:
	}
}

func (f *fakeEngine) Done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

func (f *fakeEngine) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ran...)
}
