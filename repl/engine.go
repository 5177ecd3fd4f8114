// Package repl is kgrepl's front end: the interactive terminal (RunTerminal,
// on github.com/chzyer/readline) and the script runner (RunScript) used when
// stdin is a pipe or a file.
//
// The package knows nothing about the simulation. It drives a session only
// through the small Engine interface below, so the same front end can sit on
// the real kernel.Session or on a fake in tests, and the kernel never has to
// import readline.
//
// Two front ends exist because readline cannot read a pipe safely: v1.5.1
// panics on a TAB read from a non-terminal ("bytes: negative Repeat count"),
// so anything that is not a terminal goes through RunScript, which reads
// plain lines with bufio.
package repl

// Engine is what the front end needs from a kgrepl session (kernel.Session implements it).
type Engine interface {
	// Exec runs one input line (it may hold several commands separated by ';' and a '#' comment)
	// and returns the text to print. A non-nil error is the message of the first command that
	// failed; commands before it on the line have run and their output is in the returned text.
	Exec(line string) (string, error)
	// Prompt is the prompt to show, e.g. "billing t=12 Stable> " (no colour codes).
	Prompt() string
	// Complete returns the candidate completions for the word at the end of line (full words,
	// not suffixes), sorted.
	Complete(line string) []string
	// Interrupt asks a running Exec (a long `run`) to stop at the next tick; safe from another goroutine.
	Interrupt()
	// Done reports that the user asked to leave (the `exit` command).
	Done() bool
}

// PagedEngine is an Engine that can cut a command's output where the reader
// should be asked before it goes on (`demo N --step` pauses at each
// narration line). RunTerminal uses it when the engine has it; scripts print
// every page at once.
type PagedEngine interface {
	// ExecPaged is Exec with the output cut into pages; a command with
	// nothing to pause at gives one page.
	ExecPaged(line string) ([]string, error)
	// StopAtPage tells the engine the reader stopped after page i of the
	// last ExecPaged: a demo is then left where it was at that page.
	StopAtPage(i int)
}
