// Command kgrepl explores Kafka consumer groups: a REPL on a terminal, a
// script runner otherwise.
//
//	kgrepl                 the REPL on the default world (a script when stdin is a pipe)
//	kgrepl FILE            run the commands in FILE
//	kgrepl -c 'CMDS'       run a string of commands (';' separates them)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/repl"
)

// version is set at build time with -ldflags "-X main.version=..."; a plain
// build reports the development version.
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kgrepl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cmds := fs.String("c", "", "run these commands (separated by ';') and exit")
	keepGoing := fs.Bool("keep-going", false, "in a script, go on past a failing command (exit status 1 at the end)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	noHistory := fs.Bool("no-history", false, "keep no history file in the REPL")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `kgrepl %s: a deterministic simulation of Kafka consumer groups

usage:
  kgrepl                 the REPL on the default world (reads a script when stdin is not a terminal)
  kgrepl FILE            run the commands in FILE, print each result, stop at the first error
  kgrepl -c 'CMDS'       run commands given as a string (';' separates them)

options:
`, version)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nIn the REPL, `help` lists the commands and `demo 1` starts the first demo.\n")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "kgrepl %s\n", version)
		return 0
	}
	sess := kernel.NewSession()
	// Protocol events, a demo's headings and narration in colour: on a
	// terminal only, as errors are (never with NO_COLOR, never into a pipe).
	if f, ok := stdout.(*os.File); ok {
		sess.Color = repl.ColorEnabled(f)
	}
	opts := repl.ScriptOptions{KeepGoing: *keepGoing, MaxLine: kernel.MaxLineBytes}
	switch {
	case *cmds != "":
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "kgrepl: -c and a script file %q cannot be used together\n", fs.Arg(0))
			return 2
		}
		return repl.RunScript(strings.NewReader(*cmds), sess, stdout, stderr, opts)
	case fs.NArg() == 1:
		f, err := openScript(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "kgrepl: %v\n", err)
			return 2
		}
		defer f.Close()
		return repl.RunScript(f, sess, stdout, stderr, opts)
	case fs.NArg() > 1:
		fmt.Fprintf(stderr, "kgrepl: one script file at a time (got %d: %s)\n", fs.NArg(), strings.Join(fs.Args(), " "))
		return 2
	}
	if !repl.IsTerminal(stdin) {
		return repl.RunScript(stdin, sess, stdout, stderr, opts)
	}
	out, _ := stdout.(*os.File)
	if out == nil {
		out = os.Stdout
	}
	// Pictures without --out go to one folder the REPL names, not into the current one.
	picDir, _ := repl.DefaultPictureDir()
	sess.PictureDir = picDir
	err := repl.RunTerminal(sess, repl.TerminalOptions{Stdin: stdin, Stdout: out, Color: repl.ColorEnabled(out), NoHistory: *noHistory,
		Greeting: kernel.Greeting(picDir)})
	if err != nil {
		fmt.Fprintf(stderr, "kgrepl: %v\n", err)
		return 1
	}
	return 0
}

// openScript opens a script file argument: a regular file, or a pipe
// (`kgrepl <(gen)`, a FIFO). A directory or a device (/dev/zero, a terminal)
// is no script, and is refused before anything is read from it.
func openScript(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	var why string
	switch m := fi.Mode(); {
	case m.IsDir():
		why = "a directory"
	case m&os.ModeDevice != 0:
		why = "a device"
	case m&os.ModeSocket != 0:
		why = "a socket"
	case !m.IsRegular() && m&os.ModeNamedPipe == 0:
		why = "not a regular file or a pipe"
	}
	if why != "" {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a script file (give a file of commands, or a pipe)", name, why)
	}
	return f, nil
}
