package kernel

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The command table is the one source of a command's usage, help and
// completion: these tests hold the front ends to it.

// tableSession is a session where every example line below makes sense:
// C2 joined, a second branch, a transactional producer.
func tableSession(t *testing.T) *Session {
	t.Helper()
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "set producer transactional\njoin C2\nrun until stable\nfork other\nswitch main")
	return s
}

// usageExamples are whole lines of every command. A word marked ~ is the
// user's own (a number, a file, a name): Tab has nothing to offer for it.
var usageExamples = []string{
	"new --topics ~a:3 --output ~out:1 --members ~2 --static --keep-settings",
	"new --from-describe ~g.txt --group ~G --topics ~a:3 --output ~out:1",
	"produce o1 ~5",
	"set partition.assignment.strategy cooperative-sticky",
	"set C1.sticky.rules kafka",
	"set commit after",
	"set producer idempotent",
	"set --from ~c.properties --client C2",
	"show config",
	"show names",
	"join C3 --static --topics orders,payments",
	"close C2 --now",
	"crash C2 after ~2",
	"crash C1 now",
	"restart C2 --graceful",
	"roll all --every ~5 --kill --wait-stable",
	"roll C1,C2 --graceful",
	"slow C1",
	"drop Produce response C1 ~2",
	"step ~5 --quiet",
	"run until stable --verbose",
	"run until tick ~40",
	"run until closed C2",
	"run until left C1",
	"run until processed o2.3 by C2",
	"run until polled p0.1 --quiet",
	"back ~3",
	"fork ~what-if",
	"switch other",
	"branches",
	"describe group --members --verbose --json --real-names",
	"describe group --state",
	"offsets",
	"log invoices-0 --from ~3",
	"log o2 --around ~2",
	"txn tx-C1",
	"consume invoices --isolation read_committed --json",
	"trace ~5 --type JoinGroup,SyncGroup --member C2 --events --json",
	"metrics --json",
	"members",
	"plot pause --branches main,other --out ~x.svg --width ~800 --height ~400 --title ~T --ticks ~0..10",
	"diagram --out ~d.svg --ticks ~3",
	"sequence --mermaid --type Fetch --member C1 --ticks ~0..5",
	"explore --ticks ~16..40 --faults crash-now,restart --members C1,C2 --bound ~100 --parallel ~2 --isolation read_committed --save ~dir --json",
	"explore --merge ~a.jsonl ~b.jsonl --json",
	"compare partition.assignment.strategy range,cooperative-sticky commit after,before --json",
	"demo 3 --step",
	"save ~f.kg",
	"load ~f.kg",
	"help describe",
	"exit",
}

// TestCompletionInEveryPosition: for every example line, Tab after each
// word offers the word that follows it (a list element by element, a
// record as its partition then its offset), and every command has an
// example.
func TestCompletionInEveryPosition(t *testing.T) {
	s := tableSession(t)
	covered := map[string]bool{}
	has := func(line, want string) {
		t.Helper()
		got := s.Complete(line)
		for _, g := range got {
			if g == want {
				return
			}
		}
		t.Errorf("Complete(%q) = %v: want %q among them", line, got, want)
	}
	record := regexp.MustCompile(`^[op]\d\.\d+$`)
	for _, ex := range usageExamples {
		words := strings.Fields(ex)
		covered[words[0]] = true
		has("", words[0])
		has(words[0][:2], words[0])
		line := words[0] + " "
		for _, w := range words[1:] {
			free := strings.HasPrefix(w, "~")
			w = strings.TrimPrefix(w, "~")
			switch {
			case free:
			case record.MatchString(w):
				part := w[:strings.IndexByte(w, '.')+1]
				has(line, part)
				has(line+part, w)
			case strings.Contains(w, ","):
				head := ""
				for _, e := range strings.Split(w, ",") {
					has(line+head, head+e)
					head += e + ","
				}
			default:
				has(line, w)
			}
			line += w + " "
		}
	}
	for _, name := range commandNames() {
		if !covered[name] {
			t.Errorf("no example line for %s", name)
		}
	}
}

// TestCompletionWhatComesNext: the cases issue 29 names, and the words a
// position must not offer.
func TestCompletionWhatComesNext(t *testing.T) {
	s := tableSession(t)
	for line, want := range map[string]string{
		// records after run until processed (it offered polled stable tick)
		"run until processed ":                  "o0. o1. o2. orders-0. orders-1. orders-2. p0. p1. p2. payments-0. payments-1. payments-2.",
		"run until processed o2.":               "o2.0 o2.1 o2.2 o2.3 o2.4 o2.5 o2.6 o2.7 o2.8 o2.9",
		"run until processed o2.3 ":             "--quiet --verbose by",
		"run until processed o2.3 b":            "by",
		"run until ":                            "closed left polled processed stable tick time",
		"roll ":                                 "C1 C1..C2 C2 all",
		"roll all --":                           "--every --graceful --kill --wait-stable",
		"roll all --kill --":                    "--every --wait-stable",
		"restart C2 --":                         "--graceful --kill",
		"run until tick ":                       "",
		"crash C2 ":                             "after now",
		"crash C2 now ":                         "",
		"describe ":                             "group",
		"describe group --state --":             "--json --real-names",
		"describe group --members -":            "--json --real-names --verbose",
		"show ":                                 "config names traffic",
		"set --from f.properties --":            "--client",
		"set --from f.properties --client ":     "C1 C2",
		"new --from-describe g.txt --":          "--group --kafka-defaults --keep-settings --output --static --topics",
		"new --members 3 --":                    "--kafka-defaults --keep-settings --output --static --topics",
		"set group.instance.id ":                "none per-member",
		"set commit ":                           "after auto before",
		"set group.protocol ":                   "classic consumer",
		"set C2.sticky.rules ":                  "kafka seed",
		"compare commit after,before producer ": "idempotent plain transactional",
		"join ":                                 "C3",
		"desc":                                  "describe",
		"desc g":                                "group",
		"plot ":                                 "duplicates lag pause timeline unavailable",
		"plot pause --branches main,":           "main,other",
		"log o2 ":                               "--around --from",
		"log o2 --from 3 --":                    "",
		"log ":                                  "i0 invoices-0 o0 o1 o2 orders-0 orders-1 orders-2 p0 p1 p2 payments-0 payments-1 payments-2",
		"trace --type JoinGroup,Sy":             "JoinGroup,SyncGroup",
		"help de":                               "demo describe",
		"step 3 ; back ":                        "",
	} {
		if got := strings.Join(s.Complete(line), " "); got != want {
			t.Errorf("Complete(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestEveryCommandTakesHelp: CMD --help is help CMD, for every command,
// wherever --help stands, and changes nothing.
func TestEveryCommandTakesHelp(t *testing.T) {
	for _, name := range commandNames() {
		s := tableSession(t)
		want, err := s.Exec("help " + name)
		if err != nil {
			t.Fatal(err)
		}
		tick, branch := s.World().Tick, s.Branch()
		for _, line := range []string{name + " --help", name + " x --help", name[:min(len(name), 4)] + " --help"} {
			if lookup(line[:strings.IndexByte(line, ' ')]) == nil {
				if _, err := resolve(line[:strings.IndexByte(line, ' ')], nil, ""); err != nil {
					continue // a start shared with another command
				}
			}
			got, err := s.Exec(line)
			if err != nil || got != want {
				t.Errorf("%s: %q, %v; want help %s", line, got, err, name)
			}
		}
		if s.World().Tick != tick || s.Branch() != branch || name == "exit" && s.Done() {
			t.Errorf("%s --help changed the session", name)
		}
	}
}

// TestCommandStarts: a start of exactly one command's name runs it, and is
// recorded as that command; a start shared by several is refused naming
// them; a typo gets the nearest commands among those the rest of the line
// fits.
func TestCommandStarts(t *testing.T) {
	s := tableSession(t)
	var done []string // the lines run so far, as their commands' full names
	for _, line := range []string{"desc group", "mem", "jo C3", "ru until stable", "h exit"} {
		c, err := resolve(strings.Fields(line)[0], nil, "")
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		full := tableSession(t)
		runLines(t, full, strings.Join(done, "\n"))
		fullLine := c.name + line[strings.IndexByte(line+" ", ' '):]
		want, err := full.Exec(fullLine)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Exec(line)
		if err != nil || got != want {
			t.Errorf("%q printed %q (%v), want what %s prints, %q", line, got, err, c.name, want)
		}
		done = append(done, fullLine)
	}
	if _, err := s.Exec("save starts.kg"); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(s.Dir, "starts.kg"))
	if err != nil || !strings.Contains(string(saved), "\njoin C3\n") || strings.Contains(string(saved), "jo C3") {
		t.Errorf("the session file records %q for jo C3, want join C3:\n%s", "jo C3", saved)
	}
	for line, want := range map[string]string{
		"de":             `de: which command? demo, describe start with "de" (type more of the name)`,
		"dsecribe group": "dsecribe: unknown command; did you mean describe?",
		"dscr group":     "dscr: unknown command; did you mean describe?",
		"jion C4":        "jion: unknown command; did you mean join?",
		"shwo config":    "shwo: unknown command; did you mean show?",
		"sow config":     "sow: unknown command; did you mean show?",
		"help dmeo":      "help dmeo: unknown command; did you mean demo?",
		"frobnicate":     "frobnicate: unknown command (commands:",
	} {
		_, err := s.Exec(line)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

// TestUsageDeclaresTheOptions: the options a command's usage names are
// the ones its parser takes, neither more nor fewer, so help, completion
// and parsing cannot drift apart.
func TestUsageDeclaresTheOptions(t *testing.T) {
	// Accepted, and said so in the command's help, but not offered.
	hidden := map[string]bool{"new --defaults": true}
	listed := regexp.MustCompile(`unknown option --zzz \(options: ([^)]*)\)`)
	for _, c := range commands {
		var usage []string
		seen := map[string]bool{}
		for _, o := range c.grammar().opts {
			if !seen[o.name] {
				seen[o.name] = true
				usage = append(usage, o.name)
			}
		}
		sort.Strings(usage)
		scratch := NewSession()
		scratch.Dir = t.TempDir() // save --zzz writes a file of that name
		_, err := scratch.Exec(c.name + " --zzz")
		m := listed.FindStringSubmatch(errString(err))
		if m == nil {
			// Not parsed by flags: each option the usage names must still
			// not be refused as unknown.
			for _, o := range usage {
				_, err := scratch.Exec(c.name + " " + o)
				if strings.Contains(errString(err), "unknown option") {
					t.Errorf("%s: the usage names %s, the command refuses it: %v", c.name, o, err)
				}
			}
			continue
		}
		var parsed []string
		for _, o := range strings.Fields(m[1]) {
			if !hidden[c.name+" "+o] {
				parsed = append(parsed, o)
			}
		}
		sort.Strings(parsed)
		if strings.Join(parsed, " ") != strings.Join(usage, " ") {
			t.Errorf("%s: the usage names %v, the parser takes %v", c.name, usage, parsed)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
