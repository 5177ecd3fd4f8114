package kernel

// Completion: the words each command's grammar offers at the cursor
// (the table in commands.go drives it, so help, parsing and completion
// cannot drift apart).

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kgrepl/kgrepl/kernel/explore"
	"github.com/kgrepl/kgrepl/sim"
)

func liveClients(s *Session) []string {
	var out []string
	for _, c := range s.World().Clients() {
		if m := s.World().Member(c); m != nil && m.Alive {
			out = append(out, c)
		}
	}
	return out
}

func nextClients(s *Session) []string {
	w := s.World()
	var out []string
	for _, c := range w.Clients() {
		if m := w.Member(c); m != nil && !m.Alive {
			out = append(out, c)
		}
	}
	out = append(out, "C"+strconv.Itoa(len(w.Clients())+1))
	return out
}

func shortNames(w *sim.World, tps []sim.TopicPartition) []string {
	var out []string
	for _, tp := range tps {
		out = append(out, tp.String())
		if w.Layout().Short() {
			out = append(out, w.Layout().ShortName(tp))
		}
	}
	return out
}

// settingKeys are the keys set and compare take: every setting, the
// shortcuts commit and producer, and each client's own (C1.KEY).
func settingKeys(s *Session, _ []string, _ string) []string {
	keys := []string{"commit", "producer"}
	for _, st := range sim.Settings {
		keys = append(keys, st.Key)
	}
	for _, c := range s.World().Clients() {
		for _, st := range sim.Settings {
			if st.Client {
				keys = append(keys, c+"."+st.Key)
			}
		}
	}
	return keys
}

// settingValues are the values a setting may take when it lists them
// (Allowed: "range | roundrobin | ..."); a number or a name has none to offer.
func settingValues(key string) []string {
	if _, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(key, "C") {
		if _, found := sim.LookupSetting(k); found {
			key = k
		}
	}
	switch key {
	case "commit":
		key = "commit.mode"
	case "producer":
		return []string{"plain", "idempotent", "transactional"}
	}
	st, ok := sim.LookupSetting(key)
	if !ok {
		return nil
	}
	// The literal words among the values (NAME | per-member | none
	// offers per-member and none); a number's range offers nothing.
	var vals []string
	for _, v := range strings.Split(st.Allowed, " | ") {
		if isLiteral(v) {
			vals = append(vals, v)
		}
	}
	return vals
}

func inputPartitionWords(s *Session, _ []string, _ string) []string {
	return shortNames(s.World(), s.World().Layout().Inputs())
}

// maxRecordWords bounds the records Tab lists for one partition.
const maxRecordWords = 200

// recordWords completes a record name in two steps: the partitions first
// (o2. or orders-2.), then that partition's offsets that start as typed.
func recordWords(s *Session, _ []string, partial string) []string {
	w := s.World()
	dot := strings.LastIndexByte(partial, '.')
	if dot < 0 {
		var out []string
		for _, p := range shortNames(w, w.Layout().Inputs()) {
			out = append(out, p+".")
		}
		return out
	}
	tp, err := w.Layout().ParsePartition(partial[:dot])
	if err != nil {
		return nil
	}
	var out []string
	for off := 0; off < w.Log(tp).HW() && len(out) < maxRecordWords; off++ {
		if o := strconv.Itoa(off); strings.HasPrefix(o, partial[dot+1:]) {
			out = append(out, partial[:dot+1]+o)
		}
	}
	return out
}

func apiNames(*Session, []string, string) []string {
	var out []string
	for _, t := range sim.APIs {
		out = append(out, string(t))
	}
	return out
}

// placeholderValues fill in the usages' placeholders, unless a command's
// own values say otherwise.
var placeholderValues = map[string]valuesFunc{
	"Cn":     func(s *Session, _ []string, _ string) []string { return liveClients(s) },
	"Cn,...": func(s *Session, _ []string, _ string) []string { return s.World().Clients() },
	"TOPIC-P": func(s *Session, _ []string, _ string) []string {
		w := s.World()
		return append(shortNames(w, w.Layout().Inputs()), shortNames(w, w.Layout().Outputs())...)
	},
	"TOPIC": func(s *Session, _ []string, _ string) []string { return []string{s.World().Topo.Output.Name} },
	"a,b": func(s *Session, _ []string, _ string) []string {
		var out []string
		for _, t := range s.World().Topo.Inputs {
			out = append(out, t.Name)
		}
		return out
	},
	"RECORD": recordWords,
	"CMD":    func(*Session, []string, string) []string { return commandNames() },
	"TYPE":   apiNames,
	"T,...":  apiNames,
	"T1,T2":  apiNames,
	"A,B":    func(s *Session, _ []string, _ string) []string { return s.branchNames() },
	"K,...":  func(*Session, []string, string) []string { return explore.FaultKinds },
	"L":      func(*Session, []string, string) []string { return settingValues("isolation.level") },
	"ID": func(s *Session, _ []string, _ string) []string {
		var ids []string
		for _, e := range s.World().Txn.Entries() {
			ids = append(ids, e.TransactionalID)
		}
		return ids
	},
	"KEY":    settingKeys,
	"Cn.KEY": settingKeys,
	// set KEY VALUE: the key is the word before.
	"VALUE": func(_ *Session, typed []string, _ string) []string {
		if len(typed) == 0 {
			return nil
		}
		return settingValues(typed[len(typed)-1])
	},
	// compare KEY V1,V2,...: likewise.
	"V1,V2,...": func(_ *Session, typed []string, _ string) []string {
		if len(typed) == 0 {
			return nil
		}
		return settingValues(typed[len(typed)-1])
	},
}

// grammar is the command's usage parsed, once.
func (c *command) grammar() *grammar {
	grammarsOnce.Do(func() {
		for _, c := range commands {
			c.gram = parseUsage(c.name, c.usage)
		}
	})
	return c.gram
}

var grammarsOnce sync.Once

// completions are the words that may come next after typed, as the usage
// says, with the placeholders filled in.
func (c *command) completions(s *Session, typed []string, partial string) []string {
	places, opts, valueOf := c.grammar().next(typed, strings.HasPrefix(partial, "-"))
	if valueOf != nil {
		return c.placeWords(s, valueOf.value, typed, partial)
	}
	var out []string
	for _, n := range places {
		out = append(out, c.placeWords(s, n, typed, partial)...)
	}
	for _, o := range opts {
		out = append(out, o.name)
	}
	return out
}

// placeWords are the words a usage word may be: its literals, or its
// placeholder's values; a list (T,...) is completed element by element.
func (c *command) placeWords(s *Session, n *gnode, typed []string, partial string) []string {
	if !n.place {
		return n.words
	}
	name := n.words[0]
	f := c.values[name]
	if f == nil {
		f = placeholderValues[name]
	}
	if f == nil {
		return nil
	}
	if !isList(name) {
		return f(s, typed, partial)
	}
	head := ""
	if i := strings.LastIndexByte(partial, ','); i >= 0 {
		head, partial = partial[:i+1], partial[i+1:]
	}
	have := map[string]bool{}
	for _, e := range strings.Split(head, ",") {
		have[e] = true
	}
	var out []string
	for _, e := range f(s, typed, partial) {
		if !have[e] {
			out = append(out, head+e)
		}
	}
	return out
}

// Complete returns the candidate completions for the last word of line:
// what the command's usage says may come there (a command's name first,
// and a unique start of one stands for it).
func (s *Session) Complete(line string) []string {
	if i := strings.LastIndexByte(line, ';'); i >= 0 {
		line = line[i+1:]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		return nil // a comment
	}
	words := strings.Fields(line)
	partial := ""
	if len(words) > 0 && !strings.HasSuffix(line, " ") {
		partial = words[len(words)-1]
		words = words[:len(words)-1]
	}
	var cands []string
	if len(words) == 0 {
		cands = commandNames()
	} else if c, err := resolve(words[0], nil, ""); err == nil {
		cands = c.completions(s, words[1:], partial)
	}
	var out []string
	seen := map[string]bool{}
	// A word already on the line is not offered again: every option and
	// argument is given once (options twice are refused).
	if len(words) > 0 {
		for _, w := range words[1:] {
			seen[w] = true
		}
	}
	for _, c := range cands {
		if strings.HasPrefix(c, partial) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
