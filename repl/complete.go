package repl

import (
	"strings"
	"unicode"

	"github.com/chzyer/readline"
)

// completer adapts Engine.Complete (full words, as the kernel's command table
// knows them) to readline.AutoCompleter, which wants the text to insert at the
// cursor (suffixes) and how many runes before the cursor the candidates share.
type completer struct {
	eng Engine
}

var _ readline.AutoCompleter = completer{}

// Do is called by readline's goroutine when the user presses TAB.
func (c completer) Do(line []rune, pos int) (newLine [][]rune, length int) {
	// A panic here would kill the process while the terminal is in raw mode,
	// leaving the user's shell unusable; losing the completion is far better.
	defer func() {
		if recover() != nil {
			newLine, length = nil, 0
		}
	}()
	if pos < 0 || pos > len(line) {
		pos = len(line)
	}
	before := line[:pos]
	return suffixes(before, line[pos:], c.eng.Complete(string(before)))
}

// suffixes turns full-word candidates into what readline inserts.
//
// The engine decides what "the word at the end of line" is (it may split at
// ';' or ',' as well as at spaces), so rather than guess its rules this finds,
// for each candidate, the longest end of the text before the cursor (within
// its last space-free run) that the candidate starts with, and inserts the
// rest. An empty overlap is accepted only after a separator (or at the start
// of a word): otherwise a candidate that does not extend what was typed (say
// the engine matched case-insensitively) would be glued onto it.
//
// Like readline's own PrefixCompleter, a completed word gets a trailing space
// so the user can type the next one at once; not when the candidate ends in a
// character that asks for more (C1. --out= a,), nor when a space already
// follows the cursor.
func suffixes(before, after []rune, cands []string) ([][]rune, int) {
	start := len(before)
	for start > 0 && !unicode.IsSpace(before[start-1]) {
		start--
	}
	tail := before[start:]
	spaceFollows := len(after) > 0 && unicode.IsSpace(after[0])

	var out [][]rune
	length := 0
	for _, cand := range cands {
		if cand == "" {
			continue
		}
		cr := []rune(cand)
		k := overlap(tail, cr)
		if k == 0 && len(tail) > 0 && isWordRune(tail[len(tail)-1]) {
			continue
		}
		s := append([]rune{}, cr[k:]...)
		if !spaceFollows && !strings.ContainsRune(".,=:/", lastRune(cr)) {
			s = append(s, ' ')
		}
		out = append(out, s)
		length = max(length, k)
	}
	return out, length
}

// overlap is the largest k such that tail ends with the first k runes of cand.
func overlap(tail, cand []rune) int {
	for k := min(len(tail), len(cand)); k > 0; k-- {
		if string(tail[len(tail)-k:]) == string(cand[:k]) {
			return k
		}
	}
	return 0
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
}

func lastRune(rs []rune) rune {
	if len(rs) == 0 {
		return 0
	}
	return rs[len(rs)-1]
}
