package kernel

import (
	"regexp"
	"strings"
	"unicode"
)

// A command's usage line is its grammar. `help` prints it, and completion
// and the "did you mean" of a typo read it, so what Tab offers is what the
// usage says may come next:
//
//	run until stable | run until tick N | run until polled|processed RECORD [by Cn] [--quiet|--verbose]
//
// Alternatives are separated by " | " (each repeating the command's name at
// the top level), [ ] is optional, a|b|c inside a word is a choice of
// literal words, "..." after a group's last word repeats the group, and a
// word with an upper-case letter or punctuation (N, Cn, TOPIC-P, A..B,
// T,...) is a placeholder that the command table's values (or the
// defaults, placeholderValues) fill in. Options (--x, --x VALUE) may come
// anywhere after the command, as the parser (flags) takes them.

// gnode is one element of a usage grammar.
type gnode struct {
	kind  gkind
	words []string // gWord: the literals it may be, or one placeholder
	place bool     // gWord: a placeholder, not literals
	kids  []*gnode // gSeq: in order; gAlt: the alternatives; gOpt: one gSeq
	rep   bool     // gOpt: the group may repeat
}

type gkind int

const (
	gWord gkind = iota
	gSeq
	gAlt
	gOpt
)

// gopt is an option a usage declares.
type gopt struct {
	name   string
	value  *gnode // its value's word, or nil for a bare option
	parent string // the option it only goes with ([--members [--verbose]])
	group  int    // options of one alternation exclude each other ...
	branch int    // ... unless they are on the same branch of it
}

// grammar is a usage parsed: the positional words and the options.
type grammar struct {
	pos  *gnode
	opts []*gopt
}

// parseUsage reads a command's usage line into its grammar.
func parseUsage(name, usage string) *grammar {
	p := &usageParser{toks: usageTokens(usage)}
	g := &grammar{}
	p.g = g
	alt := p.alt("")
	// Each top-level alternative repeats the command's name: drop it.
	for _, seq := range alt.kids {
		if len(seq.kids) > 0 && seq.kids[0].kind == gWord && !seq.kids[0].place && seq.kids[0].words[0] == name {
			seq.kids = seq.kids[1:]
		}
	}
	g.pos = alt
	return g
}

// usageTokens cuts a usage line into words, brackets and " | ".
func usageTokens(usage string) []string {
	var toks []string
	for _, f := range strings.Fields(usage) {
		for strings.HasPrefix(f, "[") {
			toks, f = append(toks, "["), f[1:]
		}
		closing := 0
		for strings.HasSuffix(f, "]") {
			f, closing = f[:len(f)-1], closing+1
		}
		if f != "" {
			toks = append(toks, f)
		}
		for ; closing > 0; closing-- {
			toks = append(toks, "]")
		}
	}
	return toks
}

type usageParser struct {
	toks   []string
	i      int
	g      *grammar
	groups int
}

// alt reads alternatives separated by "|" up to a "]" or the end; parent
// is the option its options go with, if any.
func (p *usageParser) alt(parent string) *gnode {
	a := &gnode{kind: gAlt}
	p.groups++
	group := p.groups
	for {
		a.kids = append(a.kids, p.seq(parent, group, len(a.kids)))
		if p.i < len(p.toks) && p.toks[p.i] == "|" {
			p.i++
			continue
		}
		return a
	}
}

// seq reads words and groups up to a "|", a "]" or the end; the options
// among them are taken out into the grammar's option list.
func (p *usageParser) seq(parent string, group, branch int) *gnode {
	s := &gnode{kind: gSeq}
	lastOpt := ""
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		switch {
		case t == "|" || t == "]":
			return s
		case t == "[":
			p.i++
			inner := p.alt(firstNonEmpty(lastOpt, parent))
			opt := &gnode{kind: gOpt, kids: []*gnode{inner}}
			if p.i < len(p.toks) && p.toks[p.i] == "]" {
				p.i++
			}
			empty := true
			for _, k := range inner.kids {
				empty = empty && len(k.kids) == 0
			}
			if empty {
				continue // a group of options only: nothing positional
			}
			s.kids = append(s.kids, opt)
			lastOpt = ""
		case t == "...":
			p.i++
			// At a group's end it repeats the group (the caller marks it).
			if p.i < len(p.toks) && p.toks[p.i] == "]" {
				s.rep = true
			}
		case strings.HasPrefix(t, "--"):
			p.i++
			names := strings.Split(t, "|")
			p.groups++
			for k, n := range names {
				o := &gopt{name: n, parent: parent, group: group, branch: branch}
				if len(names) > 1 {
					o.group, o.branch = p.groups, k // --quiet|--verbose: one or the other
				}
				p.g.opts = append(p.g.opts, o)
			}
			lastOpt = names[0]
			// Its value is the word that follows it, if one does.
			if len(names) == 1 && p.i < len(p.toks) && !isUsagePunct(p.toks[p.i]) && !strings.HasPrefix(p.toks[p.i], "--") {
				p.g.opts[len(p.g.opts)-1].value = usageWord(p.toks[p.i])
				p.i++
			}
		default:
			p.i++
			s.kids = append(s.kids, usageWord(t))
			lastOpt = ""
		}
	}
	return s
}

func isUsagePunct(t string) bool { return t == "[" || t == "]" || t == "|" || t == "..." }

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// usageWord is a word of a usage: literals (a|b|c, all lower-case words)
// or a placeholder.
func usageWord(t string) *gnode {
	parts := strings.Split(t, "|")
	for _, p := range parts {
		if !isLiteral(p) {
			return &gnode{kind: gWord, words: []string{t}, place: true}
		}
	}
	return &gnode{kind: gWord, words: parts}
}

// isLiteral: a word typed as it stands (until, stable, read_committed),
// not a placeholder (N, Cn, TOPIC-P, a,b, FILE.svg).
func isLiteral(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsLower(r) && !unicode.IsDigit(r) && r != '_' && r != '-' {
			return false
		}
	}
	return true
}

// isList says whether a placeholder is a comma-separated list (T,...,
// A,B, V1,V2,...).
func isList(place string) bool { return strings.Contains(place, ",") }

// placeholderShapes are what some placeholders must look like, so that a
// line is matched to the alternative it can be (run until tick 12).
var placeholderShapes = map[string]*regexp.Regexp{
	"N":      regexp.MustCompile(`^\d+$`),
	"OFFSET": regexp.MustCompile(`^\d+$`),
	"W":      regexp.MustCompile(`^\d+$`),
	"H":      regexp.MustCompile(`^\d+$`),
	"Cn":     regexp.MustCompile(`^C\d+$`),
	"A..B":   regexp.MustCompile(`^\d*(\.\.\d*)?$`),
}

// fits says whether a typed word may stand for a usage word.
func (n *gnode) fits(w string) bool {
	if strings.HasPrefix(w, "--") {
		return false
	}
	if !n.place {
		for _, l := range n.words {
			if w == l {
				return true
			}
		}
		return false
	}
	if re, ok := placeholderShapes[n.words[0]]; ok {
		return re.MatchString(w)
	}
	return true
}

// walk matches n against words from i on, calling k with every index
// where a match can end; a word wanted where the words have run out is
// handed to next (what may be typed next).
func (n *gnode) walk(words []string, i int, k func(int), next func(*gnode)) {
	switch n.kind {
	case gWord:
		switch {
		case i < len(words) && n.fits(words[i]):
			k(i + 1)
		case i == len(words):
			next(n)
		}
	case gSeq:
		walkSeq(n.kids, words, i, k, next)
	case gAlt:
		for _, s := range n.kids {
			s.walk(words, i, k, next)
		}
	case gOpt:
		k(i)
		var again func(int)
		again = func(j int) {
			k(j)
			if n.kids[0].kids[0].rep && j > i {
				n.kids[0].walk(words, j, again, next)
			}
		}
		n.kids[0].walk(words, i, again, next)
	}
}

func walkSeq(kids []*gnode, words []string, i int, k func(int), next func(*gnode)) {
	if len(kids) == 0 {
		k(i)
		return
	}
	kids[0].walk(words, i, func(j int) { walkSeq(kids[1:], words, j, k, next) }, next)
}

// split separates typed words into positional ones and the options given
// (with their values); valueOf is the option whose value is typed last,
// when the words end with an option that takes one.
func (g *grammar) split(words []string) (pos []string, given map[string]bool, valueOf *gopt) {
	given = map[string]bool{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		o := g.option(w)
		if o == nil {
			pos = append(pos, w)
			continue
		}
		given[o.name] = true
		if o.value != nil {
			if i+1 == len(words) {
				return pos, given, o
			}
			i++
		}
	}
	return pos, given, nil
}

func (g *grammar) option(w string) *gopt {
	name, _, _ := strings.Cut(w, "=")
	for _, o := range g.opts {
		if o.name == name {
			return o
		}
	}
	return nil
}

// accepts says whether the positional words are a whole line of the usage.
func (g *grammar) accepts(words []string) bool {
	pos, _, _ := g.split(words)
	ok := false
	g.pos.walk(pos, 0, func(j int) { ok = ok || j == len(pos) }, func(*gnode) {})
	return ok
}

// next lists what may follow the words: the usage words that can come
// next, the option whose value is due, and the options still allowed.
// While a word the usage requires is missing (plot's chart, join's Cn),
// the options are listed only if wanted (the word begun with "-").
func (g *grammar) next(words []string, wantOpts bool) (places []*gnode, opts []*gopt, valueOf *gopt) {
	pos, given, valueOf := g.split(words)
	if valueOf != nil {
		return nil, nil, valueOf
	}
	fits, complete := false, false
	g.pos.walk(pos, 0, func(j int) {
		if j == len(pos) {
			fits, complete = true, true
		}
	}, func(n *gnode) {
		fits = true
		places = append(places, n)
	})
	if !fits {
		return nil, nil, nil // the words are no line of this usage
	}
	if !complete && !wantOpts {
		return places, nil, nil
	}
	for _, o := range g.opts {
		if given[o.name] || (o.parent != "" && !given[o.parent]) {
			continue
		}
		excluded := false
		for _, other := range g.opts {
			if given[other.name] && other.group == o.group && other.branch != o.branch {
				excluded = true
			}
		}
		if !excluded {
			opts = append(opts, o)
		}
	}
	return places, opts, nil
}
