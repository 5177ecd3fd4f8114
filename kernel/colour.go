package kernel

import (
	"regexp"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// Colour on a terminal: the protocol's events stand out from the routine
// lines around them, and a demo's headings and narration from what the
// commands print. The binary turns Session.Color on only when stdout is a
// terminal and NO_COLOR is unset (repl.ColorEnabled, the same rule as for
// errors); scripts, pipes, notebooks and tests get plain text, byte for byte
// what the golden files hold.

// tone is what a printed line is, for its colour.
type tone int

const (
	plain          tone = iota
	rebalanceStart      // the group leaves Stable, a member is removed
	rebalanceEnd        // the group is Stable again
	revocation          // a member revokes or loses partitions
	problem             // an error, a crash, a refused or fenced request, an abort
	duplicate           // a record processed again, a duplicate side effect
	heading             // a demo's title and the heading of each act
	narration           // a demo's narration: what to look at
)

const ansiReset = "\x1b[0m"

var toneCodes = map[tone]string{
	rebalanceStart: "\x1b[33m",   // yellow
	rebalanceEnd:   "\x1b[32m",   // green
	revocation:     "\x1b[35m",   // magenta
	problem:        "\x1b[31m",   // red
	duplicate:      "\x1b[1;31m", // bold red
	heading:        "\x1b[1;4m",  // bold, underlined
	narration:      "\x1b[36m",   // cyan
}

// paint wraps line in its tone's colour when the session writes colour.
// Only whole lines are painted, so a line's text is the same with or
// without colour once the codes are taken out.
func (s *Session) paint(t tone, line string) string {
	code, ok := toneCodes[t]
	if !s.Color || !ok || line == "" {
		return line
	}
	return code + line + ansiReset
}

// eventTone says how an event's line is coloured: rebalances starting and
// ending, revocations, errors and duplicates are the protocol events a
// reader looks for; the rest stays plain.
func eventTone(e sim.Event) tone {
	switch e.Kind {
	case sim.EvGroupState:
		if strings.Contains(e.Text, "-> "+string(sim.Stable)) {
			return rebalanceEnd
		}
		return rebalanceStart
	case sim.EvRemoved:
		return rebalanceStart
	case sim.EvRevoked:
		return revocation
	case sim.EvCommitFailed, sim.EvFenced, sim.EvCrash, sim.EvPollTimeout, sim.EvZombie, sim.EvUnstableOffset:
		return problem
	case sim.EvSideEffect:
		if sinkAgain.MatchString(e.Text) {
			return duplicate
		}
	case sim.EvTxnState:
		if strings.Contains(e.Text, "Abort") || strings.Contains(e.Text, "aborts") {
			return problem
		}
	}
	if (strings.Contains(e.Text, "refused") || strings.Contains(e.Text, "fenced")) && refusedText.MatchString(e.Text) {
		// (the words looked for first: the expression's backtracking
		// over a long line, a poll() of hundreds of records, cost more
		// than the rest of the line's narration)
		return problem
	}
	return plain
}

var refusedText = regexp.MustCompile(`\brefused\b|\bfenced\b`)
